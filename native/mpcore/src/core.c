/* core.c - lifecycle, environment queries, communicators, argument checks. */
#include "core.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

_Atomic int mp_g_state = MP_STATE_UNINIT;
int mp_g_tag_ub = 32767; /* the MPI standard's guaranteed minimum until queried */
int mp_g_thread_level = MP_THREAD_SINGLE;

comm_entry_t mp_g_comms[MP_MAX_COMMS];
_Atomic int mp_g_comm_used[MP_MAX_COMMS];
static mp_spin_t g_comm_lock = MP_SPIN_INIT;

static const int k_mpi_levels[4] = { MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED,
                                     MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE };

static int level_from_mpi(int lvl)
{
    for (int i = 3; i > 0; i--)
        if (lvl == k_mpi_levels[i])
            return i;
    return MP_THREAD_SINGLE;
}

int mp_comm_register(MPI_Comm mpi, mp_comm_t *out)
{
    comm_entry_t e;
    int rc;
    e.mpi = mpi;
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_size(mpi, &e.size), "MPI_Comm_size")) ||
        (rc = MP_MPI_CHECK(pal_mpi.Comm_rank(mpi, &e.rank), "MPI_Comm_rank")) ||
        (rc = MP_MPI_CHECK(pal_mpi.Comm_test_inter(mpi, &e.is_inter), "MPI_Comm_test_inter")))
        return rc;
    /* Errors are returned, never fatal, on every communicator we hand out
     * (spawned and connected ones do not inherit it). */
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_set_errhandler(mpi, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler")))
        return rc;
    e.peer_size = e.size;
    if (e.is_inter && (rc = MP_MPI_CHECK(pal_mpi.Comm_remote_size(mpi, &e.peer_size), "MPI_Comm_remote_size")))
        return rc;
    mp_spin_lock(&g_comm_lock);
    for (int i = 0; i < MP_MAX_COMMS; i++) {
        if (!atomic_load_explicit(&mp_g_comm_used[i], memory_order_relaxed)) {
            mp_g_comms[i] = e;
            atomic_store_explicit(&mp_g_comm_used[i], 1, memory_order_release);
            mp_spin_unlock(&g_comm_lock);
            *out = i;
            return 0;
        }
    }
    mp_spin_unlock(&g_comm_lock);
    return mp_fail(MP_ENOMEM, "too many communicators (at most %d at once)", MP_MAX_COMMS);
}

int mp_init(int required, int *provided)
{
    char err[2048];
    int flag = 0, rc, got = 0, *ub = NULL;
    mp_comm_t h;
    if (required < MP_THREAD_SINGLE || required > MP_THREAD_MULTIPLE)
        return mp_fail(MP_EINVAL, "thread level %d is not one of 0..3", required);
    if (atomic_load(&mp_g_state) == MP_STATE_READY) {
        if (provided)
            *provided = mp_g_thread_level;
        return 0;
    }
    if (atomic_load(&mp_g_state) == MP_STATE_FINALIZED)
        return mp_fail(MP_ESTATE, "MPI cannot be initialized again after it was finalized");
    if (pal_mpi_load(err, (int)sizeof err) != 0)
        return mp_fail(MP_ENOLIB, "%s", err);
    mp_blocking_enter();
    rc = pal_mpi.Initialized(&flag);
    if (rc == MPI_SUCCESS && !flag)
        rc = pal_mpi.Init_thread(NULL, NULL, k_mpi_levels[required], &got);
    else if (rc == MPI_SUCCESS)
        rc = pal_mpi.Query_thread(&got); /* someone else (a host) initialized MPI */
    mp_blocking_leave();
    if ((rc = MP_MPI_CHECK(rc, "MPI_Init_thread")) != 0)
        return rc;
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                           "MPI_Comm_set_errhandler")) ||
        (rc = MP_MPI_CHECK(pal_mpi.Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN),
                           "MPI_Comm_set_errhandler")))
        return rc;
    if (pal_mpi.Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag && ub)
        mp_g_tag_ub = *ub;
    mp_g_thread_level = level_from_mpi(got);
    if ((rc = mp_comm_register(MPI_COMM_WORLD, &h)) || h != MP_COMM_WORLD ||
        (rc = mp_comm_register(MPI_COMM_SELF, &h)) || h != MP_COMM_SELF)
        return rc ? rc : mp_fail(MP_ESTATE, "communicator table was not empty at init");
    atomic_store(&mp_g_state, MP_STATE_READY);
    if (provided)
        *provided = mp_g_thread_level;
    return 0;
}

