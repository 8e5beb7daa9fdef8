/* table.c - the call table the motor host hands to managed code. */
#include "core.h"

static const mp_table_t k_table = {
    .abi_version = MP_ABI_VERSION,
    .size = sizeof(mp_table_t),
    .err_name = mp_err_name,
    .err_message = mp_err_message,
    .last_error = mp_last_error,
    .init = mp_init,
    .finalize = mp_finalize,
    .state = mp_state,
    .abort = mp_abort,
    .wtime = mp_wtime,
    .wtick = mp_wtick,
    .thread_level = mp_thread_level,
    .processor_name = mp_processor_name,
    .library_version = mp_library_version,
    .tag_ub = mp_tag_ub,
    .library_path = mp_library_path,
    .comm_rank = mp_comm_rank,
    .comm_size = mp_comm_size,
    .comm_dup = mp_comm_dup,
    .comm_split = mp_comm_split,
    .comm_free = mp_comm_free,
    .send_start = mp_send_start,
    .recv_start = mp_recv_start,
    .token_test = mp_token_test,
    .token_wait = mp_token_wait,
    .isend = mp_isend,
    .irecv = mp_irecv,
    .req_test = mp_req_test,
    .req_wait = mp_req_wait,
    .req_cancel = mp_req_cancel,
    .req_orphan = mp_req_orphan,
    .req_sweep = mp_req_sweep,
    .req_testall = mp_req_testall,
    .req_waitall = mp_req_waitall,
    .req_waitany = mp_req_waitany,
    .req_active = mp_req_active,
    .iprobe = mp_iprobe,
    .probe = mp_probe,
    .barrier_start = mp_barrier_start,
    .improbe = mp_improbe,
    .mprobe = mp_mprobe,
    .mrecv_start = mp_mrecv_start,
};

const mp_table_t *mp_core_table(void)
{
    return &k_table;
}
