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

static const char *const k_mpich_abi_names[] = {
    "libmpi.so.12", "libmpich.so.12", "libmpi.so", "libmpich.so",
};

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

static int bind_library(void *lib, const char *name, char *err, int cap)
{
    pal_mpi_t t;
    int abi = pal_mpi_detect_abi(lib);
    memset(&t, 0, sizeof t);
    if (abi != PAL_ABI_MPICH) {
        snprintf(err, (size_t)cap, "%s does not speak the MPICH ABI (%s); this Motor build "
                 "supports MPICH-family libraries (MPICH, Intel MPI, MVAPICH)", name,
                 abi == PAL_ABI_OPENMPI ? "it is Open MPI"
                 : abi == PAL_ABI_STANDARD ? "it uses the MPI-5 standard ABI"
                 : "no MPI_Init_thread symbol");
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
        pal_env_default("UCX_ERROR_SIGNALS", "");
        if (forced && *forced) {
            if (try_load(forced, why, (int)sizeof why) == 0)
                g_loaded = 1;
            else
                snprintf(g_error, sizeof g_error,
                         "cannot use the MPI library named by MOTOR_MPI_LIBRARY=%s: %s", forced, why);
        } else {
            size_t used = 0;
            used += (size_t)snprintf(g_error, sizeof g_error,
                                     "no MPI library found (install MPICH, e.g. apt-get install "
                                     "mpich, or set MOTOR_MPI_LIBRARY); tried:");
            for (size_t i = 0; i < sizeof k_mpich_abi_names / sizeof *k_mpich_abi_names; i++) {
                if (try_load(k_mpich_abi_names[i], why, (int)sizeof why) == 0) {
                    g_loaded = 1;
                    break;
                }
                if (used < sizeof g_error)
                    used += (size_t)snprintf(g_error + used, sizeof g_error - used, " [%s: %s]",
                                             k_mpich_abi_names[i], why);
            }
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
