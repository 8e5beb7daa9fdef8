/* p2p.h - what every unit that posts sends and receives shares (p2p.c, the
 * request lists of lists.c): the checks of a send's and a receive's arguments
 * (every check, for C callers: checked.c; and the trusted path's translation) and the calls
 * into MPI, inlined into each posting call, since this path is measured against C calling
 * MPI directly. */
#ifndef MPCORE_P2P_H
#define MPCORE_P2P_H

#include "comms.h"
#include "requests.h"

#include <limits.h>

#pragma GCC visibility push(hidden)

static inline int check_count(const void *buf, int64_t bytes)
{
    if (MP_UNLIKELY(bytes < 0))
        return mp_fail(MP_ECOUNT, "byte count %lld is negative", (long long)bytes);
    if (MP_UNLIKELY(!buf && bytes > 0))
        return mp_fail(MP_EINVAL, "buffer is NULL but byte count is %lld", (long long)bytes);
    return 0;
}

/* A point-to-point operation whose arguments were accepted. */
static inline void count_p2p(mp_counts_t *k, int64_t bytes)
{
    mp_count(&k->p2p_ops, 1);
    mp_count(&k->p2p_bytes, (uint64_t)bytes);
}

/* The checks of a send's arguments: 0 with the communicator and MPI's rank
 * (MPI_PROC_NULL for ProcNull), or the error.  Inlined into the posting calls:
 * the send/recv path is measured against C calling MPI directly. */
static MP_INLINE int send_args(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm,
                               int mode, const comm_entry_t **ce, int *d)
{
    int rc;
    if ((rc = mp_comm_lookup(comm, ce)))
        return rc;
    if ((rc = mp_check_dest(*ce, dest, d)) || (rc = mp_check_send_tag(tag)) ||
        (rc = check_count(buf, bytes)))
        return rc;
    if (MP_UNLIKELY(mode != MP_SEND_STANDARD && mode != MP_SEND_SYNC))
        return mp_fail(MP_EINVAL, "send mode %d is not MP_SEND_STANDARD or MP_SEND_SYNC", mode);
    return 0;
}

static MP_INLINE int recv_args(const void *buf, int64_t bytes, int source, int tag, mp_comm_t comm,
                               const comm_entry_t **ce, int *s, int *t)
{
    int rc;
    if ((rc = mp_comm_lookup(comm, ce)))
        return rc;
    if ((rc = mp_check_source(*ce, source, s)) || (rc = mp_check_recv_tag(tag, t)))
        return rc;
    return check_count(buf, bytes);
}

/* A message above INT_MAX bytes needs MPI-4's large-count form (have_fn: e.g.
 * pal_mpi.Isend_c is there), which MPI-3 libraries and Open MPI 4 lack: refused with
 * MP_ECOUNT.  Blocking calls and sendrecv ask before anything is counted or posted,
 * so that neither half of a sendrecv is posted when one would be refused. */
static inline int check_large_count(int64_t bytes, int have_fn)
{
    if (MP_LIKELY(bytes <= INT_MAX) || have_fn)
        return 0;
    return mp_fail(MP_ECOUNT, "message of %lld bytes needs MPI-4 large-count functions, "
                   "which this MPI library lacks", (long long)bytes);
}

/* The large-count check of a send in mode (MPI_Isend_c or MPI_Issend_c) and of a receive. */
static inline int check_send_count(int64_t bytes, int mode)
{
    if (MP_LIKELY(bytes <= INT_MAX)) /* first: nothing else is loaded on the usual path */
        return 0;
    return check_large_count(bytes, (mode == MP_SEND_SYNC ? pal_mpi.Issend_c : pal_mpi.Isend_c) != NULL);
}

static inline int check_recv_count(int64_t bytes)
{
    if (MP_LIKELY(bytes <= INT_MAX))
        return 0;
    return check_large_count(bytes, pal_mpi.Irecv_c != NULL);
}

/* MPI_Isend/MPI_Issend of checked arguments (d not ProcNull). */
static MP_INLINE int issue_send(const void *buf, int64_t bytes, int d, int tag, const comm_entry_t *ce,
                                int mode, MPI_Request *r)
{
    int rc;
    if (MP_LIKELY(bytes <= INT_MAX)) { /* two calls, not a choice of pointer: one load, no select */
        if (MP_UNLIKELY(mode == MP_SEND_SYNC))
            return MP_MPI_CHECK(pal_mpi.Issend(buf, (int)bytes, MPI_BYTE, d, tag, ce->mpi, r), "MPI_Issend");
        return MP_MPI_CHECK(pal_mpi.Isend(buf, (int)bytes, MPI_BYTE, d, tag, ce->mpi, r), "MPI_Isend");
    }
    if ((rc = check_send_count(bytes, mode)))
        return rc;
    rc = (mode == MP_SEND_SYNC ? pal_mpi.Issend_c : pal_mpi.Isend_c)(
        buf, (MPI_Count)bytes, MPI_BYTE, d, tag, ce->mpi, r);
    return MP_MPI_CHECK(rc, mode == MP_SEND_SYNC ? "MPI_Issend_c" : "MPI_Isend_c");
}

/* MPI_Irecv of checked arguments (s not ProcNull). */
static MP_INLINE int issue_recv(void *buf, int64_t bytes, int s, int t, const comm_entry_t *ce, MPI_Request *r)
{
    if (MP_LIKELY(bytes <= INT_MAX))
        return MP_MPI_CHECK(pal_mpi.Irecv(buf, (int)bytes, MPI_BYTE, s, t, ce->mpi, r), "MPI_Irecv");
    int rc;
    if ((rc = check_recv_count(bytes)))
        return rc;
    return MP_MPI_CHECK(pal_mpi.Irecv_c(buf, (MPI_Count)bytes, MPI_BYTE, s, t, ce->mpi, r),
                        "MPI_Irecv_c");
}

/* ---- the trusted path ----
 * The table's send, recv, isend, irecv, list_isend and list_irecv trust their caller's checks
 * (System.MP's, or checked.c's for C callers): the core looks only at the communicator's place
 * in its table and MPI's state, and translates the special ranks and tags. */

/* The communicator of a caller that checked its handle: no liveness check, only the table
 * bounds and MPI's state. */
static MP_INLINE int comm_of_checked(mp_comm_t comm, const comm_entry_t **ce)
{
    *ce = MP_LIKELY((unsigned)comm < MP_MAX_COMMS) ? &mp_g_comms[comm] : 0;
    return MP_LIKELY(*ce && mp_ready()) ? 0 : mp_fail_comm(comm);
}

/* A checked send's communicator and MPI's rank (MPI_PROC_NULL for ProcNull), or the error. */
static MP_INLINE int trusted_send_args(int dest, mp_comm_t comm, const comm_entry_t **ce, int *d)
{
    int rc;
    if ((rc = comm_of_checked(comm, ce)))
        return rc;
    *d = dest == MP_PROC_NULL ? MPI_PROC_NULL : dest;
    return 0;
}

/* A checked receive's communicator and MPI's source and tag, the special values translated. */
static MP_INLINE int trusted_recv_args(int source, int tag, mp_comm_t comm, const comm_entry_t **ce, int *s, int *t)
{
    int rc;
    if ((rc = comm_of_checked(comm, ce)))
        return rc;
    *s = MP_LIKELY(source >= 0) ? source : source == MP_ANY_SOURCE ? MPI_ANY_SOURCE : MPI_PROC_NULL;
    *t = MP_LIKELY(tag >= 0) ? tag : MPI_ANY_TAG;
    return 0;
}

#pragma GCC visibility pop

#endif