int mp_finalize(void)
{
    int rc, flag = 0;
    if (atomic_load(&mp_g_state) != MP_STATE_READY)
        return mp_fail_state();
    mp_coll_cleanup();
    atomic_store(&mp_g_state, MP_STATE_FINALIZED);
    mp_blocking_enter();
    rc = pal_mpi.Finalized(&flag);
    if (rc == MPI_SUCCESS && !flag)
        rc = pal_mpi.Finalize();
    mp_blocking_leave();
    return MP_MPI_CHECK(rc, "MPI_Finalize");
}

int mp_state(void)
{
    return atomic_load(&mp_g_state);
}

int mp_abort(mp_comm_t comm, int errorcode)
{
    const comm_entry_t *ce;
    if (!pal_mpi.Abort)
        return mp_fail_state();
    ce = mp_comm_get(comm);
    /* Abort is allowed even in odd states: it is how a failing rank ends the job. */
    return MP_MPI_CHECK(pal_mpi.Abort(ce ? ce->mpi : MPI_COMM_WORLD, errorcode), "MPI_Abort");
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

/* ---- communicators ---- */

int mp_comm_rank(mp_comm_t comm, int *rank)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    if (MP_UNLIKELY(!ce || !mp_ready()))
        return mp_fail_comm(comm);
    *rank = ce->rank;
    return 0;
}

int mp_comm_size(mp_comm_t comm, int *size)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    if (MP_UNLIKELY(!ce || !mp_ready()))
        return mp_fail_comm(comm);
    *size = ce->size;
    return 0;
}

int mp_comm_dup(mp_comm_t comm, mp_comm_t *newcomm)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if (MP_UNLIKELY(!ce || !mp_ready()))
        return mp_fail_comm(comm);
    mp_blocking_enter();
    rc = pal_mpi.Comm_dup(ce->mpi, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_dup", newcomm);
}

int mp_comm_split(mp_comm_t comm, int color, int key, mp_comm_t *newcomm)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    MPI_Comm out = MPI_COMM_NULL;
    int rc;
    if (MP_UNLIKELY(!ce || !mp_ready()))
        return mp_fail_comm(comm);
    if (color < 0 && color != MP_UNDEFINED)
        return mp_fail(MP_EINVAL, "split color %d must be non-negative or MP_UNDEFINED", color);
    mp_blocking_enter();
    rc = pal_mpi.Comm_split(ce->mpi, color == MP_UNDEFINED ? MPI_UNDEFINED : color, key, &out);
    mp_blocking_leave();
    return mp_comm_adopt(rc, out, "MPI_Comm_split", newcomm);
}

int mp_comm_free(mp_comm_t comm)
{
    const comm_entry_t *ce = mp_comm_get(comm);
    MPI_Comm c;
    int rc;
    if (MP_UNLIKELY(!ce || !mp_ready()))
        return mp_fail_comm(comm);
    if (comm == MP_COMM_WORLD || comm == MP_COMM_SELF)
        return mp_fail(MP_EHANDLE, "the world and self communicators cannot be freed");
    c = ce->mpi;
    mp_spin_lock(&g_comm_lock);
    atomic_store_explicit(&mp_g_comm_used[comm], 0, memory_order_release);
    mp_spin_unlock(&g_comm_lock);
    mp_blocking_enter();
    rc = pal_mpi.Comm_free(&c);
    mp_blocking_leave();
    return MP_MPI_CHECK(rc, "MPI_Comm_free");
}

/* ---- argument translation ---- */

/* The failing ends of the inline checks in core.h. */
int mp_fail_dest(const comm_entry_t *ce, int dest)
{
    return mp_fail(MP_ERANK, "destination rank %d is outside [0, %d) and not ProcNull", dest, ce->peer_size);
}

int mp_fail_source(const comm_entry_t *ce, int source)
{
    return mp_fail(MP_ERANK, "source rank %d is outside [0, %d) and not AnySource or ProcNull",
                   source, ce->peer_size);
}

int mp_fail_send_tag(int tag)
{
    return mp_fail(MP_ETAG, "send tag %d is outside [0, %d]", tag, mp_g_tag_ub);
}

int mp_fail_recv_tag(int tag)
{
    return mp_fail(MP_ETAG, "receive tag %d is outside [0, %d] and not AnyTag", tag, mp_g_tag_ub);
}

/* ---- probe ---- */

