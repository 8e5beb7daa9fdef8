/* persistent.h - persistent requests (persistent.c): what a persistent request keeps to
 * make its MPI request again, and the slot it holds between instances. */
#ifndef MPCORE_PERSISTENT_H
#define MPCORE_PERSISTENT_H

#include "slots.h"
#include "wildcard.h"

#include <stdlib.h>

#pragma GCC visibility push(hidden)

/* What a persistent request needs to make its MPI request again, and what
 * it owns (persistent.c); NULL for every other request. */
enum persist_kind { PERSIST_SEND = 0, PERSIST_SSEND = 1, PERSIST_RECV = 2, PERSIST_COLL = 3,
                    PERSIST_PSEND = 4, PERSIST_PRECV = 5 /* partitioned (partitioned.c): bound to one address */ };
typedef struct persist {
    int kind;             /* PERSIST_* */
    int peer, tag;        /* as the caller gave them (Motor's values) */
    mp_comm_t comm;
    int64_t bytes;
    void *buf;            /* the address the MPI request was made with */
    void *stage[2];       /* collectives: the staging buffers (send, receive) or NULL */
    int partitions;       /* partitioned requests: their partition count */
    /* Collectives the library cannot run persistently (collectives.c): each
     * start posts the nonblocking form of coll instead; NULL otherwise. */
    int (*restart)(struct persist *p, MPI_Request *r);
    mp_coll_t coll;
} persist_t;

extern _Atomic uint64_t mp_g_persist_open, mp_g_persist_recreated;

/* An instance of a persistent request is over: its objects are forgotten
 * (the array may move again) and it waits, inactive, for the next start. */
static inline void persist_deactivate(slot_t *s)
{
    slot_forget(s);
    atomic_store_explicit(&s->flags, atomic_load_explicit(&s->flags, memory_order_relaxed) & ~(uint32_t)SLOT_IN_BATCH,
                          memory_order_relaxed);
    atomic_store_explicit(&s->state, SLOT_INACTIVE, memory_order_release);
}

/* Frees a persistent request's staging buffers and description (one that
 * never got a slot, or from persist_release). */
static inline void mp_persist_discard(persist_t *p)
{
    free(p->stage[0]);
    free(p->stage[1]);
    free(p);
}

/* Frees what a persistent request holds: its MPI request (not after
 * finalize), staging buffers and description.  Callers own the slot. */
static inline void persist_release(slot_t *s)
{
    persist_t *p = s->persist;
    if (!p)
        return;
    if (MP_UNLIKELY(s->is_recv == SLOT_RECV_WILD))
        mp_wild_forget(&s->mpi);
    if (s->mpi != MPI_REQUEST_NULL && mp_ready())
        pal_mpi.Request_free(&s->mpi);
    s->mpi = MPI_REQUEST_NULL;
    mp_persist_discard(p);
    s->persist = NULL;
    atomic_fetch_sub(&mp_g_persist_open, 1);
}

/* A new persistent request's description: kind, peer, tag and comm set, the rest
 * zero (MP_ENOMEM when there is no memory for it). */
int mp_persist_new(int kind, int peer, int tag, mp_comm_t comm, persist_t **out);

/* Gives a persistent request made on r its slot, inactive (takes p and r). */
int mp_persist_track(persist_t *p, MPI_Request r, mp_req_t *req);
/* The end of a persistent init that may stage (collective, neighbourhood, partitioned): rc its
 * error (p discarded) or 0 (p tracked, with r); the staging buffers are given out (stages[0],
 * stages[1]) only once the request exists. */
int mp_persist_made(persist_t *p, int rc, MPI_Request r, mp_req_t *req, void *send_stage, void *recv_stage,
                    void **stages);

#pragma GCC visibility pop

#endif /* MPCORE_PERSISTENT_H */
