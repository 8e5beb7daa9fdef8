/*
 * mpcore.h - the Motor message-passing core: a flat C ABI over MPI.
 *
 * Every function returns 0 (or a documented non-negative value) on success and a
 * negative MP_E* code on failure.  Handles are small integers, constants are
 * Motor's own (translated to the MPI library's values inside the core), and the
 * status has one fixed layout, so callers never depend on which MPI library or
 * ABI is underneath.
 *
 * Each function is marked
 *   [fast]      never waits: safe to call with SuppressGCTransition (no GC can
 *               start while it runs, so it must return promptly);
 *   [blocking]  may wait for other ranks: call it with a normal GC transition.
 *   [any thread] touches no MPI state and may be called from any thread at any
 *               MPI thread level (finalizers, the GC extension).
 */
#ifndef MPCORE_H
#define MPCORE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define MP_API __attribute__((visibility("default")))
#else
#define MP_API
#endif

/* Bumped whenever the table layout or any signature changes. */
#define MP_ABI_VERSION 4

/* ---- Errors: one table, X-macro generated (names, codes, messages). ---- */
#define MP_ERROR_MAP(X)                                                              \
    X(OK,         0,  "success")                                                     \
    X(EINVAL,    -1,  "invalid argument")                                            \
    X(ESTATE,    -2,  "MPI is not initialized or already finalized")                 \
    X(EHANDLE,   -3,  "invalid or stale handle")                                     \
    X(ERANK,     -4,  "rank out of range for the communicator")                      \
    X(ETAG,      -5,  "tag out of range")                                            \
    X(ECOUNT,    -6,  "count out of range")                                          \
    X(ENOMEM,    -7,  "out of memory")                                               \
    X(ETRUNCATE, -8,  "message truncated: the receive buffer is too small")          \
    X(EMPI,      -9,  "the MPI library reported an error")                           \
    X(ENOLIB,    -10, "no usable MPI library could be loaded")                       \
    X(ENOSYM,    -11, "the MPI library lacks a required function")                   \
    X(EPENDING,  -12, "operation still pending")                                     \
    X(EBUSY,     -13, "handle is in use by another operation")                       \
    X(EROOT,     -14, "root out of range for the communicator")

enum mp_error {
#define MP_ERROR_ENUM(name, code, msg) MP_##name = (code),
    MP_ERROR_MAP(MP_ERROR_ENUM)
#undef MP_ERROR_ENUM
};

/* [any thread] Static name ("MP_ETRUNCATE") and message of a code. */
MP_API const char *mp_err_name(int code);
MP_API const char *mp_err_message(int code);

/* [fast] Details of the last failure on the calling thread: the MPI error class
 * (0 when the failure did not come from MPI) and a message that names what went
 * wrong (for MPI errors, the library's own error string).  Returns the length
 * of the message (truncated to cap - 1 bytes, always NUL-terminated). */
MP_API int mp_last_error(int *mpi_error_class, char *buf, int cap);

/* ---- Constants (Motor's values, not the MPI library's). ---- */
#define MP_ANY_SOURCE  (-1)
#define MP_ANY_TAG     (-1)
#define MP_PROC_NULL   (-2)
#define MP_UNDEFINED   (-3)
#define MP_ROOT        (-4) /* the root of an intercommunicator collective */

#define MP_COMM_WORLD  0
#define MP_COMM_SELF   1
#define MP_COMM_NULL   (-1)
#define MP_REQ_NULL    (-1)

enum mp_thread_level { MP_THREAD_SINGLE = 0, MP_THREAD_FUNNELED = 1,
                       MP_THREAD_SERIALIZED = 2, MP_THREAD_MULTIPLE = 3 };

enum mp_send_mode { MP_SEND_STANDARD = 0, MP_SEND_SYNC = 1 };

enum mp_state { MP_STATE_UNINIT = 0, MP_STATE_READY = 1, MP_STATE_FINALIZED = 2 };

typedef int32_t mp_comm_t;  /* communicator handle */
typedef int32_t mp_req_t;   /* nonblocking request handle (slot + generation) */
typedef int64_t mp_token_t; /* a blocking operation's pending part; wait on it once */

