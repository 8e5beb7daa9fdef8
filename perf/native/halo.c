/* halo.c - the C floor of perf/Halo: the same ring halo exchange, in the same
 * four forms, timed the same way, so compare-halo.sh can print Motor / C.
 *
 *   mpiexec -n 2 halo-c [rounds=20000] [reps=7] [sizes=8,1024,65536]
 *
 * Each round every rank receives its two halos from its neighbours and sends
 * its two edges to them: with MPI_Irecv/MPI_Isend and one MPI_Waitall
 * (nonblocking), with persistent requests (MPI_Startall, MPI_Waitall), with
 * MPI_Neighbor_alltoall on a distributed graph (neighbor), and with its
 * persistent form MPI_Neighbor_alltoall_init (MPI 4 only; "-" elsewhere).
 * The forms alternate for reps blocks of rounds after a warm-up; rank 0
 * prints the median microseconds per round of each. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if MPI_VERSION >= 4
#define HAVE_PERSISTENT_NEIGHBOR 1
#else
#define HAVE_PERSISTENT_NEIGHBOR 0
#endif

enum { NONBLOCKING, PERSISTENT, NEIGHBOR, NEIGHBOR_PERSISTENT, FORMS };

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    return v[n / 2];
}

typedef struct halo {
    int left, right, bytes;
    char *send, *recv; /* [left | right] each */
    MPI_Comm graph;
    MPI_Request p2p[4], persistent[4], neighbor;
} halo_t;

static double run(halo_t *h, int form, int rounds)
{
    MPI_Request reqs[4];
    MPI_Status st[4]; /* not MPI_STATUSES_IGNORE: GCC reads that constant as an empty array */
    double t0;
    int b = h->bytes;
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (int i = 0; i < rounds; i++) {
        switch (form) {
        case NONBLOCKING:
            MPI_Irecv(h->recv, b, MPI_BYTE, h->left, 1, MPI_COMM_WORLD, &reqs[0]);
            MPI_Irecv(h->recv + b, b, MPI_BYTE, h->right, 2, MPI_COMM_WORLD, &reqs[1]);
            MPI_Isend(h->send, b, MPI_BYTE, h->left, 2, MPI_COMM_WORLD, &reqs[2]);
            MPI_Isend(h->send + b, b, MPI_BYTE, h->right, 1, MPI_COMM_WORLD, &reqs[3]);
            MPI_Waitall(4, reqs, st);
            break;
        case PERSISTENT:
            MPI_Startall(4, h->persistent);
            MPI_Waitall(4, h->persistent, st);
            break;
        case NEIGHBOR:
            MPI_Neighbor_alltoall(h->send, b, MPI_BYTE, h->recv, b, MPI_BYTE, h->graph);
            break;
        case NEIGHBOR_PERSISTENT:
            MPI_Start(&h->neighbor);
            MPI_Wait(&h->neighbor, st);
            break;
        }
    }
    return (MPI_Wtime() - t0) * 1e6 / rounds;
}

int main(int argc, char **argv)
{
    int rounds = argc > 1 ? atoi(argv[1]) : 20000, reps = argc > 2 ? atoi(argv[2]) : 7;
    char sizes[256] = "8,1024,65536";
    int rank, size, forms = HAVE_PERSISTENT_NEIGHBOR ? FORMS : NEIGHBOR_PERSISTENT;
    halo_t h;
    if (argc > 3)
        snprintf(sizes, sizeof sizes, "%s", argv[3]);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    h.left = (rank + size - 1) % size;
    h.right = (rank + 1) % size;
    {
        /* Weights of 1 rather than MPI_UNWEIGHTED, which GCC reads as an empty
         * array under Open MPI's headers; perf/Halo passes the same. */
        int nb[2] = { h.left, h.right }, w[2] = { 1, 1 };
        MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, nb, w, 2, nb, w, MPI_INFO_NULL, 0, &h.graph);
    }
    if (rank == 0) {
        printf("# halo exchange, %d ranks, C, %d rounds x %d blocks per form\n", size, rounds, reps);
        printf("| bytes per halo | nonblocking us/round | persistent us/round | neighbor us/round | neighbor persistent us/round |\n");
        printf("|---|---|---|---|---|\n");
    }
    for (char *tok = strtok(sizes, ","); tok; tok = strtok(NULL, ",")) {
        double t[FORMS][64];
        h.bytes = atoi(tok);
        h.send = calloc(2, (size_t)h.bytes + 1);
        h.recv = calloc(2, (size_t)h.bytes + 1);
        MPI_Recv_init(h.recv, h.bytes, MPI_BYTE, h.left, 1, MPI_COMM_WORLD, &h.persistent[0]);
        MPI_Recv_init(h.recv + h.bytes, h.bytes, MPI_BYTE, h.right, 2, MPI_COMM_WORLD, &h.persistent[1]);
        MPI_Send_init(h.send, h.bytes, MPI_BYTE, h.left, 2, MPI_COMM_WORLD, &h.persistent[2]);
        MPI_Send_init(h.send + h.bytes, h.bytes, MPI_BYTE, h.right, 1, MPI_COMM_WORLD, &h.persistent[3]);
#if HAVE_PERSISTENT_NEIGHBOR
        MPI_Neighbor_alltoall_init(h.send, h.bytes, MPI_BYTE, h.recv, h.bytes, MPI_BYTE, h.graph, MPI_INFO_NULL,
                                   &h.neighbor);
#endif
        for (int f = 0; f < forms; f++)
            run(&h, f, rounds / 4);
        for (int r = 0; r < reps && r < 64; r++)
            for (int f = 0; f < forms; f++)
                t[f][r] = run(&h, f, rounds);
        if (rank == 0) {
            printf("| %d | %.3f | %.3f | %.3f | ", h.bytes, median(t[NONBLOCKING], reps), median(t[PERSISTENT], reps),
                   median(t[NEIGHBOR], reps));
            if (forms == FORMS)
                printf("%.3f |\n", median(t[NEIGHBOR_PERSISTENT], reps));
            else
                printf("- |\n");
        }
        for (int i = 0; i < 4; i++)
            MPI_Request_free(&h.persistent[i]);
#if HAVE_PERSISTENT_NEIGHBOR
        MPI_Request_free(&h.neighbor);
#endif
        free(h.send);
        free(h.recv);
    }
    MPI_Comm_free(&h.graph);
    MPI_Finalize();
    return 0;
}
