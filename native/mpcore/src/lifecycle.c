/* lifecycle.c - init, finalize, abort: the top of the core, calling into
 * every layer below it. */
#include "comms.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const int k_mpi_levels[4] = { MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED,
                                     MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE };

static int level_from_mpi(int lvl)
{
    for (int i = 3; i > 0; i--)
        if (lvl == k_mpi_levels[i])
            return i;
    return MP_THREAD_SINGLE;
}

int mp_init(int required, int *provided)
{
    char err[2048];
    int flag = 0, rc, got = 0, *ub = NULL;
    mp_comm_t world = MP_COMM_NULL, self = MP_COMM_NULL;
    if (required < MP_THREAD_SINGLE || required > MP_THREAD_MULTIPLE)
        return mp_fail(MP_EINVAL, "thread level %d is not one of 0..3", required);
    if (atomic_load(&mp_g_state) == MP_STATE_READY && !mp_g_sessions_only) {
        if (provided)
            *provided = mp_g_thread_level;
        return 0;
    }
    if (atomic_load(&mp_g_state) == MP_STATE_FINALIZED)
        return mp_fail(MP_ESTATE, "MPI cannot be initialized again after it was finalized");
    if (pal_mpi_load(err, (int)sizeof err) != 0)
        return mp_fail(MP_ENOLIB, "%s", err);
    mp_blocking_enter();
    rc = pal_mpi.Initialized(&flag);
    if (rc == MPI_SUCCESS && !flag)
        rc = pal_mpi.Init_thread(NULL, NULL, k_mpi_levels[required], &got);
    else if (rc == MPI_SUCCESS)
        rc = pal_mpi.Query_thread(&got); /* someone else (a host) initialized MPI */
    mp_blocking_leave();
    if ((rc = MP_MPI_CHECK(rc, "MPI_Init_thread")) != 0)
        return rc;
    if ((rc = MP_MPI_CHECK(pal_mpi.Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN),
                           "MPI_Comm_set_errhandler")) ||
        (rc = MP_MPI_CHECK(pal_mpi.Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN),
                           "MPI_Comm_set_errhandler")))
        return rc;
    if (pal_mpi.Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag) == MPI_SUCCESS && flag && ub)
        mp_g_tag_ub = *ub;
    mp_g_thread_level = level_from_mpi(got);
    /* Open MPI's MPI_Waitall hangs on a failed request only above MPI_THREAD_SINGLE: at Single
     * the set is waited for in one call again (31 instructions per operation less, in C). */
    if (got == MPI_THREAD_SINGLE)
        pal_mpi.waitall_hangs_on_failed = 0;
    /* What this init registers goes again if a later step fails (a session's communicators
     * stay), so that another init can succeed. */
    if ((rc = mp_comm_register(MPI_COMM_WORLD, &world)) || world != MP_COMM_WORLD ||
        (rc = mp_comm_register(MPI_COMM_SELF, &self)) || self != MP_COMM_SELF) {
        rc = rc ? rc : mp_fail(MP_ESTATE, "communicator table was not empty at init");
        goto undo;
    }
    /* A spawned job's parent: registered now (local calls only), whether or not the program asks for it. */
    {
        MPI_Comm parent = MPI_COMM_NULL;
        if ((rc = MP_MPI_CHECK(pal_mpi.Comm_get_parent(&parent), "MPI_Comm_get_parent")) ||
            (parent != MPI_COMM_NULL && (rc = mp_comm_register(parent, &mp_g_parent))))
            goto undo;
    }
    mp_g_sessions_only = 0; /* the world model is up beside any sessions (MPI-4.0 11.4.1) */
    atomic_store(&mp_g_state, MP_STATE_READY);
    if (provided)
        *provided = mp_g_thread_level;
    return 0;
undo:
    mp_comm_forget(world);
    mp_comm_forget(self);
    return rc;
}

/* A timeout in seconds from the environment: unset or not a number >= 0 gives the default. */
static double env_seconds(const char *name, double fallback)
{
    const char *v = getenv(name);
    char *end;
    double s;
    if (!v || !*v)
        return fallback;
    s = strtod(v, &end);
    return *end || !(s >= 0) ? fallback : s;
}

