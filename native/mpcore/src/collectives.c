/*
 * collectives.c - collective operations (MPI-4.0 chapter 6), element types,
 * reduction operations and user-defined operations.
 *
 * A blocking collective runs MPI's blocking form in a blocking call: MPICH's
 * blocking collectives use tuned (shared-memory) algorithms that its
 * nonblocking schedules lack -- posting MPI_Iallreduce and testing it was
 * measured at 1.9x the latency of MPI_Allreduce for 8 bytes on 2 ranks.
 * Nonblocking collectives are posted and tracked like MPI_Isend.  One
 * descriptor (mp_coll_t) describes every collective, so validation, the call
 * and tracking are written once.
 */
#include "comms.h"
#include "persistent.h"
#include "requests.h"
#include "collectives.h"

#include <limits.h>
#include <stddef.h>
#include <string.h>

/* ---- element types ---- */

typedef struct dtype_info {
    MPI_Datatype mpi;
    int size;
    int cls; /* what built-in ops may reduce it */
} dtype_info_t;

enum { CLS_OPAQUE = 0, CLS_INT = 1, CLS_FLOAT = 2, CLS_BOOL = 4, CLS_PAIR = 8 };

static dtype_info_t dtype_builtin(int dt)
{
    dtype_info_t d = { MPI_DATATYPE_NULL, 0, CLS_OPAQUE };
    switch (dt) {
    case MP_DT_INT8: d = (dtype_info_t){ MPI_INT8_T, 1, CLS_INT }; break;
    case MP_DT_UINT8: d = (dtype_info_t){ MPI_UINT8_T, 1, CLS_INT }; break;
    case MP_DT_INT16: d = (dtype_info_t){ MPI_INT16_T, 2, CLS_INT }; break;
    case MP_DT_UINT16: d = (dtype_info_t){ MPI_UINT16_T, 2, CLS_INT }; break;
    case MP_DT_INT32: d = (dtype_info_t){ MPI_INT32_T, 4, CLS_INT }; break;
    case MP_DT_UINT32: d = (dtype_info_t){ MPI_UINT32_T, 4, CLS_INT }; break;
    case MP_DT_INT64: d = (dtype_info_t){ MPI_INT64_T, 8, CLS_INT }; break;
    case MP_DT_UINT64: d = (dtype_info_t){ MPI_UINT64_T, 8, CLS_INT }; break;
    case MP_DT_FLOAT: d = (dtype_info_t){ MPI_FLOAT, 4, CLS_FLOAT }; break;
    case MP_DT_DOUBLE: d = (dtype_info_t){ MPI_DOUBLE, 8, CLS_FLOAT }; break;
    case MP_DT_BOOL: d = (dtype_info_t){ MPI_C_BOOL, 1, CLS_BOOL }; break;
    case MP_DT_FLOAT_INT: d = (dtype_info_t){ MPI_FLOAT_INT, 8, CLS_PAIR }; break;
    case MP_DT_DOUBLE_INT: d = (dtype_info_t){ MPI_DOUBLE_INT, 16, CLS_PAIR }; break;
    case MP_DT_LONG_INT: d = (dtype_info_t){ MPI_LONG_INT, 16, CLS_PAIR }; break;
    case MP_DT_INT_INT: d = (dtype_info_t){ MPI_2INT, 8, CLS_PAIR }; break;
    case MP_DT_SHORT_INT: d = (dtype_info_t){ MPI_SHORT_INT, 8, CLS_PAIR }; break;
    default: break;
    }
    return d;
}

/* Opaque element types (contiguous bytes), created once per size. */
#define OPAQUE_CACHE 64
static struct { int size; MPI_Datatype type; } g_opaque[OPAQUE_CACHE];
static int g_nopaque;
static mp_spin_t g_opaque_lock = MP_SPIN_INIT;

