/*
 * slots.c - the request slot table (which is also the in-flight table the GC
 * extension scans), each thread's cache of free slots and its operation
 * counters.
 *
 * Slots live in one block that never moves, so the address of a slot's `obj`
 * field is a stable native root for the GC.  A handle is
 * (generation << 20) | index, so a stale handle is detected, not misused.
 *
 * The per-operation path takes no lock and makes no atomic read-modify-write:
 * each thread keeps a cache of free slots (allocating and freeing there),
 * refilled from and spilled to the locked global free list in batches.  The
 * inline halves are in slots.h.
 */
#include "slots.h"

#include <stdlib.h>
#include <string.h>

slot_t *mp_g_slots;
_Atomic int mp_g_nslots;       /* high-water mark of slots ever handed out */
static int g_free_head = -1;     /* global free list, under mp_g_slot_lock */
static int g_free_count;         /* its length, under mp_g_slot_lock */
int mp_g_list_reserved;          /* entries request lists reserved (lists.c), under mp_g_slot_lock */
_Atomic int mp_g_orphans;        /* ACTIVE slots whose owner is gone */
mp_spin_t mp_g_slot_lock = MP_SPIN_INIT;
_Thread_local slot_cache_t mp_t_cache;
static tss_t g_cache_key;

static once_flag g_cache_once = ONCE_FLAG_INIT;

static int g_cache_key_ok;

/* Threads' counters: the live ones listed, those of exited threads summed,
 * both under mp_g_slot_lock. */
static slot_cache_t *g_listed;

static mp_counts_t g_retired;

/* Puts idx on the global free list (caller holds mp_g_slot_lock). */
static inline void global_push(int idx)
{
    slot_at(idx)->next_free = g_free_head;
    g_free_head = idx;
    g_free_count++;
}

int mp_budget_slots_held(void)
{
    return atomic_load_explicit(&mp_g_nslots, memory_order_relaxed) - g_free_count;
}

/* The refusal of a request the budget has no room for (caller holds mp_g_slot_lock, which
 * keeps the figures of the message consistent). */
MP_COLD int mp_fail_budget(int asked)
{
    if (!MP_REQUEST_BUDGET)
        return mp_fail(MP_ENOMEM, "too many pending requests (at most %d)", MP_SLOT_LIMIT);
    return mp_fail(MP_ENOMEM, "too many pending requests: %d more would pass %d (%d held by requests, %d "
                   "reserved by request lists; MPICH's request pool holds %d and aborts the process past it)",
                   asked, MP_SLOT_LIMIT, mp_budget_slots_held(), mp_g_list_reserved, MP_MPICH_REQUEST_POOL);
}

void mp_slot_push_global(int idx)
{
    mp_spin_lock(&mp_g_slot_lock);
    global_push(idx);
    mp_spin_unlock(&mp_g_slot_lock);
}

/* Gives up to n cached slots back to the global list. */
void mp_cache_spill(slot_cache_t *c, int n)
{
    mp_spin_lock(&mp_g_slot_lock);
    while (n-- > 0 && c->n > 0)
        global_push(c->idx[--c->n]);
    mp_spin_unlock(&mp_g_slot_lock);
}

static void counts_add(mp_counts_t *to, const mp_counts_t *from)
{
    mp_count(&to->p2p_ops, atomic_load_explicit(&from->p2p_ops, memory_order_relaxed));
    mp_count(&to->p2p_bytes, atomic_load_explicit(&from->p2p_bytes, memory_order_relaxed));
    mp_count(&to->coll_ops, atomic_load_explicit(&from->coll_ops, memory_order_relaxed));
    mp_count(&to->blocking_ops, atomic_load_explicit(&from->blocking_ops, memory_order_relaxed));
    mp_count(&to->registered, atomic_load_explicit(&from->registered, memory_order_relaxed));
    mp_count(&to->persistent_starts, atomic_load_explicit(&from->persistent_starts, memory_order_relaxed));
}

/* Thread exit: slots back to the global list, counts into g_retired (the
 * thread's storage goes away after this). */