/* One watchdog per process end: MPI_Abort, or MPI_Finalize after every rank entered it.
 * If MPI has not ended the process (or returned) within `seconds`, the process ends itself
 * with `code`, saying why on stderr.  `disarmed` is set when MPI_Finalize returned in time. */
static struct {
    double seconds;
    int code;
    const char *why;
    atomic_int disarmed;
} g_watchdog;

#define WATCHDOG_GRACE_NS 500000000L /* 0.5 s between the message and the end */

static void *watchdog_main(void *arg)
{
    struct timespec ts = { (time_t)g_watchdog.seconds,
                           (long)((g_watchdog.seconds - (time_t)g_watchdog.seconds) * 1e9) };
    char msg[512];
    int n;
    (void)arg;
    while (nanosleep(&ts, &ts) != 0)
        ;
    if (atomic_load(&g_watchdog.disarmed))
        return NULL;
    n = snprintf(msg, sizeof msg, "motor: %s (pid %d, %g s); ending it with code %d\n", g_watchdog.why,
                 (int)getpid(), g_watchdog.seconds, g_watchdog.code);
    if (n > 0 && write(2, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1) < 0) {
        /* stderr is gone too: end anyway */
    }
    /* Other ranks' watchdogs (armed after the same finalize barrier, or by the same abort)
     * fire within moments of this one: a short grace, for either end, lets each of them say
     * so before the launcher, seeing this process end without MPI_Finalize, tears the job
     * down (Hydra did, before a slower rank's message, in a full test run on a loaded machine). */
    ts.tv_sec = 0;
    ts.tv_nsec = WATCHDOG_GRACE_NS;
    while (nanosleep(&ts, &ts) != 0)
        ;
    _exit(g_watchdog.code);
    return NULL;
}

/* The barrier before MPI_Finalize is over MPI_COMM_WORLD, which in an MPMD job may hold programs
 * in other languages that never call it: it is left out where the job is known to run several
 * programs (this one's MPI_APPNUM above 0, or Open MPI's count of application contexts above 1),
 * and MOTOR_FINALIZE_BARRIER=0 or 1 decides when set (0 for a Motor program started first
 * before programs of other languages under MPICH, whose launcher says nothing of the others). */
static int finalize_barrier_wanted(void)
{
    const char *set = getenv("MOTOR_FINALIZE_BARRIER"), *contexts = getenv("OMPI_NUM_APP_CTX");
    int *appnum = NULL, flag = 0;
    if (set && *set)
        return strcmp(set, "0") != 0;
    if (contexts && atoi(contexts) > 1)
        return 0;
    return !(pal_mpi.Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag) == MPI_SUCCESS && flag && appnum &&
             *appnum > 0);
}

/* The barrier itself, as an MPI_Ibarrier tested until it completes: a Motor program started first
 * in an MPICH MPMD job cannot tell that programs of other languages follow, and their ranks never
 * enter it, so after a minute (MOTOR_FINALIZE_BARRIER_HINT seconds) it says once what to set
 * instead of waiting in silence. */