static int opaque_type(int size, MPI_Datatype *out)
{
    int rc = 0;
    mp_spin_lock(&g_opaque_lock);
    for (int i = 0; i < g_nopaque; i++) {
        if (g_opaque[i].size == size) {
            *out = g_opaque[i].type;
            mp_spin_unlock(&g_opaque_lock);
            return 0;
        }
    }
    if (g_nopaque == OPAQUE_CACHE) {
        rc = mp_fail(MP_ENOMEM, "too many distinct element sizes in collectives (at most %d)", OPAQUE_CACHE);
    } else {
        MPI_Datatype t;
        rc = MP_MPI_CHECK(pal_mpi.Type_contiguous(size, MPI_BYTE, &t), "MPI_Type_contiguous");
        if (!rc && (rc = MP_MPI_CHECK(pal_mpi.Type_commit(&t), "MPI_Type_commit")))
            pal_mpi.Type_free(&t); /* made, not cached: the next call of this size makes another */
        if (!rc) {
            g_opaque[g_nopaque].size = size;
            g_opaque[g_nopaque].type = t;
            g_nopaque++;
            *out = t;
        }
    }
    mp_spin_unlock(&g_opaque_lock);
    return rc;
}

static int element_type(const mp_coll_t *c, dtype_info_t *d)
{
    if (c->elem_size <= 0)
        return mp_fail(MP_EINVAL, "element size %d must be positive", c->elem_size);
    if (c->dtype == MP_DT_OPAQUE) {
        d->size = c->elem_size;
        d->cls = CLS_OPAQUE;
        return opaque_type(c->elem_size, &d->mpi);
    }
    *d = dtype_builtin(c->dtype);
    if (d->mpi == MPI_DATATYPE_NULL)
        return mp_fail(MP_EINVAL, "element type %d is not an MP_DT_* value", c->dtype);
    if (d->size != c->elem_size)
        return mp_fail(MP_EINVAL, "element type %d has %d bytes, not %d", c->dtype, d->size, c->elem_size);
    return 0;
}

int mp_coll_element_type(const mp_coll_t *c, MPI_Datatype *type)
{
    dtype_info_t d = { MPI_DATATYPE_NULL, 0, 0 };
    int rc = element_type(c, &d);
    *type = d.mpi;
    return rc;
}

/* ---- user-defined operations ----
 * MPI's user function gets no context pointer, so each user op has its own
 * C trampoline that knows its slot. */

#define MAX_USER_OPS 128
static struct user_op {
    MPI_Op mpi;
    mp_user_fn fn;
    void *state;
    int used;
} g_user_ops[MAX_USER_OPS];
static mp_spin_t g_op_lock = MP_SPIN_INIT;

static void user_dispatch(int slot, void *in, void *inout, int *len)
{
    struct user_op *u = &g_user_ops[slot];
    if (u->fn && len && *len > 0)
        u->fn(in, inout, *len, u->state);
}

#define TRAMP(b, k) \
    static void tramp_##b##_##k(void *in, void *inout, int *len, MPI_Datatype *dt) \
    { (void)dt; user_dispatch((b) * 8 + (k), in, inout, len); }
#define TRAMP8(b) TRAMP(b, 0) TRAMP(b, 1) TRAMP(b, 2) TRAMP(b, 3) \
                  TRAMP(b, 4) TRAMP(b, 5) TRAMP(b, 6) TRAMP(b, 7)
TRAMP8(0) TRAMP8(1) TRAMP8(2) TRAMP8(3) TRAMP8(4) TRAMP8(5) TRAMP8(6) TRAMP8(7)
TRAMP8(8) TRAMP8(9) TRAMP8(10) TRAMP8(11) TRAMP8(12) TRAMP8(13) TRAMP8(14) TRAMP8(15)
#define TREF8(b) tramp_##b##_0, tramp_##b##_1, tramp_##b##_2, tramp_##b##_3, \
                 tramp_##b##_4, tramp_##b##_5, tramp_##b##_6, tramp_##b##_7
static MPI_User_function *const k_tramps[MAX_USER_OPS] = {
    TREF8(0), TREF8(1), TREF8(2), TREF8(3), TREF8(4), TREF8(5), TREF8(6), TREF8(7),
    TREF8(8), TREF8(9), TREF8(10), TREF8(11), TREF8(12), TREF8(13), TREF8(14), TREF8(15),
};

