/*
 * mpi_faults.c - libmpi-faults.so (MPICH ABI) and libmpi-faults-ompi.so (Open MPI): the MPI
 * library itself, with failures a test arms.  It needs the real library (DT_NEEDED) and defines
 * the MPI calls below over their PMPI_ entries; everything else resolves to the real library.
 * Loaded as MOTOR_MPI_LIBRARY, the core binds these definitions (dlsym on this library's handle
 * finds them first), so an armed call fails inside "MPI" as a real library's failure would:
 * the caller gets the error class as the return code (communicators use MPI_ERRORS_RETURN),
 * nothing is done, and every handle the call would have written is set to garbage (0x5e bytes,
 * an invalid handle under MPICH and an unmapped address under Open MPI) so that a caller who
 * uses the output of a failed call is caught.
 *
 * The test program arms a call on the rank it chooses, just before the operation under test
 * (tests/Scenarios/Failures/ErrorsInsideMpiOnDemand.cs, through these exports):
 *
 *   mpi_faults_arm("MPI_Isend", skip, times, "MPI_ERR_OTHER")  the next skip calls pass, the
 *        times after them fail with that class; returns the class's value in this library's
 *        ABI, or -1 for a call or class not listed here
 *   mpi_faults_failed("MPI_Isend")                        calls failed so far
 *   mpi_faults_live("comm"), ("win"), ("file"), ("type") communicators, windows, files and
 *                                                         datatypes made here and not freed
 *   mpi_faults_clear()                                    disarms every call, counts kept
 *
 * MPI_Wait, MPI_Waitall and MPI_Testall fail after completing (a set: part of it, the rest left
 * pending).  "MPI_Waitall_plain" and "MPI_Testall_plain" arm the other way a set can fail: the
 * call returns the class itself, not MPI_ERR_IN_STATUS, having completed nothing.
 * "MPI_Test_untouched" arms a test that fails and leaves its request as it was, the operation
 * still pending (what a library that does not end a failed operation leaves);
 * "MPI_Cancel_ignored" a cancel that succeeds without cancelling anything; "MPI_Testall_incomplete" a
 * test of a set that says none completed, touching nothing (a poll before a wait that then waits); "MPI_Testsome" a test
 * of a set (the progress engine's) that fails having done nothing, its count and indices garbage.  A request a
 * failed call poisoned, passed back to MPI (a start, test, wait or free), stops the job.
 *
 * Only the calls listed here can fail; MPI-4.0 calls only against a library that has them.
 */
#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAULTS_API __attribute__((visibility("default")))

#if MPI_VERSION >= 4
#define FAULTS_MPI4(X)                                                                             \
    X(Bcast_init, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Info i, MPI_Request *r), \
      (b, n, t, root, c, i, r), r)                                                                  \
    X(Psend_init, (const void *b, int parts, MPI_Count n, MPI_Datatype t, int dest, int tag,        \
                   MPI_Comm c, MPI_Info i, MPI_Request *r), (b, parts, n, t, dest, tag, c, i, r), r) \
    X(Precv_init, (void *b, int parts, MPI_Count n, MPI_Datatype t, int src, int tag, MPI_Comm c,   \
                   MPI_Info i, MPI_Request *r), (b, parts, n, t, src, tag, c, i, r), r)              \
    X(Pready, (int part, MPI_Request r), (part, r), NO_OUTPUT)
#else
#define FAULTS_MPI4(X)
#endif

