/*
 * pal_mpi.h - the MPI library, loaded at run time.
 *
 * mpcore calls MPI only through the table `pal_mpi`, filled by pal_mpi_load()
 * from the library found at run time (opened with RTLD_GLOBAL, so MPI libraries
 * that load plugins work).  pal and mpcore are compiled once per MPI ABI:
 *   - the MPICH ABI (MPICH, Intel MPI, MVAPICH, Cray MPICH) -> libmpcore.so;
 *   - Open MPI's ABI -> libmpcore-ompi.so (built when Open MPI's headers are
 *     present), whose predefined handles are addresses inside libmpi.so.40, so
 *     that core links the library instead of only loading it.
 * libmpcore.so chooses between them at run time (select.c); the mp_* ABI that
 * callers see is the same for both.  ABI-specific status access is kept here.
 *
 * Choice of library: $MOTOR_MPI_LIBRARY (a file name or path) if set; otherwise
 * the ABI's usual names (MPICH: libmpi.so.12, libmpich.so.12, then the
 * unversioned names; Open MPI: libmpi.so.40, libmpi.so).
 */
#ifndef PAL_MPI_H
#define PAL_MPI_H

#include <mpi.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(OPEN_MPI) && OPEN_MPI
#define PAL_MPI_BUILD_ABI 2 /* PAL_ABI_OPENMPI */
#elif defined(MPICH) || defined(MPICH_NAME)
#define PAL_MPI_BUILD_ABI 1 /* PAL_ABI_MPICH */
#else
#error "pal_mpi.h: compile against an MPICH-family or Open MPI mpi.h"
#endif

/* Functions every supported library must have. */
#define PAL_MPI_REQUIRED(X)                                                   \
    X(Init_thread) X(Initialized) X(Finalized) X(Finalize) X(Abort)           \
    X(Query_thread) X(Is_thread_main) X(Wtime) X(Wtick) X(Get_processor_name)                   \
    X(Get_library_version) X(Error_class) X(Error_string)                     \
    X(Comm_set_errhandler) X(Comm_get_attr) X(Comm_rank) X(Comm_size)         \
    X(Comm_dup) X(Comm_split) X(Comm_free)                                    \
    X(Isend) X(Issend) X(Irecv) X(Test) X(Wait) X(Testall) X(Waitall)         \
    X(Request_get_status) X(Send) X(Ssend) X(Recv) X(Sendrecv) X(Mrecv)       \
    X(Waitany) X(Cancel) X(Request_free) X(Iprobe) X(Probe)                   \
    X(Send_init) X(Ssend_init) X(Recv_init) X(Start) X(Startall)              \
    X(Test_cancelled) X(Get_count) X(Ibarrier)                                \
    X(Improbe) X(Mprobe) X(Imrecv)                                            \
    X(Ibcast) X(Ireduce) X(Iallreduce) X(Iscan) X(Iexscan)                    \
    X(Barrier) X(Bcast) X(Reduce) X(Allreduce) X(Scan) X(Exscan)              \
    X(Reduce_scatter_block) X(Gather) X(Scatter) X(Allgather) X(Alltoall)     \
    X(Gatherv) X(Scatterv) X(Allgatherv) X(Alltoallv)                         \
    X(Ireduce_scatter_block) X(Igather) X(Iscatter) X(Iallgather) X(Ialltoall) \
    X(Igatherv) X(Iscatterv) X(Iallgatherv) X(Ialltoallv)                     \
    X(Reduce_scatter) X(Ireduce_scatter)                                      \
    X(Type_contiguous) X(Type_commit) X(Type_free) X(Op_create) X(Op_free)   \
    X(Comm_group) X(Group_size) X(Group_rank) X(Group_union)                  \
    X(Group_intersection) X(Group_difference) X(Group_incl) X(Group_excl)     \
    X(Group_translate_ranks) X(Group_compare) X(Group_free) X(Comm_create)    \
    X(Comm_compare) X(Comm_split_type) X(Comm_set_name) X(Comm_get_name)      \
    X(Cart_create) X(Cartdim_get) X(Cart_get) X(Cart_rank) X(Cart_coords)     \
    X(Cart_shift) X(Cart_sub) X(Dims_create) X(Topo_test)                    \
    X(Comm_test_inter) X(Comm_remote_size) X(Intercomm_create)                \
    X(Intercomm_merge) X(Comm_spawn) X(Comm_spawn_multiple) X(Comm_get_parent)  \
    X(Open_port)                                                              \
    X(Close_port) X(Comm_accept) X(Comm_connect) X(Comm_disconnect)           \
    X(Publish_name) X(Unpublish_name) X(Lookup_name)                         \
    X(Graph_create) X(Graphdims_get) X(Graph_get) X(Graph_neighbors_count)   \
    X(Graph_neighbors) X(Dist_graph_create_adjacent) X(Dist_graph_create)    \
    X(Dist_graph_neighbors_count) X(Dist_graph_neighbors)                    \
    X(Neighbor_allgather) X(Neighbor_allgatherv) X(Neighbor_alltoall)        \
    X(Neighbor_alltoallv) X(Neighbor_alltoallw) X(Ineighbor_allgather)       \
    X(Ineighbor_allgatherv) X(Ineighbor_alltoall) X(Ineighbor_alltoallv)     \
    X(Ineighbor_alltoallw) \
    X(Testsome) \
    PAL_MPI_RMA(X) PAL_MPI_IO(X)