/* Fixed layout shared with managed code (24 bytes). */
typedef struct mp_status {
    int32_t source;    /* Motor rank, MP_PROC_NULL for a ProcNull peer */
    int32_t tag;
    int32_t error;     /* MP_OK or MP_E* of this operation */
    int32_t cancelled; /* 1 when the operation was cancelled */
    int64_t bytes;     /* bytes received (0 for sends) */
} mp_status_t;

/* ---- Lifecycle ---- */

/* [blocking] Loads the MPI library (see pal), initializes MPI with the required
 * thread level (MP_THREAD_*), sets MPI_ERRORS_RETURN on world and self. Calling
 * it again after success returns 0 and the level provided the first time. */
MP_API int mp_init(int required, int *provided);
/* [blocking] MPI_Finalize. Outstanding requests are abandoned. */
MP_API int mp_finalize(void);
/* [fast][any thread] MP_STATE_*. */
MP_API int mp_state(void);
/* [blocking] MPI_Abort on comm; does not return on success. */
MP_API int mp_abort(mp_comm_t comm, int errorcode);
/* [fast] MPI_Wtime / MPI_Wtick. */
MP_API double mp_wtime(void);
MP_API double mp_wtick(void);
/* [fast] The thread level provided by MPI_Init_thread. */
MP_API int mp_thread_level(int *provided);
/* [fast] Processor name / library version into buf; return the full length. */
MP_API int mp_processor_name(char *buf, int cap);
MP_API int mp_library_version(char *buf, int cap);
/* [fast] Largest tag value the library accepts (MPI_TAG_UB). */
MP_API int mp_tag_ub(int *tag_ub);
/* [fast][any thread] Path of the MPI library that was loaded ("" before). */
MP_API const char *mp_library_path(void);

/* ---- Communicators ---- */

/* [fast] */
MP_API int mp_comm_rank(mp_comm_t comm, int *rank);
MP_API int mp_comm_size(mp_comm_t comm, int *size);
/* [blocking] Collective over comm. */
MP_API int mp_comm_dup(mp_comm_t comm, mp_comm_t *newcomm);
/* [blocking] color MP_UNDEFINED yields *newcomm = MP_COMM_NULL. */
MP_API int mp_comm_split(mp_comm_t comm, int color, int key, mp_comm_t *newcomm);
/* [blocking] World and self cannot be freed (MP_EHANDLE). */
MP_API int mp_comm_free(mp_comm_t comm);

/* ---- Groups and communicator construction (MPI-4.0 chapter 7) ---- */
typedef int32_t mp_group_t;
#define MP_GROUP_EMPTY 0
enum mp_compare { MP_IDENT = 0, MP_CONGRUENT = 1, MP_SIMILAR = 2, MP_UNEQUAL = 3 };
enum mp_group_setop { MP_GROUP_UNION = 0, MP_GROUP_INTERSECTION = 1, MP_GROUP_DIFFERENCE = 2 };
enum mp_split_type { MP_SPLIT_SHARED = 0 };

/* [fast] The group of a communicator (a new group handle: free it). */
MP_API int mp_comm_group(mp_comm_t comm, mp_group_t *group);
/* [fast] Size, and this process's rank (MP_UNDEFINED when not a member). */
MP_API int mp_group_size(mp_group_t group, int *size);
MP_API int mp_group_rank(mp_group_t group, int *rank);
/* [fast] Union, intersection or difference (mp_group_setop). */
MP_API int mp_group_setop(int op, mp_group_t a, mp_group_t b, mp_group_t *out);
/* [fast] Group of the listed ranks (exclude = 0) or of all others (exclude = 1). */
MP_API int mp_group_select(mp_group_t group, int exclude, int n, const int32_t *ranks, mp_group_t *out);
/* [fast] ranks_b[i] = rank in b of ranks_a[i] in a (MP_UNDEFINED if absent). */
MP_API int mp_group_translate(mp_group_t a, int n, const int32_t *ranks_a, mp_group_t b, int32_t *ranks_b);
/* [fast] *result = mp_compare. */
MP_API int mp_group_compare(mp_group_t a, mp_group_t b, int *result);
/* [fast] MP_GROUP_EMPTY is never freed. */
MP_API int mp_group_free(mp_group_t group);
/* [blocking] Collective over comm; *newcomm = MP_COMM_NULL for non-members. */
MP_API int mp_comm_create(mp_comm_t comm, mp_group_t group, mp_comm_t *newcomm);
/* [fast] *result = mp_compare. */
MP_API int mp_comm_compare(mp_comm_t a, mp_comm_t b, int *result);
/* [blocking] split_type MP_SPLIT_SHARED: ranks that can share memory. */
MP_API int mp_comm_split_type(mp_comm_t comm, int split_type, int key, mp_comm_t *newcomm);
/* [fast] Name of a communicator (MPI_MAX_OBJECT_NAME bounded). */
MP_API int mp_comm_set_name(mp_comm_t comm, const char *name);
MP_API int mp_comm_get_name(mp_comm_t comm, char *buf, int cap);

