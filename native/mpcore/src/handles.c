/* handles.c - communicators and groups across the native boundary: the MPI
 * handle behind a Motor handle, in C and Fortran form (MPI-4.0 19.3.4), and
 * a communicator native code made, taken into the table owned or borrowed.
 *
 * A C handle travels as int64_t: MPICH's MPI_Comm is an int (sign-extended
 * here, so that (MPI_Comm)h gives it back), Open MPI's a pointer. */
#include "comms.h"

#include <stdint.h>

/* Fortran handles: under MPICH's ABI the C handle itself (its mpi.h converts by a cast), under
 * Open MPI's the library's functions. */
#if PAL_MPI_BUILD_ABI == 1
#define COMM_C2F(c) ((MPI_Fint)(c))
#define COMM_F2C(f) ((MPI_Comm)(f))
#define GROUP_C2F(g) ((MPI_Fint)(g))
#else
#define COMM_C2F(c) pal_mpi.Comm_c2f(c)
#define COMM_F2C(f) pal_mpi.Comm_f2c(f)
#define GROUP_C2F(g) pal_mpi.Group_c2f(g)
#endif


static int put_handles(int64_t c, MPI_Fint f, int64_t *c_handle, int32_t *f_handle)
{
    if (c_handle)
        *c_handle = c;
    if (f_handle)
        *f_handle = (int32_t)f;
    return 0;
}

int mp_comm_handle(mp_comm_t comm, int64_t *c_handle, int32_t *f_handle)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (!c_handle && !f_handle)
        return mp_fail_null_output("handle");
    return put_handles((int64_t)(intptr_t)ce->mpi, f_handle ? COMM_C2F(ce->mpi) : 0, c_handle, f_handle);
}

int mp_group_handle(mp_group_t group, int64_t *c_handle, int32_t *f_handle)
{
    MPI_Group g;
    int rc;
    if ((rc = mp_group_lookup(group, &g)))
        return rc;
    if (!c_handle && !f_handle)
        return mp_fail_null_output("handle");
    return put_handles((int64_t)(intptr_t)g, f_handle ? GROUP_C2F(g) : 0, c_handle, f_handle);
}

/* The MPI communicator a handle names, refused when it cannot be one of this ABI's. */
static int comm_of_handle(int64_t handle, int fortran, MPI_Comm *c)
{
    if (fortran || sizeof(MPI_Comm) < sizeof(int64_t)) {
        if (handle != (int64_t)(int32_t)handle)
            return mp_fail(MP_EINVAL, "%s handle %lld does not fit in 32 bits", fortran ? "a Fortran" : "an MPICH",
                           (long long)handle);
    }
    *c = fortran ? COMM_F2C((MPI_Fint)handle) : (MPI_Comm)(intptr_t)handle;
    return 0;
}

int mp_comm_from_handle(int64_t handle, int fortran, int owned, mp_comm_t *comm)
{
    MPI_Comm c = MPI_COMM_NULL;
    int rc;
    if (!mp_ready())
        return mp_fail_state();
    if (!comm)
        return mp_fail_null_output("communicator");
    if (fortran != 0 && fortran != 1)
        return mp_fail(MP_EINVAL, "fortran is %d, not 0 (a C handle) or 1 (a Fortran handle)", fortran);
    if ((rc = comm_of_handle(handle, fortran, &c)))
        return rc;
    if (c == MPI_COMM_NULL)
        return mp_fail(MP_EINVAL, "the handle is MPI_COMM_NULL");
    /* The predefined ones are the core's already, and never freed (a session-only core has neither). */
    if (c == MPI_COMM_WORLD || c == MPI_COMM_SELF) {
        mp_comm_t h = c == MPI_COMM_WORLD ? MP_COMM_WORLD : MP_COMM_SELF;
        if (!mp_comm_get(h))
            return mp_fail(MP_ESTATE, "%s is not usable: MPI was started by sessions only",
                           h == MP_COMM_WORLD ? "MPI_COMM_WORLD" : "MPI_COMM_SELF");
        *comm = h;
        return 0;
    }
    return mp_comm_register_as(c, !owned, comm);
}