/* Info objects and one-sided communication (MPI-3). */
#define PAL_MPI_RMA(X)                                                        \
    X(Info_create) X(Info_set) X(Info_get) X(Info_get_valuelen) X(Info_free)  \
    X(Win_allocate) X(Win_allocate_shared) X(Win_create) X(Win_free)          \
    X(Win_set_errhandler) X(Win_shared_query) X(Win_get_group) X(Win_fence)   \
    X(Win_lock) X(Win_unlock) X(Win_lock_all) X(Win_unlock_all) X(Win_flush)  \
    X(Win_flush_all) X(Win_flush_local) X(Win_flush_local_all) X(Win_post)    \
    X(Win_start) X(Win_complete) X(Win_wait) X(Put) X(Get) X(Rput) X(Rget)    \
    X(Accumulate) X(Get_accumulate) X(Fetch_and_op) X(Compare_and_swap)      \
    X(Win_create_dynamic) X(Win_attach) X(Win_detach) X(Get_address)


/* Parallel I/O (MPI-2). */
#define PAL_MPI_IO(X)                                                         \
    X(File_open) X(File_close) X(File_delete) X(File_set_errhandler)          \
    X(File_set_view) X(File_read_at) X(File_write_at) X(File_read_at_all)     \
    X(File_write_at_all) X(File_read) X(File_write) X(File_read_all)          \
    X(File_write_all) X(File_read_shared) X(File_write_shared)               \
    X(File_read_ordered) X(File_write_ordered) X(File_iread_at)              \
    X(File_iwrite_at) X(File_seek) X(File_seek_shared) X(File_get_position)   \
    X(File_get_position_shared) X(File_sync) X(File_preallocate)              \
    X(File_set_size) X(File_get_size) X(File_set_atomicity)                   \
    X(File_get_atomicity) X(Type_create_resized) X(Type_create_subarray)  \
    X(Grequest_start) X(Grequest_complete) X(Status_set_elements_x) X(Status_set_cancelled)

/* Functions used when present: MPI-4 large counts and persistent collectives
 * (MPI-4.0 6.12; MPICH 4.0 has them, Open MPI 4.1 does not).  Their types are
 * spelled out because MPI-3 headers (Open MPI 4) do not declare them. */
#define PAL_MPI_OPTIONAL(X) X(Isend_c) X(Issend_c) X(Irecv_c) X(Imrecv_c)       \
    X(Send_init_c) X(Ssend_init_c) X(Recv_init_c)                            \
    X(Barrier_init) X(Bcast_init) X(Reduce_init) X(Allreduce_init)           \
    X(Scan_init) X(Exscan_init) X(Reduce_scatter_block_init) X(Gather_init)  \
    X(Scatter_init) X(Allgather_init) X(Alltoall_init)                       \
    X(Neighbor_allgather_init) X(Neighbor_alltoall_init)                     \
    X(Neighbor_allgatherv_init) X(Neighbor_alltoallv_init)                   \
    X(Gatherv_init) X(Scatterv_init) X(Allgatherv_init) X(Alltoallv_init)    \
    X(Reduce_scatter_init)                                                   \
    X(Session_init) X(Session_finalize) X(Session_get_num_psets)             \
    X(Session_get_nth_pset) X(Session_get_pset_info)                         \
    X(Group_from_session_pset) X(Comm_create_from_group)                     \
    X(Psend_init) X(Precv_init) X(Pready) X(Pready_range) X(Pready_list)     \
    X(Parrived) X(Comm_c2f) X(Comm_f2c) X(Group_c2f)

/* MPI-4 sessions (MPI-4.0 11.3): Open MPI 4.1's headers have no MPI_Session. */
#ifdef MPI_SESSION_NULL
typedef MPI_Session pal_session_t;
#define PAL_SESSION_NULL MPI_SESSION_NULL
#else
typedef void *pal_session_t;
#define PAL_SESSION_NULL NULL
#endif

