/*
 * rma.c - one-sided communication (MPI-4.0 chapter 12): windows, their
 * synchronization, and the operations on them.
 *
 * At creation every rank's window size and displacement unit are gathered
 * (one Allgather), so an operation whose target range leaves the target's
 * window is refused here, with the numbers, before anything is sent: MPI
 * itself would write past a remote buffer or fail only at the target.  A
 * dynamic window (MPI_Win_create_dynamic) has no size: its displacements are
 * addresses of memory attached at the target, which only the target knows,
 * so only the count is checked here.  The
 * epochs this process opened are tracked per window (12.5): an operation
 * towards a rank no open access epoch covers, or a synchronization call that
 * contradicts the open epochs (unlocking a rank that is not locked, Lock
 * inside LockAll, Complete without Start...), is refused with MP_ESTATE.
 * Epoch state is the owner's: a window's synchronization calls must not race
 * each other (operations may run concurrently; they only read it).
 *
 * Holds: MPI may read or write the origin of a Put, Get or accumulate until
 * the synchronization call that completes it (12.5).  Under motor the caller
 * passes the array's object, and the window holds it in one of its slots of
 * the in-flight table (SLOT_HELD, slots.h), which the GC extension reports
 * as a pinned root, until that call: no GCHandle per operation.  The slots
 * stay with the window (a released hold only forgets its object), and an
 * operation on the array a recent one holds towards the same rank refreshes
 * that hold, so a loop of Put + Flush on one array touches no allocator.
 */
#include "comms.h"
#include "info.h"
#include "requests.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#define MAX_WINS 1024
#define ALLOC_ROUND 64 /* bytes: see mp_win_allocate */

enum { UNLOCKED = 0, LOCKED_SHARED = 1, LOCKED_EXCLUSIVE = 2 };

typedef struct win {
    MPI_Win mpi;
    int size, rank;
    int64_t *bytes;   /* each rank's window size */
    int *disp_unit;   /* and displacement unit */
    uint8_t *locked;  /* UNLOCKED / LOCKED_*: this process's lock on each rank */
    uint8_t *access;  /* 1: in the group of the open Start */
    int nlocked;      /* ranks locked */
    int lock_all;     /* LockAll epoch open */
    int fence;        /* a Fence without NOSUCCEED came last: a fence epoch may be open */
    atomic_int fence_busy; /* MPI accepted an operation since that fence (then it is an epoch) */
    int started;      /* access epoch of Start open */
    int posted;       /* exposure epoch of Post open */
    int dynamic;      /* MPI_Win_create_dynamic: displacements are addresses */
    void **attached;  /* dynamic: the bases attached, [0, nattached) */
    int nattached, attached_cap;
    mp_spin_t hold_lock; /* operations hold concurrently; the fields below */
    struct hold *holds;  /* [0, nheld): holding objects, [nheld, nholds): spare */
    int nheld, nholds, holds_cap;
    uint64_t hold_seq;   /* operations held so far: a sync releases those before it */
} win_t;

/* One held operation's objects (or a spare) and the rank it goes to. */
typedef struct hold {
    slot_t *slot;  /* SLOT_HELD; obj[0], obj[1]: the arrays while held */
    int idx;       /* the slot's index */
    int target;
    uint64_t seq;  /* hold_seq of the latest operation it stands for */
} hold_t;

#define HOLD_RECENT 4 /* holds an operation may share: the latest ones */

static win_t *g_wins[MAX_WINS]; /* slot 0 unused: handles are > 0 */
static mp_spin_t g_win_lock = MP_SPIN_INIT;

static int win_get(int32_t h, win_t **out)
{
    if (!mp_ready())
        return mp_fail_state();
    if (h <= 0 || h >= MAX_WINS || !(*out = g_wins[h]))
        return mp_fail(MP_EHANDLE, "window handle %d is not valid (freed or never created)", h);
    return 0;
}

static void win_release(win_t *w)
{
    slot_cache_t *c = my_cache();
    for (int i = 0; i < w->nholds; i++)
        slot_free(c, w->holds[i].slot, w->holds[i].idx);
    free(w->holds);
    free(w->bytes);
    free(w->disp_unit);
    free(w->locked);
    free(w->access);
    free(w->attached);
    free(w);
}

