/* anytag.c - receives with MP_ANY_TAG matched by the core, and the continuation pieces they
 * meet kept for the object transport (anytag.h).
 *
 * Both lists are under g_lock, and so is every MPI_Improbe that may meet a piece: the
 * rounds of matching (a test or wait of a waiting receive), mp_match_any_tag (System.MP's
 * blocking receive and matched probe with any tag), mp_piece_aside (a probe with any tag
 * that saw a piece) and mp_piece_next (the continuation receive's look).  A piece met is
 * taken out of MPI's matching by MPI_Imrecv into its own memory, so nothing under the lock
 * waits; the transport waits for that receive when it takes the piece (mp_piece_take). */
#include "anytag.h"

#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* A nonblocking receive with any tag that no message has matched yet. */
typedef struct waiting {
    struct waiting *next;
    MPI_Request *target; /* the slot's or list entry's request: the match's MPI_Imrecv goes there */
    void *buf;
    int64_t bytes;
    int source;          /* MPI's: a rank or MPI_ANY_SOURCE */
    mp_comm_t comm;
    MPI_Comm mpi;
    int gone;            /* the communicator was freed first: never matched */
} waiting_t;

/* A continuation piece taken out of matching before its object's receive asked for it. */
typedef struct piece {
    struct piece *next;
    mp_comm_t comm;
    int source, tag;     /* MPI's rank, and the reserved tag */
    int64_t bytes;
    MPI_Request r;       /* its receive into data, until mp_piece_take waits for it */
    unsigned char data[];
} piece_t;

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static waiting_t *g_waiting;   /* in the order they were posted */
static piece_t *g_pieces;      /* in the order they were met */
static piece_t **g_pieces_end = &g_pieces;
static _Atomic uint64_t g_kept;
_Atomic int mp_g_anytag_waiting;

static void lock(void)
{
    pthread_mutex_lock(&g_lock);
}

static void unlock(void)
{
    pthread_mutex_unlock(&g_lock);
}

/* Takes a matched piece out of matching into memory of its own, kept after those met
 * before it.  Under the lock. */
static int keep(MPI_Message *m, const MPI_Status *st, mp_comm_t comm)
{
    int64_t bytes = pal_status_bytes(st);
    piece_t *p = malloc(sizeof *p + (size_t)(bytes > 0 ? bytes : 1));
    int rc;
    if (!p)
        return mp_fail(MP_ENOMEM, "out of memory keeping a continuation piece of %lld bytes", (long long)bytes);
    p->next = NULL;
    p->comm = comm;
    p->source = st->MPI_SOURCE;
    p->tag = st->MPI_TAG;
    p->bytes = bytes;
    p->r = MPI_REQUEST_NULL;
    if ((rc = mp_issue_mrecv(p->data, bytes, m, &p->r))) {
        free(p);
        return rc;
    }
    *g_pieces_end = p;
    g_pieces_end = &p->next;
    atomic_fetch_add(&g_kept, 1);
    return 0;
}

/* Unlinks the piece at *at.  Under the lock. */
static piece_t *piece_unlink(piece_t **at)
{
    piece_t *p = *at;
    if (!(*at = p->next))
        g_pieces_end = at;
    p->next = NULL;
    return p;
}

/* Unlinks *at and frees it. */
static void waiting_drop(waiting_t **at)
{
    waiting_t *w = *at;
    *at = w->next;
    free(w);
    atomic_fetch_sub(&mp_g_anytag_waiting, 1);
}

/* Gives a message with a user's tag, matched on comm, to the earliest waiting receive it
 * matches, as MPI gives a message to the earliest posted receive: 1 when one took it, 0
 * when none matches (the message stays the caller's), or a negative MP_E*.  Under the lock. */
static int deliver(MPI_Message *m, const MPI_Status *st, mp_comm_t comm)
{
    for (waiting_t **at = &g_waiting; *at; at = &(*at)->next) {
        waiting_t *w = *at;
        int rc;
        if (w->gone || w->comm != comm || (w->source != MPI_ANY_SOURCE && w->source != st->MPI_SOURCE))
            continue;
        if ((rc = mp_issue_mrecv(w->buf, w->bytes, m, w->target)))
            return rc;
        waiting_drop(at);
        return 1;
    }
    return 0;
}

/* MPI_Improbe with any tag: 1 with a message (*m, *st), 0 for none, or a negative MP_E*. */
static int probe_any_tag(int source, MPI_Comm mpi, MPI_Message *m, MPI_Status *st)
{
    int flag = 0, rc;
    mp_clean_upper();
    if ((rc = MP_MPI_CHECK(pal_mpi.Improbe(source, MPI_ANY_TAG, mpi, &flag, m, st), "MPI_Improbe")))
        return rc;
    return flag;
}

