/*
 * main.c - test_mpcore: mpcore's C ABI on one process (MPI singleton): the error
 * table, argument checks before anything is sent, self messaging, truncation
 * without writes outside the buffer, orphans, the in-flight table as the GC
 * extension sees it, the request table under threads, and the lifecycle states.
 * One group per ctest entry; the groups live in files by MPI chapter beside this
 * one (mpcore_tests.h), and this file holds what they share and the list of groups.
 */
#include "mpcore_tests.h"

int g_failed, g_passed;

void check_detail(char *buf, int cap)
{
    int n = snprintf(buf, (size_t)cap, "last error: ");
    mp_last_error(NULL, buf + n, cap - n);
}

int last_error_mentions(const char *word)
{
    char m[512];
    mp_last_error(NULL, m, (int)sizeof m);
    return strstr(m, word) != NULL;
}

/* The last error after a call that succeeded: the text of the failure before it, untouched. */
int last_error_is(const char *text)
{
    char m[512];
    mp_last_error(NULL, m, (int)sizeof m);
    return strcmp(m, text) == 0;
}


int g_reported;
void **g_last_slot;
void count_report(void **slot, void *ctx)
{
    (void)ctx;
    g_reported++;
    g_last_slot = slot;
}

int gc_objects_reported(void)
{
    g_reported = 0;
    /* Concurrent: the mark calls no MPI, so what it reports does not depend on whether MPI has
     * finished an operation by now (a mark that may call MPI forgets the finished ones). */
    (void)mp_gc_scan(MP_GC_MARK | MP_GC_CONCURRENT, count_report, NULL);
    return g_reported;
}

__typeof__(MPI_Test) *g_real_test;

int refusing_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
                         MPI_Request *r)
{
    (void)buf, (void)count, (void)type, (void)dest, (void)tag, (void)comm, (void)r;
    return MPI_ERR_OTHER;
}
int refusing_recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *r)
{
    (void)buf, (void)count, (void)type, (void)source, (void)tag, (void)comm, (void)r;
    return MPI_ERR_OTHER;
}

/* The groups, each a ctest entry of its own (tests/native/CMakeLists.txt):
 * "test_mpcore GROUP" runs one, with MPI initialized around it when it needs
 * it; no argument runs them all in one process, but for two_ranks. */
static const struct group {
    const char *name;
    void (*run)(void);
    int needs_mpi; /* 1: runs inside MPI; 2: also, only when named (it needs two ranks); 3: only when named, outside */
} k_groups[] = {
    { "error_table", test_error_table, 0 },
    { "table", test_table, 0 },
    { "before_init", test_before_init, 0 },
    { "init_fails", test_init_fails, 3 }, /* only when named: it makes its own init */
    { "mpi_check", test_mpi_check_evaluates_once, 0 },
    { "environment", test_environment, 1 },
    { "arguments", test_arguments, 1 },
    { "self_messages", test_self_messages, 1 },
    { "tokens", test_tokens, 1 },
    { "single_tests", test_single_tests, 1 },
    { "blocking_calls", test_blocking_calls, 1 },
    { "checked_entries", test_checked_entries, 1 },
    { "vector_state", test_vector_state, 1 },
    { "request_lists", test_request_lists, 1 },
    { "list_ranges", test_list_ranges, 1 },
    { "full_table", test_full_table, 1 },
    { "inflight_table", test_inflight_table, 1 },
    { "waitall_batches", test_waitall_batches, 1 },
    { "set_handles", test_set_handles, 1 },
    { "wild_records", test_wild_records, 1 },
    { "wild_records_many", test_wild_records_many, 1 },
    { "table_threads", test_table_threads, 1 },
    { "orphan_registry", test_orphan_registry, 1 },
    { "orphan_no_memory", test_orphan_registry_no_memory, 1 },
    { "sweep_threads", test_sweep_threads, 1 },
    { "win_accumulate", test_win_accumulate, 1 },
    { "comms", test_comms, 1 },
    { "spawn_multiple", test_spawn_multiple_checks, 1 },
    { "persistent", test_persistent, 1 },
    { "topologies", test_topologies, 1 },
    { "files", test_files, 1 },
    { "error_paths", test_error_paths, 1 },
    { "failed_outputs", test_failed_outputs, 1 },
    { "refused_posts", test_refused_posts, 1 },
    { "sends_without_statuses", test_sends_without_statuses, 1 },
    { "failed_ranges", test_failed_ranges, 1 },
#if PAL_MPI_BUILD_ABI == 2 /* Open MPI */
    { "two_ranks", test_two_ranks, 2 }, /* only when named: it needs two ranks */
#endif
    { "after_finalize", test_after_finalize, 1 },
};

int main(int argc, char **argv)
{
    int provided = -1, ran = 0, initialized = 0;
    const int n = (int)(sizeof k_groups / sizeof *k_groups);
    for (int i = 0; i < n; i++) {
        if (argc > 1 ? strcmp(argv[1], k_groups[i].name) != 0 : k_groups[i].needs_mpi >= 2)
            continue;
        if ((k_groups[i].needs_mpi == 1 || k_groups[i].needs_mpi == 2) && !initialized) {
            CHECK(mp_init(MP_THREAD_FUNNELED, &provided) == 0);
            CHECK(provided >= MP_THREAD_FUNNELED);
            initialized = 1;
        }
        k_groups[i].run();
        ran++;
    }
    if (argc > 1 && ran == 0) {
        fprintf(stderr, "test_mpcore: no group '%s'\n", argv[1]);
        return 2;
    }
    /* A group that initialized MPI finalizes it (after_finalize did already). */
    if (initialized && mp_state() == MP_STATE_READY)
        CHECK(mp_finalize(0) == 0);
    printf("test_mpcore%s%s: %d passed, %d failed\n", argc > 1 ? " " : "", argc > 1 ? argv[1] : "", g_passed, g_failed);
    return g_failed ? 1 : 0;
}