/* Takes a new MPI window: errors return, sizes gathered, a handle given. */
static int win_adopt(MPI_Win mw, const comm_entry_t *ce, int64_t bytes, int disp_unit, int32_t *out)
{
    win_t *w = calloc(1, sizeof *w);
    int64_t mine[2] = { bytes, disp_unit }, *all = NULL;
    int rc = 0, n = ce->size;
    if (w) {
        w->bytes = malloc(sizeof(int64_t) * (size_t)n);
        w->disp_unit = malloc(sizeof(int) * (size_t)n);
        w->locked = calloc((size_t)n, 1);
        w->access = calloc((size_t)n, 1);
        all = malloc(sizeof(int64_t) * 2 * (size_t)n);
    }
    if (!w || !w->bytes || !w->disp_unit || !w->locked || !w->access || !all)
        rc = mp_fail(MP_ENOMEM, "no memory for the description of a window of %d ranks", n);
    if (!rc)
        rc = MP_MPI_CHECK(pal_mpi.Win_set_errhandler(mw, MPI_ERRORS_RETURN), "MPI_Win_set_errhandler");
    if (!rc) {
        mp_blocking_enter();
        rc = MP_MPI_CHECK(pal_mpi.Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, ce->mpi), "MPI_Allgather");
        mp_blocking_leave();
    }
    if (!rc) {
        w->mpi = mw;
        w->size = n;
        w->rank = ce->rank;
        for (int i = 0; i < n; i++) {
            w->bytes[i] = all[2 * i];
            w->disp_unit[i] = (int)all[2 * i + 1];
        }
        rc = MP_ENOMEM; /* until a free entry is found; recorded only if none is */
        mp_spin_lock(&g_win_lock);
        for (int i = 1; i < MAX_WINS; i++) {
            if (!g_wins[i]) {
                g_wins[i] = w;
                *out = i;
                rc = 0;
                break;
            }
        }
        mp_spin_unlock(&g_win_lock);
        if (rc)
            rc = mp_fail(MP_ENOMEM, "too many windows at once (at most %d)", MAX_WINS - 1);
    }
    free(all);
    if (rc) {
        pal_mpi.Win_free(&mw);
        if (w)
            win_release(w);
    }
    return rc;
}

/* What every creation checks: an intracommunicator, sizes, the info. */
static int creation_args(mp_comm_t comm, int64_t bytes, int disp_unit, mp_info_t info,
                         const comm_entry_t **ce, MPI_Info *mi)
{
    int rc;
    if ((rc = mp_comm_lookup(comm, ce)) || (rc = mp_info_lookup(info, mi)))
        return rc;
    if ((*ce)->is_inter)
        return mp_fail(MP_EINVAL, "windows are made over intracommunicators, not intercommunicators");
    if (bytes < 0)
        return mp_fail(MP_ECOUNT, "window size %lld bytes is negative", (long long)bytes);
    if (disp_unit <= 0)
        return mp_fail(MP_EINVAL, "displacement unit %d must be positive", disp_unit);
    return 0;
}

int mp_win_allocate(mp_comm_t comm, int64_t bytes, int disp_unit, int flavor, mp_info_t info, void **base, int32_t *win)
{
    const comm_entry_t *ce;
    MPI_Info mi = MPI_INFO_NULL;
    MPI_Win mw = MPI_WIN_NULL;
    void *mem = NULL;
    MPI_Aint alloc;
    int rc;
    if ((rc = creation_args(comm, bytes, disp_unit, info, &ce, &mi)))
        return rc;
    if (flavor != MP_WIN_ALLOCATE && flavor != MP_WIN_ALLOCATE_SHARED)
        return mp_fail(MP_EINVAL, "window flavor %d is not an MP_WIN_* value", flavor);
    /* MPICH 4.0 places the segments of a node's ranks so that a rank whose
     * predecessors' sizes are not multiples of 16 bytes is addressed by the
     * others 8 bytes away from the base it was given: sizes are rounded up
     * (the checks still use the size asked for). */
    alloc = (bytes + ALLOC_ROUND - 1) / ALLOC_ROUND * ALLOC_ROUND;
    mp_blocking_enter();
    rc = flavor == MP_WIN_ALLOCATE
             ? MP_MPI_CHECK(pal_mpi.Win_allocate(alloc, disp_unit, mi, ce->mpi, &mem, &mw), "MPI_Win_allocate")
             : MP_MPI_CHECK(pal_mpi.Win_allocate_shared(alloc, disp_unit, mi, ce->mpi, &mem, &mw),
                            "MPI_Win_allocate_shared");
    mp_blocking_leave();
    if (rc || (rc = win_adopt(mw, ce, bytes, disp_unit, win)))
        return rc;
    *base = mem;
    return 0;
}

int mp_win_create(mp_comm_t comm, void *base, int64_t bytes, int disp_unit, mp_info_t info, int32_t *win)
{
    const comm_entry_t *ce;
    MPI_Info mi = MPI_INFO_NULL;
    MPI_Win mw = MPI_WIN_NULL;
    int rc;
    if ((rc = creation_args(comm, bytes, disp_unit, info, &ce, &mi)))
        return rc;
    if (!base && bytes > 0)
        return mp_fail(MP_EINVAL, "window memory of %lld bytes at NULL", (long long)bytes);
    mp_blocking_enter();
    rc = MP_MPI_CHECK(pal_mpi.Win_create(base, (MPI_Aint)bytes, disp_unit, mi, ce->mpi, &mw), "MPI_Win_create");
    mp_blocking_leave();
    return rc ? rc : win_adopt(mw, ce, bytes, disp_unit, win);
}

