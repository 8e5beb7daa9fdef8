/* stats.c - mp_stats: the counters of every layer in one snapshot. */
#include "comms.h"
#include "gcscan.h"
#include "lists.h"
#include "persistent.h"
#include "requests.h"

#include <string.h>

void mp_stats(mp_stats_t *out)
{
    mp_counts_t k;
    mp_gc_stats_t gc;
    mp_counts_sum(&k);
    mp_gc_stats(&gc);
    memset(out, 0, sizeof *out);
    out->p2p_ops = atomic_load_explicit(&k.p2p_ops, memory_order_relaxed);
    out->p2p_bytes = atomic_load_explicit(&k.p2p_bytes, memory_order_relaxed);
    out->coll_ops = atomic_load_explicit(&k.coll_ops, memory_order_relaxed);
    out->blocking_ops = atomic_load_explicit(&k.blocking_ops, memory_order_relaxed);
    out->registered = atomic_load_explicit(&k.registered, memory_order_relaxed);
    out->mpi_errors = atomic_load_explicit(&mp_g_mpi_errors, memory_order_relaxed);
    out->gc_scans = gc.scans;
    out->pinned_last_mark = gc.pinned_last_mark;
    out->pinned_total = gc.pinned_total;
    out->released_at_mark = gc.released_at_mark;
    mp_slot_census(&out->active_requests, &out->open_mpi_requests);
    {
        uint64_t listed = mp_lists_open(); /* request lists' entries: requests too, seen complete only at their completion */
        out->active_requests += listed;
        out->open_mpi_requests += listed;
    }
    out->orphans = (uint64_t)atomic_load_explicit(&mp_g_orphans, memory_order_relaxed);
    out->slots_high_water = (uint64_t)atomic_load_explicit(&mp_g_nslots, memory_order_acquire);
    out->comms = (uint64_t)mp_comm_count();
    out->gc_extension = (uint64_t)mp_gc_attached();
    out->gc_aligned_arrays = (mp_gc_features() & MP_GC_ALIGNED_ARRAYS) != 0;
    out->gc_gen0_budget = mp_gc_gen0_budget();
    out->persistent_open = atomic_load(&mp_g_persist_open);
    out->persistent_starts = atomic_load_explicit(&k.persistent_starts, memory_order_relaxed);
    out->persistent_recreated = atomic_load(&mp_g_persist_recreated);
}
