/*
 * sessions.c - the MPI-4 sessions model (MPI-4.0 11.3): a session is a
 * handle on MPI of its own, from which a process asks for process sets
 * ("mpi://WORLD", "mpi://SELF", ...), a group of one, and a communicator from
 * that group (MPI_Comm_create_from_group).
 *
 * A session can be made with or without the world model.  With it (motor
 * initializes MPI before Main, or the program used the world), the session
 * lives beside it.  Without it, the first session makes the core ready
 * without MPI_Init: communicators, groups and requests then work on what the
 * session made, while the world and self handles stay unusable until
 * mp_init (which MPI-4.0 11.4.1 allows after sessions) brings the world model
 * up too.  Finalize then ends whichever models were started.
 */
#include "comms.h"
#include "info.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#ifndef MPI_MAX_PSET_NAME_LEN /* MPI-3 headers (Open MPI 4.1): their values in MPICH 4 */
#define MPI_MAX_PSET_NAME_LEN 256
#endif
#ifndef MPI_MAX_STRINGTAG_LEN
#define MPI_MAX_STRINGTAG_LEN 256
#endif

#define MAX_SESSIONS 64

static pal_session_t g_sessions[MAX_SESSIONS]; /* slot 0 unused: handles are > 0 */
static int g_session_used[MAX_SESSIONS];
static mp_spin_t g_session_lock = MP_SPIN_INIT;

/* 1 while the core is ready through sessions only (no MPI_Init yet). */
int mp_g_sessions_only;

static const char k_what[] = "the sessions model, MPI-4.0 11.3";

static MP_COLD int fail_missing(const char *name)
{
    return mp_fail_mpi4_missing(name, k_what, "sessions");
}

static int session_get(int32_t session, pal_session_t *out)
{
    if (!mp_ready())
        return mp_fail_state();
    if (session <= 0 || session >= MAX_SESSIONS || !g_session_used[session])
        return mp_fail(MP_EHANDLE, "session handle %d is not valid (finalized, or never made)", session);
    *out = g_sessions[session];
    return 0;
}

