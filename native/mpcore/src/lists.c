/* lists.c - request lists (mpcore_calls.def, "request lists"): a window of
 * nonblocking sends and receives posted into one array of MPI requests and
 * completed by one MPI_Waitall, as a C program does it.
 *
 * What an operation costs here, beyond MPI's own calls (its arguments are checked by the
 * caller: System.MP, or checked.c for C callers): its owner object and kind stored at its
 * index, three counters in the
 * list; at completion, its status translated when asked for and its object
 * forgotten.  No slot, no handle, no generation: the list itself is the only
 * handle, and an index is valid until the list is emptied.
 *
 * The list completes all its open entries together (list_waitall, list_testall), or a range of
 * them (list_waitall_range, list_testall_range: one MPI_Waitall over the range's requests).  An
 * entry a call completed without emptying the list (a range, or a set MPI failed) is marked
 * ENTRY_DONE and counted in done; the list is emptied when every entry is (done == n).
 *
 * The GC extension reports the owner objects of every live list's entries as
 * pinned roots (mp_lists_gc_mark, from gcscan.c).  A list's memory is never
 * given back to the system: a freed list goes to a pool that list_create
 * draws from, so a GC that scans while another thread frees a list, or the
 * relocate pass that reports the mark's snapshot again, never reads freed
 * memory. */
#include "gcscan.h"
#include "lists.h"
#include "p2p.h"
#include "wildcard.h"

#include <stdlib.h>

