/* error.c - the one error translation point: codes, names, messages, and the
 * last failure of each thread. */
#include "core.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static __thread int t_mpi_class;

static __thread char t_message[2048]; /* room for the MPI library search report */

_Atomic uint64_t mp_g_mpi_errors;

const char *mp_err_name(int code)
{
    switch (code) {
#define MP_ERROR_NAME(name, c, csname, msg) case c: return "MP_" #name;
        MP_ERROR_MAP(MP_ERROR_NAME)
#undef MP_ERROR_NAME
    }
    return "MP_E?";
}

const char *mp_err_message(int code)
{
    switch (code) {
#define MP_ERROR_MSG(name, c, csname, msg) case c: return msg;
        MP_ERROR_MAP(MP_ERROR_MSG)
#undef MP_ERROR_MSG
    }
    return "unknown error code";
}

int mp_last_error(int *mpi_error_class, char *buf, int cap)
{
    int len = (int)strlen(t_message);
    if (mpi_error_class)
        *mpi_error_class = t_mpi_class;
    if (buf && cap > 0)
        snprintf(buf, (size_t)cap, "%s", t_message);
    return len;
}

/* Records a message and its MPI error class (0: none) for mp_last_error. */
static void record(int cls, const char *fmt, va_list ap)
{
    vsnprintf(t_message, sizeof t_message, fmt, ap);
    t_mpi_class = cls;
}

int mp_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(0, fmt, ap);
    va_end(ap);
    return code;
}

int mp_fail_class(int code, int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(cls, fmt, ap);
    va_end(ap);
    return code;
}

int mp_fail_null_output(const char *what)
{
    return mp_fail(MP_EINVAL, "%s output is NULL", what);
}

/* The name of an MPI error class, so a message says which class whatever
 * the library's numbering (MPICH's and Open MPI's differ); NULL if unlisted. */
static const char *class_name(int cls)
{
#define MP_CLASS(name) if (cls == name) return #name;
    MP_CLASS(MPI_ERR_BUFFER) MP_CLASS(MPI_ERR_COUNT) MP_CLASS(MPI_ERR_TYPE) MP_CLASS(MPI_ERR_TAG)
    MP_CLASS(MPI_ERR_COMM) MP_CLASS(MPI_ERR_RANK) MP_CLASS(MPI_ERR_REQUEST) MP_CLASS(MPI_ERR_ROOT)
    MP_CLASS(MPI_ERR_OP) MP_CLASS(MPI_ERR_ARG) MP_CLASS(MPI_ERR_TRUNCATE) MP_CLASS(MPI_ERR_OTHER)
    MP_CLASS(MPI_ERR_INTERN) MP_CLASS(MPI_ERR_INFO) MP_CLASS(MPI_ERR_INFO_KEY)
    MP_CLASS(MPI_ERR_INFO_VALUE) MP_CLASS(MPI_ERR_FILE) MP_CLASS(MPI_ERR_AMODE) MP_CLASS(MPI_ERR_ACCESS)
    MP_CLASS(MPI_ERR_NO_SUCH_FILE) MP_CLASS(MPI_ERR_FILE_EXISTS) MP_CLASS(MPI_ERR_FILE_IN_USE)
    MP_CLASS(MPI_ERR_BAD_FILE) MP_CLASS(MPI_ERR_READ_ONLY) MP_CLASS(MPI_ERR_NO_SPACE)
    MP_CLASS(MPI_ERR_QUOTA) MP_CLASS(MPI_ERR_IO) MP_CLASS(MPI_ERR_DUP_DATAREP)
    MP_CLASS(MPI_ERR_UNSUPPORTED_DATAREP) MP_CLASS(MPI_ERR_UNSUPPORTED_OPERATION)
    MP_CLASS(MPI_ERR_CONVERSION) MP_CLASS(MPI_ERR_NOT_SAME) MP_CLASS(MPI_ERR_GROUP) MP_CLASS(MPI_ERR_TOPOLOGY)
    MP_CLASS(MPI_ERR_DIMS) MP_CLASS(MPI_ERR_UNKNOWN) MP_CLASS(MPI_ERR_IN_STATUS) MP_CLASS(MPI_ERR_PENDING)
    MP_CLASS(MPI_ERR_KEYVAL) MP_CLASS(MPI_ERR_NO_MEM) MP_CLASS(MPI_ERR_BASE) MP_CLASS(MPI_ERR_SPAWN)
    MP_CLASS(MPI_ERR_PORT) MP_CLASS(MPI_ERR_SERVICE) MP_CLASS(MPI_ERR_NAME) MP_CLASS(MPI_ERR_WIN)
    MP_CLASS(MPI_ERR_SIZE) MP_CLASS(MPI_ERR_DISP) MP_CLASS(MPI_ERR_LOCKTYPE) MP_CLASS(MPI_ERR_ASSERT)
    MP_CLASS(MPI_ERR_RMA_CONFLICT) MP_CLASS(MPI_ERR_RMA_SYNC) MP_CLASS(MPI_ERR_RMA_RANGE)
    MP_CLASS(MPI_ERR_RMA_ATTACH) MP_CLASS(MPI_ERR_RMA_SHARED) MP_CLASS(MPI_ERR_RMA_FLAVOR)
#ifdef MPI_ERR_SESSION /* MPI-4 classes: MPICH 4, not Open MPI 4.1 */
    MP_CLASS(MPI_ERR_SESSION)
#endif
#ifdef MPI_ERR_PROC_ABORTED
    MP_CLASS(MPI_ERR_PROC_ABORTED)
#endif
#ifdef MPI_ERR_VALUE_TOO_LARGE
    MP_CLASS(MPI_ERR_VALUE_TOO_LARGE)
#endif
#ifdef MPI_ERR_ERRHANDLER
    MP_CLASS(MPI_ERR_ERRHANDLER)
#endif
#undef MP_CLASS
    return NULL;
}