static void cache_release(void *p)
{
    slot_cache_t *c = p;
    mp_cache_spill(c, c->n);
    c->registered = 0;
    if (c->listed == LISTED) {
        mp_spin_lock(&mp_g_slot_lock);
        counts_add(&g_retired, &c->counts);
        if (c->prev)
            c->prev->next = c->next;
        else
            g_listed = c->next;
        if (c->next)
            c->next->prev = c->prev;
        mp_spin_unlock(&mp_g_slot_lock);
    }
    c->listed = RETIRED; /* counts made during the rest of the exit are not kept */
}

static void cache_key_init(void)
{
    g_cache_key_ok = tss_create(&g_cache_key, cache_release) == thrd_success;
    MP_HAPPENS_BEFORE(&g_cache_once); /* helgrind does not model call_once */
}

/* First use of a thread's cache: make sure it is emptied at thread exit. */
MP_COLD void mp_cache_register(slot_cache_t *c)
{
    call_once(&g_cache_once, cache_key_init);
    MP_HAPPENS_AFTER(&g_cache_once);
    if (g_cache_key_ok && tss_set(g_cache_key, c) == thrd_success)
        c->registered = 1;
}

/* First count of a thread: list its counters (and arm the exit destructor). */
MP_COLD void mp_cache_list(slot_cache_t *c)
{
    if (c->listed != UNLISTED)
        return;
    if (!c->registered)
        mp_cache_register(c);
    if (!c->registered)
        return; /* no destructor to unlist it at exit: keep it off the list */
    mp_spin_lock(&mp_g_slot_lock);
    c->prev = NULL;
    c->next = g_listed;
    if (g_listed)
        g_listed->prev = c;
    g_listed = c;
    c->listed = LISTED;
    mp_spin_unlock(&mp_g_slot_lock);
}

mp_counts_t *mp_my_counts(void)
{
    return counts_of(my_cache());
}

/* Refills an empty cache: freed slots from the global list first, else
 * fresh ones (allocating their chunk). */
MP_COLD int mp_cache_refill(slot_cache_t *c)
{
    int rc = 0;
    /* Listed (and registered) before its first slot: the posting path counts
     * into c->counts without looking (slot_taken). */
    if (c->listed == UNLISTED)
        mp_cache_list(c);
    if (!c->registered)
        mp_cache_register(c);
    mp_spin_lock(&mp_g_slot_lock);
    /* Slots leaving the global list count against the request pool budget (under MPICH):
     * the table and the request lists together stay within MP_SLOT_LIMIT. */
    int room = MP_REQUEST_BUDGET ? MP_SLOT_LIMIT - mp_budget_slots_held() - mp_g_list_reserved : SLOT_BATCH;
    while (c->n < SLOT_BATCH && c->n < room && g_free_head >= 0) {
        c->idx[c->n++] = g_free_head;
        g_free_head = slot_at(g_free_head)->next_free;
        g_free_count--;
    }
    if (c->n == 0) {
        int first = atomic_load_explicit(&mp_g_nslots, memory_order_relaxed), count = SLOT_BATCH;
        if (first + count > MP_SLOT_LIMIT)
            count = MP_SLOT_LIMIT - first;
        if (count > room)
            count = room;
        if (count <= 0) {
            rc = mp_fail_budget(1);
        } else if (!mp_g_slots && !(mp_g_slots = calloc(MP_SLOT_LIMIT, sizeof(slot_t)))) {
            rc = mp_fail(MP_ENOMEM, "out of memory for the request table");
        } else {
            for (int i = first + count - 1; i >= first; i--) {
                /* A slot's atomic words are read and written by any thread (their
                 * accesses are ordered by the atomics themselves). */
                MP_ATOMIC_WORD(&slot_at(i)->state);
                MP_ATOMIC_WORD(&slot_at(i)->flags);
                MP_ATOMIC_WORD(&slot_at(i)->gen);
                c->idx[c->n++] = i;
            }
            atomic_store_explicit(&mp_g_nslots, first + count, memory_order_release);
        }
    }
    mp_spin_unlock(&mp_g_slot_lock);
    return rc;
}

/* Every thread's counts: those that exited and the live ones. */
void mp_counts_sum(mp_counts_t *out)
{
    memset(out, 0, sizeof *out);
    mp_spin_lock(&mp_g_slot_lock);
    counts_add(out, &g_retired);
    for (const slot_cache_t *c = g_listed; c; c = c->next)
        counts_add(out, &c->counts);
    mp_spin_unlock(&mp_g_slot_lock);
}
