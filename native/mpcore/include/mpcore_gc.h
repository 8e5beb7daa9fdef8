/*
 * mpcore_gc.h - the one small interface between the GC extension (gc-patches/,
 * libmpgc) and mpcore's in-flight table.
 *
 * The in-flight table holds, for every nonblocking operation posted with an
 * owner object (mp_isend/mp_irecv with obj != NULL), a stable native slot that
 * contains the object reference.  At each GC the extension's GcScanRoots proxy
 * calls mp_gc_scan twice for a compacting GC (mark, then relocate), once for a
 * sweeping GC, and gc_scan reports every slot whose operation is in flight
 * through the callback, which passes it to the GC as a pinned root.
 *
 * Rules (ARCHITECTURE.md, "The GC extension"):
 *  - "in flight" is decided once, in the mark pass; the relocate pass of the
 *    same GC reports exactly the same slots;
 *  - each slot is reported once per pass (the caller calls only for heap 0);
 *  - when in doubt, pin: an operation whose completion the core has not
 *    observed is in flight.
 */
#ifndef MPCORE_GC_H
#define MPCORE_GC_H

#include <stdint.h>
#include "mpcore.h"

#ifdef __cplusplus
extern "C" {
#endif

enum mp_gc_pass {
    MP_GC_MARK = 1,
    MP_GC_RELOCATE = 2,
    /* or'ed into MP_GC_MARK when the GC scans while managed threads run
     * (background GC): then the core must not call MPI from the GC thread. */
    MP_GC_CONCURRENT = 0x100
};

/* What the attached extension does besides pinning (gc_attach's features). */
enum mp_gc_feature {
    /* arrays without references on the large and pinned object heaps start
     * their data on a 64-byte boundary (mp_stats_t.gc_aligned_arrays) */
    MP_GC_ALIGNED_ARRAYS = 1
};

/* The two calls of kind GC in mpcore_calls.def, reached through the table:
 *
 * gc_scan(pass, report, ctx) - called from the GC (heap 0 only).  In a non-concurrent mark
 * pass, when no thread is inside a blocking MPI call, the core first tests
 * the in-flight operations (MPI_Test) so that those already complete are
 * released at this mark instead of pinned.  Returns the number of slots
 * reported.
 *
 * gc_attach(features, gen0_budget) - called once by the GC extension when the
 * runtime has accepted it (GC_Initialize succeeded): from then on managed code may
 * register buffers instead of pinning them (mp_stats_t.gc_extension becomes 1).
 * features: mp_gc_feature bits; gen0_budget: the bytes the GC was configured to
 * allocate between gen0 collections (0: the GC chose its own); both published in
 * the statistics. */

typedef struct mp_gc_stats {
    uint64_t scans;            /* mark passes seen */
    uint64_t pinned_last_mark; /* slots reported as pinned at the last mark */
    uint64_t pinned_total;     /* sum over all marks */
    uint64_t released_at_mark; /* operations found complete at a mark, whose
                                  objects were therefore no longer reported */
    uint64_t registered;       /* objects registered by posting calls */
    uint64_t pins_avoided;     /* nonblocking ops that needed no pin at all */
} mp_gc_stats_t;

#ifdef __cplusplus
}
#endif
#endif /* MPCORE_GC_H */