int mp_op_create(mp_user_fn fn, void *state, int commutative, int32_t *op)
{
    int rc;
    if (!mp_ready())
        return mp_fail_state();
    if (!fn || !op)
        return mp_fail(MP_EINVAL, "user operation function or output is NULL");
    mp_spin_lock(&g_op_lock);
    for (int i = 0; i < MAX_USER_OPS; i++) {
        if (g_user_ops[i].used)
            continue;
        g_user_ops[i].used = 1;
        mp_spin_unlock(&g_op_lock);
        g_user_ops[i].fn = fn;
        g_user_ops[i].state = state;
        rc = MP_MPI_CHECK(pal_mpi.Op_create(k_tramps[i], commutative ? 1 : 0, &g_user_ops[i].mpi),
                          "MPI_Op_create");
        if (rc) {
            g_user_ops[i].used = 0;
            return rc;
        }
        *op = MP_OP_USER + i;
        return 0;
    }
    mp_spin_unlock(&g_op_lock);
    return mp_fail(MP_ENOMEM, "too many user operations at once (at most %d)", MAX_USER_OPS);
}

static struct user_op *user_op_get(int32_t op)
{
    int i = op - MP_OP_USER;
    return i >= 0 && i < MAX_USER_OPS && g_user_ops[i].used ? &g_user_ops[i] : NULL;
}

int mp_op_free(int32_t op)
{
    struct user_op *u = user_op_get(op);
    int rc;
    if (!u)
        return mp_fail(MP_EHANDLE, "operation %d is not a live user operation", op);
    if (!mp_ready()) { /* after finalize the MPI object is gone with MPI */
        u->used = 0;
        return 0;
    }
    rc = MP_MPI_CHECK(pal_mpi.Op_free(&u->mpi), "MPI_Op_free");
    u->fn = NULL;
    u->state = NULL;
    u->used = 0;
    return rc;
}

/* ---- built-in operations ---- */

static int reduction_op(const mp_coll_t *c, const dtype_info_t *d, MPI_Op *out)
{
    static const char *const names[] = { "none", "Sum", "Product", "Min", "Max", "LogicalAnd",
                                         "LogicalOr", "LogicalXor", "BitwiseAnd", "BitwiseOr",
                                         "BitwiseXor", "MinLoc", "MaxLoc" };
    int allowed;
    if (c->op >= MP_OP_USER) {
        struct user_op *u = user_op_get(c->op);
        if (!u)
            return mp_fail(MP_EHANDLE, "operation %d is not a live user operation", c->op);
        *out = u->mpi;
        return 0;
    }
    switch (c->op) {
    case MP_OP_SUM: *out = MPI_SUM; allowed = CLS_INT | CLS_FLOAT; break;
    case MP_OP_PROD: *out = MPI_PROD; allowed = CLS_INT | CLS_FLOAT; break;
    case MP_OP_MIN: *out = MPI_MIN; allowed = CLS_INT | CLS_FLOAT; break;
    case MP_OP_MAX: *out = MPI_MAX; allowed = CLS_INT | CLS_FLOAT; break;
    case MP_OP_LAND: *out = MPI_LAND; allowed = CLS_INT | CLS_BOOL; break;
    case MP_OP_LOR: *out = MPI_LOR; allowed = CLS_INT | CLS_BOOL; break;
    case MP_OP_LXOR: *out = MPI_LXOR; allowed = CLS_INT | CLS_BOOL; break;
    case MP_OP_BAND: *out = MPI_BAND; allowed = CLS_INT; break;
    case MP_OP_BOR: *out = MPI_BOR; allowed = CLS_INT; break;
    case MP_OP_BXOR: *out = MPI_BXOR; allowed = CLS_INT; break;
    case MP_OP_MINLOC: *out = MPI_MINLOC; allowed = CLS_PAIR; break;
    case MP_OP_MAXLOC: *out = MPI_MAXLOC; allowed = CLS_PAIR; break;
    default: return mp_fail(MP_EINVAL, "operation %d is not an MP_OP_* value", c->op);
    }
    if (!(d->cls & allowed))
        return mp_fail(MP_EINVAL, "the %s operation is not defined for element type %d", names[c->op], c->dtype);
    return 0;
}

/* The element type and operation of a one-sided accumulate (rma.c): built-in
 * operations, MP_OP_REPLACE and MP_OP_NO_OP; user operations are refused,
 * MPI allows none there (MPI-4.0 12.3.4).  op MP_OP_NONE: the type alone. */
