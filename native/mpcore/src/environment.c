/* environment.c - the core's state and environment queries: thread level,
 * tag bound, clocks, processor name, library version and path. */
#include "core.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

_Atomic int mp_g_state = MP_STATE_UNINIT;

int mp_g_tag_ub = 32767; /* the MPI standard's guaranteed minimum until queried */
int mp_g_thread_level = MP_THREAD_SINGLE;
int mp_g_avx; /* 1 where the processor has AVX (mp_clean_upper, core.h) */

#if defined(__x86_64__)
__attribute__((constructor)) static void find_avx(void)
{
    __builtin_cpu_init(); /* before __builtin_cpu_supports, in a constructor */
    mp_g_avx = __builtin_cpu_supports("avx");
}
#endif

int mp_state(void)
{
    return atomic_load(&mp_g_state);
}

double mp_wtime(void)
{
    return pal_mpi.Wtime ? pal_mpi.Wtime() : (double)pal_clock_ns() * 1e-9;
}

double mp_wtick(void)
{
    return pal_mpi.Wtick ? pal_mpi.Wtick() : 1e-9;
}

int mp_thread_level(int *provided)
{
    if (!mp_ready())
        return mp_fail_state();
    *provided = mp_g_thread_level;
    return 0;
}

int mp_is_thread_main(int *flag)
{
    if (!mp_ready())
        return mp_fail_state();
    return MP_MPI_CHECK(pal_mpi.Is_thread_main(flag), "MPI_Is_thread_main");
}

int mp_processor_name(char *buf, int cap)
{
    char name[MPI_MAX_PROCESSOR_NAME + 1];
    int len = 0, rc;
    if (!mp_ready())
        return mp_fail_state();
    if ((rc = MP_MPI_CHECK(pal_mpi.Get_processor_name(name, &len), "MPI_Get_processor_name")))
        return rc;
    name[len < 0 ? 0 : len > MPI_MAX_PROCESSOR_NAME ? MPI_MAX_PROCESSOR_NAME : len] = '\0';
    if (buf && cap > 0)
        snprintf(buf, (size_t)cap, "%s", name);
    return (int)strlen(name);
}

int mp_library_version(char *buf, int cap)
{
    char text[MPI_MAX_LIBRARY_VERSION_STRING + 1];
    int len = 0, rc;
    char err[2048];
    if (pal_mpi_load(err, (int)sizeof err) != 0)
        return mp_fail(MP_ENOLIB, "%s", err);
    /* MPI_Get_library_version may be called before MPI_Init (MPI-3 8.1.1). */
    if ((rc = MP_MPI_CHECK(pal_mpi.Get_library_version(text, &len), "MPI_Get_library_version")))
        return rc;
    text[len < 0 ? 0 : len > MPI_MAX_LIBRARY_VERSION_STRING ? MPI_MAX_LIBRARY_VERSION_STRING : len] = '\0';
    /* Libraries end it with a newline and sometimes pad it; trim. */
    for (len = (int)strlen(text); len > 0 && (text[len - 1] == '\n' || text[len - 1] == ' '); len--)
        text[len - 1] = '\0';
    if (buf && cap > 0)
        snprintf(buf, (size_t)cap, "%s", text);
    return len;
}

int mp_g_reserved_above = INT_MAX;

int mp_reserve_tags(int above)
{
    if (!mp_ready())
        return mp_fail_state();
    if (above < 0 || above > mp_g_tag_ub)
        return mp_fail(MP_ETAG, "reserve_tags: %d is outside [0, %d]", above, mp_g_tag_ub);
    mp_g_reserved_above = above;
    return 0;
}

int mp_tag_ub(int *tag_ub)
{
    if (!mp_ready())
        return mp_fail_state();
    *tag_ub = mp_g_tag_ub;
    return 0;
}

const char *mp_library_path(void)
{
    return pal_mpi_path();
}

int mp_mpi_abi(void)
{
    return PAL_MPI_BUILD_ABI == PAL_ABI_OPENMPI ? MP_MPI_ABI_OPENMPI : MP_MPI_ABI_MPICH;
}

int mp_mpi_has(int feature)
{
    char err[2048];
    if (feature < 0 || feature >= MP_FEATURE_COUNT)
        return mp_fail(MP_EINVAL, "feature %d is not an MP_FEATURE_* value", feature);
    if (pal_mpi_load(err, (int)sizeof err) != 0)
        return mp_fail(MP_ENOLIB, "%s", err);
    switch (feature) {
    case MP_FEATURE_PERSISTENT_COLLECTIVES:
        return pal_mpi.Barrier_init && pal_mpi.Bcast_init && pal_mpi.Reduce_init && pal_mpi.Allreduce_init &&
               pal_mpi.Scan_init && pal_mpi.Exscan_init && pal_mpi.Reduce_scatter_block_init && pal_mpi.Gather_init &&
               pal_mpi.Scatter_init && pal_mpi.Allgather_init && pal_mpi.Alltoall_init && pal_mpi.Gatherv_init &&
               pal_mpi.Scatterv_init && pal_mpi.Allgatherv_init && pal_mpi.Alltoallv_init && pal_mpi.Reduce_scatter_init;
    case MP_FEATURE_PERSISTENT_NEIGHBORHOOD:
        return pal_mpi.Neighbor_allgather_init && pal_mpi.Neighbor_alltoall_init && pal_mpi.Neighbor_allgatherv_init &&
               pal_mpi.Neighbor_alltoallv_init;
    case MP_FEATURE_PARTITIONED:
        return pal_mpi.Psend_init && pal_mpi.Precv_init && pal_mpi.Pready && pal_mpi.Pready_range &&
               pal_mpi.Pready_list && pal_mpi.Parrived;
    default: /* MP_FEATURE_SESSIONS */
        return pal_mpi.Session_init && pal_mpi.Session_finalize && pal_mpi.Session_get_num_psets &&
               pal_mpi.Session_get_nth_pset && pal_mpi.Session_get_pset_info && pal_mpi.Group_from_session_pset &&
               pal_mpi.Comm_create_from_group;
    }
}
