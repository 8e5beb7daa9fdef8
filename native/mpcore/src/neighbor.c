/*
 * neighbor.c - neighborhood collectives (MPI-4.0 8.6): each rank exchanges
 * with the neighbours its communicator's topology gives it (Cartesian, graph
 * or distributed graph), in the order MPI defines for that topology.
 *
 * They share the collectives' descriptor (mp_coll_t) with a kind of their
 * own (mp_neighbor_kind); blocking, nonblocking and persistent forms go
 * through one function, like collectives.c.  Counts are checked against the
 * rank's in and out degree here, so a short array never reaches MPI.
 */
#include "comms.h"
#include "collectives.h"
#include "persistent.h"
#include "requests.h"

#include <limits.h>
#include <string.h>

_Static_assert(sizeof(MPI_Aint) == sizeof(int64_t), "byte displacements are passed to MPI as they are");
_Static_assert(sizeof(MPI_Datatype) <= 8, "neighbor_post's scratch holds 8 bytes per datatype");

static const int32_t k_none[1]; /* what a degree-0 side passes instead of NULL */

static int check_side(const char *what, const int32_t *counts, const int32_t *displs, const int64_t *bytes, int n)
{
    if (n > 0 && (!counts || (!displs && !bytes)))
        return mp_fail(MP_EINVAL, "%s counts or displacements are NULL", what);
    for (int i = 0; i < n; i++)
        if (counts[i] < 0 || (displs && displs[i] < 0) || (bytes && bytes[i] < 0))
            return mp_fail(MP_ECOUNT, "%s count %d or displacement %lld of neighbour %d is negative", what,
                           counts[i], bytes ? (long long)bytes[i] : displs ? (long long)displs[i] : 0LL, i);
    return 0;
}

/* The arguments that do not depend on the form: element type, degrees, counts. */
static int prepare(mp_comm_t comm, const mp_coll_t *c, const int64_t *sbytes, const int64_t *rbytes,
                   MPI_Datatype *t, int *in, int *out)
{
    int rc, weighted = 0;
    if (!c)
        return mp_fail(MP_EINVAL, "collective descriptor is NULL");
    if (c->kind < 0 || c->kind >= MP_NEIGHBOR_KIND_COUNT)
        return mp_fail(MP_EINVAL, "neighborhood collective kind %d is not an MP_NEIGHBOR_* value", c->kind);
    if ((rc = mp_topo_degrees(comm, in, out, &weighted)))
        return rc;
    if (c->count < 0 || c->count > INT_MAX)
        return mp_fail(MP_ECOUNT, "element count %lld is outside [0, %d]", (long long)c->count, INT_MAX);
    if ((rc = mp_coll_element_type(c, t)))
        return rc;
    switch (c->kind) {
    case MP_NEIGHBOR_ALLGATHERV:
        return check_side("neighbor_allgatherv receive", c->recvcounts, c->rdispls, NULL, *in);
    case MP_NEIGHBOR_ALLTOALLV:
        if ((rc = check_side("neighbor_alltoallv send", c->sendcounts, c->sdispls, NULL, *out)))
            return rc;
        return check_side("neighbor_alltoallv receive", c->recvcounts, c->rdispls, NULL, *in);
    case MP_NEIGHBOR_ALLTOALLW:
        if ((rc = check_side("neighbor_alltoallw send", c->sendcounts, NULL, sbytes, *out)))
            return rc;
        return check_side("neighbor_alltoallw receive", c->recvcounts, NULL, rbytes, *in);
    }
    return 0;
}

#define OR_NONE(a) ((a) ? (a) : k_none)

/* Runs the blocking form (r == NULL), posts the nonblocking one or makes the
 * persistent one (*r).  types: room for in + out datatypes (ALLTOALLW). */