/* A matched message with any tag: a piece is kept, a message with a user's tag given to the
 * earliest waiting receive it matches.  1 when a waiting receive took it, 0 when it was kept
 * or none took it (see deliver), or a negative MP_E*.  Under the lock. */
static int place(MPI_Message *m, const MPI_Status *st, mp_comm_t comm, int *kept)
{
    *kept = mp_tag_reserved(st->MPI_TAG);
    return *kept ? keep(m, st, comm) : deliver(m, st, comm);
}

/* The caller's matched probe with any tag: 1 with a message with a user's tag (*m, *st)
 * that no waiting receive matches, 0 for none pending, or a negative MP_E*.  Pieces met
 * are kept, messages a waiting receive matches given to it, and the probe repeats.  Under
 * the lock. */
static int match(int source, mp_comm_t comm, MPI_Comm mpi, MPI_Message *m, MPI_Status *st)
{
    for (;;) {
        int kept, rc = probe_any_tag(source, mpi, m, st);
        if (rc <= 0)
            return rc;
        if ((rc = place(m, st, comm, &kept)) < 0)
            return rc;
        if (!kept && rc == 0)
            return 1;
    }
}

/* A round of matching: every waiting receive, in the order they were posted, gets what
 * is pending for it.  0, or a negative MP_E*.  Under the lock. */
static int round_of_matching(void)
{
    waiting_t *w = g_waiting;
    while (w) {
        MPI_Message m;
        MPI_Status st;
        int kept, rc;
        if (w->gone) {
            w = w->next;
            continue;
        }
        if ((rc = probe_any_tag(w->source, w->mpi, &m, &st)) < 0)
            return rc;
        if (rc == 0) {
            w = w->next;
            continue;
        }
        /* A message with a user's tag goes to w or to an earlier receive it matches (w
         * matches it, so one takes it); then the list has changed, and the round starts
         * again from the front. */
        if ((rc = place(&m, &st, w->comm, &kept)) < 0)
            return rc;
        w = g_waiting;
    }
    return 0;
}

static waiting_t **find_waiting(MPI_Request *target)
{
    waiting_t **at = &g_waiting;
    while (*at && (*at)->target != target)
        at = &(*at)->next;
    return at;
}

int mp_anytag_wait(void *buf, int64_t bytes, int s, mp_comm_t comm, MPI_Comm mpi, MPI_Request *target)
{
    waiting_t *w, **at;
    if (!(w = malloc(sizeof *w)))
        return mp_fail(MP_ENOMEM, "out of memory for a receive with any tag");
    *target = MPI_REQUEST_NULL;
    w->next = NULL;
    w->target = target;
    w->buf = buf;
    w->bytes = bytes;
    w->source = s;
    w->comm = comm;
    w->mpi = mpi;
    w->gone = 0;
    lock();
    for (at = &g_waiting; *at; at = &(*at)->next)
        ;
    *at = w;
    atomic_fetch_add(&mp_g_anytag_waiting, 1);
    unlock();
    return 0;
}

int mp_anytag_settle(MPI_Request *target, int wait)
{
    for (;;) {
        int rc;
        waiting_t **at;
        lock();
        rc = round_of_matching();
        at = find_waiting(target);
        if (!*at) {
            rc = ANYTAG_MATCHED;
        } else if ((*at)->gone) {
            waiting_drop(at);
            rc = ANYTAG_GONE;
        }
        unlock();
        if (rc != ANYTAG_WAITING || !wait)
            return rc;
        sched_yield();
    }
}

int mp_anytag_cancel(MPI_Request *target)
{
    waiting_t **at;
    int was = 0;
    lock();
    if (*(at = find_waiting(target))) {
        waiting_drop(at);
        was = 1;
    }
    unlock();
    return was;
}

int mp_anytag_retarget(MPI_Request *from, MPI_Request *to)
{
    waiting_t **at;
    int waits;
    lock();
    if ((waits = *(at = find_waiting(from)) != NULL)) {
        *to = MPI_REQUEST_NULL;
        (*at)->target = to;
    } else { /* matched meanwhile: the request moves */
        *to = *from;
    }
    *from = MPI_REQUEST_NULL;
    unlock();
    return waits;
}

/* Waits for each piece's receive and frees it. */
static void pieces_free(piece_t *p)
{
    while (p) {
        piece_t *next = p->next;
        if (p->r != MPI_REQUEST_NULL)
            (void)pal_mpi.Wait(&p->r, MPI_STATUS_IGNORE);
        free(p);
        atomic_fetch_sub(&g_kept, 1);
        p = next;
    }
}