/* ---- Intercommunicators (MPI-4.0 7.6) and dynamic processes (chapter 11) ---- */
/* [fast] Size of the remote group (the local size for an intracommunicator),
 * and whether comm is an intercommunicator. */
MP_API int mp_comm_remote_size(mp_comm_t comm, int *size);
MP_API int mp_comm_is_inter(mp_comm_t comm, int *flag);
/* [blocking] MPI_Intercomm_create: local_leader is a rank of local, peer a
 * communicator over both leaders, remote_leader the other leader's rank in peer. */
MP_API int mp_intercomm_create(mp_comm_t local, int local_leader, mp_comm_t peer, int remote_leader,
                               int tag, mp_comm_t *newcomm);
/* [blocking] An intracommunicator of both groups; the group passing high = 1 comes last. */
MP_API int mp_intercomm_merge(mp_comm_t inter, int high, mp_comm_t *newcomm);
/* [blocking] Starts maxprocs copies of command with argv (NULL-terminated; may
 * be NULL) from root of comm; *intercomm connects comm to the children.
 * errcodes (maxprocs entries, may be NULL) gets each child's launch result. */
MP_API int mp_comm_spawn(const char *command, const char *const *argv, int maxprocs, int root,
                         mp_comm_t comm, mp_comm_t *intercomm, int32_t *errcodes);
/* [fast] The intercommunicator to the parent job, or MP_COMM_NULL. */
MP_API int mp_comm_get_parent(mp_comm_t *parent);
/* [blocking] Port for Accept/Connect; written to buf (returns its length). */
MP_API int mp_open_port(char *buf, int cap);
MP_API int mp_close_port(const char *port);
/* [blocking] Collective over comm; root names the port. */
MP_API int mp_comm_accept(const char *port, int root, mp_comm_t comm, mp_comm_t *newcomm);
MP_API int mp_comm_connect(const char *port, int root, mp_comm_t comm, mp_comm_t *newcomm);
/* [blocking] Waits for pending communication, then frees the communicator. */
MP_API int mp_comm_disconnect(mp_comm_t comm);
/* [blocking] Name service; MP_EMPI with the library's message where unsupported. */
MP_API int mp_publish_name(const char *service, const char *port);
MP_API int mp_unpublish_name(const char *service, const char *port);
MP_API int mp_lookup_name(const char *service, char *buf, int cap);

/* ---- Cartesian topologies (MPI-4.0 chapter 8) ---- */
/* [blocking] *newcomm = MP_COMM_NULL for ranks left out of the grid. */
MP_API int mp_cart_create(mp_comm_t comm, int ndims, const int32_t *dims, const int32_t *periods,
                          int reorder, mp_comm_t *newcomm);
/* [fast] Number of dimensions (0 when comm has no Cartesian topology). */
MP_API int mp_cart_ndims(mp_comm_t comm, int *ndims);
/* [fast] dims, periods and this rank's coordinates (ndims entries each). */
MP_API int mp_cart_get(mp_comm_t comm, int ndims, int32_t *dims, int32_t *periods, int32_t *coords);
/* [fast] */
MP_API int mp_cart_rank(mp_comm_t comm, const int32_t *coords, int *rank);
MP_API int mp_cart_coords(mp_comm_t comm, int rank, int ndims, int32_t *coords);
/* [fast] Neighbours along a dimension; MP_PROC_NULL past a non-periodic edge. */
MP_API int mp_cart_shift(mp_comm_t comm, int direction, int disp, int *source, int *dest);
/* [blocking] */
MP_API int mp_cart_sub(mp_comm_t comm, const int32_t *remain, mp_comm_t *newcomm);
/* [fast] Balanced dims for nnodes (entries > 0 are kept). */
MP_API int mp_dims_create(int nnodes, int ndims, int32_t *dims);