/* name, parameters, arguments, the handle a failure poisons (NO_OUTPUT: none) */
#define FAULTS_CALLS(X)                                                                            \
    X(Send, (const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c),                  \
      (b, n, t, dest, tag, c), NO_OUTPUT)                                                           \
    X(Recv, (void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Status *s),          \
      (b, n, t, src, tag, c, s), NO_OUTPUT)                                                         \
    X(Isend, (const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c, MPI_Request *r), \
      (b, n, t, dest, tag, c, r), r)                                                                \
    X(Issend, (const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c, MPI_Request *r), \
      (b, n, t, dest, tag, c, r), r)                                                                \
    X(Irecv, (void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *r),        \
      (b, n, t, src, tag, c, r), r)                                                                 \
    X(Send_init, (const void *b, int n, MPI_Datatype t, int dest, int tag, MPI_Comm c,              \
                  MPI_Request *r), (b, n, t, dest, tag, c, r), r)                                   \
    X(Recv_init, (void *b, int n, MPI_Datatype t, int src, int tag, MPI_Comm c, MPI_Request *r),    \
      (b, n, t, src, tag, c, r), r)                                                                 \
    X(Mprobe, (int src, int tag, MPI_Comm c, MPI_Message *m, MPI_Status *s), (src, tag, c, m, s), m) \
    X(Improbe, (int src, int tag, MPI_Comm c, int *flag, MPI_Message *m, MPI_Status *s),            \
      (src, tag, c, flag, m, s), m)                                                                 \
    X(Imrecv, (void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Request *r), (b, n, t, m, r), r) \
    X(Barrier, (MPI_Comm c), (c), NO_OUTPUT)                                                       \
    X(Bcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c), (b, n, t, root, c), NO_OUTPUT) \
    X(Allreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c),            \
      (s, r, n, t, op, c), NO_OUTPUT)                                                               \
    X(Ibcast, (void *b, int n, MPI_Datatype t, int root, MPI_Comm c, MPI_Request *r),               \
      (b, n, t, root, c, r), r)                                                                     \
    X(Iallreduce, (const void *s, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,           \
                   MPI_Request *r), (s, rb, n, t, op, c, r), r)                                     \
    X(Iallgather, (const void *s, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,       \
                   MPI_Comm c, MPI_Request *r), (s, sn, st, rb, rn, rt, c, r), r)                   \
    X(Ineighbor_alltoall, (const void *s, int sn, MPI_Datatype st, void *rb, int rn,                \
                           MPI_Datatype rt, MPI_Comm c, MPI_Request *r),                            \
      (s, sn, st, rb, rn, rt, c, r), r)                                                             \
    X(Allgather, (const void *s, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,        \
                  MPI_Comm c), (s, sn, st, rb, rn, rt, c), NO_OUTPUT)                               \
    X(Comm_set_errhandler, (MPI_Comm c, MPI_Errhandler h), (c, h), NO_OUTPUT)                       \
    X(Type_contiguous, (int n, MPI_Datatype old, MPI_Datatype *t), (n, old, t), t)                  \
    X(Type_create_resized, (MPI_Datatype old, MPI_Aint lb, MPI_Aint extent, MPI_Datatype *t),       \
      (old, lb, extent, t), t)                                                                      \
    X(Type_commit, (MPI_Datatype *t), (t), NO_OUTPUT)                                               \
    X(Win_set_errhandler, (MPI_Win w, MPI_Errhandler h), (w, h), NO_OUTPUT)                         \
    X(Comm_dup, (MPI_Comm c, MPI_Comm *out), (c, out), out)                                         \
    X(Comm_split, (MPI_Comm c, int color, int key, MPI_Comm *out), (c, color, key, out), out)       \
    X(Comm_split_type, (MPI_Comm c, int type, int key, MPI_Info i, MPI_Comm *out),                  \
      (c, type, key, i, out), out)                                                                  \
    X(Comm_create, (MPI_Comm c, MPI_Group g, MPI_Comm *out), (c, g, out), out)                      \
    X(Intercomm_create, (MPI_Comm local, int ll, MPI_Comm peer, int rl, int tag, MPI_Comm *out),    \
      (local, ll, peer, rl, tag, out), out)                                                         \
    X(Comm_spawn, (const char *cmd, char *argv[], int n, MPI_Info i, int root, MPI_Comm c,          \
                   MPI_Comm *out, int errs[]), (cmd, argv, n, i, root, c, out, errs), out)          \
    X(Comm_accept, (const char *port, MPI_Info i, int root, MPI_Comm c, MPI_Comm *out),             \
      (port, i, root, c, out), out)                                                                 \
    X(Comm_connect, (const char *port, MPI_Info i, int root, MPI_Comm c, MPI_Comm *out),            \
      (port, i, root, c, out), out)                                                                 \
    X(Cart_create, (MPI_Comm c, int nd, const int dims[], const int periods[], int reorder,         \
                    MPI_Comm *out), (c, nd, dims, periods, reorder, out), out)                      \
    X(Win_create, (void *base, MPI_Aint size, int unit, MPI_Info i, MPI_Comm c, MPI_Win *w),        \
      (base, size, unit, i, c, w), w)                                                               \
    X(Win_allocate, (MPI_Aint size, int unit, MPI_Info i, MPI_Comm c, void *base, MPI_Win *w),      \
      (size, unit, i, c, base, w), w)                                                               \
    X(Win_create_dynamic, (MPI_Info i, MPI_Comm c, MPI_Win *w), (i, c, w), w)                       \
    X(Win_allocate_shared, (MPI_Aint size, int unit, MPI_Info i, MPI_Comm c, void *base, MPI_Win *w), \
      (size, unit, i, c, base, w), w)                                                               \
    X(Win_shared_query, (MPI_Win w, int rank, MPI_Aint *size, int *unit, void *base),               \
      (w, rank, size, unit, base), size)                                                            \
    X(Win_attach, (MPI_Win w, void *base, MPI_Aint size), (w, base, size), NO_OUTPUT)               \
    X(File_open, (MPI_Comm c, const char *path, int mode, MPI_Info i, MPI_File *f),                 \
      (c, path, mode, i, f), f)                                                                     \
    X(File_set_errhandler, (MPI_File f, MPI_Errhandler h), (f, h), NO_OUTPUT)                       \
    X(File_set_view, (MPI_File f, MPI_Offset disp, MPI_Datatype et, MPI_Datatype ft, const char *rep, \
                      MPI_Info i), (f, disp, et, ft, rep, i), NO_OUTPUT)                            \
    X(Win_fence, (int a, MPI_Win w), (a, w), NO_OUTPUT)                                             \
    X(Win_lock, (int type, int rank, int a, MPI_Win w), (type, rank, a, w), NO_OUTPUT)              \
    X(Win_unlock, (int rank, MPI_Win w), (rank, w), NO_OUTPUT)                                      \
    X(Win_lock_all, (int a, MPI_Win w), (a, w), NO_OUTPUT)                                          \
    X(Win_flush, (int rank, MPI_Win w), (rank, w), NO_OUTPUT)                                       \
    X(Put, (const void *o, int on, MPI_Datatype ot, int rank, MPI_Aint disp, int tn,                \
            MPI_Datatype tt, MPI_Win w), (o, on, ot, rank, disp, tn, tt, w), NO_OUTPUT)             \
    X(Accumulate, (const void *o, int on, MPI_Datatype ot, int rank, MPI_Aint disp, int tn,         \
                   MPI_Datatype tt, MPI_Op op, MPI_Win w), (o, on, ot, rank, disp, tn, tt, op, w),  \
      NO_OUTPUT)                                                                                    \
    X(Compare_and_swap, (const void *o, const void *cmp, void *res, MPI_Datatype t, int rank,      \
                         MPI_Aint disp, MPI_Win w), (o, cmp, res, t, rank, disp, w), NO_OUTPUT)     \
    FAULTS_MPI4(X)

