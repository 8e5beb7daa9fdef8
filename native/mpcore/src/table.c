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
    .improbe = mp_improbe,
    .mprobe = mp_mprobe,
    .mrecv_start = mp_mrecv_start,
    .coll_run = mp_coll_run,
    .coll_post = mp_coll_post,
    .op_create = mp_op_create,
    .op_free = mp_op_free,
    .comm_group = mp_comm_group,
    .group_size = mp_group_size,
    .group_rank = mp_group_rank,
    .group_setop = mp_group_setop,
    .group_select = mp_group_select,
    .group_translate = mp_group_translate,
    .group_compare = mp_group_compare,
    .group_free = mp_group_free,
    .comm_create = mp_comm_create,
    .comm_compare = mp_comm_compare,
    .comm_split_type = mp_comm_split_type,
    .comm_set_name = mp_comm_set_name,
    .comm_get_name = mp_comm_get_name,
    .cart_create = mp_cart_create,
    .cart_ndims = mp_cart_ndims,
    .cart_get = mp_cart_get,
    .cart_rank = mp_cart_rank,
    .cart_coords = mp_cart_coords,
    .cart_shift = mp_cart_shift,
    .cart_sub = mp_cart_sub,
    .dims_create = mp_dims_create,
    .comm_remote_size = mp_comm_remote_size,
    .comm_is_inter = mp_comm_is_inter,
    .intercomm_create = mp_intercomm_create,
    .intercomm_merge = mp_intercomm_merge,
    .comm_spawn = mp_comm_spawn,
    .comm_get_parent = mp_comm_get_parent,
    .open_port = mp_open_port,
    .close_port = mp_close_port,
    .comm_accept = mp_comm_accept,
    .comm_connect = mp_comm_connect,
    .comm_disconnect = mp_comm_disconnect,
    .publish_name = mp_publish_name,
    .unpublish_name = mp_unpublish_name,
    .lookup_name = mp_lookup_name,
    .stats = mp_stats,
    .req_live = mp_req_live,
    .gc_scan = mp_gc_scan,
    .gc_attach = mp_gc_attach,
    .mpi_abi = mp_mpi_abi,
};

int mp_mpi_abi(void)
{
    return PAL_MPI_BUILD_ABI == PAL_ABI_OPENMPI ? MP_MPI_ABI_OPENMPI : MP_MPI_ABI_MPICH;
}

const mp_table_t *mp_core_own_table(void)
{
    return &k_table;
}

#ifndef MP_CORE_SELECTOR
/* A core built for one ABI only (libmpcore-ompi.so): its own table. */
const mp_table_t *mp_core_table(void)
{
    return &k_table;
}
#endif
