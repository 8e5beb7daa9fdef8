// MotorApp: a first Motor program in F#.  Build it, then run it on 2 ranks:
//   dotnet build
//   mpiexec.mpich -n 2 motor bin/Debug/net10.0/MotorApp.dll     on the Motor VM
//   mpiexec.mpich -n 2 dotnet bin/Debug/net10.0/MotorApp.dll    on plain .NET
// (with Open MPI, use mpirun.openmpi instead of mpiexec.mpich).
open System.MP

/// What rank 0 shares.  Value fields always travel; a reference field travels when marked.
[<Transportable>]
type Run =
    { Steps: int
      [<Transportable>] Name: string }

[<EntryPoint>]
let main _ =
    let world = Communicator.World
    let rank, size = world.Rank, world.Size
    let left, right = (rank + size - 1) % size, (rank + 1) % size

    // Typed, zero-copy messages: every rank sends its square to the next rank round the ring.
    let fromLeft = Array.zeroCreate<int> 1
    world.SendRecv([| rank * rank |], right, 0, fromLeft, left, 0) |> ignore

    // A collective: the sum of all ranks, on every rank.
    let sum = world.Allreduce(int64 rank, Op.Sum)

    // Whole objects: rank 0 broadcasts a record; every other rank gets its own copy.
    let run =
        if rank = 0 then world.OBcast({ Steps = 10; Name = "first run" }, 0)
        else world.OBcast<Run>(0)

    let mode = if Mpi.IsHosted then "Motor VM" else "library mode"
    // One write per line: printfn writes a line in pieces, and the launcher would mix the pieces
    // of lines that several ranks print at the same time.
    stdout.WriteLine(sprintf "rank %d of %d (%s): %d from rank %d, sum of ranks %d, run '%s' of %d steps" rank size mode fromLeft[0] left sum run.Name run.Steps)
    0