int mp_rma_types(int dtype, int elem_size, int op, MPI_Datatype *dt, MPI_Op *mop)
{
    mp_coll_t c; /* element_type and reduction_op read these three fields only: no memset per operation */
    dtype_info_t d = { MPI_DATATYPE_NULL, 0, 0 };
    int rc;
    c.dtype = dtype;
    c.elem_size = elem_size;
    c.op = op;
    if ((rc = element_type(&c, &d)))
        return rc;
    *dt = d.mpi;
    if (op == MP_OP_NONE)
        return 0;
    if (op == MP_OP_REPLACE || op == MP_OP_NO_OP) {
        *mop = op == MP_OP_REPLACE ? MPI_REPLACE : MPI_NO_OP;
        return 0;
    }
    if (op >= MP_OP_USER)
        return mp_fail(MP_EINVAL, "user operations cannot be used in one-sided accumulates (MPI-4.0 12.3.4)");
    return reduction_op(&c, &d, mop);
}

/* ---- posting ---- */

static int is_rooted(int kind)
{
    return kind == MP_COLL_BCAST || kind == MP_COLL_REDUCE || kind == MP_COLL_GATHER ||
           kind == MP_COLL_SCATTER || kind == MP_COLL_GATHERV || kind == MP_COLL_SCATTERV;
}

static int is_reduction(int kind)
{
    return kind == MP_COLL_REDUCE || kind == MP_COLL_ALLREDUCE || kind == MP_COLL_SCAN ||
           kind == MP_COLL_EXSCAN || kind == MP_COLL_REDUCE_SCATTER_BLOCK || kind == MP_COLL_REDUCE_SCATTER;
}

static int check_counts(const char *what, const int32_t *counts, const int32_t *displs, int n)
{
    if (!counts || !displs)
        return mp_fail(MP_EINVAL, "%s counts or displacements are NULL", what);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0 || displs[i] < 0)
            return mp_fail(MP_ECOUNT, "%s count %d or displacement %d of rank %d is negative", what,
                           counts[i], displs[i], i);
    return 0;
}

/* A collective's arguments in MPI's terms, once coll_check accepted them. */
typedef struct coll_args {
    dtype_info_t d;
    MPI_Op op;
    int root;    /* MPI's: MPI_ROOT and MPI_PROC_NULL translated on intercommunicators */
    int at_root; /* this rank is the root (its counts and displacements are read) */
} coll_args_t;

/* Which count and displacement arrays a kind reads, at this rank (MPI-4.0 chapter 6): the send
 * side's (sendcounts, sdispls), the receive side's (recvcounts, rdispls), and reduce_scatter's
 * counts alone (recvcounts, over the local group). */
enum { USES_SEND = 1, USES_RECV = 2, USES_RECVCOUNTS = 4 };
static int count_arrays(int kind, int at_root)
{
    switch (kind) {
    case MP_COLL_GATHERV: return at_root ? USES_RECV : 0;
    case MP_COLL_SCATTERV: return at_root ? USES_SEND : 0;
    case MP_COLL_ALLGATHERV: return USES_RECV;
    case MP_COLL_ALLTOALLV: return USES_SEND | USES_RECV;
    case MP_COLL_REDUCE_SCATTER: return USES_RECVCOUNTS;
    default: return 0;
    }
}

/* Every check of a collective's arguments, before anything is posted: kind, root, count,
 * element type, operation, and the count and displacement arrays the kind reads here. */
