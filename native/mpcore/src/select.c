/*
 * select.c - which core serves this process (libmpcore.so only).
 *
 * libmpcore.so is the MPICH-ABI core.  Open MPI's ABI differs (handles are
 * pointers to objects inside libmpi.so.40, the status has another layout), so
 * its core is the same sources compiled against Open MPI's mpi.h into
 * libmpcore-ompi.so, installed beside this library.  mp_core_table() decides
 * once (pal_mpi_choose_abi) and every caller - the motor host, the GC
 * extension, System.MP - goes through the table it returns, so one process
 * never mixes the two cores.
 *
 * libmpcore-ompi.so is opened RTLD_LOCAL and linked -Bsymbolic: its mp_*
 * functions bind to each other, never to the same names exported here.
 */
#include "core.h"

#include <stdio.h>
#include <string.h>

#define OMPI_CORE_FILE "libmpcore-ompi.so"

static const mp_table_t *_Atomic g_chosen;

/* Opens the Open MPI core beside this library; NULL with a message in err. */
static const mp_table_t *open_ompi_core(char *err, int cap)
{
    char path[4096];
    const char *slash;
    void *lib;
    const mp_table_t *(*get)(void);
    const mp_table_t *t;
    if (pal_addr_path((const void *)mp_core_own_table, path, (int)sizeof path) != 0 ||
        !(slash = strrchr(path, '/'))) {
        snprintf(err, (size_t)cap, "cannot find the folder of libmpcore.so to look for " OMPI_CORE_FILE);
        return NULL;
    }
    snprintf(path + (slash - path) + 1, sizeof path - (size_t)(slash - path) - 1, "%s", OMPI_CORE_FILE);
    if (!(lib = pal_dl_open(path, 0))) {
        snprintf(err, (size_t)cap, "%s", pal_dl_error());
        return NULL;
    }
    get = (const mp_table_t *(*)(void))pal_dl_sym(lib, "mp_core_table");
    t = get ? get() : NULL;
    if (!t || t->abi_version != MP_ABI_VERSION || t->size < sizeof(mp_table_t) ||
        t->mpi_abi() != MP_MPI_ABI_OPENMPI) {
        snprintf(err, (size_t)cap, "%.1500s is not an Open MPI core of ABI version %d", path, MP_ABI_VERSION);
        return NULL;
    }
    return t;
}

static const mp_table_t *choose(void)
{
    char why[2048], msg[3072];
    const char *reason = "";
    int abi = pal_mpi_choose_abi(why, (int)sizeof why, &reason);
    const mp_table_t *t;
    if (abi < 0) {
        pal_mpi_refuse(why);
        return mp_core_own_table();
    }
    if (abi != PAL_ABI_OPENMPI)
        return mp_core_own_table();
    if ((t = open_ompi_core(why, (int)sizeof why)))
        return t;
    snprintf(msg, sizeof msg, "this process needs Open MPI (%s), but Motor's Open MPI core could not be "
             "loaded: %s; build Motor with Open MPI's headers installed (apt-get install "
             "libopenmpi-dev, then ./build.sh) or use an MPICH-family library", reason, why);
    pal_mpi_refuse(msg);
    return mp_core_own_table();
}

const mp_table_t *mp_core_table(void)
{
    const mp_table_t *t = atomic_load_explicit(&g_chosen, memory_order_acquire);
    const mp_table_t *expected = NULL;
    if (MP_LIKELY(t != NULL))
        return t;
    t = choose();
    if (!atomic_compare_exchange_strong_explicit(&g_chosen, &expected, t, memory_order_acq_rel,
                                                 memory_order_acquire))
        t = expected;
    return t;
}
