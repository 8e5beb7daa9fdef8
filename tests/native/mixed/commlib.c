/* commlib.c - a small native MPI library as a C# program calls one (NativeCommTests, the
 * scenario native-comm): functions that take a communicator (MPI_Comm, or its Fortran
 * form) and do their own collective and point-to-point on it, and functions that make a
 * communicator and hand it over.  Built for each MPI (libcommlib.so, libcommlib-ompi.so). */
#include <mpi.h>

#define COMMLIB_API __attribute__((visibility("default")))

/* On comm: the Allreduce of rank + 1, then rank * 100 to the next rank around a ring
 * (MPI_Sendrecv).  Returns that sum * 1000 + what came from the previous rank, or -1 - the
 * MPI error. */
COMMLIB_API int commlib_ring(MPI_Comm comm)
{
    int rank, size, one, sum = 0, mine, got = -1, rc;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    one = rank + 1;
    if ((rc = MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm)) != MPI_SUCCESS)
        return -1 - rc;
    mine = rank * 100;
    if ((rc = MPI_Sendrecv(&mine, 1, MPI_INT, (rank + 1) % size, 7, &got, 1, MPI_INT, (rank + size - 1) % size, 7,
                           comm, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
        return -1 - rc;
    return sum * 1000 + got;
}

COMMLIB_API int commlib_ring_f(MPI_Fint comm)
{
    return commlib_ring(MPI_Comm_f2c(comm));
}

/* A new communicator of comm's ranks in reverse order (MPI_Comm_split, key size - 1 - rank),
 * handed to the caller: MPI_COMM_NULL when the split failed. */
COMMLIB_API MPI_Comm commlib_reversed(MPI_Comm comm)
{
    int rank, size;
    MPI_Comm out = MPI_COMM_NULL;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (MPI_Comm_split(comm, 0, size - 1 - rank, &out) != MPI_SUCCESS)
        return MPI_COMM_NULL;
    return out;
}

COMMLIB_API MPI_Fint commlib_reversed_f(MPI_Fint comm)
{
    return MPI_Comm_c2f(commlib_reversed(MPI_Comm_f2c(comm)));
}

/* Frees a communicator this library made and lent: MPI's error code (0 when freed). */
COMMLIB_API int commlib_free_f(MPI_Fint comm)
{
    MPI_Comm c = MPI_Comm_f2c(comm);
    return MPI_Comm_free(&c);
}

/* The size of a group given in Fortran form, or -1. */
COMMLIB_API int commlib_group_size_f(MPI_Fint group)
{
    int size = -1;
    MPI_Group_size(MPI_Group_f2c(group), &size);
    return size;
}

/* MPI_COMM_NULL in Fortran form. */
COMMLIB_API MPI_Fint commlib_null_f(void)
{
    return MPI_Comm_c2f(MPI_COMM_NULL);
}
