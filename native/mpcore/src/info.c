/* info.c - info objects (MPI-4.0 10): key/value hints passed to the calls
 * that create windows (and files, processes).  Handles index a small table;
 * MP_INFO_NULL stands for MPI_INFO_NULL. */
#include "core.h"

#include <stdio.h>
#include <string.h>

#define MAX_INFOS 1024

static MPI_Info g_infos[MAX_INFOS]; /* slot 0 stands for MPI_INFO_NULL */
static int g_info_used[MAX_INFOS];
static mp_spin_t g_info_lock = MP_SPIN_INIT;

int mp_info_lookup(int32_t info, MPI_Info *out)
{
    if (!mp_ready())
        return mp_fail_state();
    if (info == MP_INFO_NULL) {
        *out = MPI_INFO_NULL;
        return 0;
    }
    if (info <= 0 || info >= MAX_INFOS || !g_info_used[info])
        return mp_fail(MP_EHANDLE, "info handle %d is not valid (freed or never created)", info);
    *out = g_infos[info];
    return 0;
}

int mp_info_create(int32_t *info)
{
    MPI_Info mi = MPI_INFO_NULL;
    int rc;
    if (!mp_ready())
        return mp_fail_state();
    if ((rc = MP_MPI_CHECK(pal_mpi.Info_create(&mi), "MPI_Info_create")))
        return rc;
    mp_spin_lock(&g_info_lock);
    for (int i = 1; i < MAX_INFOS; i++) {
        if (!g_info_used[i]) {
            g_info_used[i] = 1;
            g_infos[i] = mi;
            mp_spin_unlock(&g_info_lock);
            *info = i;
            return 0;
        }
    }
    mp_spin_unlock(&g_info_lock);
    pal_mpi.Info_free(&mi);
    return mp_fail(MP_ENOMEM, "too many info objects at once (at most %d)", MAX_INFOS - 1);
}

/* MPI bounds keys and values (MPI_MAX_INFO_KEY, MPI_MAX_INFO_VAL). */
static int check_key(const char *key)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0 || n >= MPI_MAX_INFO_KEY)
        return mp_fail(MP_EINVAL, "info key of %zu characters: must have 1 to %d", n, MPI_MAX_INFO_KEY - 1);
    return 0;
}

int mp_info_set(int32_t info, const char *key, const char *value)
{
    MPI_Info mi = MPI_INFO_NULL;
    size_t n = value ? strlen(value) : 0;
    int rc;
    if ((rc = mp_info_lookup(info, &mi)) || (rc = check_key(key)))
        return rc;
    if (mi == MPI_INFO_NULL)
        return mp_fail(MP_EHANDLE, "MP_INFO_NULL cannot be changed");
    if (!value || n >= MPI_MAX_INFO_VAL)
        return mp_fail(MP_EINVAL, "info value of %zu characters: must have at most %d", n, MPI_MAX_INFO_VAL - 1);
    return MP_MPI_CHECK(pal_mpi.Info_set(mi, key, value), "MPI_Info_set");
}

int mp_info_get(int32_t info, const char *key, char *buf, int cap)
{
    MPI_Info mi = MPI_INFO_NULL;
    char value[MPI_MAX_INFO_VAL + 1];
    int rc, len = 0, flag = 0;
    if ((rc = mp_info_lookup(info, &mi)) || (rc = check_key(key)))
        return rc;
    if (mi == MPI_INFO_NULL)
        return -1;
    if ((rc = MP_MPI_CHECK(pal_mpi.Info_get_valuelen(mi, key, &len, &flag), "MPI_Info_get_valuelen")))
        return rc;
    if (!flag)
        return -1;
    if ((rc = MP_MPI_CHECK(pal_mpi.Info_get(mi, key, MPI_MAX_INFO_VAL, value, &flag), "MPI_Info_get")))
        return rc;
    value[MPI_MAX_INFO_VAL] = '\0';
    if (buf && cap > 0)
        snprintf(buf, (size_t)cap, "%s", value);
    return (int)strlen(value);
}

int mp_info_free(int32_t info)
{
    MPI_Info mi = MPI_INFO_NULL;
    int rc;
    if (info == MP_INFO_NULL || (unsigned)info >= MAX_INFOS || !g_info_used[info])
        return mp_fail(MP_EHANDLE, "info handle %d is not valid (freed or never created)", info);
    mi = g_infos[info];
    g_info_used[info] = 0;
    rc = mp_ready() ? MP_MPI_CHECK(pal_mpi.Info_free(&mi), "MPI_Info_free") : 0;
    return rc;
}
