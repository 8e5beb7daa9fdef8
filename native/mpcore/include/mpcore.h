/*
 * mpcore.h - the Motor message-passing core: a flat C ABI over MPI.
 *
 * Every function returns 0 (or a documented non-negative value) on success and a
 * negative MP_E* code on failure.  Handles are small integers, constants are
 * Motor's own (translated to the MPI library's values inside the core), and the
 * status has one fixed layout, so callers never depend on which MPI library or
 * ABI is underneath.  A blocking call that fails writes no status; a request
 * completed with an error has it in its status's error field.
 *
 * The functions are listed once, with their kind (fast, blocking, any thread)
 * and documentation, in mpcore_calls.def; this header turns that list into the
 * call table every caller uses (mp_core_table()).  The core exports nothing
 * else, so a process never calls into a core other than the one it chose.
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
#define MP_ABI_VERSION 32

/* ---- Errors: one table, X-macro generated (C name, code, C# name, message). ---- */
#define MP_ERROR_MAP(X)                                                                 \
    X(OK,        0,   Ok,        "success")                                             \
    X(EINVAL,    -1,  Invalid,   "invalid argument")                                    \
    X(ESTATE,    -2,  State,     "MPI is not initialized or already finalized")         \
    X(EHANDLE,   -3,  Handle,    "invalid or stale handle")                             \
    X(ERANK,     -4,  Rank,      "rank out of range for the communicator")              \
    X(ETAG,      -5,  Tag,       "tag out of range")                                    \
    X(ECOUNT,    -6,  Count,     "count out of range")                                  \
    X(ENOMEM,    -7,  NoMemory,  "out of memory")                                       \
    X(ETRUNCATE, -8,  Truncate,  "message truncated: the receive buffer is too small")  \
    X(EMPI,      -9,  Mpi,       "the MPI library reported an error")                   \
    X(ENOLIB,    -10, NoLibrary, "no usable MPI library could be loaded")               \
    X(ENOSYM,    -11, NoSymbol,  "the MPI library lacks a required function")           \
    X(EPENDING,  -12, Pending,   "operation still pending")                             \
    X(EBUSY,     -13, Busy,      "handle is in use by another operation")               \
    X(EROOT,     -14, Root,      "root out of range for the communicator")              \
    X(ENOTSUP,   -15, NotSupported, "not supported by this MPI library")               \
    X(EPIECE,    -16, ObjectPiece, "a receive with AnyTag took a piece of an object payload")

enum mp_error {
#define MP_ERROR_ENUM(name, code, csname, msg) MP_##name = (code),
    MP_ERROR_MAP(MP_ERROR_ENUM)
#undef MP_ERROR_ENUM
};


/* ---- Constants (Motor's values, not the MPI library's). ---- */
#define MP_ANY_SOURCE  (-1)
#define MP_ANY_TAG     (-1)
#define MP_PROC_NULL   (-2)
#define MP_UNDEFINED   (-3)
#define MP_ROOT        (-4) /* the root of an intercommunicator collective */


/* What crosses to System.MP as numbers and layouts comes from lists, X-macros as
 * MP_ERROR_MAP: an enumeration is X(PREFIX_, NAME, value), a struct X(type, field, C# name).
 * Each list makes the C enum or struct here, and gen_binding writes the C# constants of the
 * same values and the C# structs of the same fields, whose layout it checks against the C
 * compiler's (offsetof, sizeof). */
#define MP_ENUM_ITEM(prefix, name, value) prefix##name = (value),
#define MP_STRUCT_FIELD(type, field, cs) type field;

/* Optional MPI-4 features (mpi_has): present when the loaded library exports all their
 * functions (MPICH 4.0 has each; Open MPI 4.1 none). */
#define MP_FEATURES(X)                                                                         \
    X(MP_FEATURE_, PERSISTENT_COLLECTIVES, 0) X(MP_FEATURE_, PERSISTENT_NEIGHBORHOOD, 1)      \
    X(MP_FEATURE_, PARTITIONED, 2) X(MP_FEATURE_, SESSIONS, 3)