typedef struct pal_mpi {
#define PAL_MPI_FIELD(name) __typeof__(MPI_##name) *name;
    PAL_MPI_REQUIRED(PAL_MPI_FIELD)
#undef PAL_MPI_FIELD
    int (*Isend_c)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    int (*Issend_c)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    int (*Irecv_c)(void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    int (*Imrecv_c)(void *, MPI_Count, MPI_Datatype, MPI_Message *, MPI_Request *);
    int (*Send_init_c)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    int (*Ssend_init_c)(const void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    int (*Recv_init_c)(void *, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
    int (*Barrier_init)(MPI_Comm, MPI_Info, MPI_Request *);
    int (*Bcast_init)(void *, int, MPI_Datatype, int, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Reduce_init)(const void *, void *, int, MPI_Datatype, MPI_Op, int, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Allreduce_init)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Scan_init)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Exscan_init)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Reduce_scatter_block_init)(const void *, void *, int, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Info,
                                     MPI_Request *);
    int (*Gather_init)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm, MPI_Info,
                       MPI_Request *);
    int (*Scatter_init)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm, MPI_Info,
                        MPI_Request *);
    int (*Allgather_init)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm, MPI_Info,
                          MPI_Request *);
    int (*Alltoall_init)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm, MPI_Info,
                         MPI_Request *);
    int (*Neighbor_allgather_init)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
                                   MPI_Info, MPI_Request *);
    int (*Neighbor_alltoall_init)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
                                  MPI_Info, MPI_Request *);
    int (*Neighbor_allgatherv_init)(const void *, int, MPI_Datatype, void *, const int *, const int *,
                                    MPI_Datatype, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Neighbor_alltoallv_init)(const void *, const int *, const int *, MPI_Datatype, void *, const int *,
                                   const int *, MPI_Datatype, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Gatherv_init)(const void *, int, MPI_Datatype, void *, const int *, const int *, MPI_Datatype, int,
                        MPI_Comm, MPI_Info, MPI_Request *);
    int (*Scatterv_init)(const void *, const int *, const int *, MPI_Datatype, void *, int, MPI_Datatype, int,
                         MPI_Comm, MPI_Info, MPI_Request *);
    int (*Allgatherv_init)(const void *, int, MPI_Datatype, void *, const int *, const int *, MPI_Datatype,
                           MPI_Comm, MPI_Info, MPI_Request *);
    int (*Alltoallv_init)(const void *, const int *, const int *, MPI_Datatype, void *, const int *, const int *,
                          MPI_Datatype, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Reduce_scatter_init)(const void *, void *, const int *, MPI_Datatype, MPI_Op, MPI_Comm, MPI_Info,
                               MPI_Request *);
    int (*Session_init)(MPI_Info, MPI_Errhandler, pal_session_t *);
    int (*Session_finalize)(pal_session_t *);
    int (*Session_get_num_psets)(pal_session_t, MPI_Info, int *);
    int (*Session_get_nth_pset)(pal_session_t, MPI_Info, int, int *, char *);
    int (*Session_get_pset_info)(pal_session_t, const char *, MPI_Info *);
    int (*Group_from_session_pset)(pal_session_t, const char *, MPI_Group *);
    int (*Comm_create_from_group)(MPI_Group, const char *, MPI_Info, MPI_Errhandler, MPI_Comm *);
    int (*Psend_init)(const void *, int, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Precv_init)(void *, int, MPI_Count, MPI_Datatype, int, int, MPI_Comm, MPI_Info, MPI_Request *);
    int (*Pready)(int, MPI_Request);
    int (*Pready_range)(int, int, MPI_Request);
    int (*Pready_list)(int, const int *, MPI_Request);
    int (*Parrived)(MPI_Request, int, int *);
    /* Handle conversion to and from Fortran (MPI-4.0 19.3.4): macros in MPICH's mpi.h,
     * functions in both libraries. */
    MPI_Fint (*Comm_c2f)(MPI_Comm);
    MPI_Comm (*Comm_f2c)(MPI_Fint);
    MPI_Fint (*Group_c2f)(MPI_Group);
    /* The library's MPI_UNWEIGHTED (MPI-4.0 8.5.4): a constant under Open MPI,
     * the value of a variable inside libmpi under MPICH. */
    int *unweighted;
    /* 1 when the library's MPI_Test polls the network even for an operation that is
     * already complete (MPICH before 4.2 and the libraries built on it); see
     * pal_mpi_test_polls_when_done. */
    int test_polls_when_done;
    /* The MPICH version the library names (pal_mpi_mpich_version: 400 for 4.0.x), or 0. */
    int mpich_version;
    /* 1 when MPI_Waitall may wait forever for a request that had already completed with an
     * error (see pal_mpi_waitall_hangs_on_failed); mpcore then waits for each request in turn. */
    int waitall_hangs_on_failed;
} pal_mpi_t;

/* The loaded library's functions; all NULL before pal_mpi_load succeeds. */
extern pal_mpi_t pal_mpi;

