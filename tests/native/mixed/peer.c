/* peer.c - the C rank of the mixed-language MPMD jobs (MixedJobTests): world rank 0,
 * application 0, beside Motor ranks running the scenario mixed-world
 * (tests/Scenarios/Interop/MixedJobs.cs), which makes the same calls in the same order.
 * Prints PASS or FAIL lines; exits 1 when a check failed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>

#define N 1000

static int g_failures;

#define CHECK(cond, what)                                                  \
    do {                                                                   \
        if (!(cond)) {                                                     \
            printf("FAIL mixed-peer c: %s (line %d)\n", what, __LINE__);   \
            g_failures++;                                                  \
        }                                                                  \
    } while (0)

int main(int argc, char **argv)
{
    int me, n, appnum = -1, flag = 0, *attr = NULL;
    MPI_Init(&argc, &argv);
    if (argc == 3 && strcmp(argv[1], "apart") == 0) {
        /* "apart SECONDS": no call with the others; MPI_Finalize SECONDS after MPI_Init. */
        sleep((unsigned)atoi(argv[2]));
        MPI_Finalize();
        printf("PASS mixed-peer c apart\n");
        return 0;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag);
    if (flag)
        appnum = *attr;
    CHECK(me == 0 && appnum == 0 && n >= 2, "world rank 0, application 0, Motor ranks after it");

    int *apps = malloc(sizeof(int) * (size_t)n);
    MPI_Allgather(&appnum, 1, MPI_INT, apps, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 1; r < n; r++)
        CHECK(apps[r] > 0, "every other rank is of another application");

    /* Arrays both ways. */
    double d[N], sum = 0;
    int back[N];
    for (int m = 1; m < n; m++) {
        for (int i = 0; i < N; i++)
            d[i] = m + i * 0.25;
        MPI_Send(d, N, MPI_DOUBLE, m, 1, MPI_COMM_WORLD);
    }
    for (int m = 1; m < n; m++) {
        int exact = 1;
        MPI_Recv(&sum, 1, MPI_DOUBLE, m, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(sum == 1000.0 * m + 124875.0, "the sum a Motor rank sent back");
        MPI_Recv(back, N, MPI_INT, m, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < N; i++)
            exact &= back[i] == m * 1000 + i;
        CHECK(exact, "every int a Motor rank sent, exactly");
    }

    /* Collectives. */
    long long b[16];
    for (int i = 0; i < 16; i++)
        b[i] = (3LL << i) + i;
    MPI_Bcast(b, 16, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
    double one = me + 1.0, total = 0;
    MPI_Allreduce(&one, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == n * (n + 1) / 2.0, "Allreduce (sum of doubles)");
    int seven = me * 7, most = -1;
    MPI_Allreduce(&seven, &most, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    CHECK(most == (n - 1) * 7, "Allreduce (max of ints)");
    int mine = me * 10 + 1, *all = malloc(sizeof(int) * (size_t)n);
    MPI_Gather(&mine, 1, MPI_INT, all, 1, MPI_INT, 0, MPI_COMM_WORLD);
    for (int r = 0; r < n; r++)
        CHECK(all[r] == r * 10 + 1, "Gather at the C rank, the Motor ranks' values among them");
    int pair[2] = { me, me * me };
    MPI_Gather(pair, 2, MPI_INT, NULL, 0, MPI_INT, n - 1, MPI_COMM_WORLD);

    /* This program's own communicator. */
    MPI_Comm own;
    int size = 0, rsum = -1, rank = 0;
    MPI_Comm_split(MPI_COMM_WORLD, appnum, me, &own);
    MPI_Comm_size(own, &size);
    MPI_Comm_rank(own, &rank);
    MPI_Allreduce(&rank, &rsum, 1, MPI_INT, MPI_SUM, own);
    CHECK(size == 1 && rsum == 0, "the split by application number holds the C rank alone");
    MPI_Comm_free(&own);

    /* Too much for the Motor ranks' receive of 5 ints; then a message that fits. */
    int ten[10] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9 };
    for (int m = 1; m < n; m++) {
        int next = 4242 + m;
        MPI_Send(ten, 10, MPI_INT, m, 5, MPI_COMM_WORLD);
        MPI_Send(&next, 1, MPI_INT, m, 6, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    printf("%s mixed-peer c rank %d (%d ranks)\n", g_failures ? "FAIL" : "PASS", me, n);
    free(apps);
    free(all);
    MPI_Finalize();
    return g_failures ? 1 : 0;
}