enum mp_feature { MP_FEATURES(MP_ENUM_ITEM) MP_FEATURE_COUNT };
/* Handle kinds: X(C type, representation, C# type, what it names).  Each is a typedef here and
 * its own C# type in System.MP (gen_binding: a struct of one field of the representation's
 * size), so managed code cannot pass one kind of handle where another is wanted.  A request
 * list (list_create) is the core's counterpart of a C program's array of MPI_Request: posting
 * into it and completing it allocate nothing per operation. */
#define MP_HANDLE_KINDS(X)                                                                      \
    X(mp_comm_t, int32_t, CommHandle, "a communicator")                                       \
    X(mp_group_t, int32_t, GroupHandle, "a group")                                            \
    X(mp_req_t, int32_t, RequestHandle, "a nonblocking or persistent request (slot + generation)") \
    X(mp_token_t, int64_t, TokenHandle, "a blocking operation's pending part, waited on once") \
    X(mp_msg_t, int64_t, MessageHandle, "a message matched by improbe or mprobe, received once") \
    X(mp_list_t, struct mp_list *, ListHandle, "a request list (list_create)")                \
    X(mp_win_t, int32_t, WindowHandle, "a one-sided window")                                  \
    X(mp_file_t, int32_t, FileHandle, "an open file")                                         \
    X(mp_info_t, int32_t, InfoHandle, "an info object")                                       \
    X(mp_session_t, int32_t, SessionHandle, "a session")                                      \
    X(mp_op_t, int32_t, OpHandle, "a reduction operation: a built-in MP_OP_* or a user operation (op_create)")
#define MP_HANDLE_TYPEDEF(ctype, repr, cs, what) typedef repr ctype;
MP_HANDLE_KINDS(MP_HANDLE_TYPEDEF)
#undef MP_HANDLE_TYPEDEF

/* The handles with a fixed value, per kind (X(PREFIX_, NAME, value), as enumerations).  A NULL
 * names no object: the core never hands it out. */
#define MP_COMM_HANDLES(X) X(MP_COMM_, WORLD, 0) X(MP_COMM_, SELF, 1) X(MP_COMM_, NULL, -1)
#define MP_REQ_HANDLES(X) X(MP_REQ_, NULL, -1)
#define MP_GROUP_HANDLES(X) X(MP_GROUP_, EMPTY, 0) X(MP_GROUP_, NULL, -1)
#define MP_INFO_HANDLES(X) X(MP_INFO_, NULL, 0)
#define MP_WIN_HANDLES(X) X(MP_WIN_, NULL, 0)
#define MP_FILE_HANDLES(X) X(MP_FILE_, NULL, -1)
#define MP_SESSION_HANDLES(X) X(MP_SESSION_, NULL, 0)
enum mp_comm_handle { MP_COMM_HANDLES(MP_ENUM_ITEM) };
enum mp_req_handle { MP_REQ_HANDLES(MP_ENUM_ITEM) };
enum mp_group_handle { MP_GROUP_HANDLES(MP_ENUM_ITEM) };
enum mp_info_handle { MP_INFO_HANDLES(MP_ENUM_ITEM) };
enum mp_win_handle { MP_WIN_HANDLES(MP_ENUM_ITEM) };
enum mp_file_handle { MP_FILE_HANDLES(MP_ENUM_ITEM) };
enum mp_session_handle { MP_SESSION_HANDLES(MP_ENUM_ITEM) };

#define MP_THREAD_LEVELS(X)                                                                    \
    X(MP_THREAD_, SINGLE, 0) X(MP_THREAD_, FUNNELED, 1) X(MP_THREAD_, SERIALIZED, 2) X(MP_THREAD_, MULTIPLE, 3)
enum mp_thread_level { MP_THREAD_LEVELS(MP_ENUM_ITEM) };

#define MP_SEND_MODES(X) X(MP_SEND_, STANDARD, 0) X(MP_SEND_, SYNC, 1)
enum mp_send_mode { MP_SEND_MODES(MP_ENUM_ITEM) };

#define MP_STATES(X) X(MP_STATE_, UNINIT, 0) X(MP_STATE_, READY, 1) X(MP_STATE_, FINALIZED, 2)
enum mp_state { MP_STATES(MP_ENUM_ITEM) };