static int class_of(int rc)
{
    int cls = rc;
    if (pal_mpi.Error_class && pal_mpi.Error_class(rc, &cls) != MPI_SUCCESS)
        cls = rc;
    return cls;
}

int mp_mpi_code(int rc)
{
    return class_of(rc) == MPI_ERR_TRUNCATE ? MP_ETRUNCATE : MP_EMPI;
}

int mp_mpi_fail(int rc, const char *call)
{
    const char *name;
    int cls = class_of(rc), len = 0;
    /* Twice MPI's bound, and zeroed: MPICH 4.0's MPI_Error_string, once a long error stack
     * fills MPI_MAX_ERROR_STRING, takes strlen of the bytes past the end and goes on writing
     * from wherever that leads (shown in plain C: an Alltoallv truncated on MPI_COMM_SELF
     * wrote 178 bytes past a 512-byte buffer whose tail was not NUL, none past a NUL tail).
     * Left uninitialized, that tail was stack garbage, and the write reached this frame's
     * saved registers and return address (docs/architecture.md, "MPI libraries' defects"). */
    char text[2 * MPI_MAX_ERROR_STRING];
    memset(text, 0, sizeof text);
    if (!pal_mpi.Error_string || pal_mpi.Error_string(rc, text, &len) != MPI_SUCCESS)
        len = snprintf(text, sizeof text, "MPI error code %d", rc);
    text[len < 0 ? 0 : len > MPI_MAX_ERROR_STRING ? MPI_MAX_ERROR_STRING : len] = '\0';
    name = class_name(cls);
    if (name && !strstr(text, name)) /* the class by name, unless MPI's string says it */
        snprintf(t_message, sizeof t_message, "%s: %s: %s", call, name, text);
    else
        snprintf(t_message, sizeof t_message, "%s: %s", call, text);
    t_mpi_class = cls;
    atomic_fetch_add_explicit(&mp_g_mpi_errors, 1, memory_order_relaxed); /* cold path */
    return cls == MPI_ERR_TRUNCATE ? MP_ETRUNCATE : MP_EMPI;
}

int mp_mpi_fail_unreported(int cls, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    record(cls, fmt, ap);
    va_end(ap);
    atomic_fetch_add_explicit(&mp_g_mpi_errors, 1, memory_order_relaxed); /* cold path */
    return MP_EMPI;
}

int mp_fail_state(void)
{
    int s = atomic_load(&mp_g_state);
    return mp_fail(MP_ESTATE, s == MP_STATE_FINALIZED ? "MPI has been finalized"
                                                      : "MPI is not initialized");
}