int mp_win_create_dynamic(mp_comm_t comm, mp_info_t info, int32_t *win)
{
    const comm_entry_t *ce;
    win_t *w;
    MPI_Info mi = MPI_INFO_NULL;
    MPI_Win mw = MPI_WIN_NULL;
    int rc;
    if ((rc = creation_args(comm, 0, 1, info, &ce, &mi)))
        return rc;
    mp_blocking_enter();
    rc = MP_MPI_CHECK(pal_mpi.Win_create_dynamic(mi, ce->mpi, &mw), "MPI_Win_create_dynamic");
    mp_blocking_leave();
    if (rc || (rc = win_adopt(mw, ce, 0, 1, win)) || (rc = win_get(*win, &w)))
        return rc;
    w->dynamic = 1;
    return 0;
}

/* The index of base among w's attached memory, or -1. */
static int attached_at(const win_t *w, const void *base)
{
    for (int i = 0; i < w->nattached; i++)
        if (w->attached[i] == base)
            return i;
    return -1;
}

static int dynamic_get(int32_t win, win_t **w)
{
    int rc = win_get(win, w);
    if (!rc && !(*w)->dynamic)
        rc = mp_fail(MP_EINVAL, "window %d was not made by win_create_dynamic: nothing can be attached to it", win);
    return rc;
}

int mp_win_attach(int32_t win, void *base, int64_t bytes, int64_t *address)
{
    win_t *w;
    MPI_Aint a = 0;
    int rc;
    if ((rc = dynamic_get(win, &w)))
        return rc;
    if (!base || bytes <= 0)
        return mp_fail(MP_ECOUNT, "attaching %lld bytes at %p: memory must be at least one byte", (long long)bytes, base);
    if (attached_at(w, base) >= 0)
        return mp_fail(MP_EINVAL, "window %d: memory at %p is attached already", win, base);
    if (w->nattached == w->attached_cap) {
        int cap = w->attached_cap ? 2 * w->attached_cap : 4;
        void **p = realloc(w->attached, sizeof *p * (size_t)cap);
        if (!p)
            return mp_fail(MP_ENOMEM, "no memory to record %d attached regions", cap);
        w->attached = p;
        w->attached_cap = cap;
    }
    if ((rc = MP_MPI_CHECK(pal_mpi.Get_address(base, &a), "MPI_Get_address")))
        return rc;
    mp_blocking_enter();
    rc = MP_MPI_CHECK(pal_mpi.Win_attach(w->mpi, base, (MPI_Aint)bytes), "MPI_Win_attach");
    mp_blocking_leave();
    if (rc)
        return rc;
    w->attached[w->nattached++] = base;
    *address = (int64_t)a;
    return 0;
}

int mp_win_detach(int32_t win, void *base)
{
    win_t *w;
    int rc, i;
    if ((rc = dynamic_get(win, &w)))
        return rc;
    if ((i = attached_at(w, base)) < 0)
        return mp_fail(MP_EINVAL, "window %d: no memory is attached at %p", win, base);
    mp_blocking_enter();
    rc = MP_MPI_CHECK(pal_mpi.Win_detach(w->mpi, base), "MPI_Win_detach");
    mp_blocking_leave();
    if (!rc)
        w->attached[i] = w->attached[--w->nattached];
    return rc;
}

static int any_epoch(const win_t *w)
{
    return w->nlocked || w->lock_all || w->started || w->posted;
}

int mp_win_free(int32_t win)
{
    win_t *w;
    int rc, free_rc;
    if ((rc = win_get(win, &w)))
        return rc;
    if (any_epoch(w))
        return mp_fail(MP_ESTATE, "window %d has an epoch open (%s): end it before freeing the window", win,
                       w->lock_all ? "LockAll" : w->nlocked ? "Lock" : w->started ? "Start" : "Post");
    mp_blocking_enter();
    for (int i = w->nattached - 1; i >= 0; i--) { /* then the caller may let the memory go */
        int d = MP_MPI_CHECK(pal_mpi.Win_detach(w->mpi, w->attached[i]), "MPI_Win_detach");
        rc = rc ? rc : d;
    }
    w->nattached = 0;
    free_rc = MP_MPI_CHECK(pal_mpi.Win_free(&w->mpi), "MPI_Win_free");
    rc = rc ? rc : free_rc;
    mp_blocking_leave();
    mp_spin_lock(&g_win_lock);
    g_wins[win] = NULL;
    mp_spin_unlock(&g_win_lock);
    win_release(w);
    return rc;
}

static int check_rank(const win_t *w, int rank)
{
    if ((unsigned)rank >= (unsigned)w->size)
        return mp_fail(MP_ERANK, "rank %d is outside [0, %d) of the window's group", rank, w->size);
    return 0;
}

int mp_win_size(int32_t win, int rank, int64_t *bytes, int *disp_unit)
{
    win_t *w;
    int rc;
    if ((rc = win_get(win, &w)) || (rc = check_rank(w, rank)))
        return rc;
    *bytes = w->bytes[rank];
    *disp_unit = w->disp_unit[rank];
    return 0;
}