/* MPI ABIs a core can be built for (mpi_abi). */
#define MP_MPI_ABIS(X) X(MP_MPI_ABI_, MPICH, 1) X(MP_MPI_ABI_, OPENMPI, 2)
enum mp_mpi_abi { MP_MPI_ABIS(MP_ENUM_ITEM) };

/* Limits: LIST_MAX_CAPACITY, the most operations a request list holds. */
#define MP_LIMITS(X) X(MP_, LIST_MAX_CAPACITY, 1 << 24)
enum mp_limit { MP_LIMITS(MP_ENUM_ITEM) };

/* A predefined attribute of MPI_COMM_WORLD (world_attr's which). */
#define MP_WORLD_ATTRS(X)                                                                      \
    X(MP_WORLD_, TAG_UB, 0) X(MP_WORLD_, WTIME_IS_GLOBAL, 1) X(MP_WORLD_, UNIVERSE_SIZE, 2) X(MP_WORLD_, APPNUM, 3)
enum mp_world_attr { MP_WORLD_ATTRS(MP_ENUM_ITEM) };

/* Fixed layout shared with managed code (24 bytes): source is a Motor rank (MP_PROC_NULL for a
 * ProcNull peer), error MP_OK or the operation's MP_E*, cancelled 1 when it was cancelled, bytes
 * those received (0 for sends). */
#define MP_STATUS_FIELDS(X)                                                                    \
    X(int32_t, source, Source) X(int32_t, tag, Tag) X(int32_t, error, Error) X(int32_t, cancelled, Cancelled) \
    X(int64_t, bytes, Bytes)
typedef struct mp_status {
    MP_STATUS_FIELDS(MP_STRUCT_FIELD)
} mp_status_t;

/* ---- Groups and communicator construction (MPI-4.0 chapter 7) ---- */
#define MP_COMPARES(X) X(MP_, IDENT, 0) X(MP_, CONGRUENT, 1) X(MP_, SIMILAR, 2) X(MP_, UNEQUAL, 3)
enum mp_compare { MP_COMPARES(MP_ENUM_ITEM) };
#define MP_GROUP_SETOPS(X) X(MP_GROUP_, UNION, 0) X(MP_GROUP_, INTERSECTION, 1) X(MP_GROUP_, DIFFERENCE, 2)
enum mp_group_setop { MP_GROUP_SETOPS(MP_ENUM_ITEM) };
#define MP_SPLIT_TYPES(X) X(MP_SPLIT_, SHARED, 0)
enum mp_split_type { MP_SPLIT_TYPES(MP_ENUM_ITEM) };

/* ---- Collectives ---- */

/* Element types.  The pair types match MPI's MINLOC/MAXLOC pairs with C
 * layout: {float,int}, {double,int}, {int64,int}, {int,int} (MPI_2INT), {short,int}.
 * MP_DT_OPAQUE is elem_size bytes moved as one unit (never reduced by a
 * built-in op). */
#define MP_DTYPES(X)                                                                           \
    X(MP_DT_, OPAQUE, 0) X(MP_DT_, INT8, 1) X(MP_DT_, UINT8, 2) X(MP_DT_, INT16, 3)              \
    X(MP_DT_, UINT16, 4) X(MP_DT_, INT32, 5) X(MP_DT_, UINT32, 6) X(MP_DT_, INT64, 7)            \
    X(MP_DT_, UINT64, 8) X(MP_DT_, FLOAT, 9) X(MP_DT_, DOUBLE, 10) X(MP_DT_, BOOL, 11)           \
    X(MP_DT_, FLOAT_INT, 12) X(MP_DT_, DOUBLE_INT, 13) X(MP_DT_, LONG_INT, 14)                   \
    X(MP_DT_, INT_INT, 15) X(MP_DT_, SHORT_INT, 16)
enum mp_dtype { MP_DTYPES(MP_ENUM_ITEM) MP_DT_COUNT };