#define LIST_LIVE 0x4C495354u /* "LIST" */
#define LIST_FREED 0x44454144u /* "DEAD" */
#define ENTRY_RECV 1
#define ENTRY_DONE 2     /* completed by an earlier call: a range, or a set MPI failed */
#define ENTRY_PROC_NULL 4 /* with ProcNull: never given to MPI (its request is null; list_proc_null) */
#define ENTRY_SYNC 8      /* a send by MPI_Issend from the common post: the call list_refused
                          * names (the general path leaves it 0; a send's status is the same either way) */

struct mp_list {
    _Atomic uint32_t magic;   /* LIST_LIVE, or LIST_FREED in the pool */
    int n;                    /* entries in use: the GC reads the first n (__atomic_load_n) */
    int cap;                  /* the capacity asked for */
    int room;                 /* the capacity the memory has (a pooled list may have more) */
    uint64_t bytes, registered; /* posted since the last fold into the thread's counters */
    int64_t last_bytes;       /* the last common post's bytes: list_refused takes them back */
    MPI_Request *mr;          /* room entries: MPI's requests, MPI_REQUEST_NULL once complete */
    void **obj;               /* room entries: owner objects (GC roots while in flight) or NULL */
    unsigned char *kind;      /* room entries: ENTRY_* */
    int done;                 /* entries that are ENTRY_DONE: n - done are open */
    int recvs;                /* open entries that are receives given to MPI: while none, a completion asks MPI for no statuses */
    int wild;                 /* some receive was posted with AnyTag (wildcard.h) */
    int reserved;             /* entries counted against the request pool budget (MP_REQUEST_BUDGET) */
    MPI_Status *ms;           /* room entries: MPI's statuses of the last completion */
    struct mp_list *next, *prev; /* the live lists, or the pool (next only) */
};

static struct mp_list g_live = { .next = &g_live, .prev = &g_live }; /* sentinel */
static struct mp_list *g_pool;

static MP_COLD int fail_list(mp_list_t l)
{
    if (!l)
        return mp_fail(MP_EHANDLE, "request list is NULL");
    return mp_fail(MP_EHANDLE, "request list %p was freed (list_free) or is not a request list", (void *)l);
}

static MP_COLD int fail_full(mp_list_t l)
{
    return mp_fail(MP_EINVAL, "request list is full: it holds %d operations; complete it "
                   "(list_waitall, list_testall) before posting more", l->cap);
}

/* The request pool budget (MP_REQUEST_BUDGET, requests.h): a list reserves its entries in
 * steps of LIST_RESERVE as it fills, so that its MPI requests and the slot table's stay within
 * MPICH's pool together; a freed list gives its reservation back.  The posting path only
 * compares the entry's index with the reservation. */
#define LIST_RESERVE 1024

/* The list's reservation changed to n entries (caller holds mp_g_slot_lock). */
static void list_set_reserved(mp_list_t l, int n)
{
    mp_g_list_reserved += n - l->reserved;
    l->reserved = n;
}

static MP_COLD int list_reserve(mp_list_t l, int i)
{
    int upto = l->cap - i < LIST_RESERVE ? l->cap : i + LIST_RESERVE; /* a step, within the capacity */
    int step = upto - l->reserved, need = i + 1 - l->reserved, rc = 0;
    mp_spin_lock(&mp_g_slot_lock);
    int room = MP_SLOT_LIMIT - mp_budget_slots_held() - mp_g_list_reserved;
    if (room < need)
        rc = mp_fail_budget(need);
    else
        list_set_reserved(l, l->reserved + (step < room ? step : room));
    mp_spin_unlock(&mp_g_slot_lock);
    return rc;
}

static inline int list_live(mp_list_t l)
{
    return MP_LIKELY(l && atomic_load_explicit(&l->magic, memory_order_relaxed) == LIST_LIVE);
}

int mp_list_create(int capacity, mp_list_t *list)
{
    struct mp_list *l = NULL, **p;
    if (!list)
        return mp_fail(MP_EINVAL, "list is NULL");
    *list = NULL;
    if (capacity < 1 || capacity > MP_LIST_MAX_CAPACITY)
        return mp_fail(MP_EINVAL, "request list capacity %d is not in [1, %d]", capacity, MP_LIST_MAX_CAPACITY);
    mp_spin_lock(&mp_g_slot_lock);
    for (p = &g_pool; *p; p = &(*p)->next) {
        if ((*p)->room >= capacity) {
            l = *p;
            *p = l->next;
            break;
        }
    }
    mp_spin_unlock(&mp_g_slot_lock);
    if (!l) {
        size_t n = (size_t)capacity;
        /* One block: the list, then its arrays, each on its natural alignment. */
        size_t size = sizeof *l + n * (sizeof *l->obj + sizeof *l->ms + sizeof *l->mr + sizeof *l->kind);
        if (!(l = calloc(1, size)))
            return mp_fail(MP_ENOMEM, "out of memory for a request list of %d operations", capacity);
        l->obj = (void **)(l + 1);
        l->ms = (MPI_Status *)(l->obj + n);
        l->mr = (MPI_Request *)(l->ms + n);
        l->kind = (unsigned char *)(l->mr + n);
        l->room = capacity;
    }
    l->cap = capacity;
    l->done = 0;
    l->wild = 0;
    l->recvs = 0;
    l->reserved = MP_REQUEST_BUDGET ? 0 : capacity; /* see list_reserve */
    l->bytes = l->registered = 0;
    l->n = 0;
    mp_spin_lock(&mp_g_slot_lock);
    l->next = g_live.next;
    l->prev = &g_live;
    g_live.next->prev = l;
    g_live.next = l;
    atomic_store_explicit(&l->magic, LIST_LIVE, memory_order_release);
    mp_spin_unlock(&mp_g_slot_lock);
    *list = l;
    return 0;
}

/* The list's counts go to this thread's counters (mp_stats), once per set:
 * its ops operations, completed or given up, and their bytes and objects. */
static void list_fold(mp_list_t l, int ops)
{
    mp_counts_t *k = counts_of(my_cache());
    mp_count(&k->p2p_ops, (uint64_t)ops);
    mp_count(&k->p2p_bytes, l->bytes);
    mp_count(&k->registered, l->registered);
    l->bytes = l->registered = 0;
}

int mp_list_free(mp_list_t l, mp_req_t *pending)
{
    int n, rc = 0;
    if (!list_live(l))
        return fail_list(l);
    n = l->n;
    /* Operations in flight become ordinary requests (a slot each, holding
     * the MPI request and the object), and the list is then empty.  Their
     * budget goes with them: the list's reservation is given back first. */
    if (MP_REQUEST_BUDGET) {
        mp_spin_lock(&mp_g_slot_lock);
        list_set_reserved(l, 0);
        mp_spin_unlock(&mp_g_slot_lock);
    }
    for (int i = 0; i < n; i++) {
        mp_req_t h = MP_REQ_NULL;
        if (l->mr[i] != MPI_REQUEST_NULL) {
            int r = mp_adopt_request(l->mr[i], l->obj[i], l->kind[i] & ENTRY_RECV, &h);
            if (r < 0) {
                /* No slot for it (the table is full): the list keeps it (list_pending
                 * says 1), its object stays reported, and the list is not freed. */
                if (!rc)
                    rc = r;
                if (pending)
                    pending[i] = MP_REQ_NULL;
                continue;
            }
            l->mr[i] = MPI_REQUEST_NULL;
            __atomic_store_n(&l->obj[i], NULL, __ATOMIC_RELEASE);
            if (!pending)
                mp_req_orphan(h);
        }
        if (pending)
            pending[i] = h;
    }
    if (rc) {
        /* What the list keeps is counted again, whatever the budget says: MPI holds it. */
        if (MP_REQUEST_BUDGET) {
            mp_spin_lock(&mp_g_slot_lock);
            list_set_reserved(l, n);
            mp_spin_unlock(&mp_g_slot_lock);
        }
        return rc;
    }
    list_fold(l, n);
    if (l->wild) /* its receives are ordinary requests now, or complete */
        mp_wild_forget_list(l);
    mp_spin_lock(&mp_g_slot_lock);
    l->n = 0;
    l->recvs = 0;
    atomic_store_explicit(&l->magic, LIST_FREED, memory_order_release);
    l->prev->next = l->next;
    l->next->prev = l->prev;
    l->prev = NULL;
    l->next = g_pool;
    g_pool = l;
    mp_spin_unlock(&mp_g_slot_lock);
    return 0;
}

int mp_list_reserve(mp_list_t l, int index)
{
    int rc;
    if (!list_live(l))
        return fail_list(l);
    if (index < 0 || index >= l->cap)
        return mp_fail(MP_EINVAL, "index %d is not in the list's capacity (%d)", index, l->cap);
    /* Without a budget every entry is counted from the start (mp_list_create). */
    if (index >= l->reserved && (rc = list_reserve(l, index)))
        return rc;
    return l->reserved;
}

int mp_list_count(mp_list_t l)
{
    return list_live(l) ? l->n : fail_list(l);
}

int mp_list_pending(mp_list_t l, int index)
{
    if (!list_live(l))
        return fail_list(l);
    if (index < 0 || index >= l->n)
        return mp_fail(MP_EINVAL, "index %d is not one of the list's %d operations", index, l->n);
    return l->mr[index] != MPI_REQUEST_NULL;
}

/* ---- posting ---- */

/* The entry's object and kind are written before MPI is called, the count
 * raised after: the GC reads only the first n entries.  Refused by MPI: the
 * entry is given back. */
static MP_COLD int list_refused(mp_list_t l, int i, int rc)
{
    l->registered -= l->obj[i] != NULL;
    l->recvs -= (l->kind[i] & ENTRY_RECV) != 0;
    __atomic_store_n(&l->obj[i], NULL, __ATOMIC_RELEASE);
    return rc;
}

static MP_INLINE int list_added(mp_list_t l, int i, int rc, int64_t bytes)
{
    if (MP_UNLIKELY(rc))
        return list_refused(l, i, rc);
    l->bytes += (uint64_t)bytes;
    __atomic_store_n(&l->n, i + 1, __ATOMIC_RELEASE);
    return i;
}

/* Before the call into MPI: the entry's object and kind. */
static MP_INLINE void list_entry(mp_list_t l, int i, void *obj, int kind)
{
    l->obj[i] = obj;
    l->registered += obj != NULL;
    l->recvs += (kind & ENTRY_RECV) != 0;
    l->kind[i] = (unsigned char)kind;
}

/* An operation with ProcNull completes at once (MPI-4.0 3.11): as in the slot
 * table (track), it is not given to MPI, whose status of it may never be
 * written (MPICH 4.0's MPI_Testall leaves a ProcNull receive's unwritten). */
static MP_COLD int list_proc_null(mp_list_t l, int i, int64_t bytes, int kind)
{
    l->mr[i] = MPI_REQUEST_NULL;
    l->obj[i] = NULL;
    l->kind[i] = (unsigned char)kind;
    l->bytes += (uint64_t)bytes;
    __atomic_store_n(&l->n, i + 1, __ATOMIC_RELEASE);
    return i;
}

/* For checked.c, a C caller's post: the list is live (MP_EHANDLE otherwise). */
int mp_list_check_live(mp_list_t l)
{
    return MP_LIKELY(list_live(l)) ? 0 : fail_list(l);
}

/* For checked.c: a C caller's post that reached the entries the list counted (l->reserved, the
 * capacity where there is no budget): a full list, or one whose next entry the budget has no
 * room for, refuses it; else more entries are counted. */
int mp_list_check_room(mp_list_t l)
{
    int i = l->n;
    if (MP_LIKELY(i < l->reserved))
        return 0;
    if (i >= l->cap)
        return fail_full(l);
    return MP_REQUEST_BUDGET ? list_reserve(l, i) : 0;
}

/* ---- the posts (list_isend, list_irecv) ----
 * Their callers made every check (System.MP's RequestList, or checked.c for C callers), the
 * list's own state too: a live list with room, an entry below what list_reserve counted.
 * The common post (a rank and a tag that are not wildcards or ProcNull, a communicator of the
 * table, at most INT_MAX bytes, MPI ready) counts its entry and then leaves by a tail call into
 * MPI_Isend, MPI_Issend or MPI_Irecv, whose result is the entry's: this function needs no frame
 * and nothing runs after MPI (perf/README.md, "The list post's registered path").  So MPI's own
 * error code (> 0) comes back as it is, the entry still counted: the caller gives it back with
 * list_refused, which records the error.  Every other post takes the general path, which
 * returns 0 or a negative MP_E* with nothing posted. */

static MP_COLD int list_send_general(mp_list_t l, const void *buf, int64_t bytes, int dest, int tag,
                                     mp_comm_t comm, int mode, void *obj)
{
    const comm_entry_t *ce;
    int d = 0, i = l->n, rc;
    if ((rc = trusted_send_args(dest, comm, &ce, &d)))
        return rc;
    if (MP_UNLIKELY(d == MPI_PROC_NULL)) {
        list_proc_null(l, i, bytes, ENTRY_PROC_NULL);
        return 0;
    }
    list_entry(l, i, obj, 0);
    rc = list_added(l, i, issue_send(buf, bytes, d, tag, ce, mode, &l->mr[i]), bytes);
    return rc < 0 ? rc : 0;
}

static MP_COLD int list_recv_general(mp_list_t l, void *buf, int64_t bytes, int source, int tag,
                                     mp_comm_t comm, void *obj)
{
    const comm_entry_t *ce;
    int s = 0, t = 0, i = l->n, rc;
    if ((rc = trusted_recv_args(source, tag, comm, &ce, &s, &t)))
        return rc;
    if (MP_UNLIKELY(s == MPI_PROC_NULL)) {
        list_proc_null(l, i, bytes, ENTRY_PROC_NULL | ENTRY_RECV);
        return 0;
    }
    list_entry(l, i, obj, ENTRY_RECV);
    if (t == MPI_ANY_TAG) {
        mp_wild_record(&l->mr[i], MP_REQ_NULL, l, i, comm, source);
        l->wild = 1;
    }
    rc = list_added(l, i, issue_recv(buf, bytes, s, t, ce, &l->mr[i]), bytes);
    return rc < 0 ? rc : 0;
}

/* The entry of the common post, counted before MPI is called (the GC reads only the objects
 * of the first n entries; the owner reads the requests only after the post returns). */
static MP_INLINE MPI_Request *list_counted(mp_list_t l, int64_t bytes, void *obj, int kind)
{
    int i = l->n;
    list_entry(l, i, obj, kind);
    l->bytes += (uint64_t)bytes;
    l->last_bytes = bytes; /* for list_refused */
    __atomic_store_n(&l->n, i + 1, __ATOMIC_RELEASE);
    return &l->mr[i];
}

/* Whether a post is the common one (see above). */
static MP_INLINE int list_common(int64_t bytes, int peer, int tag, mp_comm_t comm)
{
    return MP_LIKELY((unsigned)comm < MP_MAX_COMMS && (peer | tag) >= 0 && (uint64_t)bytes <= INT_MAX && mp_ready());
}

int mp_list_isend(mp_list_t l, const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode, void *obj)
{
    int sync = mode == MP_SEND_SYNC;
    if (!list_common(bytes, dest, tag, comm))
        return list_send_general(l, buf, bytes, dest, tag, comm, mode, obj);
    return (sync ? pal_mpi.Issend : pal_mpi.Isend)(buf, (int)bytes, MPI_BYTE, dest, tag, mp_g_comms[comm].mpi,
                                                   list_counted(l, bytes, obj, sync ? ENTRY_SYNC : 0));
}

int mp_list_irecv(mp_list_t l, void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, void *obj)
{
    if (!list_common(bytes, source, tag, comm))
        return list_recv_general(l, buf, bytes, source, tag, comm, obj);
    return pal_mpi.Irecv(buf, (int)bytes, MPI_BYTE, source, tag, mp_g_comms[comm].mpi,
                         list_counted(l, bytes, obj, ENTRY_RECV));
}

int mp_list_entry_open(mp_list_t l, int i)
{
    return list_live(l) && i < __atomic_load_n(&l->n, __ATOMIC_ACQUIRE);
}

int mp_list_refused(mp_list_t l, int index, int mpi_error)
{
    unsigned char kind;
    if (!list_live(l))
        return fail_list(l);
    if (index < 0 || index != l->n - 1 || mpi_error <= 0)
        return mp_fail(MP_EINVAL, "list_refused takes the last entry (%d) and MPI's error code (> 0) that its "
                       "post returned, not entry %d and code %d", l->n - 1, index, mpi_error);
    kind = l->kind[index];
    l->bytes -= (uint64_t)l->last_bytes;
    __atomic_store_n(&l->n, index, __ATOMIC_RELEASE);
    (void)list_refused(l, index, 0);
    return mp_mpi_fail(mpi_error, kind & ENTRY_RECV ? "MPI_Irecv" : kind & ENTRY_SYNC ? "MPI_Issend" : "MPI_Isend");
}

/* ---- completion ---- */

/* The status of an entry MPI completed without error.  A list gives out no
 * handle to cancel an operation with, so none is cancelled; and a receive MPI
 * completed got a message (a receive from ProcNull is ENTRY_PROC_NULL), so its
 * source and tag are a rank and a tag.  Returns 1 for a receive that took a piece
 * of an object payload (mp_recv_status). */
static MP_INLINE int list_status(int kind, const MPI_Status *st, mp_status_t *out)
{
    if (MP_LIKELY(kind == 0)) { /* a send */
        memset(out, 0, sizeof *out);
    } else if (MP_LIKELY(kind == ENTRY_RECV)) {
        return mp_recv_status(st, MP_OK, 1, out);
    } else if (kind & ENTRY_RECV) { /* ENTRY_PROC_NULL | ENTRY_RECV */
        mp_status_proc_null(out);
    } else { /* a send to ProcNull */
        memset(out, 0, sizeof *out);
    }
    return 0;
}

/* Entries [first, first + count) of a list with receives posted with AnyTag completed: a piece
 * of an object payload one of them took is kept for its object receive (wildcard.h).  The
 * whole list's records go when it is emptied (list_empty); a range's receives (range: marked
 * ENTRY_DONE already) drop theirs here, since the list holds them until then.  MP_EPIECE with
 * its message, or 0. */
static MP_COLD int list_pieces(mp_list_t l, int first, int count, int range, mp_status_t *statuses)
{
    int rc = 0, received = range ? ENTRY_RECV | ENTRY_DONE : ENTRY_RECV;
    for (int j = 0; j < count; j++) {
        int i = first + j;
        mp_status_t st;
        if (l->kind[i] != received)
            continue;
        if (!list_status(ENTRY_RECV, &l->ms[i], &st)) {
            if (range)
                mp_wild_forget(&l->mr[i]);
            continue;
        }
        (void)mp_wild_took(&l->mr[i], &st, range);
        if (statuses)
            statuses[j] = st;
        if (!rc)
            rc = mp_wild_fail(&st);
    }
    return rc;
}

/* No entry of the list is open any more: it is emptied for the next window (the next post takes
 * index 0), its receives' records go, and its counts go to the thread's. */
static MP_INLINE void list_empty(mp_list_t l)
{
    int n = l->n;
    if (MP_UNLIKELY(l->wild)) {
        l->wild = 0;
        mp_wild_forget_list(l);
    }
    __atomic_store_n(&l->n, 0, __ATOMIC_RELEASE);
    l->done = 0;
    l->recvs = 0;
    list_fold(l, n);
}

/* MPI completed the whole set (mrc MPI_SUCCESS): statuses translated when
 * asked for, every object forgotten, the list emptied.  0, or MP_EPIECE when a receive with
 * AnyTag took a piece of an object payload. */
static MP_INLINE int list_done(mp_list_t l, int n, mp_status_t *statuses)
{
    int rc = 0;
    if (MP_UNLIKELY(l->done)) { /* entries an earlier call completed: empty statuses */
        for (int i = 0; i < n; i++) {
            if (statuses && (l->kind[i] & ENTRY_DONE))
                memset(&statuses[i], 0, sizeof statuses[i]);
            else if (statuses)
                list_status(l->kind[i], &l->ms[i], &statuses[i]);
        }
    } else if (statuses) {
        /* Locals: stores through statuses would make the compiler reload l's fields. */
        const MPI_Status *ms = l->ms;
        const unsigned char *kind = l->kind;
        for (int i = 0; i < n; i++)
            list_status(kind[i], &ms[i], &statuses[i]);
    }
    if (l->registered) { /* an entry holds an object (no C caller's does) */
        void **obj = l->obj;
        for (int i = 0; i < n; i++)
            __atomic_store_n(&obj[i], NULL, __ATOMIC_RELEASE);
    }
    if (MP_UNLIKELY(l->wild))
        rc = list_pieces(l, 0, n, 0, statuses);
    list_empty(l);
    return rc;
}

/* What a completion asks MPI for: the list's statuses, or none for a list of sends (list_status
 * writes a send's; core.h, mp_mpi_waitall). */
static MP_INLINE MPI_Status *list_statuses(mp_list_t l)
{
    return l->recvs ? l->ms : MPI_STATUSES_IGNORE;
}

/* MPI failed the set of entries [first, first + count) (MPI-4.0 3.7.5): an entry MPI completed
 * (its request now MPI_REQUEST_NULL) gets its status and error, lets go of its object and is
 * marked ENTRY_DONE; one it left pending keeps both, for the next call.  A set with no receive,
 * completed without statuses (ignored), has no error of its own per entry: each MPI completed
 * gets the call's, reported under statusless_call.  statuses[j] is entry first + j's.  The list
 * is emptied when no open entry is left.  Returns the first error. */
static MP_COLD int list_failed(mp_list_t l, int first, int count, int mrc, int ignored, const char *call,
                               const char *statusless_call, mp_status_t *statuses)
{
    int rc = 0, recvs = 0;
    if (ignored)
        call = statusless_call;
    for (int j = 0; j < count; j++) {
        int i = first + j;
        mp_status_t scratch, *out = statuses ? &statuses[j] : &scratch;
        int r = 0;
        if (l->mr[i] != MPI_REQUEST_NULL) {
            memset(out, 0, sizeof *out); /* pending: its status is not MPI's to read yet */
            out->error = MP_EPENDING;
            continue;
        }
        if (l->kind[i] & ENTRY_DONE) { /* completed by an earlier call */
            memset(out, 0, sizeof *out);
            continue;
        }
        if (l->kind[i] & ENTRY_PROC_NULL) { /* completed at its post: MPI has no status of it */
            list_status(l->kind[i], &l->ms[i], out);
        } else if (mrc != MPI_ERR_IN_STATUS || ignored) { /* one failed call: recorded once, by the first entry */
            r = mp_mpi_fail_set(rc, mrc, call);
            status_set_failed(out, r);
        } else if (l->ms[i].MPI_ERROR != MPI_SUCCESS) { /* the first recorded: the one returned */
            r = mp_mpi_fail_set(rc, l->ms[i].MPI_ERROR, call);
            list_status(l->kind[i], &l->ms[i], out);
        } else if (list_status(l->kind[i], &l->ms[i], out)) { /* a receive with AnyTag took a piece */
            (void)mp_wild_took(&l->mr[i], out, 1);
            r = rc ? MP_EPIECE : mp_wild_fail(out); /* the first error's message is the one kept */
        }
        if (MP_UNLIKELY(l->wild) && l->kind[i] == ENTRY_RECV && r != MP_EPIECE)
            mp_wild_forget(&l->mr[i]); /* done: its record goes, as a range's does */
        out->error = r;
        __atomic_store_n(&l->obj[i], NULL, __ATOMIC_RELEASE);
        recvs += l->kind[i] == ENTRY_RECV;
        l->kind[i] |= ENTRY_DONE;
        l->done++;
        if (r && !rc)
            rc = r;
    }
    l->recvs -= recvs;
    if (l->done == l->n)
        list_empty(l);
    return rc ? rc : mp_mpi_fail(mrc, call);
}

/* A completion's start: the list's operation count (0: nothing to do), or an
 * error for a freed list or MPI not ready. */
static inline int list_operations(mp_list_t l)
{
    if (MP_UNLIKELY(!list_live(l)))
        return fail_list(l);
    if (MP_UNLIKELY(!mp_ready()))
        return mp_fail_state();
    return l->n;
}

int mp_list_waitall(mp_list_t l, mp_status_t *statuses)
{
    int n, mrc, rc = 0;
    if ((n = list_operations(l)) <= 0)
        return n;
    mp_blocking_enter();
    mrc = mp_mpi_waitall(n, l->mr, list_statuses(l));
    if (MP_LIKELY(mrc == MPI_SUCCESS))
        rc = list_done(l, n, statuses);
    else
        rc = list_failed(l, 0, n, mrc, !l->recvs, "MPI_Waitall", MP_STATUSLESS("MPI_Waitall"), statuses);
    mp_sweep_orphans();
    mp_blocking_leave();
    return rc;
}

int mp_list_testall(mp_list_t l, mp_status_t *statuses)
{
    int n, mrc, flag = 0;
    if ((n = list_operations(l)) <= 0)
        return n < 0 ? n : 1; /* an empty list tests complete */
    mrc = mp_mpi_testall_plain(n, l->mr, &flag, list_statuses(l));
    if (MP_UNLIKELY(mrc != MPI_SUCCESS))
        return list_failed(l, 0, n, mrc, !l->recvs, "MPI_Testall", MP_STATUSLESS("MPI_Testall"), statuses);
    if (!flag)
        return 0; /* no request was touched (MPI-4.0 3.7.5) */
    mrc = list_done(l, n, statuses);
    return mrc ? mrc : 1;
}

/* ---- completing a range (list_waitall_range, list_testall_range) ---- */

static MP_COLD int range_refused(mp_list_t l, int first, int count)
{
    if (first < 0 || count < 0)
        return mp_fail(MP_EINVAL, "request list range of %d operations from index %d: first and count must not be "
                       "negative", count, first);
    return mp_fail(MP_EINVAL, "request list range [%d, %lld) is not within the list's %d operations posted since it "
                   "was last emptied", first, (long long)first + count, l->n);
}

static MP_COLD int range_completed(mp_list_t l, int first, int count)
{
    int i = first;
    while (!(l->kind[i] & ENTRY_DONE))
        i++;
    return mp_fail(MP_EINVAL, "request list range [%d, %d): its operation %d was completed by an earlier call (a "
                   "range's, or a list_waitall or list_testall that failed), and cannot be completed again",
                   first, first + count, i);
}

/* A range completion's start: count (0: nothing to do), or an error with nothing touched for a
 * freed list, MPI not ready, a range outside the list's entries or holding one an earlier call
 * completed.  *recvs: the range's receives given to MPI (open ENTRY_RECV entries), which decide
 * whether MPI is asked for statuses; looked for only while the list has some. */
static MP_INLINE int list_range(mp_list_t l, int first, int count, int *recvs)
{
    int n = list_operations(l), r = 0;
    if (MP_UNLIKELY(n < 0))
        return n;
    if (MP_UNLIKELY(first < 0 || count < 0 || count > n - first))
        return range_refused(l, first, count);
    if (l->done | l->recvs) {
        const unsigned char *kind = l->kind;
        int done = 0;
        for (int i = first; i < first + count; i++) {
            done |= kind[i] & ENTRY_DONE;
            r += kind[i] == ENTRY_RECV;
        }
        if (MP_UNLIKELY(done))
            return range_completed(l, first, count);
    }
    *recvs = r;
    return count;
}

/* MPI completed entries [first, first + count) without error: their statuses translated when
 * asked for (statuses[j] is entry first + j's), their objects forgotten, each marked
 * ENTRY_DONE; the list emptied when no open entry is left.  0, or MP_EPIECE when a receive
 * with AnyTag took a piece of an object payload. */
static MP_INLINE int list_range_done(mp_list_t l, int first, int count, int recvs, mp_status_t *statuses)
{
    const MPI_Status *ms = l->ms;
    unsigned char *kind = l->kind;
    int rc = 0, end = first + count;
    if (statuses)
        for (int i = first; i < end; i++)
            list_status(kind[i], &ms[i], &statuses[i - first]);
    if (l->registered)
        for (int i = first; i < end; i++)
            __atomic_store_n(&l->obj[i], NULL, __ATOMIC_RELEASE);
    for (int i = first; i < end; i++)
        kind[i] |= ENTRY_DONE;
    if (MP_UNLIKELY(l->wild) && recvs)
        rc = list_pieces(l, first, count, 1, statuses);
    l->recvs -= recvs;
    if ((l->done += count) == l->n)
        list_empty(l);
    return rc;
}

/* What a range's completion asks MPI for: its statuses when it holds a receive (list_statuses). */
static MP_INLINE MPI_Status *range_statuses(mp_list_t l, int first, int recvs)
{
    return recvs ? l->ms + first : MPI_STATUSES_IGNORE;
}

int mp_list_waitall_range(mp_list_t l, int first, int count, mp_status_t *statuses)
{
    int recvs = 0, mrc, rc;
    if ((rc = list_range(l, first, count, &recvs)) <= 0)
        return rc;
    mp_blocking_enter();
    mrc = mp_mpi_waitall(count, l->mr + first, range_statuses(l, first, recvs));
    if (MP_LIKELY(mrc == MPI_SUCCESS))
        rc = list_range_done(l, first, count, recvs, statuses);
    else
        rc = list_failed(l, first, count, mrc, !recvs, "MPI_Waitall", MP_STATUSLESS("MPI_Waitall"), statuses);
    mp_sweep_orphans();
    mp_blocking_leave();
    return rc;
}

int mp_list_testall_range(mp_list_t l, int first, int count, mp_status_t *statuses)
{
    int recvs = 0, mrc, flag = 0, rc;
    if ((rc = list_range(l, first, count, &recvs)) <= 0)
        return rc < 0 ? rc : 1; /* an empty range tests complete */
    mrc = mp_mpi_testall_plain(count, l->mr + first, &flag, range_statuses(l, first, recvs));
    if (MP_UNLIKELY(mrc != MPI_SUCCESS))
        return list_failed(l, first, count, mrc, !recvs, "MPI_Testall", MP_STATUSLESS("MPI_Testall"), statuses);
    if (!flag)
        return 0; /* no request was touched (MPI-4.0 3.7.5) */
    rc = list_range_done(l, first, count, recvs, statuses);
    return rc ? rc : 1;
}

uint64_t mp_lists_open(void)
{
    uint64_t open = 0;
    mp_spin_lock(&mp_g_slot_lock);
    for (struct mp_list *l = g_live.next; l != &g_live; l = l->next)
        open += (uint64_t)(__atomic_load_n(&l->n, __ATOMIC_ACQUIRE) - l->done);
    mp_spin_unlock(&mp_g_slot_lock);
    return open;
}

/* ---- the GC extension's view (gcscan.c) ---- */

/* At a mark where the GC may call MPI (can_test): whether MPI has finished entry i's operation.
 * MPI_Request_get_status frees nothing, so the completion that follows reads MPI's status as usual. */
static int entry_finished_at_mark(mp_list_t l, int i)
{
    int flag = 0;
    return l->mr[i] != MPI_REQUEST_NULL && pal_mpi.Request_get_status(l->mr[i], &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
           flag;
}

int mp_lists_gc_mark(int (*remember)(void **slot), mp_gc_report_fn report, void *ctx, int can_test, uint64_t *released)
{
    int reported = 0;
    mp_spin_lock(&mp_g_slot_lock);
    for (struct mp_list *l = g_live.next; l != &g_live; l = l->next) {
        int n = __atomic_load_n(&l->n, __ATOMIC_ACQUIRE);
        for (int i = 0; i < n; i++) {
            if (!__atomic_load_n(&l->obj[i], __ATOMIC_ACQUIRE))
                continue;
            if (can_test && entry_finished_at_mark(l, i)) {
                /* MPI no longer touches the buffer: it is not pinned, and its address goes stale
                 * once this GC moves it (the list's completion forgets it anyway). */
                __atomic_store_n(&l->obj[i], NULL, __ATOMIC_RELEASE);
                (*released)++;
                continue;
            }
            (void)remember(&l->obj[i]); /* when in doubt, pin: reported now regardless */
            report(&l->obj[i], ctx);
            reported++;
        }
    }
    mp_spin_unlock(&mp_g_slot_lock);
    return reported;
}