static int coll_check(const comm_entry_t *ce, const mp_coll_t *c, coll_args_t *a)
{
    int rc, uses;
    a->d = (dtype_info_t){ MPI_DATATYPE_NULL, 0, 0 };
    a->op = MPI_OP_NULL;
    a->root = c->root;
    if (c->kind < 0 || c->kind >= MP_COLL_KIND_COUNT)
        return mp_fail(MP_EINVAL, "collective kind %d is not an MP_COLL_* value", c->kind);
    a->at_root = ce->is_inter ? c->root == MP_ROOT : ce->rank == c->root;
    if (c->kind == MP_COLL_BARRIER)
        return 0;
    if (is_rooted(c->kind)) {
        /* Intercommunicators (MPI-4.0 6.2.2): the root passes MP_ROOT, the rest
         * of its group MP_PROC_NULL, the other group the root's remote rank. */
        if (ce->is_inter && (c->root == MP_ROOT || c->root == MP_PROC_NULL))
            a->root = c->root == MP_ROOT ? MPI_ROOT : MPI_PROC_NULL;
        else if ((unsigned)c->root >= (unsigned)ce->peer_size)
            return mp_fail(MP_EROOT, "root %d is outside [0, %d)%s", c->root, ce->peer_size,
                           ce->is_inter ? " and not MP_ROOT or MP_PROC_NULL" : "");
    }
    if (c->count < 0 || c->count > INT_MAX)
        return mp_fail(MP_ECOUNT, "element count %lld is outside [0, %d]", (long long)c->count, INT_MAX);
    if ((rc = element_type(c, &a->d)))
        return rc;
    if (is_reduction(c->kind) && (rc = reduction_op(c, &a->d, &a->op)))
        return rc;
    uses = count_arrays(c->kind, a->at_root);
    if (uses & USES_SEND) {
        const char *what = c->kind == MP_COLL_SCATTERV ? "scatterv send" : "alltoallv send";
        if ((rc = check_counts(what, c->sendcounts, c->sdispls, ce->peer_size)))
            return rc;
    }
    if (uses & USES_RECV) {
        const char *what = c->kind == MP_COLL_GATHERV ? "gatherv receive"
                         : c->kind == MP_COLL_ALLGATHERV ? "allgatherv receive" : "alltoallv receive";
        if ((rc = check_counts(what, c->recvcounts, c->rdispls, ce->peer_size)))
            return rc;
    }
    if (uses & USES_RECVCOUNTS) { /* MPI-4.0 6.10.1: counts of the local group on both kinds of communicator */
        if (!c->recvcounts)
            return mp_fail(MP_EINVAL, "reduce_scatter receive counts are NULL");
        for (int i = 0; i < ce->size; i++)
            if (c->recvcounts[i] < 0)
                return mp_fail(MP_ECOUNT, "reduce_scatter count %d of rank %d is negative", c->recvcounts[i], i);
    }
    return 0;
}

/* Runs the blocking form (r == NULL), posts the nonblocking one (*r) or,
 * persistent, makes the persistent one (*r; its starts are counted), of
 * arguments coll_check accepted (a). */