static int run(MPI_Comm m, const mp_coll_t *c, MPI_Datatype t, int in, int out, const int64_t *sbytes,
               const int64_t *rbytes, MPI_Datatype *types, MPI_Request *r, int persistent)
{
    const void *sb = c->sendbuf;
    void *rb = c->recvbuf;
    int n = (int)c->count;
    mp_counts_t *k = mp_my_counts();
    mp_count(&k->coll_ops, !persistent);
    mp_count(&k->blocking_ops, r == NULL);
#define NB(B, I, ...) (persistent ? MP_MPI_CHECK(pal_mpi.B##_init(__VA_ARGS__, MPI_INFO_NULL, r), "MPI_" #B "_init") \
                       : r ? MP_MPI_CHECK(pal_mpi.I(__VA_ARGS__, r), "MPI_" #I)                                  \
                           : MP_MPI_CHECK(pal_mpi.B(__VA_ARGS__), "MPI_" #B))
    switch (c->kind) {
    case MP_NEIGHBOR_ALLGATHER:
        return NB(Neighbor_allgather, Ineighbor_allgather, sb, n, t, rb, n, t, m);
    case MP_NEIGHBOR_ALLGATHERV:
        return NB(Neighbor_allgatherv, Ineighbor_allgatherv, sb, n, t, rb, OR_NONE(c->recvcounts),
                  OR_NONE(c->rdispls), t, m);
    case MP_NEIGHBOR_ALLTOALL:
        return NB(Neighbor_alltoall, Ineighbor_alltoall, sb, n, t, rb, n, t, m);
    case MP_NEIGHBOR_ALLTOALLV:
        return NB(Neighbor_alltoallv, Ineighbor_alltoallv, sb, OR_NONE(c->sendcounts), OR_NONE(c->sdispls), t,
                  rb, OR_NONE(c->recvcounts), OR_NONE(c->rdispls), t, m);
    case MP_NEIGHBOR_ALLTOALLW: {
        static const MPI_Aint no_bytes[1];
        MPI_Datatype *st = types, *rt = types + out;
        for (int i = 0; i < in + out; i++)
            types[i] = t;
        /* No persistent form: neighbor_init refuses ALLTOALLW. */
        return r ? MP_MPI_CHECK(pal_mpi.Ineighbor_alltoallw(sb, OR_NONE(c->sendcounts),
                                                            sbytes ? (const MPI_Aint *)sbytes : no_bytes, st, rb,
                                                            OR_NONE(c->recvcounts),
                                                            rbytes ? (const MPI_Aint *)rbytes : no_bytes, rt, m, r),
                                "MPI_Ineighbor_alltoallw")
                 : MP_MPI_CHECK(pal_mpi.Neighbor_alltoallw(sb, OR_NONE(c->sendcounts),
                                                           sbytes ? (const MPI_Aint *)sbytes : no_bytes, st, rb,
                                                           OR_NONE(c->recvcounts),
                                                           rbytes ? (const MPI_Aint *)rbytes : no_bytes, rt, m),
                                "MPI_Neighbor_alltoallw");
    }
    }
#undef NB
    return mp_fail(MP_EINVAL, "neighborhood collective kind %d is not supported", c->kind);
}

int mp_neighbor_run(mp_comm_t comm, const mp_coll_t *c, const int64_t *sbytes, const int64_t *rbytes)
{
    const comm_entry_t *ce;
    MPI_Datatype t = MPI_DATATYPE_NULL, few[16], *types = few;
    int rc, in = 0, out = 0;
    if ((rc = mp_comm_lookup(comm, &ce)) || (rc = prepare(comm, c, sbytes, rbytes, &t, &in, &out)))
        return rc;
    if (c->kind == MP_NEIGHBOR_ALLTOALLW && in + out > 16 && !(types = malloc(sizeof *types * (size_t)(in + out))))
        return mp_fail(MP_ENOMEM, "out of memory for %d datatypes", in + out);
    mp_blocking_enter();
    rc = run(ce->mpi, c, t, in, out, sbytes, rbytes, types, NULL, 0);
    mp_sweep_orphans();
    mp_blocking_leave();
    if (types != few)
        free(types);
    return rc;
}

int mp_neighbor_post(mp_comm_t comm, const mp_coll_t *c, const int64_t *sbytes, const int64_t *rbytes, void *scratch,
                     void *send_obj, void *recv_obj, mp_req_t *req)
{
    const comm_entry_t *ce;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    mp_claim_t k;
    int rc, in = 0, out = 0;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (!req)
        return mp_fail_null_output("request");
    if ((rc = prepare(comm, c, sbytes, rbytes, &t, &in, &out)))
        return rc;
    if (c->kind == MP_NEIGHBOR_ALLTOALLW && in + out > 0 && !scratch)
        return mp_fail(MP_EINVAL, "neighbor_alltoallw needs scratch for %d datatypes", in + out);
    if ((rc = mp_claim(&k)))
        return rc;
    rc = run(ce->mpi, c, t, in, out, sbytes, rbytes, scratch, &r, 0); /* before r is read */
    return mp_claim_posted(&k, rc, r, send_obj, recv_obj, 0, req);
}

/* ---- persistent forms (MPI-4.0 8.6 and 6.12) ---- */

static int persistent_present(int kind)
{
    switch (kind) {
    case MP_NEIGHBOR_ALLGATHER:
        return pal_mpi.Neighbor_allgather_init ? 0 : mp_fail_persistent_missing("MPI_Neighbor_allgather_init");
    case MP_NEIGHBOR_ALLGATHERV:
        return pal_mpi.Neighbor_allgatherv_init ? 0 : mp_fail_persistent_missing("MPI_Neighbor_allgatherv_init");
    case MP_NEIGHBOR_ALLTOALL:
        return pal_mpi.Neighbor_alltoall_init ? 0 : mp_fail_persistent_missing("MPI_Neighbor_alltoall_init");
    case MP_NEIGHBOR_ALLTOALLV:
        return pal_mpi.Neighbor_alltoallv_init ? 0 : mp_fail_persistent_missing("MPI_Neighbor_alltoallv_init");
    }
    return mp_fail(MP_EINVAL, "neighborhood collective kind %d has no persistent form here", kind);
}

/* Copies n entries to *at (advancing it), so the request owns what MPI reads at each start. */
static const int32_t *keep(int32_t **at, const int32_t *from, int n)
{
    int32_t *to = *at;
    if (!from || n == 0)
        return from;
    memcpy(to, from, sizeof *to * (size_t)n);
    *at += n;
    return to;
}

int mp_neighbor_init(mp_comm_t comm, const mp_coll_t *c, const int64_t *stage_bytes, void **stages, mp_req_t *req)
{
    const comm_entry_t *ce;
    MPI_Datatype t = MPI_DATATYPE_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    int64_t sb = 0, rb = 0;
    size_t head;
    persist_t *p = NULL;
    int32_t *at;
    mp_coll_t d;
    void *send_stage, *recv_stage;
    int rc, in = 0, out = 0;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (!c || !stages || !req)
        return mp_fail(MP_EINVAL, "collective descriptor, staging output or request output is NULL");
    if ((rc = persistent_present(c->kind)) || (rc = prepare(comm, c, NULL, NULL, &t, &in, &out)))
        return rc;
    if (stage_bytes) {
        sb = stage_bytes[0];
        rb = stage_bytes[1];
    }
    if (sb < 0 || rb < 0)
        return mp_fail(MP_ECOUNT, "staging sizes %lld and %lld must not be negative", (long long)sb, (long long)rb);
    /* stage[0]: the counts and displacements (2 * (in + out) entries, rounded
     * up to 16 bytes), then the send stage; stage[1]: the receive stage. */
    head = ((sizeof(int32_t) * 2 * (size_t)(in + out)) + 15) & ~(size_t)15;
    if ((rc = mp_persist_new(PERSIST_COLL, 0, 0, comm, &p)))
        return rc;
    if ((head + (size_t)sb > 0 && !(p->stage[0] = malloc(head + (size_t)sb))) ||
        (rb > 0 && !(p->stage[1] = malloc((size_t)rb)))) {
        mp_persist_discard(p);
        return mp_fail(MP_ENOMEM, "out of memory for staging buffers of %lld and %lld bytes", (long long)sb,
                       (long long)rb);
    }
    p->bytes = sb + rb;
    d = *c;
    at = p->stage[0];
    if (c->kind == MP_NEIGHBOR_ALLTOALLV) {
        d.sendcounts = keep(&at, c->sendcounts, out);
        d.sdispls = keep(&at, c->sdispls, out);
    }
    if (c->kind == MP_NEIGHBOR_ALLTOALLV || c->kind == MP_NEIGHBOR_ALLGATHERV) {
        d.recvcounts = keep(&at, c->recvcounts, in);
        d.rdispls = keep(&at, c->rdispls, in);
    }
    send_stage = sb > 0 ? (char *)p->stage[0] + head : NULL;
    recv_stage = p->stage[1];
    if (send_stage)
        d.sendbuf = send_stage;
    if (recv_stage)
        d.recvbuf = recv_stage;
    p->coll = d;
    mp_blocking_enter();
    rc = run(ce->mpi, &d, t, in, out, NULL, NULL, NULL, &r, 1);
    mp_sweep_orphans();
    mp_blocking_leave();
    return mp_persist_made(p, rc, r, req, send_stage, recv_stage, stages);
}
