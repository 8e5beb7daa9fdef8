// MotorApp: a first Motor program.  Build it, then run it on 2 ranks:
//   dotnet build
//   mpiexec.mpich -n 2 motor bin/Debug/net10.0/MotorApp.dll     on the Motor VM
//   mpiexec.mpich -n 2 dotnet bin/Debug/net10.0/MotorApp.dll    on plain .NET
// (with Open MPI, use mpirun.openmpi instead of mpiexec.mpich).
using System.MP;

var world = Communicator.World;
int rank = world.Rank, size = world.Size;
int left = (rank + size - 1) % size, right = (rank + 1) % size;

// Typed, zero-copy messages: every rank sends its square to the next rank round the ring.
int fromLeft = world.SendRecv(rank * rank, right, 0, left, 0);

// A collective: the sum of all ranks, on every rank.
long sum = world.Allreduce((long)rank, Op.Sum);

// Whole objects: every rank takes rank 0's Run (what the others pass is ignored; each gets its own copy).
Run run = rank == 0 ? new Run { Name = "first run", Steps = 10 } : new Run();
run = world.OBcast(run, root: 0);

Console.WriteLine($"rank {rank} of {size} ({(Mpi.IsHosted ? "Motor VM" : "library mode")}): " +
                  $"{fromLeft} from rank {left}, sum of ranks {sum}, run '{run.Name}' of {run.Steps} steps");

/// <summary>What rank 0 shares.  Value fields always travel; a reference field travels when marked.</summary>
[Transportable]
sealed class Run
{
    [Transportable] public string Name = "";
    public int Steps;
}
