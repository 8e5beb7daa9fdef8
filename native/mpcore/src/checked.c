/* checked.c - the checked point-to-point calls for C callers (mpcore_checked.h): every
 * argument through its one validator (p2p.h's send_args and recv_args, over comms.h's checks
 * of a communicator, a rank and a tag), then the table's trusted entry (p2p.c, lists.c). */
#include "lists.h"
#include "p2p.h"

#include "mpcore_checked.h"

int mp_checked_send(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode)
{
    const comm_entry_t *ce;
    int d, rc;
    if ((rc = send_args(buf, bytes, dest, tag, comm, mode, &ce, &d)))
        return rc;
    return mp_send(buf, bytes, dest, tag, comm, mode);
}

int mp_checked_recv(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, mp_status_t *status)
{
    const comm_entry_t *ce;
    int s, t, rc;
    if ((rc = recv_args(buf, bytes, source, tag, comm, &ce, &s, &t)))
        return rc;
    return mp_recv(buf, bytes, source, tag, comm, status);
}

int mp_checked_isend(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode, void *obj,
                     mp_req_t *req)
{
    const comm_entry_t *ce;
    int d, rc;
    if (!req)
        return mp_fail_null_output("request");
    if ((rc = send_args(buf, bytes, dest, tag, comm, mode, &ce, &d)))
        return rc;
    return mp_isend(buf, bytes, dest, tag, comm, mode, obj, req);
}

int mp_checked_irecv(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, void *obj, mp_req_t *req)
{
    const comm_entry_t *ce;
    int s, t, rc;
    if (!req)
        return mp_fail_null_output("request");
    if ((rc = recv_args(buf, bytes, source, tag, comm, &ce, &s, &t)))
        return rc;
    return mp_irecv(buf, bytes, source, tag, comm, obj, req);
}

/* A list post's result (rc, into entry index): the index when posted; MPI's refusal (> 0) given
 * back to the list, which records it (MP_EMPI); a negative MP_E* as it is. */
static int list_posted(mp_list_t l, int index, int rc)
{
    if (MP_UNLIKELY(rc > 0))
        return mp_list_refused(l, index, rc);
    return rc < 0 ? rc : index;
}

/* A bad argument is named before a full list or budget. */
int mp_checked_list_isend(mp_list_t l, const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm,
                          int mode, void *obj)
{
    const comm_entry_t *ce;
    int d, index, rc;
    if ((rc = mp_list_check_live(l)) || (rc = send_args(buf, bytes, dest, tag, comm, mode, &ce, &d)) ||
        (rc = mp_list_check_room(l)))
        return rc;
    index = mp_list_count(l);
    return list_posted(l, index, mp_list_isend(l, buf, bytes, dest, tag, comm, mode, obj));
}

int mp_checked_list_irecv(mp_list_t l, void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, void *obj)
{
    const comm_entry_t *ce;
    int s, t, index, rc;
    if ((rc = mp_list_check_live(l)) || (rc = recv_args(buf, bytes, source, tag, comm, &ce, &s, &t)) ||
        (rc = mp_list_check_room(l)))
        return rc;
    index = mp_list_count(l);
    return list_posted(l, index, mp_list_irecv(l, buf, bytes, source, tag, comm, obj));
}
