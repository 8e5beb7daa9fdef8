/* info.c - info objects (MPI-4.0 chapter 10): key/value hints handed to file
 * (and window) creation.  A small table maps Motor handles to MPI_Info. */
#include "info.h"

#include <stdio.h>
#include <string.h>

#define MAX_INFOS 1024

static MPI_Info g_infos[MAX_INFOS]; /* slot 0 stands for MPI_INFO_NULL */
static int g_info_used[MAX_INFOS];
static mp_spin_t g_info_lock = MP_SPIN_INIT;

int mp_info_lookup(mp_info_t info, MPI_Info *out)
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

int mp_info_create(mp_info_t *info)
{
    MPI_Info mi = MPI_INFO_NULL;
    int rc;
    if (!mp_ready())
        return mp_fail_state();
    if ((rc = MP_MPI_CHECK(pal_mpi.Info_create(&mi), "MPI_Info_create")))
        return rc;
    return mp_info_adopt(mi, info);
}

int mp_info_adopt(MPI_Info mi, mp_info_t *info)
{
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

/* A key MPI accepts: not empty, shorter than MPI_MAX_INFO_KEY. */
static int check_key(const char *key)
{
    size_t n = key ? strlen(key) : 0;
    if (n == 0)
        return mp_fail(MP_EINVAL, "info key is empty");
    if (n >= MPI_MAX_INFO_KEY)
        return mp_fail(MP_EINVAL, "info key of %zu bytes is longer than this MPI library's limit (%d)",
                       n, MPI_MAX_INFO_KEY - 1);
    return 0;
}

int mp_info_set(mp_info_t info, const char *key, const char *value)
{
    MPI_Info mi = MPI_INFO_NULL;
    size_t n = value ? strlen(value) : 0;
    int rc;
    if ((rc = mp_info_lookup(info, &mi)) || (rc = check_key(key)))
        return rc;
    if (info == MP_INFO_NULL)
        return mp_fail(MP_EHANDLE, "MP_INFO_NULL cannot be set");
    if (!value)
        return mp_fail(MP_EINVAL, "info value is NULL");
    if (n >= MPI_MAX_INFO_VAL)
        return mp_fail(MP_EINVAL, "info value of %zu bytes is longer than this MPI library's limit (%d)",
                       n, MPI_MAX_INFO_VAL - 1);
    return MP_MPI_CHECK(pal_mpi.Info_set(mi, key, value), "MPI_Info_set");
}

int mp_info_get(mp_info_t info, const char *key, char *buf, int cap, int *found)
{
    MPI_Info mi = MPI_INFO_NULL;
    char value[MPI_MAX_INFO_VAL + 1];
    int rc, len = 0, flag = 0;
    *found = 0;
    if ((rc = mp_info_lookup(info, &mi)) || (rc = check_key(key)))
        return rc;
    if (info == MP_INFO_NULL)
        return 0;
    if ((rc = MP_MPI_CHECK(pal_mpi.Info_get_valuelen(mi, key, &len, &flag), "MPI_Info_get_valuelen")) || !flag)
        return rc;
    if ((rc = MP_MPI_CHECK(pal_mpi.Info_get(mi, key, MPI_MAX_INFO_VAL, value, &flag), "MPI_Info_get")))
        return rc;
    value[MPI_MAX_INFO_VAL] = '\0';
    *found = flag;
    if (buf && cap > 0)
        snprintf(buf, (size_t)cap, "%s", value);
    return (int)strlen(value);
}

int mp_info_free(mp_info_t info)
{
    MPI_Info mi = MPI_INFO_NULL;
    int rc;
    if ((rc = mp_info_lookup(info, &mi)))
        return rc;
    if (info == MP_INFO_NULL)
        return mp_fail(MP_EHANDLE, "MP_INFO_NULL cannot be freed");
    mp_spin_lock(&g_info_lock);
    g_info_used[info] = 0;
    mp_spin_unlock(&g_info_lock);
    return MP_MPI_CHECK(pal_mpi.Info_free(&mi), "MPI_Info_free");
}
