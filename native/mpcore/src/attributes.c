/* attributes.c - the predefined attributes of MPI_COMM_WORLD (MPI-4.0 9.1.2,
 * 11.10.1).  User attributes live in System.MP (Communicator.Attributes.cs):
 * their callbacks are C# functions, which MPI must not call from MPI_Finalize
 * at exit or from threads the runtime does not know. */
#include "core.h"

#include <stddef.h>

int mp_world_attr(int which, int *value, int *flag)
{
    void *attr = NULL;
    int key, found = 0, rc;
    if (!mp_ready())
        return mp_fail_state();
    if (!value || !flag)
        return mp_fail(MP_EINVAL, "world_attr value or flag is NULL");
    switch (which) {
    case MP_WORLD_TAG_UB: key = MPI_TAG_UB; break;
    case MP_WORLD_WTIME_IS_GLOBAL: key = MPI_WTIME_IS_GLOBAL; break;
    case MP_WORLD_UNIVERSE_SIZE: key = MPI_UNIVERSE_SIZE; break;
    case MP_WORLD_APPNUM: key = MPI_APPNUM; break;
    default: return mp_fail(MP_EINVAL, "predefined attribute %d is not one of 0 (MPI_TAG_UB), 1 (MPI_WTIME_IS_GLOBAL), "
                                       "2 (MPI_UNIVERSE_SIZE), 3 (MPI_APPNUM)", which);
    }
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_get_attr(MPI_COMM_WORLD, key, &attr, &found), "MPI_Comm_get_attr")))
        return rc;
    *flag = found && attr;
    *value = *flag ? *(int *)attr : 0;
    return 0;
}
