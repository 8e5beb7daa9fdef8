/* pal_mpi_load.c - finds, loads and binds the MPI library at run time. */
#define _GNU_SOURCE
#include "pal.h"
#include "pal_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pal_mpi_t pal_mpi;

static int g_loaded;       /* 1 ok, -1 failed */
static char g_path[4096];
static char g_error[2048];

#if PAL_MPI_BUILD_ABI == 1 /* PAL_ABI_MPICH */
#define k_names k_mpich_names
#define PAL_OTHER_NAME "libmpi.so.40"
#define PAL_OTHER_MPI "Open MPI"
#else
static const char *const k_names[] = { "libmpi.so.40", "libmpi.so" };
#define PAL_OTHER_NAME "libmpich.so.12"
#define PAL_OTHER_MPI "MPICH"
#endif

/* Ends every "no usable MPI" message, from motor and from System.MP in library mode alike. */
#define PAL_MPI_ADVICE                                                                      \
    ". Install MPICH (Debian: apt-get install mpich) or Open MPI (apt-get install openmpi-bin) " \
    "and start the program with that MPI's launcher (mpiexec.mpich, mpirun.openmpi, srun), or "  \
    "set MOTOR_MPI_LIBRARY to the MPI library to use (MPICH ABI or Open MPI)"

const char *pal_mpi_abi_name(int abi)
{
    switch (abi) {
    case PAL_ABI_MPICH: return "the MPICH ABI (MPICH, Intel MPI, MVAPICH)";
    case PAL_ABI_OPENMPI: return "Open MPI's ABI";
    case PAL_ABI_STANDARD: return "the MPI-5 standard ABI";
    default: return "no known MPI ABI (no MPI_Init_thread symbol)";
    }
}

int pal_mpi_mpich_version(const char *version)
{
    const char *v = strstr(version, "MPICH Version:");
    long major, minor = 0;
    char *end;
    if (!v)
        return 0;
    v += strlen("MPICH Version:");
    v += strspn(v, " \t");
    major = strtol(v, &end, 10);
    if (end == v || major <= 0 || major > 99)
        return 0;
    if (*end == '.')
        minor = strtol(end + 1, NULL, 10);
    return (int)major * 100 + (minor >= 0 && minor < 100 ? (int)minor : 0);
}

int pal_mpi_test_polls_when_done(int abi, int mpich_version)
{
    /* An MPICH-ABI library that does not name its MPICH version (0): assume an older base. */
    return abi == PAL_ABI_MPICH && mpich_version < 402;
}

int pal_mpi_waitall_hangs_on_failed(int abi)
{
    return abi == PAL_ABI_OPENMPI;
}

int pal_mpi_detect_abi(void *lib)
{
    if (pal_dl_sym(lib, "ompi_mpi_comm_self"))
        return PAL_ABI_OPENMPI;
    if (pal_dl_sym(lib, "MPI_Abi_get_version"))
        return PAL_ABI_STANDARD;
    if (pal_dl_sym(lib, "MPI_Init_thread"))
        return PAL_ABI_MPICH;
    return PAL_ABI_UNKNOWN;
}

static const char *const k_mpich_names[] = {
    "libmpi.so.12", "libmpich.so.12", "libmpi.so", "libmpich.so",
};

/* Settings the MPI stack reads when its libraries load (UCX parses its
 * configuration in a library constructor), so this runs before any dlopen.
 * UCX (under MPICH and Open MPI) would otherwise trap SIGSEGV/SIGBUS/SIGFPE/
 * SIGILL, which the .NET runtime needs for NullReferenceException and friends.
 * (Open MPI's own handlers, opal_signal, leave signals that already have a
 * handler alone, so the runtime's stay.) */
static void prepare_environment(void)
{
    pal_env_default("UCX_ERROR_SIGNALS", "");
}

static int loads_with_abi(const char *name, int abi)
{
    void *lib = pal_dl_open(name, 1);
    return lib && pal_mpi_detect_abi(lib) == abi;
}