int mp_win_shared_query(int32_t win, int rank, int64_t *bytes, int *disp_unit, void **base)
{
    win_t *w;
    MPI_Aint size = 0;
    void *mem = NULL;
    int rc, unit = 0;
    if ((rc = win_get(win, &w)) || (rc = check_rank(w, rank)) ||
        (rc = MP_MPI_CHECK(pal_mpi.Win_shared_query(w->mpi, rank, &size, &unit, &mem), "MPI_Win_shared_query")))
        return rc; /* the outputs untouched */
    *bytes = w->bytes[rank] < (int64_t)size ? w->bytes[rank] : (int64_t)size; /* not the rounding */
    *disp_unit = unit;
    *base = mem;
    return 0;
}

/* ---- holds ---- */

/* A spare hold: a slot of the table, kept by the window until it is freed. */
static MP_COLD int hold_grow(win_t *w, slot_cache_t *c)
{
    slot_t *s;
    mp_req_t h;
    int rc;
    if (w->nholds == w->holds_cap) {
        int cap = w->holds_cap ? 2 * w->holds_cap : 8;
        hold_t *p = realloc(w->holds, sizeof *p * (size_t)cap);
        if (!p)
            return mp_fail(MP_ENOMEM, "no memory to hold the arrays of %d operations", w->nholds + 1);
        w->holds = p;
        w->holds_cap = cap;
    }
    if ((rc = slot_alloc(c, &s, &h)))
        return rc;
    s->mpi = MPI_REQUEST_NULL;
    s->persist = NULL;
    slot_forget(s);
    atomic_store_explicit(&s->state, SLOT_HELD, memory_order_release);
    w->holds[w->nholds++] = (hold_t){ .slot = s, .idx = h & HANDLE_INDEX_MASK };
    return 0;
}

/* Holds obj0 and obj1 (either may be NULL) until the synchronization that
 * completes an operation towards target.  Called before MPI sees the
 * operation (the caller keeps the arrays fixed meanwhile): a hold that cannot
 * be made stops it. */
static int hold(win_t *w, int target, void *obj0, void *obj1)
{
    slot_cache_t *c = my_cache();
    hold_t *h = NULL;
    int rc = 0;
    uint64_t seq;
    mp_spin_lock(&w->hold_lock);
    seq = w->hold_seq + 1;
    __atomic_store_n(&w->hold_seq, seq, __ATOMIC_RELEASE);
    for (int i = w->nheld - 1; i >= 0 && i >= w->nheld - HOLD_RECENT; i--) {
        hold_t *r = &w->holds[i];
        if (r->target == target && r->slot->obj[0] == obj0 && r->slot->obj[1] == obj1) {
            h = r;
            break;
        }
    }
    if (!h && (w->nheld < w->nholds || !(rc = hold_grow(w, c)))) {
        h = &w->holds[w->nheld];
        __atomic_store_n(&w->nheld, w->nheld + 1, __ATOMIC_RELEASE);
        h->target = target;
        __atomic_store_n(&h->slot->obj[0], obj0, __ATOMIC_RELEASE);
        __atomic_store_n(&h->slot->obj[1], obj1, __ATOMIC_RELEASE);
    }
    if (h)
        h->seq = seq;
    mp_spin_unlock(&w->hold_lock);
    if (!rc)
        mp_count(&counts_of(c)->registered, (uint64_t)(obj0 != NULL) + (obj1 != NULL));
    return rc;
}

/* The operations held so far: a synchronization completes these (those of
 * operations racing it may not be complete). */
static uint64_t holds_before(win_t *w)
{
    return __atomic_load_n(&w->hold_seq, __ATOMIC_ACQUIRE);
}

/* Lets go of the objects of operations towards target (-1: all) held up to
 * seq: the GC may move them again. */
static void hold_release(win_t *w, int target, uint64_t seq)
{
    int kept = 0;
    if (!__atomic_load_n(&w->nheld, __ATOMIC_ACQUIRE))
        return; /* library mode, or nothing since the last release */
    mp_spin_lock(&w->hold_lock);
    for (int i = 0; i < w->nheld; i++) {
        hold_t h = w->holds[i];
        if ((target < 0 || h.target == target) && h.seq <= seq) {
            slot_forget(h.slot); /* a spare from now on */
            continue;
        }
        w->holds[i] = w->holds[kept]; /* the kept keep their order */
        w->holds[kept++] = h;
    }
    __atomic_store_n(&w->nheld, kept, __ATOMIC_RELEASE);
    mp_spin_unlock(&w->hold_lock);
}

/* The operations a synchronization call completes at this process, as a
 * target for hold_release: -1 all, a rank, or -2 none. */
static int sync_completes(int kind, int arg)
{
    switch (kind) {
    case MP_WIN_FENCE:
    case MP_WIN_UNLOCK_ALL:
    case MP_WIN_FLUSH_ALL:
    case MP_WIN_FLUSH_LOCAL_ALL:
    case MP_WIN_COMPLETE: return -1;
    case MP_WIN_UNLOCK:
    case MP_WIN_FLUSH:
    case MP_WIN_FLUSH_LOCAL: return arg;
    default: return -2;
    }
}