/* Built-in reduction operations, the handles of fixed value of mp_op_t; user operations have
 * handles >= MP_OP_USER (one number space, so that an mp_coll_t or an accumulate takes either).
 * REPLACE and NO_OP: one-sided accumulates only (MPI-4.0 12.3.4). */
#define MP_OPS(X)                                                                              \
    X(MP_OP_, NONE, 0) X(MP_OP_, SUM, 1) X(MP_OP_, PROD, 2) X(MP_OP_, MIN, 3) X(MP_OP_, MAX, 4) \
    X(MP_OP_, LAND, 5) X(MP_OP_, LOR, 6) X(MP_OP_, LXOR, 7) X(MP_OP_, BAND, 8)                \
    X(MP_OP_, BOR, 9) X(MP_OP_, BXOR, 10) X(MP_OP_, MINLOC, 11) X(MP_OP_, MAXLOC, 12)         \
    X(MP_OP_, REPLACE, 13) X(MP_OP_, NO_OP, 14) X(MP_OP_, USER, 64)
enum mp_op { MP_OPS(MP_ENUM_ITEM) };

/* REDUCE_SCATTER: recvcounts are each rank's block of the reduced result. */
#define MP_COLL_KINDS(X)                                                                       \
    X(MP_COLL_, BARRIER, 0) X(MP_COLL_, BCAST, 1) X(MP_COLL_, REDUCE, 2)                      \
    X(MP_COLL_, ALLREDUCE, 3) X(MP_COLL_, SCAN, 4) X(MP_COLL_, EXSCAN, 5)                     \
    X(MP_COLL_, REDUCE_SCATTER_BLOCK, 6) X(MP_COLL_, GATHER, 7) X(MP_COLL_, SCATTER, 8)       \
    X(MP_COLL_, ALLGATHER, 9) X(MP_COLL_, ALLTOALL, 10) X(MP_COLL_, GATHERV, 11)              \
    X(MP_COLL_, SCATTERV, 12) X(MP_COLL_, ALLGATHERV, 13) X(MP_COLL_, ALLTOALLV, 14)          \
    X(MP_COLL_, REDUCE_SCATTER, 15)
enum mp_coll_kind { MP_COLL_KINDS(MP_ENUM_ITEM) MP_COLL_KIND_COUNT };

/* One collective call.  Counts and displacements are in elements.  Which
 * fields matter follows MPI: e.g. bcast uses recvbuf (the buffer), count and
 * root; gather sends count elements and the root receives count per rank;
 * gatherv's root uses recvcounts/rdispls (comm size entries each); an allreduce
 * whose sendbuf is its recvbuf runs in place (MPI_IN_PLACE). */
/* kind: MP_COLL_*; root: rooted collectives; dtype: MP_DT_*; elem_size: bytes per element
 * (checked against dtype); op: MP_OP_* or a user op handle, reductions only. */
#define MP_COLL_FIELDS(X)                                                                      \
    X(int32_t, kind, Kind) X(int32_t, root, Root) X(int32_t, dtype, DType) X(int32_t, elem_size, ElemSize) \
    X(mp_op_t, op, Op) X(int32_t, reserved, Reserved) X(int64_t, count, Count)                \
    X(const void *, sendbuf, SendBuf) X(void *, recvbuf, RecvBuf)                              \
    X(const int32_t *, sendcounts, SendCounts) X(const int32_t *, sdispls, SDispls)            \
    X(const int32_t *, recvcounts, RecvCounts) X(const int32_t *, rdispls, RDispls)
typedef struct mp_coll {
    MP_COLL_FIELDS(MP_STRUCT_FIELD)
} mp_coll_t;

/* ---- One-sided communication (MPI-4.0 chapter 12) ---- */
/* How win_allocate gets the window's memory. */
#define MP_WIN_FLAVORS(X) X(MP_WIN_, ALLOCATE, 0) X(MP_WIN_, ALLOCATE_SHARED, 1)
enum mp_win_flavor { MP_WIN_FLAVORS(MP_ENUM_ITEM) };
/* Synchronization calls (win_sync): arg is a rank for LOCK_*, UNLOCK, FLUSH
 * and FLUSH_LOCAL, a group handle for POST and START, ignored otherwise. */