/* Starts, completions and the cancel, defined below: they refuse a poisoned request;
 * completions fail after MPI completed the operation. */
#define FAULTS_COMPLETIONS(X) X(Start, , , ) X(Startall, , , ) X(Wait, , , ) X(Waitall, , , ) X(Testall, , , ) X(Waitall_plain, , , ) X(Testall_plain, , , ) X(Test_untouched, , , ) X(Cancel_ignored, , , ) X(Testsome, , , ) X(Testall_incomplete, , , )

enum {
#define FAULTS_ID(name, params, args, out) ID_##name,
    FAULTS_CALLS(FAULTS_ID)
    FAULTS_COMPLETIONS(FAULTS_ID)
#undef FAULTS_ID
    ID_COUNT
};

static const char *const k_names[ID_COUNT] = {
#define FAULTS_NAME(name, params, args, out) "MPI_" #name,
    FAULTS_CALLS(FAULTS_NAME)
    FAULTS_COMPLETIONS(FAULTS_NAME)
#undef FAULTS_NAME
};

typedef struct {
    _Atomic long skip;   /* calls that still pass before the failures */
    _Atomic long times;  /* calls that fail after them */
    _Atomic int code;    /* what they return */
    _Atomic long failed; /* calls failed so far */
} fault_t;

static fault_t g_faults[ID_COUNT];