static int issue(const comm_entry_t *ce, const mp_coll_t *c, const coll_args_t *a, MPI_Request *r, int persistent)
{
    MPI_Comm m = ce->mpi;
    MPI_Datatype t = a->d.mpi;
    MPI_Op op = a->op;
    int n = (int)c->count, root = a->root;
    const void *sb = c->sendbuf;
    void *rb = c->recvbuf;
    mp_counts_t *k = mp_my_counts();
    mp_count(&k->coll_ops, !persistent);
    mp_count(&k->blocking_ops, r == NULL);
    /* The persistent forms (optional in pal) were checked by the caller. */
#define COLL_BI(B, I, ...) (r ? MP_MPI_CHECK(pal_mpi.I(__VA_ARGS__, r), "MPI_" #I) \
                              : MP_MPI_CHECK(pal_mpi.B(__VA_ARGS__), "MPI_" #B))
#define COLL(B, I, ...) (persistent ? MP_MPI_CHECK(pal_mpi.B##_init(__VA_ARGS__, MPI_INFO_NULL, r), "MPI_" #B "_init") \
                                    : COLL_BI(B, I, __VA_ARGS__))
    switch (c->kind) {
    case MP_COLL_BARRIER:
        return persistent ? MP_MPI_CHECK(pal_mpi.Barrier_init(m, MPI_INFO_NULL, r), "MPI_Barrier_init")
             : r ? MP_MPI_CHECK(pal_mpi.Ibarrier(m, r), "MPI_Ibarrier")
                 : MP_MPI_CHECK(pal_mpi.Barrier(m), "MPI_Barrier");
    case MP_COLL_BCAST:
        return COLL(Bcast, Ibcast, rb, n, t, root, m);
    case MP_COLL_REDUCE:
        return COLL(Reduce, Ireduce, sb, rb, n, t, op, root, m);
    case MP_COLL_ALLREDUCE:
        /* One buffer as both: MPI_IN_PLACE, the buffer holds this rank's contribution (MPI-4.0 §6.9.6). */
        return COLL(Allreduce, Iallreduce, sb == rb && sb != NULL ? MPI_IN_PLACE : sb, rb, n, t, op, m);
    case MP_COLL_SCAN:
        return COLL(Scan, Iscan, sb, rb, n, t, op, m);
    case MP_COLL_EXSCAN:
        return COLL(Exscan, Iexscan, sb, rb, n, t, op, m);
    case MP_COLL_REDUCE_SCATTER_BLOCK:
        return COLL(Reduce_scatter_block, Ireduce_scatter_block, sb, rb, n, t, op, m);
    case MP_COLL_GATHER:
        return COLL(Gather, Igather, sb, n, t, rb, n, t, root, m);
    case MP_COLL_SCATTER:
        return COLL(Scatter, Iscatter, sb, n, t, rb, n, t, root, m);
    case MP_COLL_ALLGATHER:
        return COLL(Allgather, Iallgather, sb, n, t, rb, n, t, m);
    case MP_COLL_ALLTOALL:
        return COLL(Alltoall, Ialltoall, sb, n, t, rb, n, t, m);
    case MP_COLL_GATHERV:
        return COLL(Gatherv, Igatherv, sb, n, t, rb, c->recvcounts, c->rdispls, t, root, m);
    case MP_COLL_SCATTERV:
        return COLL(Scatterv, Iscatterv, sb, c->sendcounts, c->sdispls, t, rb, n, t, root, m);
    case MP_COLL_ALLGATHERV:
        return COLL(Allgatherv, Iallgatherv, sb, n, t, rb, c->recvcounts, c->rdispls, t, m);
    case MP_COLL_ALLTOALLV:
        return COLL(Alltoallv, Ialltoallv, sb, c->sendcounts, c->sdispls, t, rb, c->recvcounts, c->rdispls, t, m);
    case MP_COLL_REDUCE_SCATTER:
        return COLL(Reduce_scatter, Ireduce_scatter, sb, rb, c->recvcounts, t, op, m);
    }
    return mp_fail(MP_EINVAL, "collective kind %d is not supported", c->kind);
#undef COLL
#undef COLL_BI
}

/* Checks, then runs, posts or makes (as issue). */
static int run(const comm_entry_t *ce, const mp_coll_t *c, MPI_Request *r, int persistent)
{
    coll_args_t a;
    int rc = coll_check(ce, c, &a);
    return rc ? rc : issue(ce, c, &a, r, persistent);
}

int mp_coll_run(mp_comm_t comm, const mp_coll_t *c)
{
    const comm_entry_t *ce;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (!c)
        return mp_fail(MP_EINVAL, "collective descriptor is NULL");
    mp_blocking_enter();
    rc = run(ce, c, NULL, 0);
    mp_sweep_orphans();
    mp_blocking_leave();
    return rc;
}

int mp_coll_post(mp_comm_t comm, const mp_coll_t *c, void *send_obj, void *recv_obj, mp_req_t *req)
{
    const comm_entry_t *ce;
    MPI_Request r = MPI_REQUEST_NULL;
    mp_claim_t k;
    coll_args_t a;
    int rc;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (!c || !req)
        return mp_fail(MP_EINVAL, "collective descriptor or request output is NULL");
    if (c->op >= MP_OP_USER && is_reduction(c->kind))
        return mp_fail(MP_EINVAL, "nonblocking collectives cannot use user-defined operations: MPI "
                       "may run them during any later call; use the blocking form");
    /* The arguments first (a bad one is named even when the table is full), then the slot,
     * then MPI. */
    if ((rc = coll_check(ce, c, &a)) || (rc = mp_claim(&k)))
        return rc;
    rc = issue(ce, c, &a, &r, 0); /* before r is read */
    return mp_claim_posted(&k, rc, r, send_obj, recv_obj, 0, req);
}

/* ---- persistent collectives (MPI-4.0 6.12) ---- */