int pal_mpi_choose_abi(char *why, int cap, const char **reason)
{
    const char *abi = getenv("MOTOR_MPI_ABI");
    const char *forced = getenv("MOTOR_MPI_LIBRARY");
    const char *launcher, *dummy;
    if (!reason)
        reason = &dummy;
    prepare_environment();
    if (abi && *abi) {
        *reason = "MOTOR_MPI_ABI";
        if (!strcmp(abi, "mpich"))
            return PAL_ABI_MPICH;
        if (!strcmp(abi, "openmpi"))
            return PAL_ABI_OPENMPI;
        snprintf(why, (size_t)cap, "MOTOR_MPI_ABI=%s is not one of: mpich, openmpi", abi);
        return -1;
    }
    if (forced && *forced) {
        void *lib = pal_dl_open(forced, 1);
        int found;
        *reason = "MOTOR_MPI_LIBRARY";
        if (!lib) {
            snprintf(why, (size_t)cap, "cannot use the MPI library named by MOTOR_MPI_LIBRARY=%s: %s" PAL_MPI_ADVICE,
                     forced, pal_dl_error());
            return -1;
        }
        found = pal_mpi_detect_abi(lib);
        if (found != PAL_ABI_MPICH && found != PAL_ABI_OPENMPI) {
            snprintf(why, (size_t)cap, "MOTOR_MPI_LIBRARY=%s is not an MPI library Motor can use: it speaks %s, "
                     "and Motor supports the MPICH ABI and Open MPI's" PAL_MPI_ADVICE, forced, pal_mpi_abi_name(found));
            return -1;
        }
        return found;
    }
    launcher = getenv("OMPI_COMM_WORLD_SIZE");
    if (launcher && *launcher) {
        *reason = "started by Open MPI's launcher";
        return PAL_ABI_OPENMPI;
    }
    /* srun --mpi=pmix hands its ranks PMIx alone (no PMI_RANK, which Hydra and srun --mpi=pmi2
     * set): an MPICH speaking PMI would start each rank as a job of its own. */
    launcher = getenv("PMIX_RANK");
    if (launcher && *launcher && !getenv("PMI_RANK") && loads_with_abi("libmpi.so.40", PAL_ABI_OPENMPI)) {
        *reason = "started by a PMIx launcher (srun --mpi=pmix)";
        return PAL_ABI_OPENMPI;
    }
    *reason = "the MPI libraries installed";
    for (size_t i = 0; i < sizeof k_mpich_names / sizeof *k_mpich_names; i++)
        if (loads_with_abi(k_mpich_names[i], PAL_ABI_MPICH))
            return PAL_ABI_MPICH;
    if (loads_with_abi("libmpi.so.40", PAL_ABI_OPENMPI))
        return PAL_ABI_OPENMPI;
    return PAL_ABI_MPICH;
}

void pal_mpi_refuse(const char *msg)
{
    snprintf(g_error, sizeof g_error, "%s", msg);
    g_loaded = -1;
}