int mp_session_init(mp_info_t info, int32_t *session)
{
    char err[2048];
    MPI_Info mi = MPI_INFO_NULL;
    pal_session_t s = PAL_SESSION_NULL;
    int rc, state = atomic_load(&mp_g_state);
    if (!session)
        return mp_fail_null_output("session");
    if (state == MP_STATE_FINALIZED)
        return mp_fail(MP_ESTATE, "no session can be made after MPI was finalized");
    if (state != MP_STATE_READY && pal_mpi_load(err, (int)sizeof err) != 0)
        return mp_fail(MP_ENOLIB, "%s", err);
    if (!pal_mpi.Session_init)
        return fail_missing("MPI_Session_init");
    if (info != MP_INFO_NULL && (rc = mp_info_lookup(info, &mi)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Session_init(mi, MPI_ERRORS_RETURN, &s);
    mp_blocking_leave();
    if ((rc = MP_MPI_CHECK(rc, "MPI_Session_init")))
        return rc;
    mp_spin_lock(&g_session_lock);
    for (int i = 1; i < MAX_SESSIONS; i++) {
        if (!g_session_used[i]) {
            g_session_used[i] = 1;
            g_sessions[i] = s;
            mp_spin_unlock(&g_session_lock);
            if (state != MP_STATE_READY) {
                mp_g_sessions_only = 1;
                atomic_store(&mp_g_state, MP_STATE_READY);
            }
            *session = i;
            return 0;
        }
    }
    mp_spin_unlock(&g_session_lock);
    pal_mpi.Session_finalize(&s);
    return mp_fail(MP_ENOMEM, "too many sessions at once (at most %d)", MAX_SESSIONS - 1);
}

int mp_session_finalize(int32_t session)
{
    pal_session_t s = PAL_SESSION_NULL;
    int rc;
    if ((rc = session_get(session, &s)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Session_finalize(&s);
    mp_blocking_leave();
    if ((rc = MP_MPI_CHECK(rc, "MPI_Session_finalize")))
        return rc;
    mp_spin_lock(&g_session_lock);
    g_session_used[session] = 0;
    mp_spin_unlock(&g_session_lock);
    return 0;
}

void mp_session_cleanup(void)
{
    for (int i = 1; i < MAX_SESSIONS; i++) {
        if (g_session_used[i]) {
            g_session_used[i] = 0;
            pal_mpi.Session_finalize(&g_sessions[i]);
        }
    }
}

int mp_session_num_psets(int32_t session, int *count)
{
    pal_session_t s = PAL_SESSION_NULL;
    int rc;
    if ((rc = session_get(session, &s)))
        return rc;
    if (!count)
        return mp_fail_null_output("count");
    return MP_MPI_CHECK(pal_mpi.Session_get_num_psets(s, MPI_INFO_NULL, count), "MPI_Session_get_num_psets");
}

/* The name of the session's process set n (MPI_Session_get_nth_pset), NUL-terminated in name. */
static int nth_pset_name(pal_session_t s, int n, char name[MPI_MAX_PSET_NAME_LEN + 1])
{
    int len = MPI_MAX_PSET_NAME_LEN;
    memset(name, 0, MPI_MAX_PSET_NAME_LEN + 1);
    return MP_MPI_CHECK(pal_mpi.Session_get_nth_pset(s, MPI_INFO_NULL, n, &len, name), "MPI_Session_get_nth_pset");
}

int mp_session_nth_pset(int32_t session, int n, char *buf, int cap)
{
    char name[MPI_MAX_PSET_NAME_LEN + 1];
    pal_session_t s = PAL_SESSION_NULL;
    int rc, count = 0, len;
    if ((rc = session_get(session, &s)) ||
        (rc = MP_MPI_CHECK(pal_mpi.Session_get_num_psets(s, MPI_INFO_NULL, &count), "MPI_Session_get_num_psets")))
        return rc;
    if ((unsigned)n >= (unsigned)count)
        return mp_fail(MP_ECOUNT, "process set %d is outside [0, %d)", n, count);
    if (!buf || cap <= 0)
        return mp_fail(MP_EINVAL, "name buffer is NULL or empty");
    if ((rc = nth_pset_name(s, n, name)))
        return rc;
    len = (int)strnlen(name, MPI_MAX_PSET_NAME_LEN);
    memcpy(buf, name, (size_t)(len < cap ? len : cap - 1));
    buf[len < cap ? len : cap - 1] = '\0';
    return len;
}

/* A process set's name: not empty, within MPI's bound, and one of the session's process sets.
 * MPICH 4.0 stops the process on an unknown name while MPI runs through sessions alone,
 * whatever the session's error handler says; looked up here first, the name is refused as
 * MPI refuses it beside the world (MPI_ERR_ARG), on every path.  MPICH matches names without
 * regard to case ("mpi://world" is its world set), and so does the look-up. */
static int check_pset(pal_session_t s, const char *pset, const char *call)
{
    char name[MPI_MAX_PSET_NAME_LEN + 1], known[512] = "";
    size_t n = pset ? strnlen(pset, MPI_MAX_PSET_NAME_LEN + 1) : 0, used = 0;
    int rc, count = 0;
    if (n == 0)
        return mp_fail(MP_EINVAL, "process set name is empty");
    if (n > MPI_MAX_PSET_NAME_LEN)
        return mp_fail(MP_EINVAL, "process set name is longer than %d bytes", MPI_MAX_PSET_NAME_LEN);
    if ((rc = MP_MPI_CHECK(pal_mpi.Session_get_num_psets(s, MPI_INFO_NULL, &count), "MPI_Session_get_num_psets")))
        return rc;
    for (int i = 0; i < count; i++) {
        if ((rc = nth_pset_name(s, i, name)))
            return rc;
        if (strcasecmp(name, pset) == 0)
            return 0;
        if (used < sizeof known) {
            int w = snprintf(known + used, sizeof known - used, "%s%s", i ? ", " : "", name);
            used += w > 0 ? (size_t)w : 0;
        }
    }
    return mp_fail_class(MP_EMPI, MPI_ERR_ARG, "%s: MPI_ERR_ARG: process set \"%s\" is not one of the %d this session "
                         "knows (%s)", call, pset, count, known);
}

int mp_session_pset_info(int32_t session, const char *pset, mp_info_t *info)
{
    pal_session_t s = PAL_SESSION_NULL;
    MPI_Info mi = MPI_INFO_NULL;
    int rc;
    if ((rc = session_get(session, &s)) || (rc = check_pset(s, pset, "MPI_Session_get_pset_info")))
        return rc;
    if (!info)
        return mp_fail_null_output("info");
    if ((rc = MP_MPI_CHECK(pal_mpi.Session_get_pset_info(s, pset, &mi), "MPI_Session_get_pset_info")))
        return rc;
    return mp_info_adopt(mi, info);
}

int mp_group_from_pset(int32_t session, const char *pset, mp_group_t *group)
{
    pal_session_t s = PAL_SESSION_NULL;
    MPI_Group g = MPI_GROUP_NULL;
    int rc;
    if ((rc = session_get(session, &s)) || (rc = check_pset(s, pset, "MPI_Group_from_session_pset")))
        return rc;
    if (!group)
        return mp_fail_null_output("group");
    if ((rc = MP_MPI_CHECK(pal_mpi.Group_from_session_pset(s, pset, &g), "MPI_Group_from_session_pset")))
        return rc;
    return mp_group_adopt(g, group);
}

int mp_comm_create_from_group(mp_group_t group, const char *tag, mp_comm_t *comm)
{
    MPI_Group g = MPI_GROUP_NULL;
    MPI_Comm out = MPI_COMM_NULL;
    size_t n = tag ? strnlen(tag, MPI_MAX_STRINGTAG_LEN + 1) : 0;
    int rc;
    if (!pal_mpi.Comm_create_from_group)
        return fail_missing("MPI_Comm_create_from_group");
    if ((rc = mp_group_lookup(group, &g)))
        return rc;
    if (n == 0 || n > MPI_MAX_STRINGTAG_LEN)
        return mp_fail(MP_EINVAL, "string tag must have 1 to %d bytes (has %zu%s)", MPI_MAX_STRINGTAG_LEN, n,
                       n > MPI_MAX_STRINGTAG_LEN ? " or more" : "");
    if (!comm)
        return mp_fail_null_output("communicator");
    mp_blocking_enter();
    rc = pal_mpi.Comm_create_from_group(g, tag, MPI_INFO_NULL, MPI_ERRORS_RETURN, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_create_from_group", comm);
}