void mp_anytag_comm_gone(mp_comm_t comm)
{
    piece_t *dropped = NULL, **tail = &dropped;
    lock();
    for (waiting_t *w = g_waiting; w; w = w->next)
        w->gone |= w->comm == comm;
    for (piece_t **at = &g_pieces; *at;) {
        piece_t *p = *at;
        if (p->comm != comm) {
            at = &p->next;
            continue;
        }
        *tail = piece_unlink(at);
        tail = &p->next;
    }
    unlock();
    pieces_free(dropped);
}

void mp_anytag_cleanup(void)
{
    piece_t *pieces;
    waiting_t *w;
    lock();
    pieces = g_pieces, g_pieces = NULL, g_pieces_end = &g_pieces;
    w = g_waiting, g_waiting = NULL;
    while (w)
        waiting_drop(&w);
    unlock();
    pieces_free(pieces);
}

uint64_t mp_anytag_pieces_kept(void)
{
    return atomic_load(&g_kept);
}

/* A round of matching between two polls of a wait. */
static void poll_round(void)
{
    lock();
    (void)round_of_matching(); /* a failure is the waiting receive's, reported at its own settle */
    unlock();
    sched_yield();
}

int mp_anytag_wait_polled(MPI_Request *r, MPI_Status *st)
{
    for (;;) {
        int flag = 0, rc = mp_mpi_test(r, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        poll_round();
    }
}

int mp_anytag_waitall_polled(int n, MPI_Request *r, MPI_Status *st)
{
    for (;;) {
        int flag = 0, rc;
        mp_clean_upper();
        if ((rc = pal_mpi.Testall(n, r, &flag, st)) != MPI_SUCCESS || flag)
            return rc;
        poll_round();
    }
}

int mp_anytag_probe_polled(int s, int t, MPI_Comm comm, MPI_Message *m, MPI_Status *st)
{
    for (;;) {
        int flag = 0, rc;
        mp_clean_upper();
        rc = m ? pal_mpi.Improbe(s, t, comm, &flag, m, st) : pal_mpi.Iprobe(s, t, comm, &flag, st);
        if (rc != MPI_SUCCESS || flag)
            return rc;
        poll_round();
    }
}

/* ---- what the calls System.MP makes need (p2p.c) ---- */

int mp_anytag_match(int s, mp_comm_t comm, MPI_Comm mpi, MPI_Message *m, MPI_Status *st)
{
    int rc;
    lock();
    /* The receives posted earlier match first (a message would have been theirs). */
    if ((rc = round_of_matching()) == 0)
        rc = match(s, comm, mpi, m, st);
    unlock();
    return rc;
}

int mp_anytag_aside(int s, int tag, mp_comm_t comm, MPI_Comm mpi)
{
    MPI_Message m = MPI_MESSAGE_NULL;
    MPI_Status st;
    int flag = 0, rc;
    lock();
    mp_clean_upper();
    rc = MP_MPI_CHECK(pal_mpi.Improbe(s, tag, mpi, &flag, &m, &st), "MPI_Improbe");
    if (rc == 0 && flag)
        rc = keep(&m, &st, comm);
    unlock();
    return rc;
}

int mp_anytag_next(int s, int tag, mp_comm_t comm, MPI_Comm mpi, MPI_Message *m, MPI_Status *st, void **piece,
                   int64_t *bytes)
{
    int flag = 0, rc;
    *piece = NULL;
    lock();
    for (piece_t **at = &g_pieces; *at; at = &(*at)->next) {
        piece_t *p = *at;
        if (p->comm == comm && p->source == s && p->tag == tag) {
            piece_unlink(at);
            unlock();
            atomic_fetch_sub(&g_kept, 1);
            *bytes = p->bytes;
            *piece = p;
            return 1;
        }
    }
    mp_clean_upper();
    rc = MP_MPI_CHECK(pal_mpi.Improbe(s, tag, mpi, &flag, m, st), "MPI_Improbe");
    unlock();
    return rc ? rc : flag ? 2 : 0;
}

int mp_piece_take(void *piece, void *dest)
{
    piece_t *p = piece;
    int rc = 0;
    if (!p)
        return mp_fail(MP_EINVAL, "piece is NULL");
    if (p->r != MPI_REQUEST_NULL) {
        mp_blocking_enter();
        rc = MP_MPI_CHECK(pal_mpi.Wait(&p->r, MPI_STATUS_IGNORE), "MPI_Wait");
        mp_blocking_leave();
    }
    if (rc == 0 && dest)
        memcpy(dest, p->data, (size_t)p->bytes);
    free(p);
    return rc;
}