/* ---- Point-to-point, blocking operations in two steps ----
 * A blocking Send/Recv is posted by a fast call that also tests for completion.
 * It returns 1 when the operation completed at once (status filled for
 * receives), or 0 with *token set: the caller then waits with mp_token_wait,
 * a blocking call, exactly once.  The buffer must stay put until then. */

/* [fast] mode: MP_SEND_STANDARD or MP_SEND_SYNC. */
MP_API int mp_send_start(const void *buf, int64_t bytes, int dest, int tag,
                         mp_comm_t comm, int mode, mp_token_t *token);
/* [fast] */
MP_API int mp_recv_start(void *buf, int64_t bytes, int source, int tag,
                         mp_comm_t comm, mp_status_t *status, mp_token_t *token);
/* [fast] Returns 1 when the operation behind token completed (status filled,
 * token consumed), else 0.  Lets a caller poll briefly before blocking. */
MP_API int mp_token_test(mp_token_t token, mp_status_t *status);
/* [blocking] Completes the operation behind token; status may be NULL. */
MP_API int mp_token_wait(mp_token_t token, mp_status_t *status);

/* ---- Point-to-point, nonblocking ----
 * obj, when not NULL, is the managed object that owns buf: it is recorded in the
 * request's slot of the in-flight table in the same call that posts the
 * operation, and the GC extension reports it as a pinned root while the
 * operation is in flight (see mpcore_gc.h).  Pass NULL when the caller pins. */

/* [fast] */
MP_API int mp_isend(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm,
                    int mode, void *obj, mp_req_t *req);
/* [fast] */
MP_API int mp_irecv(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm,
                    void *obj, mp_req_t *req);
/* [fast] Returns 1 and frees the request when complete (status filled), else 0.
 * A truncated receive completes with MP_ETRUNCATE (the request is freed and the
 * status filled all the same). */
MP_API int mp_req_test(mp_req_t req, mp_status_t *status);
/* [blocking] Waits, frees the request, fills status. */
MP_API int mp_req_wait(mp_req_t req, mp_status_t *status);
/* [fast] Marks the request for cancellation; complete it with test/wait. */
MP_API int mp_req_cancel(mp_req_t req);
/* [fast][any thread] The owner lost interest (e.g. a finalizer): the core frees
 * the request once it completes, and its object stops being reported then. */
MP_API int mp_req_orphan(mp_req_t req);
/* [fast] Completes orphaned requests that have finished; returns how many are
 * still pending. Called by the core itself on every wait. */
MP_API int mp_req_sweep(void);
/* [fast][any thread] 1 while the request's slot is live, 0 once the core has
 * freed it (completed and finished, or an orphan the core saw complete).
 * Touches no MPI state: a finalizer or GC callback may ask. */
MP_API int mp_req_live(mp_req_t req);
/* [fast] Returns 1 when all n completed (all freed, statuses filled), else 0
 * (none freed).  MP_REQ_NULL entries count as complete with an empty status. */
MP_API int mp_req_testall(int n, const mp_req_t *reqs, mp_status_t *statuses);
/* [blocking] Waits for all n; statuses may be NULL.  Returns the first error
 * after completing (and freeing) every request. */
MP_API int mp_req_waitall(int n, const mp_req_t *reqs, mp_status_t *statuses);
/* [blocking] Waits for one of n; returns its index (or MP_UNDEFINED when every
 * entry is MP_REQ_NULL) and frees only that request.  That operation's own
 * result (e.g. MP_ETRUNCATE) is in status->error; status must not be NULL. */
MP_API int mp_req_waitany(int n, const mp_req_t *reqs, mp_status_t *status);
/* [fast] Number of requests that are posted and not yet freed. */
MP_API int mp_req_active(void);

/* ---- Collectives ---- */

/* Element types.  The pair types match MPI's MINLOC/MAXLOC pairs with C
 * layout: {float,int}, {double,int}, {int64,int}, {int,int}, {short,int}.
 * MP_DT_OPAQUE is elem_size bytes moved as one unit (never reduced by a
 * built-in op). */
