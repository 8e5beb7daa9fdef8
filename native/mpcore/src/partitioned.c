/*
 * partitioned.c - partitioned point-to-point communication (MPI-4.0 chapter
 * 4): one message of `partitions` equal parts, made once (MPI_Psend_init,
 * MPI_Precv_init), started like any persistent request (persistent.c), the
 * sender marking each part ready (MPI_Pready*) and the receiver asking which
 * have arrived (MPI_Parrived).
 *
 * MPI matches the two sides when the requests are made, so a partitioned
 * request cannot be made again on a buffer that moved: an array the GC may
 * move is staged instead (the core owns a buffer for the whole message; the
 * caller copies a part in before marking it ready and out once it arrived).
 * Every argument is checked here before MPI sees it: an index outside
 * [0, partitions) or a request with no active instance is refused.
 */
#include "comms.h"
#include "persistent.h"
#include "requests.h"

#include <limits.h>

static const char k_what[] = "partitioned communication, MPI-4.0 chapter 4";

static int partitioned_init(int kind, void *buf, int partitions, int64_t part_bytes, int peer, int tag,
                            mp_comm_t comm, void **stage, mp_req_t *req)
{
    const comm_entry_t *ce;
    MPI_Request r = MPI_REQUEST_NULL;
    persist_t *p = NULL;
    void *staged[2];
    int rc, mpi_peer = 0;
    if ((rc = mp_comm_lookup(comm, &ce)))
        return rc;
    if (kind == PERSIST_PSEND ? !pal_mpi.Psend_init : !pal_mpi.Precv_init)
        return mp_fail_mpi4_missing(kind == PERSIST_PSEND ? "MPI_Psend_init" : "MPI_Precv_init", k_what,
                                    "partitioned requests");
    if (!req)
        return mp_fail_null_output("request");
    if (partitions <= 0)
        return mp_fail(MP_ECOUNT, "partition count %d must be positive", partitions);
    if (part_bytes < 0 || part_bytes > INT64_MAX / partitions)
        return mp_fail(MP_ECOUNT, "%d partitions of %lld bytes do not make a message size", partitions,
                       (long long)part_bytes);
    if (!buf && !stage && part_bytes > 0)
        return mp_fail(MP_EINVAL, "buffer is NULL but each partition has %lld bytes", (long long)part_bytes);
    /* No wildcards on either side (MPI-4.0 4.2.2): both name their peer and tag. */
    if ((rc = mp_check_dest(ce, peer, &mpi_peer)) || (rc = mp_check_send_tag(tag)))
        return rc;
    if ((rc = mp_persist_new(kind, peer, tag, comm, &p)))
        return rc;
    p->partitions = partitions;
    p->bytes = part_bytes * partitions;
    if (stage && p->bytes > 0) {
        if (!(p->stage[0] = malloc((size_t)p->bytes))) {
            mp_persist_discard(p);
            return mp_fail(MP_ENOMEM, "out of memory for a staging buffer of %lld bytes", (long long)p->bytes);
        }
        buf = p->stage[0];
    }
    p->buf = buf;
    rc = kind == PERSIST_PSEND
             ? MP_MPI_CHECK(pal_mpi.Psend_init(buf, partitions, (MPI_Count)part_bytes, MPI_BYTE, mpi_peer, tag,
                                               ce->mpi, MPI_INFO_NULL, &r), "MPI_Psend_init")
             : MP_MPI_CHECK(pal_mpi.Precv_init(buf, partitions, (MPI_Count)part_bytes, MPI_BYTE, mpi_peer, tag,
                                               ce->mpi, MPI_INFO_NULL, &r), "MPI_Precv_init");
    if ((rc = mp_persist_made(p, rc, r, req, p->stage[0], NULL, staged)) == 0 && stage)
        *stage = staged[0];
    return rc;
}

int mp_psend_init(const void *buf, int partitions, int64_t part_bytes, int dest, int tag, mp_comm_t comm,
                  void **stage, mp_req_t *req)
{
    return partitioned_init(PERSIST_PSEND, (void *)buf, partitions, part_bytes, dest, tag, comm, stage, req);
}

int mp_precv_init(void *buf, int partitions, int64_t part_bytes, int source, int tag, mp_comm_t comm,
                  void **stage, mp_req_t *req)
{
    return partitioned_init(PERSIST_PRECV, buf, partitions, part_bytes, source, tag, comm, stage, req);
}

/* The partitioned request behind a handle, of the wanted kind; *state gets its slot state. */
static int partitioned(mp_req_t req, int kind, slot_t **out, uint32_t *state)
{
    int idx = 0;
    slot_t *s = slot_get(req, &idx);
    if (MP_UNLIKELY(!s))
        return mp_fail_req(req);
    if (MP_UNLIKELY(!s->persist || s->persist->kind != kind))
        return mp_fail(MP_EINVAL, "request %d is not a partitioned %s request", req,
                       kind == PERSIST_PSEND ? "send" : "receive");
    *state = atomic_load_explicit(&s->state, memory_order_acquire);
    *out = s;
    return 0;
}

static MP_COLD int fail_partition(int part, int partitions)
{
    return mp_fail(MP_ECOUNT, "partition %d is outside [0, %d)", part, partitions);
}

int mp_pready(mp_req_t req, int first, int last, const int32_t *list)
{
    slot_t *s = NULL;
    uint32_t state = 0;
    int rc, n;
    if ((rc = partitioned(req, PERSIST_PSEND, &s, &state)))
        return rc;
    if (state != SLOT_ACTIVE)
        return mp_fail(MP_ESTATE, "partitioned send %d has no active instance: start it before marking "
                       "partitions ready", req);
    n = s->persist->partitions;
    if (list) { /* first..last index the list */
        if (first != 0 || last < -1)
            return mp_fail(MP_EINVAL, "a list of partitions is given as first 0 and last = length - 1");
        for (int i = 0; i <= last; i++)
            if ((unsigned)list[i] >= (unsigned)n)
                return fail_partition(list[i], n);
        return MP_MPI_CHECK(pal_mpi.Pready_list(last + 1, list, s->mpi), "MPI_Pready_list");
    }
    if ((unsigned)first >= (unsigned)n)
        return fail_partition(first, n);
    if ((unsigned)last >= (unsigned)n || last < first)
        return last < first ? mp_fail(MP_EINVAL, "partition range %d..%d is empty", first, last)
                            : fail_partition(last, n);
    return first == last ? MP_MPI_CHECK(pal_mpi.Pready(first, s->mpi), "MPI_Pready")
                         : MP_MPI_CHECK(pal_mpi.Pready_range(first, last, s->mpi), "MPI_Pready_range");
}

int mp_parrived(mp_req_t req, int part, int *flag)
{
    slot_t *s = NULL;
    uint32_t state = 0;
    int rc;
    if ((rc = partitioned(req, PERSIST_PRECV, &s, &state)))
        return rc;
    if (!flag)
        return mp_fail_null_output("flag");
    if ((unsigned)part >= (unsigned)s->persist->partitions)
        return fail_partition(part, s->persist->partitions);
    if (state != SLOT_ACTIVE) {
        /* Completed (every part is in), or never started: MPI-4.1 4.2.3 gives
         * true for an inactive request; MPICH 4.0 refuses one, so MPI is not asked. */
        *flag = 1;
        return 0;
    }
    *flag = 0;
    return MP_MPI_CHECK(pal_mpi.Parrived(s->mpi, part, flag), "MPI_Parrived");
}