#define MP_WIN_SYNCS(X)                                                                        \
    X(MP_WIN_, FENCE, 0) X(MP_WIN_, LOCK_EXCLUSIVE, 1) X(MP_WIN_, LOCK_SHARED, 2)             \
    X(MP_WIN_, UNLOCK, 3) X(MP_WIN_, LOCK_ALL, 4) X(MP_WIN_, UNLOCK_ALL, 5) X(MP_WIN_, FLUSH, 6) \
    X(MP_WIN_, FLUSH_ALL, 7) X(MP_WIN_, FLUSH_LOCAL, 8) X(MP_WIN_, FLUSH_LOCAL_ALL, 9)         \
    X(MP_WIN_, POST, 10) X(MP_WIN_, START, 11) X(MP_WIN_, COMPLETE, 12) X(MP_WIN_, WAIT, 13)
enum mp_win_sync { MP_WIN_SYNCS(MP_ENUM_ITEM) MP_WIN_SYNC_COUNT };
/* Assertions of the synchronization calls (MPI_MODE_*), or-ed. */
#define MP_WIN_ASSERTS(X)                                                                      \
    X(MP_MODE_, NOCHECK, 1) X(MP_MODE_, NOSTORE, 2) X(MP_MODE_, NOPUT, 4) X(MP_MODE_, NOPRECEDE, 8) \
    X(MP_MODE_, NOSUCCEED, 16)
enum mp_win_assert { MP_WIN_ASSERTS(MP_ENUM_ITEM) };
/* ---- Parallel I/O (MPI-4.0 chapter 14) and info objects (chapter 10) ---- */
/* Access modes (MPI-4.0 14.2.1), Motor's bits; the core maps them to MPI's. */
#define MP_FILE_MODES(X)                                                                       \
    X(MP_MODE_, RDONLY, 1) X(MP_MODE_, WRONLY, 2) X(MP_MODE_, RDWR, 4) X(MP_MODE_, CREATE, 8)    \
    X(MP_MODE_, EXCL, 16) X(MP_MODE_, DELETE_ON_CLOSE, 32) X(MP_MODE_, UNIQUE_OPEN, 64)          \
    X(MP_MODE_, SEQUENTIAL, 128) X(MP_MODE_, APPEND, 256)
enum mp_file_mode { MP_FILE_MODES(MP_ENUM_ITEM) };
/* Data accesses (MPI-4.0 14.4): positioning (explicit offset, individual or
 * shared pointer) x coordination; even codes read, odd codes write. */
#define MP_IOS(X)                                                                              \
    X(MP_IO_, READ_AT, 0) X(MP_IO_, WRITE_AT, 1) X(MP_IO_, READ_AT_ALL, 2) X(MP_IO_, WRITE_AT_ALL, 3) \
    X(MP_IO_, READ, 4) X(MP_IO_, WRITE, 5) X(MP_IO_, READ_ALL, 6) X(MP_IO_, WRITE_ALL, 7)        \
    X(MP_IO_, READ_SHARED, 8) X(MP_IO_, WRITE_SHARED, 9) X(MP_IO_, READ_ORDERED, 10)             \
    X(MP_IO_, WRITE_ORDERED, 11)
enum mp_io { MP_IOS(MP_ENUM_ITEM) MP_IO_COUNT };
/* Seek origins (MPI_SEEK_SET/CUR/END); the values of .NET's SeekOrigin. */
#define MP_SEEKS(X) X(MP_SEEK_, SET, 0) X(MP_SEEK_, CUR, 1) X(MP_SEEK_, END, 2)
enum mp_seek { MP_SEEKS(MP_ENUM_ITEM) };

/* Topologies (MPI_Topo_test, MPI-4.0 8.5.5). */
#define MP_TOPOS(X) X(MP_TOPO_, NONE, 0) X(MP_TOPO_, CART, 1) X(MP_TOPO_, GRAPH, 2) X(MP_TOPO_, DIST_GRAPH, 3)
enum mp_topo { MP_TOPOS(MP_ENUM_ITEM) };

