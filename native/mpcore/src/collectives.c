/* collectives.c - collective operations, posted nonblocking and tested by a
 * fast call; the caller waits on the token in a blocking call if needed. */
#include "core.h"

#include <stddef.h>

int mp_barrier_start(mp_comm_t comm, mp_token_t *token)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    MPI_Request r;
    int rc;
    if (MP_UNLIKELY(!ce || !mp_ready()))
        return mp_fail_comm(comm);
    if ((rc = MP_MPI_CHECK(pal_mpi.Ibarrier(ce->mpi, &r), "MPI_Ibarrier")))
        return rc;
    *token = (mp_token_t)r;
    return mp_token_test(*token, NULL);
}