/* 1 when this call fails (then *code), 0 when it goes to MPI. */
static int fault_hit(int id, int *code)
{
    fault_t *f = &g_faults[id];
    if (atomic_load_explicit(&f->times, memory_order_relaxed) <= 0)
        return 0;
    if (atomic_fetch_sub(&f->skip, 1) > 0)
        return 0;
    atomic_store(&f->skip, 0);
    if (atomic_fetch_sub(&f->times, 1) <= 0) {
        atomic_store(&f->times, 0);
        return 0;
    }
    atomic_fetch_add(&f->failed, 1);
    *code = atomic_load(&f->code);
    return 1;
}

static char g_no_output; /* what a call with no handle to poison poisons */
#define NO_OUTPUT (&g_no_output)

/* A handle a failed call left poisoned, passed back to MPI: the caller used the output of a
 * failed call.  The job is stopped here, naming the call, rather than left to what the
 * library does with garbage (MPICH returns an error the caller may ignore). */
static int poisoned(const void *handle, size_t size)
{
    const unsigned char *b = handle;
    for (size_t i = 0; i < size; i++)
        if (b[i] != 0x5e)
            return 0;
    return 1;
}

static void refuse_poisoned(const char *call)
{
    fprintf(stderr, "mpi_faults: %s was given a handle that a failed MPI call left undefined\n", call);
    fflush(stderr);
    abort();
}

#define CHECK_REQUESTS(call, n, r)                                                                  \
    do {                                                                                           \
        for (int i_ = 0; i_ < (n); i_++)                                                           \
            if (poisoned(&(r)[i_], sizeof *(r)))                                                   \
                refuse_poisoned(call);                                                             \
    } while (0)

/* Communicators, windows, files and datatypes that exist, made by the calls here and freed by
 * MPI_Comm_free, MPI_Win_free, MPI_File_close and MPI_Type_free: a creation that fails part way
 * must leave these where they were. */
static _Atomic long g_comms, g_wins, g_files, g_types;

static void made(int id, int rc, const void *out)
{
    if (rc != MPI_SUCCESS)
        return;
    if ((id == ID_Comm_dup || id == ID_Comm_split || id == ID_Comm_split_type || id == ID_Comm_create ||
         id == ID_Intercomm_create || id == ID_Cart_create || id == ID_Comm_spawn || id == ID_Comm_accept ||
         id == ID_Comm_connect) && *(const MPI_Comm *)out != MPI_COMM_NULL)
        atomic_fetch_add(&g_comms, 1);
    else if ((id == ID_Win_create || id == ID_Win_allocate || id == ID_Win_create_dynamic ||
              id == ID_Win_allocate_shared) && *(const MPI_Win *)out != MPI_WIN_NULL)
        atomic_fetch_add(&g_wins, 1);
    else if (id == ID_File_open && *(const MPI_File *)out != MPI_FILE_NULL)
        atomic_fetch_add(&g_files, 1);
    else if (id == ID_Type_contiguous || id == ID_Type_create_resized)
        atomic_fetch_add(&g_types, 1);
}