/* The MPI library's persistent form of a kind: present, or why not. */
static int persistent_form(int kind)
{
    static const char *const names[] = {
        "MPI_Barrier_init", "MPI_Bcast_init", "MPI_Reduce_init", "MPI_Allreduce_init", "MPI_Scan_init",
        "MPI_Exscan_init", "MPI_Reduce_scatter_block_init", "MPI_Gather_init", "MPI_Scatter_init",
        "MPI_Allgather_init", "MPI_Alltoall_init", "MPI_Gatherv_init", "MPI_Scatterv_init",
        "MPI_Allgatherv_init", "MPI_Alltoallv_init", "MPI_Reduce_scatter_init",
    };
    const int present[] = {
        pal_mpi.Barrier_init != NULL, pal_mpi.Bcast_init != NULL, pal_mpi.Reduce_init != NULL,
        pal_mpi.Allreduce_init != NULL, pal_mpi.Scan_init != NULL, pal_mpi.Exscan_init != NULL,
        pal_mpi.Reduce_scatter_block_init != NULL, pal_mpi.Gather_init != NULL, pal_mpi.Scatter_init != NULL,
        pal_mpi.Allgather_init != NULL, pal_mpi.Alltoall_init != NULL, pal_mpi.Gatherv_init != NULL,
        pal_mpi.Scatterv_init != NULL, pal_mpi.Allgatherv_init != NULL, pal_mpi.Alltoallv_init != NULL,
        pal_mpi.Reduce_scatter_init != NULL,
    };
    _Static_assert(sizeof names / sizeof *names == MP_COLL_KIND_COUNT, "a persistent form per collective kind");
    if (kind < 0 || kind >= MP_COLL_KIND_COUNT)
        return mp_fail(MP_EINVAL, "collective kind %d is not an MP_COLL_* value", kind);
    return present[kind] ? 0 : mp_fail_persistent_missing(names[kind]);
}

int mp_fail_mpi4_missing(const char *name, const char *what, const char *feature)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
    int len = 0;
    if (pal_mpi.Get_library_version(version, &len) != MPI_SUCCESS)
        len = 0;
    version[len < 0 ? 0 : len > MPI_MAX_LIBRARY_VERSION_STRING ? MPI_MAX_LIBRARY_VERSION_STRING : len] = '\0';
    version[strcspn(version, ",\n")] = '\0'; /* "Open MPI v4.1.4, package: ..." */
    return mp_fail(MP_ENOTSUP, "%s (%s) is not provided by the MPI library %s (%s): %s need an MPI-4 library "
                   "such as MPICH 4.0 or later", name, what, version[0] ? version : "of unknown version",
                   pal_mpi_path(), feature);
}

int mp_fail_persistent_missing(const char *name)
{
    return mp_fail_mpi4_missing(name, "a persistent collective, MPI-4.0 6.12", "persistent collectives");
}

/* MPICH 4.0's persistent gather, scatter and allgather move the data their
 * buffers held at init, not at each start (MPI_Gather_init, MPI_Start and
 * MPI_Wait alone show it, in C).  On that library those three are posted as
 * their nonblocking forms at each start instead: the same results, without
 * the saving of a persistent schedule. */
static int persistent_form_broken(int kind)
{
    return (kind == MP_COLL_GATHER || kind == MP_COLL_SCATTER || kind == MP_COLL_ALLGATHER) &&
           pal_mpi.mpich_version == 400;
}

static int restart_nonblocking(persist_t *p, MPI_Request *r)
{
    const comm_entry_t *ce;
    MPI_Request posted = MPI_REQUEST_NULL;
    int rc;
    if ((rc = mp_comm_lookup(p->comm, &ce)) || (rc = run(ce, &p->coll, &posted, 0)))
        return rc; /* *r keeps what it held: a failed post's output is undefined */
    *r = posted;
    return 0;
}

/* Copies n entries of from (if any) to *at, advancing it; the copy, or NULL. */
static const int32_t *keep_counts(int32_t **at, const int32_t *from, int n)
{
    int32_t *to = *at;
    if (!from)
        return NULL;
    memcpy(to, from, sizeof *to * (size_t)n);
    *at += n;
    return to;
}