enum mp_dtype {
    MP_DT_OPAQUE = 0, MP_DT_INT8, MP_DT_UINT8, MP_DT_INT16, MP_DT_UINT16, MP_DT_INT32,
    MP_DT_UINT32, MP_DT_INT64, MP_DT_UINT64, MP_DT_FLOAT, MP_DT_DOUBLE, MP_DT_BOOL,
    MP_DT_FLOAT_INT, MP_DT_DOUBLE_INT, MP_DT_LONG_INT, MP_DT_2INT, MP_DT_SHORT_INT,
    MP_DT_COUNT
};

/* Built-in reduction operations; user operations have handles >= MP_OP_USER. */
enum mp_op {
    MP_OP_NONE = 0, MP_OP_SUM, MP_OP_PROD, MP_OP_MIN, MP_OP_MAX, MP_OP_LAND, MP_OP_LOR,
    MP_OP_LXOR, MP_OP_BAND, MP_OP_BOR, MP_OP_BXOR, MP_OP_MINLOC, MP_OP_MAXLOC,
    MP_OP_USER = 64
};

enum mp_coll_kind {
    MP_COLL_BARRIER = 0, MP_COLL_BCAST, MP_COLL_REDUCE, MP_COLL_ALLREDUCE, MP_COLL_SCAN,
    MP_COLL_EXSCAN, MP_COLL_REDUCE_SCATTER_BLOCK, MP_COLL_GATHER, MP_COLL_SCATTER,
    MP_COLL_ALLGATHER, MP_COLL_ALLTOALL, MP_COLL_GATHERV, MP_COLL_SCATTERV,
    MP_COLL_ALLGATHERV, MP_COLL_ALLTOALLV, MP_COLL_KIND_COUNT
};

/* One collective call.  Counts and displacements are in elements.  Which
 * fields matter follows MPI: e.g. bcast uses recvbuf (the buffer), count and
 * root; gather sends count elements and the root receives count per rank;
 * gatherv's root uses recvcounts/rdispls (comm size entries each). */
typedef struct mp_coll {
    int32_t kind;       /* MP_COLL_* */
    int32_t root;       /* rooted collectives */
    int32_t dtype;      /* MP_DT_* */
    int32_t elem_size;  /* bytes per element (checked against dtype) */
    int32_t op;         /* MP_OP_* or a user op handle; reductions only */
    int32_t reserved;
    int64_t count;
    const void *sendbuf;
    void *recvbuf;
    const int32_t *sendcounts, *sdispls, *recvcounts, *rdispls;
} mp_coll_t;

/* [blocking] Runs the collective (MPI's blocking form, whose algorithms are
 * faster than the nonblocking schedules); user ops run inside this call. */
MP_API int mp_coll_run(mp_comm_t comm, const mp_coll_t *c);
/* [fast] Posts a nonblocking collective tracked as a request, recording up to
 * two owner objects (send and receive buffers) in the in-flight table.  User
 * ops are refused (MP_EINVAL): MPI could call them from any later fast call. */
MP_API int mp_coll_post(mp_comm_t comm, const mp_coll_t *c, void *send_obj, void *recv_obj,
                        mp_req_t *req);

/* User-defined operation: fn(in, inout, count, state) must set
 * inout[i] = in[i] op inout[i] for count elements. */
typedef void (*mp_user_fn)(const void *in, void *inout, int64_t count, void *state);
/* [blocking] Creates an operation over elements of dtype/elem_size. */
MP_API int mp_op_create(mp_user_fn fn, void *state, int commutative, int32_t *op);
/* [blocking] */
MP_API int mp_op_free(int32_t op);

/* ---- Probe ---- */
/* [fast] Returns 1 (status filled) when a matching message is pending, else 0. */
MP_API int mp_iprobe(int source, int tag, mp_comm_t comm, mp_status_t *status);
/* [blocking] */
MP_API int mp_probe(int source, int tag, mp_comm_t comm, mp_status_t *status);

/* ---- Matched probe (MPI-4.0 3.8.2): a probed message is removed from
 * matching, so no other receive (or thread) can take it before mp_mrecv. ---- */
typedef int64_t mp_msg_t;
/* [fast] Returns 1 with *msg and status when a matching message is pending, else 0. */
MP_API int mp_improbe(int source, int tag, mp_comm_t comm, mp_msg_t *msg, mp_status_t *status);
/* [blocking] */
MP_API int mp_mprobe(int source, int tag, mp_comm_t comm, mp_msg_t *msg, mp_status_t *status);
/* [fast] Receives a matched message (consumes msg) in two steps, like
 * mp_recv_start: 1 when complete (status filled), 0 with *token. */