#define FAULTS_DEFINE(name, params, args, out)                                                     \
    FAULTS_API int MPI_##name params                                                               \
    {                                                                                              \
        int code, rc;                                                                              \
        if (fault_hit(ID_##name, &code)) {                                                         \
            memset((out), 0x5e, sizeof *(out));                                                   \
            return code;                                                                           \
        }                                                                                          \
        rc = PMPI_##name args;                                                                     \
        made(ID_##name, rc, (out));                                                                \
        return rc;                                                                                 \
    }
FAULTS_CALLS(FAULTS_DEFINE)
#undef FAULTS_DEFINE

/* The frees of what mpi_faults_live counts. */
#define FAULTS_FREE(name, type, count)                                                             \
    FAULTS_API int MPI_##name(type *h)                                                             \
    {                                                                                              \
        int rc = PMPI_##name(h);                                                                   \
        if (rc == MPI_SUCCESS)                                                                     \
            atomic_fetch_sub(&(count), 1);                                                         \
        return rc;                                                                                 \
    }
FAULTS_FREE(Comm_free, MPI_Comm, g_comms)
FAULTS_FREE(Win_free, MPI_Win, g_wins)
FAULTS_FREE(File_close, MPI_File, g_files)
FAULTS_FREE(Type_free, MPI_Datatype, g_types)
#undef FAULTS_FREE

FAULTS_API int MPI_Start(MPI_Request *r)
{
    int code;
    CHECK_REQUESTS("MPI_Start", 1, r);
    return fault_hit(ID_Start, &code) ? code : PMPI_Start(r);
}

FAULTS_API int MPI_Startall(int n, MPI_Request r[])
{
    int code;
    CHECK_REQUESTS("MPI_Startall", n, r);
    return fault_hit(ID_Startall, &code) ? code : PMPI_Startall(n, r);
}

/* The other calls that take a request a failed post may have left. */
FAULTS_API int MPI_Test(MPI_Request *r, int *flag, MPI_Status *st)
{
    int code;
    CHECK_REQUESTS("MPI_Test", 1, r);
    if (fault_hit(ID_Test_untouched, &code)) {
        *flag = 0;
        return code;
    }
    return PMPI_Test(r, flag, st);
}

FAULTS_API int MPI_Request_free(MPI_Request *r)
{
    CHECK_REQUESTS("MPI_Request_free", 1, r);
    return PMPI_Request_free(r);
}

FAULTS_API int MPI_Request_get_status(MPI_Request r, int *flag, MPI_Status *st)
{
    CHECK_REQUESTS("MPI_Request_get_status", 1, &r);
    return PMPI_Request_get_status(r, flag, st);
}

/* "MPI_Testsome": the set's test fails having done nothing, every request as it was, the count
 * and the indices it would have written garbage. */
FAULTS_API int MPI_Testsome(int n, MPI_Request *r, int *outcount, int *indices, MPI_Status *st)
{
    int code;
    CHECK_REQUESTS("MPI_Testsome", n, r);
    if (fault_hit(ID_Testsome, &code)) {
        memset(outcount, 0x5e, sizeof *outcount);
        if (n > 0)
            memset(indices, 0x5e, (size_t)n * sizeof *indices);
        return code;
    }
    return PMPI_Testsome(n, r, outcount, indices, st);
}

/* "MPI_Cancel_ignored": the cancel succeeds and does nothing, the operation left as it was (as
 * for a send under way that MPI can no longer cancel). */
FAULTS_API int MPI_Cancel(MPI_Request *r)
{
    int code;
    CHECK_REQUESTS("MPI_Cancel", 1, r);
    if (fault_hit(ID_Cancel_ignored, &code))
        return MPI_SUCCESS;
    return PMPI_Cancel(r);
}

/* A failed completion: the operation has completed (it is freed, its data is in), and MPI
 * reports that it failed, in the status and the return code. */
FAULTS_API int MPI_Wait(MPI_Request *r, MPI_Status *st)
{
    int code, rc;
    CHECK_REQUESTS("MPI_Wait", 1, r);
    rc = PMPI_Wait(r, st);
    if (rc != MPI_SUCCESS || !fault_hit(ID_Wait, &code))
        return rc;
    if (st != MPI_STATUS_IGNORE)
        st->MPI_ERROR = code;
    return code;
}

/* A set failed by its second operation (its only one when alone), as MPI-4.0 3.7.5 lets a
 * library report it: the operations before it complete, it completes with the error, and those
 * after it stay pending (MPI_ERR_PENDING), for a later completion call.  Without statuses
 * (MPI_STATUSES_IGNORE) the same, as MPICH 4.0 does it: the code is lost, the caller learns
 * MPI_ERR_IN_STATUS alone, and the pending ones are the requests not freed. */
static int fail_set(int n, MPI_Request r[], MPI_Status st[], int code)
{
    int failing = n > 1 ? 1 : 0, ignored = st == MPI_STATUSES_IGNORE;
    for (int i = 0; i < n; i++) {
        if (i <= failing) {
            int rc = PMPI_Wait(&r[i], ignored ? MPI_STATUS_IGNORE : &st[i]);
            if (!ignored)
                st[i].MPI_ERROR = i == failing ? code : rc;
        } else if (!ignored) {
            st[i].MPI_ERROR = MPI_ERR_PENDING;
        }
    }
    return MPI_ERR_IN_STATUS;
}

FAULTS_API int MPI_Waitall(int n, MPI_Request r[], MPI_Status st[])
{
    int code;
    CHECK_REQUESTS("MPI_Waitall", n, r);
    if (fault_hit(ID_Waitall_plain, &code))
        return code;
    if (n < 1 || !fault_hit(ID_Waitall, &code))
        return PMPI_Waitall(n, r, st);
    return fail_set(n, r, st, code);
}

/* The same failure found by a test (a poll before a wait), whether or not the set had completed. */
FAULTS_API int MPI_Testall(int n, MPI_Request r[], int *flag, MPI_Status st[])
{
    int code;
    CHECK_REQUESTS("MPI_Testall", n, r);
    if (fault_hit(ID_Testall_plain, &code))
        return code;
    if (fault_hit(ID_Testall_incomplete, &code)) {
        *flag = 0; /* nothing completed, nothing touched: what a test may always say */
        return MPI_SUCCESS;
    }
    if (n < 1 || !fault_hit(ID_Testall, &code))
        return PMPI_Testall(n, r, flag, st);
    *flag = 1;
    return fail_set(n, r, st, code);
}

static int find(const char *function)
{
    for (int i = 0; function && i < ID_COUNT; i++)
        if (!strcmp(k_names[i], function))
            return i;
    return -1;
}

/* The classes a failure can take: named, since their values differ between the ABIs. */
static int error_class(const char *name)
{
    static const struct { const char *name; int value; } classes[] = {
        { "MPI_ERR_OTHER", MPI_ERR_OTHER }, { "MPI_ERR_INTERN", MPI_ERR_INTERN },
        { "MPI_ERR_NO_MEM", MPI_ERR_NO_MEM }, { "MPI_ERR_TRUNCATE", MPI_ERR_TRUNCATE },
        { "MPI_ERR_IO", MPI_ERR_IO }, { "MPI_ERR_COMM", MPI_ERR_COMM },
    };
    for (size_t i = 0; name && i < sizeof classes / sizeof *classes; i++)
        if (!strcmp(classes[i].name, name))
            return classes[i].value;
    return -1;
}

FAULTS_API int mpi_faults_arm(const char *function, long skip, long times, const char *class_name)
{
    int id = find(function), error_class_value = error_class(class_name);
    if (id < 0 || error_class_value < 0 || skip < 0 || times < 0)
        return -1;
    atomic_store(&g_faults[id].times, 0); /* no call fails while the rest is set */
    atomic_store(&g_faults[id].code, error_class_value);
    atomic_store(&g_faults[id].skip, skip);
    atomic_store(&g_faults[id].times, times);
    return error_class_value;
}

FAULTS_API long mpi_faults_failed(const char *function)
{
    int id = find(function);
    return id < 0 ? -1 : atomic_load(&g_faults[id].failed);
}

/* Communicators ("comm"), windows ("win"), files ("file") or datatypes ("type") made and not freed since MPI started. */
FAULTS_API long mpi_faults_live(const char *kind)
{
    if (!kind)
        return -1;
    return !strcmp(kind, "comm") ? atomic_load(&g_comms) : !strcmp(kind, "win") ? atomic_load(&g_wins)
         : !strcmp(kind, "file") ? atomic_load(&g_files) : !strcmp(kind, "type") ? atomic_load(&g_types) : -1;
}

FAULTS_API void mpi_faults_clear(void)
{
    for (int i = 0; i < ID_COUNT; i++)
        atomic_store(&g_faults[i].times, 0);
}
