/* wildcard.c - nonblocking receives posted with AnyTag, and the object-payload pieces they
 * take (see wildcard.h). */
#include "wildcard.h"
#include "lists.h"

#include <stdlib.h>
#include <string.h>

/* The recorded receives, in no order, with an index by key so that a completion finds and
 * drops its record in constant time however many are pending.  Completions drop theirs
 * (wildcard.h); bounded: when full, entries whose operation ended otherwise are purged (a slot no
 * longer active under the recorded handle; a list entry whose list no longer holds it), and past
 * that the oldest goes (a piece it takes is then recorded under no communicator). */
#define WILD_MAX MP_WILD_MAX
#define WILD_BUCKETS (2 * WILD_MAX) /* a power of two: the index is at most half full */
typedef struct wild {
    MPI_Request *key;
    mp_req_t handle;      /* the slot's handle, or MP_REQ_NULL for a list entry */
    mp_list_t list;       /* a list entry's list and index */
    int index;
    mp_comm_t comm;
    int source;
    uint64_t age;         /* the order of recording: the oldest goes when every record is live */
} wild_t;

/* A piece such a receive took: its object receive fails when it looks for it. */
typedef struct taken {
    struct taken *next;
    mp_comm_t comm;       /* MP_COMM_NULL when the receive was no longer recorded */
    int source, tag;
    int64_t bytes;
} taken_t;

static wild_t g_wild[WILD_MAX];
/* g_bucket[b] is 1 + the position in g_wild of a record whose key hashes to b or to a bucket
 * before b in the run of occupied buckets that b ends (linear probing), 0 for an empty bucket. */
static uint16_t g_bucket[WILD_BUCKETS];
static uint64_t g_age;
static taken_t *g_taken;
static mp_spin_t g_lock = MP_SPIN_INIT;
_Atomic int mp_g_wild_count;
static _Atomic int g_taken_count;

static int wild_live(const wild_t *w)
{
    int idx;
    if (w->handle == MP_REQ_NULL)
        return mp_list_entry_open(w->list, w->index);
    slot_t *s = slot_lookup(w->handle, &idx);
    return s && &s->mpi == w->key && atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_DONE;
}

static unsigned wild_home(const MPI_Request *key)
{
    uint64_t k = (uint64_t)(uintptr_t)key;
    return (unsigned)((k * 0x9E3779B97F4A7C15ull) >> 40) & (WILD_BUCKETS - 1);
}

/* The bucket that holds key's record, or the empty bucket where it would go (caller holds
 * g_lock; the index is never full). */
static unsigned wild_bucket(const MPI_Request *key)
{
    unsigned b = wild_home(key);
    while (g_bucket[b] && g_wild[g_bucket[b] - 1].key != key)
        b = (b + 1) & (WILD_BUCKETS - 1);
    return b;
}

/* The position of key's record, or -1 (caller holds g_lock). */
static int wild_find(const MPI_Request *key)
{
    return g_bucket[wild_bucket(key)] - 1;
}

/* Empties bucket b and moves the records after it in its run back so that each stays reachable
 * from its home bucket (deletion from linear probing without markers). */
static void bucket_clear(unsigned b)
{
    unsigned hole = b, i = b;
    g_bucket[hole] = 0;
    for (;;) {
        i = (i + 1) & (WILD_BUCKETS - 1);
        if (!g_bucket[i])
            return;
        unsigned home = wild_home(g_wild[g_bucket[i] - 1].key);
        /* The record at i may fill the hole when its home is not in (hole, i], cyclically. */
        if (((i - home) & (WILD_BUCKETS - 1)) >= ((i - hole) & (WILD_BUCKETS - 1))) {
            g_bucket[hole] = g_bucket[i];
            g_bucket[i] = 0;
            hole = i;
        }
    }
}

/* Removes record i: the last record takes its place (caller holds g_lock). */
static void wild_remove(int i)
{
    int last = atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed) - 1;
    bucket_clear(wild_bucket(g_wild[i].key));
    if (i != last) {
        g_bucket[wild_bucket(g_wild[last].key)] = (uint16_t)(i + 1);
        g_wild[i] = g_wild[last];
    }
    atomic_store_explicit(&mp_g_wild_count, last, memory_order_release);
}

/* Makes room for one record when all WILD_MAX are taken (caller holds g_lock): purges those whose
 * operation ended otherwise, and when every one is live, drops the oldest. */
static MP_COLD void wild_make_room(void)
{
    for (int i = atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed) - 1; i >= 0; i--)
        if (!wild_live(&g_wild[i]))
            wild_remove(i);
    if (atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed) < WILD_MAX)
        return;
    int oldest = 0;
    for (int i = 1; i < WILD_MAX; i++)
        if (g_wild[i].age < g_wild[oldest].age)
            oldest = i;
    wild_remove(oldest);
}