/* ---- epochs ---- */

static MP_COLD int fail_epoch(int32_t win, const char *what)
{
    return mp_fail(MP_ESTATE, "window %d: %s", win, what);
}

static int to_mpi_mode(int mode, int *out)
{
    static const struct { int motor; int mpi; } modes[] = {
        { MP_MODE_NOCHECK, MPI_MODE_NOCHECK }, { MP_MODE_NOSTORE, MPI_MODE_NOSTORE },
        { MP_MODE_NOPUT, MPI_MODE_NOPUT }, { MP_MODE_NOPRECEDE, MPI_MODE_NOPRECEDE },
        { MP_MODE_NOSUCCEED, MPI_MODE_NOSUCCEED },
    };
    *out = 0;
    if (!mode)
        return 0; /* the common case: no assertions */
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (mode & modes[i].motor)
            *out |= modes[i].mpi;
    if (mode & ~0x1F)
        return mp_fail(MP_EINVAL, "assertion flags 0x%x hold bits that are not MP_MODE_* values", mode);
    return 0;
}

/* The ranks of group g in the window's group, as flags in w->access when
 * mark (Start), or only checked (Post): every one must be there (MPI-4.0
 * 12.5.2; MPICH and Open MPI accept any group at the post). */
static int mark_group(win_t *w, MPI_Group g, int mark)
{
    MPI_Group wg = MPI_GROUP_NULL;
    int n = 0, rc;
    int *in = NULL, *out = NULL;
    if ((rc = MP_MPI_CHECK(pal_mpi.Group_size(g, &n), "MPI_Group_size")) ||
        (rc = MP_MPI_CHECK(pal_mpi.Win_get_group(w->mpi, &wg), "MPI_Win_get_group")))
        return rc;
    in = malloc(sizeof(int) * (size_t)(n + 1));
    out = malloc(sizeof(int) * (size_t)(n + 1));
    if (!in || !out)
        rc = mp_fail(MP_ENOMEM, "no memory to translate a group of %d", n);
    for (int i = 0; !rc && i < n; i++)
        in[i] = i;
    if (!rc)
        rc = MP_MPI_CHECK(pal_mpi.Group_translate_ranks(g, n, in, wg, out), "MPI_Group_translate_ranks");
    for (int i = 0; !rc && i < n; i++)
        if (out[i] == MPI_UNDEFINED)
            rc = mp_fail(MP_ERANK, "rank %d of the group is not in the window's group", i);
    if (mark) {
        memset(w->access, 0, (size_t)w->size);
        for (int i = 0; !rc && i < n; i++)
            w->access[out[i]] = 1;
    }
    pal_mpi.Group_free(&wg);
    free(in);
    free(out);
    return rc;
}

/* Whether the open epochs allow the synchronization call, before MPI sees it. */
static int sync_allowed(int32_t win, const win_t *w, int kind, int arg)
{
    int busy_fence = w->fence && atomic_load_explicit(&w->fence_busy, memory_order_relaxed);
    switch (kind) {
    case MP_WIN_FENCE:
        if (w->nlocked || w->lock_all || w->started || w->posted)
            return fail_epoch(win, "Fence inside a Lock, LockAll, Start or Post epoch");
        return 0;
    case MP_WIN_LOCK_EXCLUSIVE:
    case MP_WIN_LOCK_SHARED:
        if (check_rank(w, arg))
            return MP_ERANK;
        if (w->lock_all)
            return fail_epoch(win, "Lock inside a LockAll epoch");
        if (w->locked[arg])
            return mp_fail(MP_ESTATE, "window %d: rank %d is already locked by this process", win, arg);
        if (w->started || busy_fence)
            return fail_epoch(win, "Lock inside an active-target (Start or Fence) epoch");
        return 0;
    case MP_WIN_UNLOCK:
    case MP_WIN_FLUSH:
    case MP_WIN_FLUSH_LOCAL:
        if (check_rank(w, arg))
            return MP_ERANK;
        if (kind == MP_WIN_UNLOCK ? !w->locked[arg] : !(w->locked[arg] || w->lock_all))
            return mp_fail(MP_ESTATE, "window %d: rank %d is not locked by this process%s", win, arg,
                           kind == MP_WIN_UNLOCK && w->lock_all ? " (it is under LockAll: use UnlockAll)" : "");
        return 0;
    case MP_WIN_LOCK_ALL:
        if (w->lock_all || w->nlocked)
            return fail_epoch(win, "LockAll while a Lock or LockAll epoch is open");
        if (w->started || busy_fence)
            return fail_epoch(win, "LockAll inside an active-target (Start or Fence) epoch");
        return 0;
    case MP_WIN_UNLOCK_ALL:
        return w->lock_all ? 0 : fail_epoch(win, "UnlockAll without LockAll");
    case MP_WIN_FLUSH_ALL:
    case MP_WIN_FLUSH_LOCAL_ALL:
        return w->lock_all || w->nlocked ? 0 : fail_epoch(win, "flush outside a Lock or LockAll epoch");
    case MP_WIN_POST:
        return w->posted ? fail_epoch(win, "Post while a Post epoch is open (Wait first)") : 0;
    case MP_WIN_START:
        if (w->started)
            return fail_epoch(win, "Start while a Start epoch is open (Complete first)");
        if (w->lock_all || w->nlocked || busy_fence)
            return fail_epoch(win, "Start inside a Lock, LockAll or Fence epoch");
        return 0;
    case MP_WIN_COMPLETE:
        return w->started ? 0 : fail_epoch(win, "Complete without Start");
    case MP_WIN_WAIT:
        return w->posted ? 0 : fail_epoch(win, "Wait without Post");
    default:
        return mp_fail(MP_EINVAL, "synchronization %d is not an MP_WIN_* value", kind);
    }
}

