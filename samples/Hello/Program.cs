// Hello: every rank reports itself; rank 0 prints the lines in rank order.
using System.MP;

var world = Communicator.World;
string line = $"Hello from rank {world.Rank} of {world.Size} on {Mpi.ProcessorName}" +
              $" ({(Mpi.IsHosted ? "motor VM" : "library mode")}, thread level {Mpi.ThreadLevel})";
if (world.Rank == 0)
{
    Console.WriteLine(line);
    var buffer = new char[512];
    for (int r = 1; r < world.Size; r++)
    {
        Status s = world.Recv(buffer, r, 0);
        Console.WriteLine(new string(buffer, 0, s.GetCount<char>()));
    }
    Console.WriteLine($"MPI library: {Mpi.LibraryVersion.Split('\n')[0]}");
}
else
{
    world.Send(line.AsSpan(), 0, 0);
}
Mpi.Shutdown();
