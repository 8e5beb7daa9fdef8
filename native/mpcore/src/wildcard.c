/* wildcard.c - nonblocking receives posted with AnyTag, and the object-payload pieces they
 * take (see wildcard.h). */
#include "wildcard.h"
#include "lists.h"

#include <stdlib.h>
#include <string.h>

/* The recorded receives, oldest first.  Completions drop theirs (wildcard.h); bounded: when
 * full, entries whose operation ended otherwise are purged (a slot no longer active under the
 * recorded handle; a list entry whose list no longer holds it), and past that the oldest goes (a
 * piece it takes is then recorded under no communicator). */
#define WILD_MAX 4096
typedef struct wild {
    MPI_Request *key;
    mp_req_t handle;      /* the slot's handle, or MP_REQ_NULL for a list entry */
    mp_list_t list;       /* a list entry's list and index */
    int index;
    mp_comm_t comm;
    int source;
} wild_t;

/* A piece such a receive took: its object receive fails when it looks for it. */
typedef struct taken {
    struct taken *next;
    mp_comm_t comm;       /* MP_COMM_NULL when the receive was no longer recorded */
    int source, tag;
    int64_t bytes;
} taken_t;

static wild_t g_wild[WILD_MAX];
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

void mp_wild_record(MPI_Request *key, mp_req_t handle, mp_list_t list, int index, mp_comm_t comm, int source)
{
    wild_t w = { key, handle, list, index, comm, source };
    mp_spin_lock(&g_lock);
    int n = atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed), at = n;
    for (int i = 0; i < n; i++)
        if (g_wild[i].key == key) {
            at = i;
            break;
        }
    if (at == WILD_MAX) {
        int k = 0;
        for (int i = 0; i < n; i++)
            if (wild_live(&g_wild[i]))
                g_wild[k++] = g_wild[i];
        if (k == WILD_MAX) { /* every one still live: the oldest goes */
            memmove(&g_wild[0], &g_wild[1], (WILD_MAX - 1) * sizeof g_wild[0]);
            k--;
        }
        n = at = k;
    }
    g_wild[at] = w;
    if (at == n)
        n++;
    atomic_store_explicit(&mp_g_wild_count, n, memory_order_release);
    mp_spin_unlock(&g_lock);
}

/* The index of key's record, or -1 (caller holds g_lock).  The latest first: a key recorded
 * again replaced its record, so there is at most one. */
static int wild_find(const MPI_Request *key)
{
    for (int i = atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed) - 1; i >= 0; i--)
        if (g_wild[i].key == key)
            return i;
    return -1;
}

/* Removes record i, keeping the others in order (oldest first; caller holds g_lock). */
static void wild_remove(int i)
{
    int n = atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed);
    memmove(&g_wild[i], &g_wild[i + 1], (size_t)(n - 1 - i) * sizeof g_wild[0]);
    atomic_store_explicit(&mp_g_wild_count, n - 1, memory_order_release);
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
    int n = atomic_load_explicit(&mp_g_wild_count, memory_order_relaxed), k = 0;
    for (int i = 0; i < n; i++)
        if (g_wild[i].handle != MP_REQ_NULL || g_wild[i].list != l)
            g_wild[k++] = g_wild[i];
    atomic_store_explicit(&mp_g_wild_count, k, memory_order_release);
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
    atomic_store_explicit(&mp_g_wild_count, 0, memory_order_release);
    mp_spin_unlock(&g_lock);
}