/* The MPI call of a synchronization (after sync_allowed). */
static int sync_call(win_t *w, int kind, int arg, int mode, MPI_Group g)
{
    switch (kind) {
    case MP_WIN_FENCE: return MP_MPI_CHECK(pal_mpi.Win_fence(mode, w->mpi), "MPI_Win_fence");
    case MP_WIN_LOCK_EXCLUSIVE:
        return MP_MPI_CHECK(pal_mpi.Win_lock(MPI_LOCK_EXCLUSIVE, arg, mode, w->mpi), "MPI_Win_lock");
    case MP_WIN_LOCK_SHARED: return MP_MPI_CHECK(pal_mpi.Win_lock(MPI_LOCK_SHARED, arg, mode, w->mpi), "MPI_Win_lock");
    case MP_WIN_UNLOCK: return MP_MPI_CHECK(pal_mpi.Win_unlock(arg, w->mpi), "MPI_Win_unlock");
    case MP_WIN_LOCK_ALL: return MP_MPI_CHECK(pal_mpi.Win_lock_all(mode, w->mpi), "MPI_Win_lock_all");
    case MP_WIN_UNLOCK_ALL: return MP_MPI_CHECK(pal_mpi.Win_unlock_all(w->mpi), "MPI_Win_unlock_all");
    case MP_WIN_FLUSH: return MP_MPI_CHECK(pal_mpi.Win_flush(arg, w->mpi), "MPI_Win_flush");
    case MP_WIN_FLUSH_ALL: return MP_MPI_CHECK(pal_mpi.Win_flush_all(w->mpi), "MPI_Win_flush_all");
    case MP_WIN_FLUSH_LOCAL: return MP_MPI_CHECK(pal_mpi.Win_flush_local(arg, w->mpi), "MPI_Win_flush_local");
    case MP_WIN_FLUSH_LOCAL_ALL: return MP_MPI_CHECK(pal_mpi.Win_flush_local_all(w->mpi), "MPI_Win_flush_local_all");
    case MP_WIN_POST: return MP_MPI_CHECK(pal_mpi.Win_post(g, mode, w->mpi), "MPI_Win_post");
    case MP_WIN_START: return MP_MPI_CHECK(pal_mpi.Win_start(g, mode, w->mpi), "MPI_Win_start");
    case MP_WIN_COMPLETE: return MP_MPI_CHECK(pal_mpi.Win_complete(w->mpi), "MPI_Win_complete");
    default: return MP_MPI_CHECK(pal_mpi.Win_wait(w->mpi), "MPI_Win_wait");
    }
}

/* The epochs after a synchronization call MPI accepted. */
static void sync_done(win_t *w, int kind, int arg, int mode)
{
    switch (kind) {
    case MP_WIN_FENCE:
        w->fence = !(mode & MP_MODE_NOSUCCEED);
        atomic_store_explicit(&w->fence_busy, 0, memory_order_relaxed);
        break;
    case MP_WIN_LOCK_EXCLUSIVE:
    case MP_WIN_LOCK_SHARED:
        w->locked[arg] = kind == MP_WIN_LOCK_SHARED ? LOCKED_SHARED : LOCKED_EXCLUSIVE;
        w->nlocked++;
        w->fence = 0; /* a fence no operation followed opened no epoch */
        break;
    case MP_WIN_UNLOCK:
        w->locked[arg] = UNLOCKED;
        w->nlocked--;
        break;
    case MP_WIN_LOCK_ALL: w->lock_all = 1; w->fence = 0; break;
    case MP_WIN_UNLOCK_ALL: w->lock_all = 0; break;
    case MP_WIN_POST: w->posted = 1; break;
    case MP_WIN_START: w->started = 1; w->fence = 0; break;
    case MP_WIN_COMPLETE: w->started = 0; memset(w->access, 0, (size_t)w->size); break;
    case MP_WIN_WAIT: w->posted = 0; break;
    default: break;
    }
}

