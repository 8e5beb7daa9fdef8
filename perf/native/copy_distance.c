/*
 * copy_distance.c - how fast memcpy copies a message by where its destination sits
 * relative to its source (the placement experiment, perf/README.md).  For each distance
 * (destination - source, bytes, modulo a page) prints the fastest of REPS copies of
 * BYTES, in microseconds: the minimum, so a busy machine delays the answer but hardly
 * changes it.
 *
 * usage: copy-distance [bytes=262144] [reps=200]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
    size_t bytes = argc > 1 ? (size_t)atol(argv[1]) : 262144;
    int reps = argc > 2 ? atoi(argv[2]) : 200;
    const int source = 256; /* past a page boundary, so negative distances fit */
    size_t span = ((bytes + 2 * 4096) / 4096 + 1) * 4096;
    char *from = aligned_alloc(4096, span), *to = aligned_alloc(4096, span);
    if (!from || !to || reps < 1) {
        fprintf(stderr, "copy-distance: no memory for %zu bytes, or reps < 1\n", bytes);
        return 1;
    }
    memset(from, 1, span);
    memset(to, 2, span);
    printf("# memcpy of %zu bytes, fastest of %d, by distance (destination - source) modulo 4096\n", bytes, reps);
    printf("# %-8s %10s\n", "distance", "us");
    for (int d = -64; d <= 128; d += 4) {
        double best = 1e30;
        for (int r = 0; r < reps; r++) {
            double t0 = now_us();
            memcpy(to + source + d, from + source, bytes);
            double t = now_us() - t0;
            if (t < best)
                best = t;
        }
        printf("%-10d %10.2f\n", d, best);
    }
    free(from);
    free(to);
    return 0;
}