MP_API int mp_mrecv_start(void *buf, int64_t bytes, mp_msg_t msg, mp_status_t *status,
                          mp_token_t *token);

/* ---- Statistics (each thread counts its own operations; the sums are exact
 * whatever the thread level) ---- */
typedef struct mp_stats {
    uint64_t p2p_ops;          /* point-to-point operations posted */
    uint64_t p2p_bytes;        /* their payload bytes */
    uint64_t coll_ops;         /* collectives run or posted */
    uint64_t blocking_ops;     /* blocking operations: buffer under `fixed`, no pin object */
    uint64_t registered;       /* nonblocking buffers recorded in the in-flight table */
    uint64_t gc_scans;         /* GC mark passes that scanned the in-flight table */
    uint64_t pinned_last_mark; /* buffers reported pinned at the last mark */
    uint64_t pinned_total;     /* ... summed over all marks */
    uint64_t released_at_mark; /* buffers whose operation was found complete at a mark */
    uint64_t active_requests;  /* requests posted and not yet freed */
    uint64_t gc_extension;     /* 1 when the GC extension (libmpgc) is attached to this core */
    uint64_t mpi_errors;       /* MPI calls that returned an error (each failing call counts once) */
} mp_stats_t;
/* [fast][any thread] */
MP_API void mp_stats(mp_stats_t *out);

/* ---- The call table: what the motor host hands to managed code. ----
 * Field order is ABI: append only, bump MP_ABI_VERSION. */
