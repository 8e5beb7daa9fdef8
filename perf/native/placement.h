/*
 * placement.h - where the C floor's message buffers live (the placement
 * experiment of perf/README.md and perf/compare-placement.sh).
 *
 * By default each buffer comes from malloc, as in osu_latency/osu_bw: glibc serves these sizes
 * from their own mapping, so the data starts 16 bytes into a page.  With
 * BENCH_BUFFER_OFFSETS=S,R the send buffer starts S bytes and the receive buffer R bytes
 * past a page boundary instead, e.g. the page offsets at which a .NET program's arrays
 * happen to start (perf/Bandwidth and samples/PingPong print theirs with BENCH_BUFFER_REPORT=1).
 */
#ifndef MOTOR_PERF_PLACEMENT_H
#define MOTOR_PERF_PLACEMENT_H

#include <stdio.h>
#include <stdlib.h>

/* A buffer of n bytes (which: 0 send, 1 receive); exits on a malformed setting. */
static char *bench_buffer(size_t n, int which)
{
    const char *spec = getenv("BENCH_BUFFER_OFFSETS");
    long off[2];
    char *base;
    if (!spec || !*spec)
        return malloc(n ? n : 1);
    if (sscanf(spec, "%ld,%ld", &off[0], &off[1]) != 2 || off[0] < 0 || off[0] >= 4096 || off[1] < 0 ||
        off[1] >= 4096) {
        fprintf(stderr, "BENCH_BUFFER_OFFSETS='%s' is not S,R with 0 <= S, R < 4096\n", spec);
        exit(2);
    }
    /* Never freed: the program ends after its sweep. */
    base = aligned_alloc(4096, ((n + (size_t)off[which]) / 4096 + 1) * 4096);
    return base ? base + off[which] : NULL;
}

/* Frees a buffer of bench_buffer (malloc'd ones only). */
static void bench_buffer_free(char *p)
{
    const char *spec = getenv("BENCH_BUFFER_OFFSETS");
    if (!spec || !*spec)
        free(p);
}

#endif
