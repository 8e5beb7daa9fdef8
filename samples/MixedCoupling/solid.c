/* solid.c - the C half of the MixedCoupling sample: heat conduction in a solid wall along an
 * interface of CELLS cells, coupled every step to a fluid flowing past it, which a C# program
 * (Program.cs) computes in the same MPMD job:
 *
 *   mpiexec -n 1 coupling-solid : -n 2 motor MixedCoupling.dll [steps]
 *
 * Each program splits the world by application number (MPI_APPNUM) into a communicator of
 * its own, where its ranks share the work (each updates a block of the cells, MPI_Allgather
 * puts the field together), and the two are joined by an intercommunicator
 * (MPI_Intercomm_create); every step the two leaders swap their fields across it and each
 * broadcasts the other's inside its own communicator.  The C# side checks the coupled result
 * against the same model run serially. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CELLS 48

int main(int argc, char **argv)
{
    int world_rank, appnum = -1, flag = 0, *attr = NULL, rank, size, steps = argc > 1 ? atoi(argv[1]) : 200;
    double solid[CELLS], fluid[CELLS], next[CELLS];
    MPI_Comm own, inter;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &attr, &flag);
    if (flag)
        appnum = *attr;
    MPI_Comm_split(MPI_COMM_WORLD, appnum, world_rank, &own);
    MPI_Comm_rank(own, &rank);
    MPI_Comm_size(own, &size);
    if (appnum != 0 || CELLS % size != 0 || steps < 1) {
        fprintf(stderr, "coupling-solid: run it first in the job (application 0), on a number of ranks that divides %d\n",
                CELLS);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* The fluid program's leader is the first world rank past this program's. */
    MPI_Intercomm_create(own, 0, MPI_COMM_WORLD, size, 17, &inter);
    for (int i = 0; i < CELLS; i++)
        solid[i] = 0.0; /* the wall starts cold */
    int block = CELLS / size, lo = rank * block;
    for (int s = 0; s <= steps; s++) {
        /* The leaders swap fields across the intercommunicator; each shares what came in. */
        if (rank == 0)
            MPI_Sendrecv(solid, CELLS, MPI_DOUBLE, 0, 1, fluid, CELLS, MPI_DOUBLE, 0, 1, inter, MPI_STATUS_IGNORE);
        MPI_Bcast(fluid, CELLS, MPI_DOUBLE, 0, own);
        if (s == steps)
            break; /* the last swap hands over the final wall */
        for (int i = lo; i < lo + block; i++) {
            double left = solid[i > 0 ? i - 1 : i], right = solid[i < CELLS - 1 ? i + 1 : i];
            next[i] = solid[i] + 0.1 * (fluid[i] - solid[i]) + 0.05 * (left - 2.0 * solid[i] + right);
        }
        MPI_Allgather(next + lo, block, MPI_DOUBLE, solid, block, MPI_DOUBLE, own);
    }
    if (rank == 0) {
        double mean = 0;
        for (int i = 0; i < CELLS; i++)
            mean += solid[i];
        printf("solid (C, %d ranks): %d steps, mean wall temperature %.6f\n", size, steps, mean / CELLS);
    }
    MPI_Comm_free(&inter);
    MPI_Comm_free(&own);
    MPI_Finalize();
    return 0;
}