static int probe_args(int source, int tag, mp_comm_t comm, const comm_entry_t **ce, int *s, int *t)
{
    int rc;
    *ce = mp_comm_get(comm);
    if (MP_UNLIKELY(!*ce || !mp_ready()))
        return mp_fail_comm(comm);
    if ((rc = mp_check_source(*ce, source, s)) || (rc = mp_check_recv_tag(tag, t)))
        return rc;
    return 0;
}

int mp_iprobe(int source, int tag, mp_comm_t comm, mp_status_t *status)
{
    const comm_entry_t *ce;
    MPI_Status st;
    int s = 0, t = 0, flag = 0, rc;
    if ((rc = probe_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    if ((rc = MP_MPI_CHECK(pal_mpi.Iprobe(s, t, ce->mpi, &flag, &st), "MPI_Iprobe")))
        return rc;
    if (flag && status)
        mp_status_from_mpi(&st, status);
    return flag ? 1 : 0;
}

int mp_probe(int source, int tag, mp_comm_t comm, mp_status_t *status)
{
    const comm_entry_t *ce;
    MPI_Status st;
    int s = 0, t = 0, rc;
    if ((rc = probe_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    mp_blocking_enter();
    rc = pal_mpi.Probe(s, t, ce->mpi, &st);
    mp_blocking_leave();
    if ((rc = MP_MPI_CHECK(rc, "MPI_Probe")))
        return rc;
    if (status)
        mp_status_from_mpi(&st, status);
    return 0;
}

/* ---- matched probe ---- */

int mp_improbe(int source, int tag, mp_comm_t comm, mp_msg_t *msg, mp_status_t *status)
{
    const comm_entry_t *ce;
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    int s = 0, t = 0, flag = 0, rc;
    if ((rc = probe_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    if (s == MPI_PROC_NULL) {
        *msg = (mp_msg_t)MPI_MESSAGE_NO_PROC;
        if (status)
            mp_status_proc_null(status);
        return 1;
    }
    if ((rc = MP_MPI_CHECK(pal_mpi.Improbe(s, t, ce->mpi, &flag, &m, &st), "MPI_Improbe")))
        return rc;
    if (!flag)
        return 0;
    *msg = (mp_msg_t)m;
    if (status)
        mp_status_from_mpi(&st, status);
    return 1;
}

int mp_mprobe(int source, int tag, mp_comm_t comm, mp_msg_t *msg, mp_status_t *status)
{
    const comm_entry_t *ce;
    MPI_Status st;
    MPI_Message m = MPI_MESSAGE_NULL;
    int s = 0, t = 0, rc;
    if ((rc = probe_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    if (s == MPI_PROC_NULL)
        return mp_improbe(source, tag, comm, msg, status) == 1 ? 0 : MP_EINVAL;
    mp_blocking_enter();
    rc = pal_mpi.Mprobe(s, t, ce->mpi, &m, &st);
    mp_blocking_leave();
    if ((rc = MP_MPI_CHECK(rc, "MPI_Mprobe")))
        return rc;
    *msg = (mp_msg_t)m;
    if (status)
        mp_status_from_mpi(&st, status);
    return 0;
}

int mp_mrecv_start(void *buf, int64_t bytes, mp_msg_t msg, mp_status_t *status, mp_token_t *token)
{
    MPI_Message m = (MPI_Message)msg;
    MPI_Request r;
    int rc;
    if (!mp_ready())
        return mp_fail_state();
    if (bytes < 0 || (!buf && bytes > 0))
        return mp_fail(MP_ECOUNT, "byte count %lld is negative or the buffer is NULL", (long long)bytes);
    if (m == MPI_MESSAGE_NULL)
        return mp_fail(MP_EHANDLE, "the matched message was already received");
    if (m == MPI_MESSAGE_NO_PROC) {
        if (status)
            mp_status_proc_null(status);
        return 1;
    }
    if (bytes <= INT_MAX)
        rc = MP_MPI_CHECK(pal_mpi.Imrecv(buf, (int)bytes, MPI_BYTE, &m, &r), "MPI_Imrecv");
    else if (pal_mpi.Imrecv_c)
        rc = MP_MPI_CHECK(pal_mpi.Imrecv_c(buf, (MPI_Count)bytes, MPI_BYTE, &m, &r), "MPI_Imrecv_c");
    else
        rc = mp_fail(MP_ECOUNT, "message of %lld bytes needs MPI-4 large-count functions", (long long)bytes);
    if (rc)
        return rc;
    *token = (mp_token_t)r;
    return mp_token_test(*token, status);
}