void mp_wild_record(MPI_Request *key, mp_req_t handle, mp_list_t list, int index, mp_comm_t comm, int source)
{
    wild_t w = { key, handle, list, index, comm, source, 0 };
    mp_spin_lock(&g_lock);
    w.age = g_age++;
    unsigned b = wild_bucket(key);
    if (g_bucket[b]) {
        g_wild[g_bucket[b] - 1] = w;
    } else {
        if (atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed) == WILD_MAX) {
            wild_make_room();
            b = wild_bucket(key);
        }
        int n = atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed);
        g_wild[n] = w;
        g_bucket[b] = (uint16_t)(n + 1);
        atomic_store_explicit(&mp_g_wild_count, n + 1, memory_order_release);
    }
    mp_spin_unlock(&g_lock);
}

void mp_wild_forget(MPI_Request *key)
{
    mp_spin_lock(&g_lock);
    int i = wild_find(key);
    if (i >= 0)
        wild_remove(i);
    mp_spin_unlock(&g_lock);
}

void mp_wild_forget_list(mp_list_t l)
{
    mp_spin_lock(&g_lock);
    for (int i = atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed) - 1; i >= 0; i--)
        if (g_wild[i].handle == MP_REQ_NULL && g_wild[i].list == l)
            wild_remove(i);
    mp_spin_unlock(&g_lock);
}

int mp_wild_took(MPI_Request *key, mp_status_t *out, int drop)
{
    taken_t *t = calloc(1, sizeof *t);
    mp_spin_lock(&g_lock);
    int i = wild_find(key);
    if (t) {
        t->comm = i >= 0 ? g_wild[i].comm : MP_COMM_NULL;
        t->source = out->source;
        t->tag = out->tag;
        t->bytes = out->bytes;
        t->next = g_taken;
        g_taken = t;
        atomic_fetch_add_explicit(&g_taken_count, 1, memory_order_release);
    }
    if (drop && i >= 0)
        wild_remove(i);
    mp_spin_unlock(&g_lock);
    out->error = MP_EPIECE;
    return MP_EPIECE;
}

int mp_wild_fail(const mp_status_t *st)
{
    return mp_fail(MP_EPIECE,
                   "a nonblocking receive posted with AnyTag received a piece of an object payload from rank %d "
                   "(tag %d, above the user tags' bound %d): objects larger than one message travel in pieces on "
                   "the same communicator, and MPI gives a waiting receive with AnyTag whatever arrives first from "
                   "its source.  The object receive the piece belongs to fails too.  While objects may arrive from "
                   "a rank on another thread, receive from it with a tag, or send the objects on a communicator of "
                   "their own (Dup)", st->source, st->tag, mp_g_reserved_above);
}

/* 1 while a recorded receive on comm that may match source has not been completed by its owner. */
static int any_pending(mp_comm_t comm, int source)
{
    int n = atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed);
    for (int i = 0; i < n; i++) {
        const wild_t *w = &g_wild[i];
        if (w->comm == comm && (w->source == MP_ANY_SOURCE || w->source == source) && wild_live(w))
            return 1;
    }
    return 0;
}

int mp_piece_taken(mp_comm_t comm, int source, int tag, int *pending)
{
    taken_t **at, *t = NULL;
    if (pending)
        *pending = 0;
    /* The look of every poll for a piece: no lock while nothing was taken (a receive that took
     * one has dropped its record already) and, when asked whether one may still be taken, no
     * receive is recorded. */
    if (MP_LIKELY(atomic_load_explicit(&g_taken_count, memory_order_acquire) == 0) &&
        (!pending || atomic_load_explicit(&mp_g_wild_count, memory_order_acquire) == 0))
        return 0;
    mp_spin_lock(&g_lock);
    for (at = &g_taken; *at; at = &(*at)->next)
        if ((*at)->source == source && (*at)->tag == tag && ((*at)->comm == comm || (*at)->comm == MP_COMM_NULL)) {
            t = *at;
            *at = t->next;
            atomic_fetch_sub_explicit(&g_taken_count, 1, memory_order_release);
            break;
        }
    if (!t && pending)
        *pending = any_pending(comm, source);
    mp_spin_unlock(&g_lock);
    if (!t)
        return 0;
    int64_t bytes = t->bytes;
    free(t);
    return mp_fail(MP_EPIECE, "a piece of this object payload (%lld bytes from rank %d under tag %d) was taken by a "
                   "nonblocking receive posted with AnyTag on another thread, which failed saying so: while objects "
                   "may arrive from a rank, receive from it with a tag, or send the objects on a communicator of "
                   "their own (Dup)", (long long)bytes, source, tag);
}

void mp_wild_clear(void)
{
    mp_spin_lock(&g_lock);
    while (g_taken) {
        taken_t *t = g_taken;
        g_taken = t->next;
        free(t);
    }
    atomic_store_explicit(&g_taken_count, 0, memory_order_relaxed);
    memset(g_bucket, 0, sizeof g_bucket);
    atomic_store_explicit(&mp_g_wild_count, 0, memory_order_release);
    mp_spin_unlock(&g_lock);
}