static int bind_library(void *lib, const char *name, char *err, int cap)
{
    pal_mpi_t t;
    int abi = pal_mpi_detect_abi(lib);
    memset(&t, 0, sizeof t);
    if (abi != PAL_MPI_BUILD_ABI) {
        snprintf(err, (size_t)cap, "%s speaks %s, but this core was built for %s", name,
                 pal_mpi_abi_name(abi), pal_mpi_abi_name(PAL_MPI_BUILD_ABI));
        return -1;
    }
#define PAL_MPI_BIND_REQ(name)                                                     \
    t.name = (__typeof__(t.name))pal_dl_sym(lib, "MPI_" #name);                     \
    if (!t.name) {                                                                 \
        snprintf(err, (size_t)cap, "%s lacks the required function MPI_" #name, name_); \
        return -1;                                                                 \
    }
#define PAL_MPI_BIND_OPT(name) t.name = (__typeof__(t.name))pal_dl_sym(lib, "MPI_" #name);
    {
        const char *name_ = name;
        PAL_MPI_REQUIRED(PAL_MPI_BIND_REQ)
        PAL_MPI_OPTIONAL(PAL_MPI_BIND_OPT)
    }
#undef PAL_MPI_BIND_REQ
#undef PAL_MPI_BIND_OPT
#if PAL_MPI_BUILD_ABI == 1
    {
        /* MPICH 3 and later export it; before, it was the macro ((int *)0). */
        int *const *unweighted = (int *const *)pal_dl_sym(lib, "MPI_UNWEIGHTED");
        t.unweighted = unweighted ? *unweighted : NULL;
    }
#else
    t.unweighted = MPI_UNWEIGHTED;
#endif
    {
        char version[MPI_MAX_LIBRARY_VERSION_STRING + 1] = "";
        int len = 0;
        /* Callable before MPI_Init (MPI-3.1 8.1.1). */
        if (t.Get_library_version(version, &len) != MPI_SUCCESS || len < 0)
            len = 0;
        version[len > MPI_MAX_LIBRARY_VERSION_STRING ? MPI_MAX_LIBRARY_VERSION_STRING : len] = '\0';
        t.mpich_version = pal_mpi_mpich_version(version);
        t.test_polls_when_done = pal_mpi_test_polls_when_done(abi, t.mpich_version);
        t.waitall_hangs_on_failed = pal_mpi_waitall_hangs_on_failed(abi);
    }
    pal_mpi = t;
    if (pal_dl_path(lib, "MPI_Init_thread", g_path, (int)sizeof g_path) != 0)
        snprintf(g_path, sizeof g_path, "%s", name);
    return 0;
}

static int try_load(const char *name, char *err, int cap)
{
    void *lib = pal_dl_open(name, 1);
    if (!lib) {
        snprintf(err, (size_t)cap, "%s", pal_dl_error());
        return -1;
    }
    return bind_library(lib, name, err, cap);
}

int pal_mpi_load(char *err, int cap)
{
    if (g_loaded == 0) {
        const char *forced = getenv("MOTOR_MPI_LIBRARY");
        char why[1024];
        prepare_environment();
        if (forced && *forced) {
            if (try_load(forced, why, (int)sizeof why) == 0)
                g_loaded = 1;
            else
                snprintf(g_error, sizeof g_error,
                         "cannot use the MPI library named by MOTOR_MPI_LIBRARY=%s: %s" PAL_MPI_ADVICE, forced, why);
        } else {
            size_t used = 0;
            used += (size_t)snprintf(g_error, sizeof g_error, "no MPI library found; tried:");
            for (size_t i = 0; i < sizeof k_names / sizeof *k_names; i++) {
                if (try_load(k_names[i], why, (int)sizeof why) == 0) {
                    g_loaded = 1;
                    break;
                }
                if (used < sizeof g_error)
                    used += (size_t)snprintf(g_error + used, sizeof g_error - used, " [%s: %s]",
                                             k_names[i], why);
            }
            if (g_loaded != 1 && used < sizeof g_error) {
                /* Name the other MPI too: found means it was there but not chosen. */
                void *other = pal_dl_open(PAL_OTHER_NAME, 1);
                used += (size_t)snprintf(g_error + used, sizeof g_error - used, " [%s (%s): %s]",
                                         PAL_OTHER_NAME, PAL_OTHER_MPI,
                                         other ? "found, but this program was not started for it" : "not found");
            }
            if (g_loaded != 1 && used < sizeof g_error)
                snprintf(g_error + used, sizeof g_error - used, "%s", PAL_MPI_ADVICE);
        }
        if (g_loaded != 1)
            g_loaded = -1;
    }
    if (g_loaded == 1)
        return 0;
    snprintf(err, (size_t)cap, "%s", g_error);
    return -1;
}

const char *pal_mpi_path(void)
{
    return g_loaded == 1 ? g_path : "";
}