enum pal_mpi_abi { PAL_ABI_UNKNOWN = 0, PAL_ABI_MPICH = 1, PAL_ABI_OPENMPI = 2,
                   PAL_ABI_STANDARD = 3 };

/* Loads the MPI library (once; later calls return the first result).
 * Before loading anything (here and in pal_mpi_choose_abi, since UCX reads its
 * configuration when its library loads), sets UCX_ERROR_SIGNALS="" unless the
 * user set it: UCX (under MPICH, and Open MPI's UCX components) would otherwise
 * trap SIGSEGV/SIGBUS/SIGFPE/SIGILL, which the .NET runtime needs for
 * NullReferenceException and friends.
 * Returns 0, or -1 with a message in err naming what was tried. */
int pal_mpi_load(char *err, int cap);
/* The file the library was loaded from ("" before loading). */
const char *pal_mpi_path(void);
/* Which ABI a loaded library handle speaks. */
int pal_mpi_detect_abi(void *lib);

/* The MPICH version named by "MPICH Version: X.Y..." in the text
 * MPI_Get_library_version gives, as X * 100 + Y
 * (4.0.2 -> 400), or 0 when it names none (Open MPI; Intel MPI and others that do
 * not say their MPICH base). */
int pal_mpi_mpich_version(const char *version);

/* Whether an MPI library, by its ABI and the MPICH version its MPI_Get_library_version
 * text names (pal_mpi_mpich_version, 0 for none), makes MPI_Test
 * poll the network before it looks at the request, so that testing an operation that
 * is already complete (an eager send, a receive whose message had arrived) costs a
 * whole progress poll: MPICH before 4.2 (MPIR_Test_state, fixed by pmodels/mpich PR
 * 6629) and, not knowing their base, the other MPICH-ABI libraries (Intel MPI,
 * MVAPICH, Cray MPICH).  Open MPI looks first (ompi_request_default_test).  abi is
 * PAL_ABI_*.  mpcore then tests with MPI_Request_get_status, which polls only while
 * the operation is pending, and completes a finished one with MPI_Wait, which does
 * not poll (mp_mpi_test_done_first). */
int pal_mpi_test_polls_when_done(int abi, int mpich_version);

/* Whether the library's MPI_Waitall can wait forever for a set holding a request that
 * completed with an error before the call (a receive truncated at its post, when its message
 * had arrived): Open MPI 4.1.4 at a thread level above MPI_THREAD_SINGLE, while MPI_Wait,
 * MPI_Testall, MPI_Waitany and MPI_Waitsome report the error (tests/native error_paths,
 * and in plain C).  Open MPI 5 was not measured here, so every Open MPI is assumed to.
 * abi is PAL_ABI_*.  mpcore clears the flag when MPI provides MPI_THREAD_SINGLE. */
int pal_mpi_waitall_hangs_on_failed(int abi);

/* A phrase naming an ABI, for messages. */
const char *pal_mpi_abi_name(int abi);

/* Decides which MPI ABI this process should use, without initializing MPI:
 * $MOTOR_MPI_ABI ("mpich" | "openmpi"), else the ABI of $MOTOR_MPI_LIBRARY,
 * else Open MPI when Open MPI's launcher started the process
 * (OMPI_COMM_WORLD_SIZE), else MPICH when an MPICH-ABI library loads, else
 * Open MPI when libmpi.so.40 loads, else MPICH.  Returns PAL_ABI_*, or -1 with
 * a message in why when $MOTOR_MPI_ABI or $MOTOR_MPI_LIBRARY is unusable.
 * `reason` (may be NULL) receives a short phrase saying what decided. */
int pal_mpi_choose_abi(char *why, int cap, const char **reason);

/* Makes every later pal_mpi_load fail with msg (the process cannot use this
 * build's library: e.g. the core for the ABI it needs is missing). */
void pal_mpi_refuse(const char *msg);

#if PAL_MPI_BUILD_ABI == 1
/* MPICH-ABI status access (count_lo / count_hi_and_cancelled layout). */
static inline int64_t pal_status_bytes(const MPI_Status *st)
{
    return (int64_t)(uint32_t)st->count_lo |
           ((int64_t)(st->count_hi_and_cancelled >> 1) << 32);
}
static inline int pal_status_cancelled(const MPI_Status *st)
{
    return st->count_hi_and_cancelled & 1;
}
#else
/* Open MPI status access (_ucount bytes, _cancelled flag). */
static inline int64_t pal_status_bytes(const MPI_Status *st)
{
    return (int64_t)st->_ucount;
}
static inline int pal_status_cancelled(const MPI_Status *st)
{
    return st->_cancelled != 0;
}
#endif

#ifdef __cplusplus
}
#endif
#endif /* PAL_MPI_H */
