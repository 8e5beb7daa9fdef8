/* wildcard.h - nonblocking receives posted with AnyTag, and the pieces of object payloads
 * they take (wildcard.c).  Above slots.h.
 *
 * System.MP sends an object payload larger than its first message in pieces that follow on
 * the same communicator under tags above the user's bound (mp_g_reserved_above: reserve_tags), so that no
 * communicator needs a private duplicate (a collective that ranks of other programs in an
 * MPMD job never make).  A receive with a tag never matches a piece, and a blocking receive or
 * probe with AnyTag steps around them (System.MP's ReservedPieces); but a nonblocking receive
 * with AnyTag is MPI's to match, and MPI gives it a piece when the piece arrives first.  The
 * core therefore records every such receive when it is posted (its communicator and source);
 * when one completes with a piece, the receive fails with MP_EPIECE, saying why, and the piece
 * is recorded, so that the object receive it belongs to fails too once it has received the
 * rest of its payload (mp_piece_taken) instead of waiting for the piece.  (Keeping the piece
 * for it is not enough: a piece carries no place in its payload, and the object receive may
 * already have taken the next one in its stead.) */
#ifndef MPCORE_WILDCARD_H
#define MPCORE_WILDCARD_H
#include "slots.h"
#pragma GCC visibility push(hidden)

/* Recorded receives: 0 while no nonblocking receive with AnyTag is pending, so that a completion's
 * extra look costs one load.  A slot's record goes when its receive completes (mp_wild_took,
 * mp_wild_forget; a persistent request's when it is freed), a list's when the list completes
 * (mp_wild_forget_list); one whose operation ended otherwise (a failed test, a list freed with
 * it pending) is purged when the record fills. */
extern _Atomic int mp_g_wild_count;

/* How many records are kept at most. */
#define MP_WILD_MAX 4096

/* A slot's is_recv for a receive whose post was recorded (mp_wild_record): its completion drops
 * the record (requests.c, status_of).  Any other receive's is 1, a send's 0. */
#define SLOT_RECV_WILD 2

/* Records a nonblocking receive posted with AnyTag: its MPI request lives at key (a slot's or
 * entry `index` of request list `list`), handle names its slot (MP_REQ_NULL for a list entry),
 * source is Motor's (a rank or MP_ANY_SOURCE).  A later record at the same key replaces it. */
void mp_wild_record(MPI_Request *key, mp_req_t handle, mp_list_t list, int index, mp_comm_t comm, int source);

/* Drops the record of the receive at key (none: nothing happens). */
MP_COLD void mp_wild_forget(MPI_Request *key);

/* Drops the records of every entry of list l. */
MP_COLD void mp_wild_forget_list(mp_list_t l);

/* The completion of the receive at key delivered a piece (mp_recv_status said so): the piece is
 * recorded for its object receive (under the communicator the receive's record names, which
 * goes when drop is set), out->error becomes MP_EPIECE and so does the result.  Records no
 * message: mp_wild_fail does, on the owner's thread. */
MP_COLD int mp_wild_took(MPI_Request *key, mp_status_t *out, int drop);

/* Records why a receive whose status is st failed with MP_EPIECE; returns MP_EPIECE. */
MP_COLD int mp_wild_fail(const mp_status_t *st);

/* A slot's result that stands for MP_EPIECE until its owner records the message (owner_result):
 * positive like the MPI codes a GC mark leaves, and beyond any of them. */
#define MP_WILD_DEFERRED 0x7fffffff

/* The status of a completed receive, from MPI's (st), for both request tables (a slot's in
 * requests.c, a list entry's in lists.c), with its result rc.  message: MPI completed it with a
 * message, so its source and tag are a rank and a tag and it was not cancelled (a list entry,
 * which has no handle to cancel it with); a slot's receive may have been cancelled, and its
 * source and tag are then translated.  Returns 1 when the receive took a piece of an object
 * payload (a tag above the user's bound: only a receive posted with AnyTag can match one),
 * which its caller hands to mp_wild_took. */
static MP_INLINE int mp_recv_status(const MPI_Status *st, int rc, int message, mp_status_t *out)
{
    if (message) {
        out->source = st->MPI_SOURCE;
        out->tag = st->MPI_TAG;
        out->cancelled = 0;
        out->bytes = pal_status_bytes(st);
    } else {
        mp_status_from_mpi(st, out);
    }
    out->error = rc;
    return MP_UNLIKELY(out->tag > mp_g_reserved_above) && !out->cancelled;
}

#pragma GCC visibility pop
#endif /* MPCORE_WILDCARD_H */
