/* blocking.c - the blocking-call bracket: lets the GC extension call MPI
 * (MPI_Test at mark time) only while no thread is inside a blocking MPI call. */
#include "core.h"

/* The GC extension may call MPI_Test on in-flight requests at mark time
 * (managed threads are suspended, so no fast call can be running); it must
 * not overlap a blocking MPI call made by a thread in preemptive mode.  A
 * Dekker-style pair of flags decides: the GC side only ever skips, never waits. */
static _Atomic int g_in_blocking;
static _Atomic int g_gc_probe;

void mp_blocking_enter(void)
{
    mp_clean_upper();
    for (;;) {
        atomic_fetch_add(&g_in_blocking, 1);
        if (MP_LIKELY(!atomic_load(&g_gc_probe)))
            return;
        atomic_fetch_sub(&g_in_blocking, 1);
        while (atomic_load(&g_gc_probe))
            pal_cpu_relax();
    }
}

void mp_blocking_leave(void)
{
    atomic_fetch_sub(&g_in_blocking, 1);
}

/* Lets the GC thread call MPI (MPI_Test) at mark time.  Managed threads are
 * suspended, so no fast call is running; a thread in preemptive mode may be
 * inside a blocking MPI call, and then the GC skips the tests (it never
 * waits).  Threads entering a blocking call meanwhile spin in
 * mp_blocking_enter until mp_gc_mpi_end. */
int mp_gc_mpi_begin(void)
{
    atomic_store(&g_gc_probe, 1);
    if (atomic_load(&g_in_blocking) == 0 && mp_ready())
        return 1;
    atomic_store(&g_gc_probe, 0);
    return 0;
}

void mp_gc_mpi_end(void)
{
    atomic_store(&g_gc_probe, 0);
}
