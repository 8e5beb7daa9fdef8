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

int mp_fail(int code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t_message, sizeof t_message, fmt, ap);
    va_end(ap);
    t_mpi_class = 0;
    return code;
}

int mp_mpi_fail(int rc, const char *call)
{
    int cls = rc, len = 0;
    char text[MPI_MAX_ERROR_STRING + 1];
    text[0] = '\0';
    if (pal_mpi.Error_class && pal_mpi.Error_class(rc, &cls) != MPI_SUCCESS)
        cls = rc;
    if (pal_mpi.Error_string && pal_mpi.Error_string(rc, text, &len) != MPI_SUCCESS)
        snprintf(text, sizeof text, "MPI error code %d", rc);
    text[len < 0 ? 0 : len > MPI_MAX_ERROR_STRING ? MPI_MAX_ERROR_STRING : len] = '\0';
    snprintf(t_message, sizeof t_message, "%s: %s", call, text);
    t_mpi_class = cls;
    atomic_fetch_add_explicit(&mp_g_mpi_errors, 1, memory_order_relaxed); /* cold path */
    return cls == MPI_ERR_TRUNCATE ? MP_ETRUNCATE : MP_EMPI;
}

int mp_fail_state(void)
{
    int s = atomic_load(&mp_g_state);
    return mp_fail(MP_ESTATE, s == MP_STATE_FINALIZED ? "MPI has been finalized"
                                                      : "MPI is not initialized");
}