int mp_win_sync(int32_t win, int kind, int arg, int mode)
{
    win_t *w;
    MPI_Group g = MPI_GROUP_NULL;
    uint64_t held;
    int rc, mpi_mode = 0, completes = sync_completes(kind, arg);
    if ((rc = win_get(win, &w)) || (rc = to_mpi_mode(mode, &mpi_mode)) || (rc = sync_allowed(win, w, kind, arg)))
        return rc;
    held = completes != -2 ? holds_before(w) : 0;
    if ((kind == MP_WIN_POST || kind == MP_WIN_START) && (rc = mp_group_lookup(arg, &g)))
        return rc;
    if ((kind == MP_WIN_POST || kind == MP_WIN_START) && (rc = mark_group(w, g, kind == MP_WIN_START)))
        return rc;
    mp_blocking_enter();
    mp_sweep_orphans();
    rc = sync_call(w, kind, arg, mpi_mode, g);
    mp_blocking_leave();
    if (rc) {
        if (kind == MP_WIN_START)
            memset(w->access, 0, (size_t)w->size);
        return rc;
    }
    sync_done(w, kind, arg, mode);
    if (completes != -2)
        hold_release(w, completes, held);
    return 0;
}

/* ---- operations ---- */

/* The checks every operation makes before MPI sees it: a rank of the window (or MP_PROC_NULL),
 * a target range inside that rank's window, and an open access epoch covering the rank (passive:
 * Lock or LockAll only).  The range comes before the epoch: a call wrong in both ways is told of
 * its arguments, which the epoch it lacks would not mend. */
static int check_op(int32_t win, win_t *w, int target, int64_t disp, int64_t count, int elem_size, int passive,
                    int *mpi_target)
{
    int covered;
    if (target == MP_PROC_NULL) {
        *mpi_target = MPI_PROC_NULL;
        covered = passive ? w->lock_all || w->nlocked : w->fence || w->lock_all || w->nlocked || w->started;
        return covered ? 0 : fail_epoch(win, "an operation outside any access epoch");
    }
    if ((unsigned)target >= (unsigned)w->size)
        return mp_fail(MP_ERANK, "target rank %d is outside [0, %d) of the window's group", target, w->size);
    if (count < 0 || count > INT_MAX)
        return mp_fail(MP_ECOUNT, "count %lld is outside [0, %d]", (long long)count, INT_MAX);
    /* A dynamic window's disp is an address at the target: only the target knows what is attached
     * there, but no attached array starts at or below address 0 (MPI_Get_address of its data). */
    if (w->dynamic && disp <= 0)
        return mp_fail(MP_ECOUNT, "address %lld at rank %d is not one Attach returned: addresses of attached arrays "
                       "are positive", (long long)disp, target);
    if (!w->dynamic && (disp < 0 || disp > w->bytes[target] / w->disp_unit[target] ||
        disp * w->disp_unit[target] + count * elem_size > w->bytes[target]))
        return mp_fail(MP_ECOUNT,
                       "%lld elements of %d bytes at displacement %lld (unit %d bytes) do not fit rank %d's window "
                       "of %lld bytes",
                       (long long)count, elem_size, (long long)disp, w->disp_unit[target], target,
                       (long long)w->bytes[target]);
    covered = w->lock_all || w->locked[target] || (!passive && (w->fence || (w->started && w->access[target])));
    if (!covered)
        return mp_fail(MP_ESTATE, "window %d: no %saccess epoch towards rank %d is open (%s first)", win,
                       passive ? "passive-target " : "", target,
                       passive ? "Lock or LockAll" : "Fence, Lock, LockAll or Start");
    *mpi_target = target;
    return 0;
}

/* rc, MPI's answer to an operation: one it accepted after a Fence opens that fence's epoch.
 * Threads may post operations at once (MPI_THREAD_MULTIPLE). */
static inline int op_posted(win_t *w, int target, int rc)
{
    if (rc == 0 && w->fence && target != MPI_PROC_NULL) /* an operation with ProcNull opens none */
        atomic_store_explicit(&w->fence_busy, 1, memory_order_relaxed);
    return rc;
}

/* The lookups and checks of an operation: window, target, element type and op. */
static MP_INLINE int prepare(int32_t win, win_t **w, int target, int64_t disp, int64_t count, int dtype, int elem_size,
                   int op, int passive, int *mpi_target, MPI_Datatype *dt, MPI_Op *mop)
{
    int rc;
    if ((rc = win_get(win, w)) || (rc = mp_rma_types(dtype, elem_size, op, dt, mop)))
        return rc;
    return check_op(win, *w, target, disp, count, elem_size, passive, mpi_target);
}

/* Put (put = 1) or Get, plain or request-based (req not NULL); obj: the
 * origin's object, held until the completing synchronization (plain) or the
 * request's completion. */
