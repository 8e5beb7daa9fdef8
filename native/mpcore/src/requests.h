/* requests.h - completion (requests.c): testing and waiting on a slot, orphans and their
 * sweep, and the claim a posting path outside point-to-point makes on a slot. */
#ifndef MPCORE_REQUESTS_H
#define MPCORE_REQUESTS_H

#include "slots.h"

#pragma GCC visibility push(hidden)

/* After a completion call (MPI_Wait, or a blocking operation's MPI_Test) failed on *r: a library
 * that ended the operation freed its request (MPI-4.0 3.7.3), as both libraries measured do.  One
 * that did not would still hold the buffer the core is about to report finished, and its pin let
 * go: the operation is cancelled and waited for first.  Not for a persistent request, whose
 * handle stays, nor for a request's test, which never waits (requests.c, slot_settle). */
MP_COLD void mp_mpi_abandon(MPI_Request *r);

/* rc, from a completion call on *r; on failure the operation is ended first (mp_mpi_abandon).
 * r NULL for a persistent request. */
static MP_INLINE int mp_mpi_ended(int rc, MPI_Request *r)
{
    if (MP_UNLIKELY(rc != MPI_SUCCESS) && r)
        mp_mpi_abandon(r);
    return rc;
}

/* ---- completion (requests.c) ---- */
/* Tests an ACTIVE slot once and records its completion: 1 if done.  On the owner's side (a test,
 * a wait's polls, an orphan sweep); never waits: a test that fails and leaves the request with
 * MPI cancels the operation, which completes with the failure once MPI lets go of it (at once
 * when the cancel succeeds), its buffers held until then. */
int mp_slot_poll(slot_t *s);
/* The same at a GC mark, without the cancel (mark time stops every managed thread of the
 * process): a failed test that leaves the request with MPI is recorded (SLOT_FAILED) and the
 * slot stays ACTIVE, its buffers pinned, for the owner's next completion call to end. */
int mp_slot_poll_at_mark(slot_t *s);
/* Frees a completed orphan's slot unless another thread did: 1 if this call did. */
int mp_orphan_free(slot_t *s, int idx);
/* MP_EHANDLE for a handle slot_get refused: given up (mp_req_orphan), or freed or never made. */
MP_COLD int mp_fail_req(mp_req_t h);
/* Slots in use and, among them, those with an open MPI request (a table scan). */
void mp_slot_census(uint64_t *used, uint64_t *open);

/* Completes finished orphans when there are any (one relaxed load otherwise).
 * Blocking calls run it inside the blocking bracket, so a program that only
 * makes blocking calls still releases requests it dropped. */
extern _Atomic int mp_g_orphans;
/* The orphans' registry (requests.c): set when a registration found no memory, after which the
 * sweeps scan the whole table; and the slots the sweeps have looked at (native tests). */
extern _Atomic int mp_g_orphan_lost;
extern _Atomic uint64_t mp_g_sweep_visits;
static inline void mp_sweep_orphans(void)
{
    if (MP_UNLIKELY(atomic_load_explicit(&mp_g_orphans, memory_order_relaxed)))
        mp_req_sweep();
}

/* An MPI request in flight made an ordinary request (a slot, ACTIVE, holding
 * obj): how a request list gives up an operation (requests.c). */
int mp_adopt_request(MPI_Request r, void *obj, int is_recv, mp_req_t *req);

/* A request slot claimed before an operation outside the point-to-point path (collectives,
 * neighbourhood collectives, file and RMA requests) is posted: a full table then refuses the
 * operation before MPI sees it, instead of after, when it would be in flight with its arrays
 * held by nothing.  mp_claim takes the slot; mp_claim_posted gives it MPI's request and its
 * owner objects (rc == 0), or back unused (rc != 0, returned). */
typedef struct mp_claim {
    slot_cache_t *cache;
    slot_t *slot;
    mp_req_t handle;
} mp_claim_t;
int mp_claim(mp_claim_t *k);
int mp_claim_posted(mp_claim_t *k, int rc, MPI_Request r, void *obj0, void *obj1, int is_recv, mp_req_t *req);

#pragma GCC visibility pop

#endif /* MPCORE_REQUESTS_H */