typedef struct mp_table {
    uint32_t abi_version;
    uint32_t size; /* sizeof(mp_table_t) */
    const char *(*err_name)(int);
    const char *(*err_message)(int);
    int (*last_error)(int *, char *, int);
    int (*init)(int, int *);
    int (*finalize)(void);
    int (*state)(void);
    int (*abort)(mp_comm_t, int);
    double (*wtime)(void);
    double (*wtick)(void);
    int (*thread_level)(int *);
    int (*processor_name)(char *, int);
    int (*library_version)(char *, int);
    int (*tag_ub)(int *);
    const char *(*library_path)(void);
    int (*comm_rank)(mp_comm_t, int *);
    int (*comm_size)(mp_comm_t, int *);
    int (*comm_dup)(mp_comm_t, mp_comm_t *);
    int (*comm_split)(mp_comm_t, int, int, mp_comm_t *);
    int (*comm_free)(mp_comm_t);
    int (*send_start)(const void *, int64_t, int, int, mp_comm_t, int, mp_token_t *);
    int (*recv_start)(void *, int64_t, int, int, mp_comm_t, mp_status_t *, mp_token_t *);
    int (*token_test)(mp_token_t, mp_status_t *);
    int (*token_wait)(mp_token_t, mp_status_t *);
    int (*isend)(const void *, int64_t, int, int, mp_comm_t, int, void *, mp_req_t *);
    int (*irecv)(void *, int64_t, int, int, mp_comm_t, void *, mp_req_t *);
    int (*req_test)(mp_req_t, mp_status_t *);
    int (*req_wait)(mp_req_t, mp_status_t *);
    int (*req_cancel)(mp_req_t);
    int (*req_orphan)(mp_req_t);
    int (*req_sweep)(void);
    int (*req_testall)(int, const mp_req_t *, mp_status_t *);
    int (*req_waitall)(int, const mp_req_t *, mp_status_t *);
    int (*req_waitany)(int, const mp_req_t *, mp_status_t *);
    int (*req_active)(void);
    int (*iprobe)(int, int, mp_comm_t, mp_status_t *);
    int (*probe)(int, int, mp_comm_t, mp_status_t *);
    int (*improbe)(int, int, mp_comm_t, mp_msg_t *, mp_status_t *);
    int (*mprobe)(int, int, mp_comm_t, mp_msg_t *, mp_status_t *);
    int (*mrecv_start)(void *, int64_t, mp_msg_t, mp_status_t *, mp_token_t *);
    int (*coll_run)(mp_comm_t, const mp_coll_t *);
    int (*coll_post)(mp_comm_t, const mp_coll_t *, void *, void *, mp_req_t *);
    int (*op_create)(mp_user_fn, void *, int, int32_t *);
    int (*op_free)(int32_t);
    int (*comm_group)(mp_comm_t, mp_group_t *);
    int (*group_size)(mp_group_t, int *);
    int (*group_rank)(mp_group_t, int *);
    int (*group_setop)(int, mp_group_t, mp_group_t, mp_group_t *);
    int (*group_select)(mp_group_t, int, int, const int32_t *, mp_group_t *);
    int (*group_translate)(mp_group_t, int, const int32_t *, mp_group_t, int32_t *);
    int (*group_compare)(mp_group_t, mp_group_t, int *);
    int (*group_free)(mp_group_t);
    int (*comm_create)(mp_comm_t, mp_group_t, mp_comm_t *);
    int (*comm_compare)(mp_comm_t, mp_comm_t, int *);
    int (*comm_split_type)(mp_comm_t, int, int, mp_comm_t *);
    int (*comm_set_name)(mp_comm_t, const char *);
    int (*comm_get_name)(mp_comm_t, char *, int);
    int (*cart_create)(mp_comm_t, int, const int32_t *, const int32_t *, int, mp_comm_t *);
    int (*cart_ndims)(mp_comm_t, int *);
    int (*cart_get)(mp_comm_t, int, int32_t *, int32_t *, int32_t *);
    int (*cart_rank)(mp_comm_t, const int32_t *, int *);
    int (*cart_coords)(mp_comm_t, int, int, int32_t *);
    int (*cart_shift)(mp_comm_t, int, int, int *, int *);
    int (*cart_sub)(mp_comm_t, const int32_t *, mp_comm_t *);
    int (*dims_create)(int, int, int32_t *);
    int (*comm_remote_size)(mp_comm_t, int *);
    int (*comm_is_inter)(mp_comm_t, int *);
    int (*intercomm_create)(mp_comm_t, int, mp_comm_t, int, int, mp_comm_t *);
    int (*intercomm_merge)(mp_comm_t, int, mp_comm_t *);
    int (*comm_spawn)(const char *, const char *const *, int, int, mp_comm_t, mp_comm_t *, int32_t *);
    int (*comm_get_parent)(mp_comm_t *);
    int (*open_port)(char *, int);
    int (*close_port)(const char *);
    int (*comm_accept)(const char *, int, mp_comm_t, mp_comm_t *);
    int (*comm_connect)(const char *, int, mp_comm_t, mp_comm_t *);
    int (*comm_disconnect)(mp_comm_t);
    int (*publish_name)(const char *, const char *);
    int (*unpublish_name)(const char *, const char *);
    int (*lookup_name)(const char *, char *, int);
    void (*stats)(mp_stats_t *);
    int (*req_live)(mp_req_t);
    /* ABI 4: the GC extension's entry points (mpcore_gc.h) and the MPI ABI. */
    int (*gc_scan)(int pass, void (*report)(void **slot, void *ctx), void *ctx);
    void (*gc_attach)(void);
    int (*mpi_abi)(void);
} mp_table_t;

/* MPI ABIs a core can be built for (mp_mpi_abi). */
enum mp_mpi_abi { MP_MPI_ABI_MPICH = 1, MP_MPI_ABI_OPENMPI = 2 };
/* [fast][any thread] The MPI ABI this core was compiled for. */
MP_API int mp_mpi_abi(void);

/* [any thread] The call table of the core this process uses (static storage;
 * the same table on every call).
 *
 * libmpcore.so holds the MPICH-ABI core and chooses, on the first call, which
 * core serves the process: $MOTOR_MPI_ABI ("mpich" or "openmpi") if set; else
 * the ABI of the library named by $MOTOR_MPI_LIBRARY; else Open MPI when the
 * process was started by Open MPI's launcher (OMPI_COMM_WORLD_SIZE is set);
 * else MPICH when an MPICH-ABI library loads, else Open MPI when libmpi.so.40
 * loads.  The Open MPI core is libmpcore-ompi.so beside libmpcore.so.  When
 * the chosen core cannot be used, the MPICH table is returned and its mp_init
 * fails with a message saying why.  Hosts, the GC extension and managed code
 * all go through this table, so they always agree on the core. */
MP_API const mp_table_t *mp_core_table(void);

#ifdef __cplusplus
}
#endif
#endif /* MPCORE_H */