static MP_INLINE int transfer(int32_t win, int put, void *origin, int64_t count, int dtype, int elem_size, int target,
                    int64_t disp, void *obj, mp_req_t *req)
{
    win_t *w;
    MPI_Datatype dt;
    MPI_Op op = MPI_OP_NULL;
    MPI_Request r = MPI_REQUEST_NULL;
    MPI_Request *rp = req ? &r : NULL;
    mp_claim_t k = { 0 };
    int rc, t, n = (int)count;
    if ((rc = prepare(win, &w, target, disp, count, dtype, elem_size, MP_OP_NONE, req != NULL, &t, &dt, &op)))
        return rc;
    if (!req && obj && n > 0 && t != MPI_PROC_NULL && (rc = hold(w, t, obj, NULL)))
        return rc;
    if (req && (rc = mp_claim(&k))) /* the request's slot before MPI sees the operation */
        return rc;
    if (put)
        rc = rp ? MP_MPI_CHECK(pal_mpi.Rput(origin, n, dt, t, (MPI_Aint)disp, n, dt, w->mpi, rp), "MPI_Rput")
                : MP_MPI_CHECK(pal_mpi.Put(origin, n, dt, t, (MPI_Aint)disp, n, dt, w->mpi), "MPI_Put");
    else
        rc = rp ? MP_MPI_CHECK(pal_mpi.Rget(origin, n, dt, t, (MPI_Aint)disp, n, dt, w->mpi, rp), "MPI_Rget")
                : MP_MPI_CHECK(pal_mpi.Get(origin, n, dt, t, (MPI_Aint)disp, n, dt, w->mpi), "MPI_Get");
    return op_posted(w, t, req ? mp_claim_posted(&k, rc, r, obj, NULL, 0, req) : rc);
}

int mp_win_put(int32_t win, const void *origin, int64_t count, int dtype, int elem_size, int target, int64_t disp,
               void *obj, mp_req_t *req)
{
    return transfer(win, 1, (void *)origin, count, dtype, elem_size, target, disp, obj, req);
}

int mp_win_get(int32_t win, void *origin, int64_t count, int dtype, int elem_size, int target, int64_t disp,
               void *obj, mp_req_t *req)
{
    return transfer(win, 0, origin, count, dtype, elem_size, target, disp, obj, req);
}

int mp_win_accumulate(int32_t win, const void *origin, void *result, int64_t count, int dtype, int elem_size, int op,
                      int target, int64_t disp)
{
    return mp_win_accumulate_held(win, origin, result, count, dtype, elem_size, op, target, disp, NULL, NULL);
}

int mp_win_accumulate_held(int32_t win, const void *origin, void *result, int64_t count, int dtype, int elem_size,
                           int op, int target, int64_t disp, void *origin_obj, void *result_obj)
{
    win_t *w;
    MPI_Datatype dt;
    MPI_Op mop = MPI_OP_NULL;
    int rc, t;
    if (op == MP_OP_NONE)
        return mp_fail(MP_EINVAL, "an accumulate needs an operation");
    if (op == MP_OP_NO_OP && !result)
        return mp_fail(MP_EINVAL, "NoOp is for GetAccumulate (an atomic read), not Accumulate");
    if ((rc = prepare(win, &w, target, disp, count, dtype, elem_size, op, 0, &t, &dt, &mop)))
        return rc;
    if ((origin_obj || result_obj) && count > 0 && t != MPI_PROC_NULL &&
        (rc = hold(w, t, origin_obj, result ? result_obj : NULL)))
        return rc;
    if (!result)
        return op_posted(w, t, MP_MPI_CHECK(pal_mpi.Accumulate(origin, (int)count, dt, t, (MPI_Aint)disp, (int)count, dt,
                                                            mop, w->mpi),
                                         "MPI_Accumulate"));
    return op_posted(w, t, MP_MPI_CHECK(pal_mpi.Get_accumulate(origin, (int)count, dt, result, (int)count, dt, t,
                                                            (MPI_Aint)disp, (int)count, dt, mop, w->mpi),
                                     "MPI_Get_accumulate"));
}

int mp_win_fetch(int32_t win, const void *origin, const void *compare, void *result, int dtype, int elem_size, int op,
                 int target, int64_t disp)
{
    win_t *w;
    MPI_Datatype dt;
    MPI_Op mop = MPI_OP_NULL;
    int rc, t;
    if (dtype == MP_DT_OPAQUE)
        return mp_fail(MP_EINVAL, "FetchAndOp and CompareAndSwap need a built-in element type, not %d opaque bytes",
                       elem_size);
    if (compare ? op != MP_OP_NONE : op == MP_OP_NONE)
        return mp_fail(MP_EINVAL, compare ? "CompareAndSwap takes no operation" : "FetchAndOp needs an operation");
    if ((rc = prepare(win, &w, target, disp, 1, dtype, elem_size, op, 1, &t, &dt, &mop)))
        return rc;
    mp_blocking_enter();
    rc = compare ? MP_MPI_CHECK(pal_mpi.Compare_and_swap(origin, compare, result, dt, t, (MPI_Aint)disp, w->mpi),
                                "MPI_Compare_and_swap")
                 : MP_MPI_CHECK(pal_mpi.Fetch_and_op(origin, result, dt, t, (MPI_Aint)disp, mop, w->mpi),
                                "MPI_Fetch_and_op");
    op_posted(w, t, rc);
    if (!rc && t != MPI_PROC_NULL)
        rc = MP_MPI_CHECK(pal_mpi.Win_flush_local(t, w->mpi), "MPI_Win_flush_local");
    mp_blocking_leave();
    return rc;
}