int mp_coll_init(mp_comm_t comm, const mp_coll_t *c, const int64_t *stage_bytes, void **stages, mp_req_t *req)
{
    const comm_entry_t *ce;
    MPI_Request r = MPI_REQUEST_NULL;
    persist_t *p = NULL;
    mp_coll_t d;
    coll_args_t a;
    size_t head;
    int32_t *at;
    void *send_stage, *recv_stage;
    int rc, n, uses;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (!c || !stages || !req)
        return mp_fail(MP_EINVAL, "collective descriptor, staging output or request output is NULL");
    if ((rc = persistent_form(c->kind)))
        return rc;
    if (c->op >= MP_OP_USER && is_reduction(c->kind))
        return mp_fail(MP_EINVAL, "persistent collectives cannot use user-defined operations: MPI "
                       "may run them during any later call; use the blocking form");
    if (stage_bytes && (stage_bytes[0] < 0 || stage_bytes[1] < 0))
        return mp_fail(MP_ECOUNT, "staging sizes %lld and %lld must not be negative", (long long)stage_bytes[0],
                       (long long)stage_bytes[1]);
    /* Every argument checked here, once: also for the kinds each start posts anew (MPICH 4.0's
     * gather, scatter and allgather, below), which would otherwise be refused only at a start. */
    if ((rc = coll_check(ce, c, &a)))
        return rc;
    if ((rc = mp_persist_new(PERSIST_COLL, 0, 0, comm, &p)))
        return rc;
    d = *c;
    /* MPI reads the counts and displacements at every start (MPI-4.0 6.12):
     * the core keeps a copy of those the kind reads here at the head of
     * stage[0], before the send stage; the fields of the others are dropped. */
    uses = count_arrays(c->kind, a.at_root);
    n = c->kind == MP_COLL_REDUCE_SCATTER ? ce->size : ce->peer_size;
    head = ((sizeof(int32_t) * (size_t)n *
             (size_t)((uses & USES_SEND ? 2 : 0) + (uses & USES_RECV ? 2 : 0) + (uses & USES_RECVCOUNTS ? 1 : 0))) +
            15) & ~(size_t)15;
    for (int k = 0; k < 2; k++) {
        size_t want = (stage_bytes ? (size_t)stage_bytes[k] : 0) + (k == 0 ? head : 0);
        if (want > 0 && !(p->stage[k] = malloc(want))) {
            mp_persist_discard(p);
            return mp_fail(MP_ENOMEM, "out of memory for a staging buffer of %zu bytes", want);
        }
        p->bytes += stage_bytes ? stage_bytes[k] : 0;
    }
    at = p->stage[0];
    d.sendcounts = uses & USES_SEND ? keep_counts(&at, c->sendcounts, n) : NULL;
    d.sdispls = uses & USES_SEND ? keep_counts(&at, c->sdispls, n) : NULL;
    d.recvcounts = uses & (USES_RECV | USES_RECVCOUNTS) ? keep_counts(&at, c->recvcounts, n) : NULL;
    d.rdispls = uses & USES_RECV ? keep_counts(&at, c->rdispls, n) : NULL;
    send_stage = stage_bytes && stage_bytes[0] > 0 ? (char *)p->stage[0] + head : NULL;
    if (send_stage)
        d.sendbuf = send_stage;
    if (p->stage[1])
        d.recvbuf = p->stage[1];
    recv_stage = p->stage[1];
    if (persistent_form_broken(c->kind)) {
        p->coll = d;
        p->restart = restart_nonblocking;
    } else {
        mp_blocking_enter();
        rc = issue(ce, &d, &a, &r, 1);
        mp_sweep_orphans();
        mp_blocking_leave();
    }
    return mp_persist_made(p, rc, r, req, send_stage, recv_stage, stages);
}


void mp_coll_cleanup(void)
{
    mp_spin_lock(&g_opaque_lock);
    for (int i = 0; i < g_nopaque; i++)
        pal_mpi.Type_free(&g_opaque[i].type);
    g_nopaque = 0;
    mp_spin_unlock(&g_opaque_lock);
    for (int i = 0; i < MAX_USER_OPS; i++)
        if (g_user_ops[i].used)
            pal_mpi.Op_free(&g_user_ops[i].mpi);
}