/* Neighborhood collectives (MPI-4.0 8.6), described by an mp_coll_t whose
 * kind is one of these: sendcounts/sdispls have outdegree entries,
 * recvcounts/rdispls indegree entries.  ALLTOALLW takes its displacements in
 * bytes (int64) beside the descriptor, with one element type for all blocks. */
#define MP_NEIGHBOR_KINDS(X)                                                                   \
    X(MP_NEIGHBOR_, ALLGATHER, 0) X(MP_NEIGHBOR_, ALLGATHERV, 1) X(MP_NEIGHBOR_, ALLTOALL, 2) \
    X(MP_NEIGHBOR_, ALLTOALLV, 3) X(MP_NEIGHBOR_, ALLTOALLW, 4)
enum mp_neighbor_kind { MP_NEIGHBOR_KINDS(MP_ENUM_ITEM) MP_NEIGHBOR_KIND_COUNT };

/* User-defined operation: fn(in, inout, count, state) must set
 * inout[i] = in[i] op inout[i] for count elements. */
typedef void (*mp_user_fn)(const void *in, void *inout, int64_t count, void *state);

/* The GC extension's callback (mpcore_gc.h): receives the address of a slot
 * holding an object reference (Object**). */
typedef void (*mp_gc_report_fn)(void **slot, void *ctx);

/* ---- Statistics (each thread counts its own operations; the sums are exact
 * whatever the thread level).  One list, X(name, description): the struct
 * below and System.MP's mirror (gen_binding) both come from it. ---- */
#define MP_STATS_FIELDS(X)                                                                         \
    X(p2p_ops,          "point-to-point operations posted")                                        \
    X(p2p_bytes,        "their payload bytes")                                                     \
    X(coll_ops,         "collectives run or posted")                                               \
    X(blocking_ops,     "blocking operations: buffer under fixed, no pin object")                  \
    X(registered,       "nonblocking buffers recorded in the in-flight table")                     \
    X(gc_scans,         "GC mark passes that scanned the in-flight table")                         \
    X(pinned_last_mark, "buffers reported pinned at the last mark")                                \
    X(pinned_total,     "buffers reported pinned, summed over all marks")                          \
    X(released_at_mark, "buffers whose operation was found complete at a mark")                    \
    X(active_requests,  "requests not yet freed: slots in use, request lists' open entries")       \
    X(gc_extension,     "1 when the GC extension (libmpgc) is attached to this core")              \
    X(mpi_errors,       "MPI calls that returned an error (each failing call counts once)")        \
    X(open_mpi_requests, "requests whose MPI request is open: not yet seen complete by the core")  \
    X(orphans,          "dropped requests the core has not freed yet")                             \
    X(slots_high_water, "request slots ever handed out: the slot table's high-water mark")         \
    X(comms,            "communicators in the core's table (world and self included)")              \
    X(persistent_open,  "persistent requests made and not yet freed (one MPI request each)")       \
    X(persistent_starts, "instances of persistent requests started")                               \
    X(persistent_recreated, "MPI requests made again at a start: the buffer had moved")          \
    X(gc_aligned_arrays, "1 when the GC extension starts large and pinned-heap arrays' data on 64-byte boundaries") \
    X(gc_gen0_budget,   "bytes the GC was configured to allocate between gen0 collections: motor's default or a setting; 0 when the GC chose its own")

#define MP_STATS_FIELD(name, what) uint64_t name;
typedef struct mp_stats {
    MP_STATS_FIELDS(MP_STATS_FIELD)
} mp_stats_t;
#undef MP_STATS_FIELD

/* ---- The call table: every function of mpcore_calls.def, in its order. ----
 * manifest is the list itself as text ("KIND ret name(params)" per line), so
 * a caller built from another version of the list sees the difference. */
#define MP_TABLE_FIELD(kind, ret, name, params) ret(*name) params;
#define MP_MANIFEST_LINE(kind, ret, name, params) #kind " " #ret " " #name #params "\n"
typedef struct mp_table {
    uint32_t abi_version;
    uint32_t size; /* sizeof(mp_table_t) */
    const char *manifest;
#define MP_CALL MP_TABLE_FIELD
#include "mpcore_calls.def"
#undef MP_CALL
} mp_table_t;

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
