/* anytag.h - receives with MP_ANY_TAG beside the object transport's reserved tags (anytag.c).
 *
 * System.MP sends the continuation pieces of a large object payload on the user's own
 * communicator under tags above MPI_TAG_UB / 2 (mp_tag_reserved), and MPI matches
 * MPI_ANY_TAG against every tag.  So no receive with any tag is given to MPI's matching:
 * a nonblocking one is recorded here as waiting (its request null, the slot flagged
 * SLOT_UNMATCHED, a list entry ENTRY_UNMATCHED) and matched by the core, with MPI_Improbe
 * then MPI_Imrecv into the caller's buffer, whenever the core tests or waits; each piece it
 * meets first is received into memory of its own and kept, by communicator, source and tag,
 * for the transport's continuation receive (mp_piece_next).  The waiting receives, the kept
 * pieces and every matched probe that may meet a piece are under one lock, so a piece is
 * either in MPI's matching or kept here, never between, and a message goes to the earliest
 * waiting receive that matches it, as MPI would give it to the earliest posted one. */
#ifndef MPCORE_ANYTAG_H
#define MPCORE_ANYTAG_H

#include "core.h"

#include <limits.h>

#pragma GCC visibility push(hidden)

/* True for a tag of the object transport's continuation pieces (System.MP's
 * Mpi.TagUpperBound is MPI_TAG_UB / 2; the tags above it are the transport's). */
static inline int mp_tag_reserved(int tag)
{
    return tag > mp_g_tag_ub / 2;
}

/* MPI_Imrecv of a matched message into bytes at buf (its large-count form above INT_MAX). */
static inline int mp_issue_mrecv(void *buf, int64_t bytes, MPI_Message *m, MPI_Request *r)
{
    if (bytes <= INT_MAX)
        return MP_MPI_CHECK(pal_mpi.Imrecv(buf, (int)bytes, MPI_BYTE, m, r), "MPI_Imrecv");
    if (pal_mpi.Imrecv_c)
        return MP_MPI_CHECK(pal_mpi.Imrecv_c(buf, (MPI_Count)bytes, MPI_BYTE, m, r), "MPI_Imrecv_c");
    return mp_fail(MP_ECOUNT, "message of %lld bytes needs MPI-4 large-count functions", (long long)bytes);
}

/* Records a receive with any tag of bytes at buf from MPI's source s on comm (MPI's mpi),
 * not yet matched: *target (a slot's or a list entry's request, MPI_REQUEST_NULL until then)
 * gets its MPI_Imrecv request once a message matches it.  0, or MP_ENOMEM. */
int mp_anytag_wait(void *buf, int64_t bytes, int s, mp_comm_t comm, MPI_Comm mpi, MPI_Request *target);

/* For mp_match_any_tag, mp_piece_aside and mp_piece_next (p2p.c), their communicator looked
 * up and the source translated (s: MPI's rank, or MPI_ANY_SOURCE for a match).
 * match: after a round of matching, a matched probe with any tag from s that keeps the
 * pieces it meets: 1 with a message with a user's tag (*m, *st), 0 for none pending.
 * aside: keeps the first pending piece from s under tag: 0.
 * next: the next piece from s under tag: 1 with a kept one (*piece, *bytes), 2 with one
 * matched now (*m, *st), 0 for none yet.  Each a negative MP_E* on failure. */
int mp_anytag_match(int s, mp_comm_t comm, MPI_Comm mpi, MPI_Message *m, MPI_Status *st);
int mp_anytag_aside(int s, int tag, mp_comm_t comm, MPI_Comm mpi);
int mp_anytag_next(int s, int tag, mp_comm_t comm, MPI_Comm mpi, MPI_Message *m, MPI_Status *st, void **piece,
                   int64_t *bytes);

/* What became of the receive waiting on *target, after one round of matching (wait 0) or
 * once it is no longer waiting (wait 1; the caller is inside the blocking bracket):
 * ANYTAG_MATCHED (*target is its MPI request, and the record is gone), ANYTAG_WAITING,
 * ANYTAG_GONE (its communicator was freed before a message came; the record is gone), or
 * a negative MP_E* (MPI failed a probe or receive; the record stays). */
enum { ANYTAG_WAITING = 0, ANYTAG_MATCHED = 1, ANYTAG_GONE = 2 };
int mp_anytag_settle(MPI_Request *target, int wait);

/* Takes a waiting receive away before a message matched it (its cancellation): 1 when it
 * was still waiting (its record is gone), 0 when a message matched it already (*target is
 * an MPI request: MPI_Cancel applies) or it was never recorded. */
int mp_anytag_cancel(MPI_Request *target);

/* The waiting receive of *from waits on *to instead (a request list handing an entry to a
 * slot), under the lock, so no match is lost between: 1 when it still waits (*to is
 * MPI_REQUEST_NULL), 0 when a message matched it already (its request moves to *to). */
int mp_anytag_retarget(MPI_Request *from, MPI_Request *to);

/* A communicator leaves the table: its kept pieces are freed (their receives completed
 * first) and its waiting receives marked gone (ANYTAG_GONE at their next settle). */
void mp_anytag_comm_gone(mp_comm_t comm);

/* At finalize, before MPI_Finalize: every kept piece freed, every waiting record dropped. */
void mp_anytag_cleanup(void);

/* Pieces kept now (mp_stats.pieces_kept). */
uint64_t mp_anytag_pieces_kept(void);

/* ---- waiting in MPI while receives with any tag wait ----
 * MPI matches a posted receive while its process waits in any MPI call, and a peer's send
 * may wait for that (a rendezvous, a synchronous send, a send to this rank itself).  So while
 * receives with any tag wait for the core's matching, the core's blocking point-to-point
 * calls and request waits poll instead of blocking in MPI, with a round of matching between
 * polls.  (Blocking collectives, one-sided synchronization and file operations still block
 * in MPI: a receive with any tag that waits is matched at its own test or wait.) */
extern _Atomic int mp_g_anytag_waiting; /* receives with any tag waiting for a match */

static inline int mp_anytag_pending(void)
{
    return MP_UNLIKELY(atomic_load_explicit(&mp_g_anytag_waiting, memory_order_relaxed) != 0);
}

/* MPI_Wait, MPI_Waitall, and MPI_Probe (matched: MPI_Mprobe) as polls with rounds of
 * matching between them: the same results. */
int mp_anytag_wait_polled(MPI_Request *r, MPI_Status *st);
int mp_anytag_waitall_polled(int n, MPI_Request *r, MPI_Status *st);
int mp_anytag_probe_polled(int s, int t, MPI_Comm comm, MPI_Message *m, MPI_Status *st);

/* MPI_Wait, polled while receives with any tag wait. */
static inline int mp_wait_one(MPI_Request *r, MPI_Status *st)
{
    return mp_anytag_pending() ? mp_anytag_wait_polled(r, st) : pal_mpi.Wait(r, st);
}

#pragma GCC visibility pop

#endif /* MPCORE_ANYTAG_H */
