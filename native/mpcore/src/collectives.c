/* collectives.c - collective operations, posted nonblocking and tested by a
 * fast call; the caller waits on the token in a blocking call if needed. */
#include "core.h"

/* Tests a just-posted collective: 1 when complete, 0 with *token. */
static int test_posted(MPI_Request r, mp_token_t *token)
{
    int flag = 0, rc = MP_MPI_CHECK(pal_mpi.Test(&r, &flag, MPI_STATUS_IGNORE), "MPI_Test");
    if (rc)
        return rc;
    if (flag)
        return 1;
    *token = (mp_token_t)r;
    return 0;
}

int mp_barrier_start(mp_comm_t comm, mp_token_t *token)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    MPI_Request r;
    int rc;
    if (MP_UNLIKELY(!ce || !mp_ready()))
        return mp_fail_comm(comm);
    if ((rc = MP_MPI_CHECK(pal_mpi.Ibarrier(ce->mpi, &r), "MPI_Ibarrier")))
        return rc;
    return test_posted(r, token);
}