static void finalize_barrier(void)
{
    double hint_after = env_seconds("MOTOR_FINALIZE_BARRIER_HINT", 60);
    MPI_Request r;
    int done = 0, polls = 0, hinted = 0;
    struct timespec start, now, pause_ts = {0, 200000};
    if (pal_mpi.Ibarrier(MPI_COMM_WORLD, &r) != MPI_SUCCESS) {
        pal_mpi.Barrier(MPI_COMM_WORLD);
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (pal_mpi.Test(&r, &done, MPI_STATUS_IGNORE) == MPI_SUCCESS && !done) {
        if (++polls < 1000)
            continue; /* most barriers end within microseconds */
        nanosleep(&pause_ts, NULL);
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (!hinted && hint_after > 0 &&
            (double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) * 1e-9 >= hint_after) {
            hinted = 1;
            fprintf(stderr,
                    "motor: the barrier before MPI_Finalize has waited %g s for the other ranks of MPI_COMM_WORLD; "
                    "in a job with programs that are not Motor programs (an MPMD job under MPICH with this "
                    "program first) set MOTOR_FINALIZE_BARRIER=0\n",
                    hint_after);
        }
    }
}

static void watchdog_arm(double seconds, int code, const char *why)
{
    pthread_t thread;
    pthread_attr_t attr;
    if (!(seconds > 0) || pthread_attr_init(&attr) != 0)
        return;
    g_watchdog.seconds = seconds;
    g_watchdog.code = code;
    g_watchdog.why = why;
    atomic_store(&g_watchdog.disarmed, 0);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_create(&thread, &attr, watchdog_main, NULL);
    pthread_attr_destroy(&attr);
}

int mp_finalize(int stuck_exit_code)
{
    int rc, flag = 0;
    if (atomic_load(&mp_g_state) != MP_STATE_READY)
        return mp_fail_state();
    mp_coll_cleanup();
    mp_persist_cleanup();
    mp_wild_clear();
    atomic_store(&mp_g_state, MP_STATE_FINALIZED);
    if (mp_g_sessions_only) { /* no MPI_Init: ending the sessions ends MPI (MPI-4.0 11.3.1) */
        mp_blocking_enter();
        mp_session_cleanup();
        mp_blocking_leave();
        return 0;
    }
    mp_session_cleanup();
    mp_blocking_enter();
    rc = pal_mpi.Finalized(&flag);
    /* Every rank enters MPI_Finalize together (it is collective anyway, MPI 4.0 §11.2.2):
     * over UCX 1.13's TCP transport a rank still closing its endpoints waits for a peer's
     * answer, and a peer that closed first waits in the launcher's barrier and never answers.
     * Measured on namespace hosts: without this barrier a 3-rank Hello and a 2-rank
     * point-to-point job each hung at exit three runs in a row; with it those pass.  It makes
     * the hang rarer, not impossible: a 3-rank job of collectives still hangs in 4 runs of 6,
     * and a C program with a barrier just before MPI_Finalize in 2 of 12.  Past the barrier
     * every rank has done its work, so a finalize that does not return is ended by the
     * watchdog, with the code the caller says the process would have ended with. */
    if (rc == MPI_SUCCESS && !flag) {
        /* Without the barrier (an MPMD job) a rank may enter MPI_Finalize long before others
         * end their work, so no watchdog can tell a stuck finalize from a slow peer. */
        if (finalize_barrier_wanted()) {
            finalize_barrier();
            watchdog_arm(env_seconds("MOTOR_FINALIZE_TIMEOUT", 30), stuck_exit_code & 0xff,
                         "MPI_Finalize has not returned although every rank entered it: the MPI library waits "
                         "for peers that already left (MPICH over UCX's TCP transport; MOTOR_FINALIZE_TIMEOUT)");
        }
        /* Test-only (FinalizeWatchdogTests): a finalize that never returns, without needing the
         * TCP hang above, so the watchdog's ending is tested every run. */
        if (getenv("MOTOR_TEST_FINALIZE_NEVER_RETURNS"))
            for (;;)
                pause();
        rc = pal_mpi.Finalize();
        atomic_store(&g_watchdog.disarmed, 1);
    }
    mp_blocking_leave();
    return MP_MPI_CHECK(rc, "MPI_Finalize");
}

int mp_abort(mp_comm_t comm, int errorcode)
{
    const comm_entry_t *ce;
    if (!pal_mpi.Abort)
        return mp_fail_state();
    ce = mp_comm_get(comm);
    /* What this rank wrote before aborting (its reason) must reach the user:
     * the launcher stops forwarding output once it learns of the abort. */
    pal_output_drain(2000);
    /* MPI_Abort asks the launcher to end the job, and waits for it: on a host whose
     * network is down the launcher is out of reach and the rank would wait forever
     * (MPICH's PMI client waits for the answer to its abort command).  The job is
     * already ending, so past $MOTOR_ABORT_TIMEOUT seconds (default 10; 0 waits
     * forever) this process ends itself with the abort's code, and its launcher
     * daemon, whose child has gone, ends too. */
    watchdog_arm(env_seconds("MOTOR_ABORT_TIMEOUT", 10), (errorcode & 0xff) ? errorcode & 0xff : 1,
                 "MPI_Abort has not ended this process: the launcher is out of reach (MOTOR_ABORT_TIMEOUT)");
    /* Abort is allowed even in odd states: it is how a failing rank ends the job. */
    return MP_MPI_CHECK(pal_mpi.Abort(ce ? ce->mpi : MPI_COMM_WORLD, errorcode), "MPI_Abort");
}
