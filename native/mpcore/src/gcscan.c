/* gcscan.c - the GC extension's view of the slot table (mpcore_gc.h): which
 * buffers are in flight at a mark, reported again at relocate. */
#include "gcscan.h"
#include "requests.h"

#include <stdlib.h>

/* GC statistics and the mark snapshot reused by the relocate pass. */
static mp_gc_stats_t g_gc_stats;

static void ***g_snapshot;
static int g_snapshot_len, g_snapshot_cap;

static _Atomic int g_gc_attached;  /* set by libmpgc at GC_Initialize */
static _Atomic uint32_t g_gc_features; /* mp_gc_feature bits it reported */
static _Atomic uint64_t g_gc_gen0_budget; /* the gen0 budget it reported */

static int snapshot_push(void **slot)
{
    if (g_snapshot_len == g_snapshot_cap) {
        int cap = g_snapshot_cap ? g_snapshot_cap * 2 : 256;
        void ***p = realloc(g_snapshot, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        g_snapshot = p;
        g_snapshot_cap = cap;
    }
    g_snapshot[g_snapshot_len++] = slot;
    return 0;
}

/* Mark: decides which slots are in flight, reports them and remembers them
 * for the relocate pass of the same GC. */
static int gc_mark(int pass, mp_gc_report_fn report, void *ctx)
{
    int n = atomic_load_explicit(&mp_g_nslots, memory_order_acquire);
    int can_test = !(pass & MP_GC_CONCURRENT) && mp_gc_mpi_begin();
    g_snapshot_len = 0;
    g_gc_stats.scans++;
    for (int i = 0; i < n; i++) {
        slot_t *s = slot_at(i);
        uint32_t state;
        if (!__atomic_load_n(&s->obj[0], __ATOMIC_ACQUIRE) && !__atomic_load_n(&s->obj[1], __ATOMIC_ACQUIRE))
            continue;
        state = atomic_load_explicit(&s->state, memory_order_acquire);
        /* can_test: no thread is inside a blocking call, so none is waiting
         * on this slot (waits read the state only inside the bracket). */
        if (state == SLOT_ACTIVE && can_test && mp_slot_poll_at_mark(s))
            state = SLOT_DONE;
        if (state != SLOT_ACTIVE && state != SLOT_HELD) {
            /* Complete: MPI no longer touches the buffers.  Forget them (their
             * addresses go stale once this GC moves them); an orphan's slot
             * is freed outright. */
            g_gc_stats.released_at_mark += (s->obj[0] != NULL) + (s->obj[1] != NULL);
            slot_forget(s);
            /* Only when no thread is in a blocking call: such a thread may
             * be sweeping orphans itself. */
            if (can_test && state == SLOT_DONE && (atomic_load(&s->flags) & SLOT_ORPHANED) &&
                mp_orphan_free(s, i))
                atomic_fetch_sub(&mp_g_orphans, 1);
            continue;
        }
        for (int k = 0; k < 2; k++) {
            if (!s->obj[k])
                continue;
            /* If the snapshot cannot grow, relocate misses this slot; the
             * object is pinned and does not move, so reporting it now is
             * what matters: when in doubt, pin. */
            (void)snapshot_push(&s->obj[k]);
            report(&s->obj[k], ctx);
        }
    }
    mp_lists_gc_mark(snapshot_push, report, ctx, can_test, &g_gc_stats.released_at_mark);
    if (can_test)
        mp_gc_mpi_end();
    g_gc_stats.pinned_last_mark = (uint64_t)g_snapshot_len;
    g_gc_stats.pinned_total += (uint64_t)g_snapshot_len;
    return g_snapshot_len;
}

int mp_gc_scan(int pass, mp_gc_report_fn report, void *ctx)
{
    if ((pass & 0xFF) == MP_GC_RELOCATE) {
        for (int i = 0; i < g_snapshot_len; i++)
            report(g_snapshot[i], ctx);
        return g_snapshot_len;
    }
    return gc_mark(pass, report, ctx);
}

void mp_gc_attach(uint32_t features, uint64_t gen0_budget)
{
    atomic_store(&g_gc_features, features);
    atomic_store(&g_gc_gen0_budget, gen0_budget);
    atomic_store(&g_gc_attached, 1);
}

int mp_gc_attached(void)
{
    return atomic_load(&g_gc_attached);
}

uint64_t mp_gc_gen0_budget(void)
{
    return atomic_load(&g_gc_gen0_budget);
}

uint32_t mp_gc_features(void)
{
    return atomic_load(&g_gc_features);
}

void mp_gc_stats(mp_gc_stats_t *out)
{
    mp_counts_t k;
    mp_counts_sum(&k);
    *out = g_gc_stats;
    out->registered = out->pins_avoided = atomic_load_explicit(&k.registered, memory_order_relaxed);
}
