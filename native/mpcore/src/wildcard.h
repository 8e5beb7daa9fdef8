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

/* Recorded receives (a hint: entries whose operation ended are purged lazily); 0 while no
 * nonblocking receive with AnyTag was posted, so that a completion's extra look costs one load. */
extern _Atomic int mp_g_wild_count;

/* Records a nonblocking receive posted with AnyTag: its MPI request lives at key (a slot's or
 * entry `index` of request list `list`), handle names its slot (MP_REQ_NULL for a list entry),
 * source is Motor's (a rank or MP_ANY_SOURCE).  A later record at the same key replaces it. */
void mp_wild_record(MPI_Request *key, mp_req_t handle, mp_list_t list, int index, mp_comm_t comm, int source);

/* The completion of the receive at key delivered a piece (out->tag above mp_g_reserved_above): the piece
 * is recorded for its object receive, out->error becomes MP_EPIECE and so does the result.
 * Records no message: mp_wild_fail does, on the owner's thread. */
MP_COLD int mp_wild_took(MPI_Request *key, mp_status_t *out);

/* Records why a receive whose status is st failed with MP_EPIECE; returns MP_EPIECE. */
MP_COLD int mp_wild_fail(const mp_status_t *st);

/* A slot's result that stands for MP_EPIECE until its owner records the message (owner_result):
 * positive like the MPI codes a GC mark leaves, and beyond any of them. */
#define MP_WILD_DEFERRED 0x7fffffff

#pragma GCC visibility pop
#endif /* MPCORE_WILDCARD_H */
