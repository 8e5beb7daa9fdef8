/* gcscan.h - the GC scan (gcscan.c) and the mark over request lists it calls (lists.c). */
#ifndef MPCORE_GCSCAN_H
#define MPCORE_GCSCAN_H

#include "core.h"

#pragma GCC visibility push(hidden)

/* The GC's mark over the request lists (lists.c): reports every live list's
 * owner objects as pinned, remembering each (remember) for the relocate pass;
 * returns how many it reported.  can_test (no thread is inside a blocking call): an entry
 * whose operation MPI has finished is forgotten instead, counted in *released. */
int mp_lists_gc_mark(int (*remember)(void **slot), mp_gc_report_fn report, void *ctx, int can_test,
                     uint64_t *released);

/* ---- the GC scan (gcscan.c) ---- */
int mp_gc_attached(void);
uint64_t mp_gc_gen0_budget(void);
uint32_t mp_gc_features(void);

#pragma GCC visibility pop

#endif /* MPCORE_GCSCAN_H */
