/* mpcore_tests.h - what the mpcore test groups share: the core white-box (every mp_* function,
 * linked from the static core), CHECK, the last error's text, and each group's entry point
 * (main.c lists the groups; tests/native/CMakeLists.txt makes each a ctest entry). */
#ifndef MOTOR_MPCORE_TESTS_H
#define MOTOR_MPCORE_TESTS_H

#include "core.h"
#include "comms.h" /* mp_comm_count */
#include "mpcore_checked.h" /* the checked calls of C callers */
#include "wildcard.h" /* mp_g_wild_count (wild_records) */
#include "requests.h" /* mp_adopt_request (full_table); the slot table's size comes with it */

#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <threads.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../check.h"

/* 1 when the last error's text contains word. */
int last_error_mentions(const char *word);
/* 1 when the last error's text is text. */
int last_error_is(const char *text);
/* A GC scan's report (mp_gc_scan): counts the objects reported and remembers the last slot. */
extern int g_reported;
extern void **g_last_slot;
void count_report(void **slot, void *ctx);
/* The objects a GC mark that calls no MPI reports now (every request table's and list's). */
int gc_objects_reported(void);
/* The library's MPI_Test while a test's stand-in replaces it in pal_mpi. */
extern __typeof__(MPI_Test) *g_real_test;
/* Stand-ins for MPI refusing a post (MPI_ERR_OTHER). */
int refusing_send(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request *r);
int refusing_recv(void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request *r);

/* lifecycle.c */
void test_error_table(void);
void test_mpi_check_evaluates_once(void);
void test_init_fails(void);
void test_before_init(void);
void test_table(void);
void test_environment(void);
void test_after_finalize(void);
/* p2p.c */
void test_arguments(void);
void test_self_messages(void);
void test_tokens(void);
void test_single_tests(void);
void test_blocking_calls(void);
void test_vector_state(void);
void test_checked_entries(void);
void test_two_ranks(void);
/* lists.c */
void test_request_lists(void);
void test_full_table(void);
void test_list_ranges(void);
/* requests.c */
void test_inflight_table(void);
void test_persistent(void);
void test_set_handles(void);
void test_waitall_batches(void);
void test_wild_records(void);
void test_wild_records_many(void);
void test_table_threads(void);
void test_orphan_registry(void);
void test_orphan_registry_no_memory(void);
void test_sweep_threads(void);
/* failures.c */
void test_error_paths(void);
void test_failed_outputs(void);
void test_refused_posts(void);
void test_sends_without_statuses(void);
void test_failed_ranges(void);
/* files.c */
void test_files(void);
/* comms.c */
void test_comms(void);
void test_spawn_multiple_checks(void);
void test_topologies(void);
/* rma.c */
void test_win_accumulate(void);

#endif
