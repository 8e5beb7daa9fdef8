// NativeAot: a rank compiled ahead of time (dotnet publish: PublishAot), with no JIT at run time.
// Typed messages (Send/Recv of spans, Allreduce) and object transport (OBcast, OSend/ORecv of a
// graph with cycles, a struct array and an enum, OScatter/OGather, and List, HashSet and
// Dictionary fields) work as under the JIT: the
// System.MP source generator wrote each [Transportable] type's codec at compile time.  Each rank
// checks what it received and prints one line; rank 0 prints the verdict.
//
// usage: mpiexec -n 2 ./NativeAot        (after dotnet publish -c Release -r linux-x64)
using System.Globalization;
using System.MP;
using System.Runtime.CompilerServices;

var world = Communicator.World;
int rank = world.Rank, size = world.Size;
var failures = new List<string>();
void Check(bool ok, string what)
{
    if (!ok)
        failures.Add(what);
}

// Typed messages: a span of doubles round the ring, and a reduction.
double[] values = Enumerable.Range(0, 1000).Select(i => rank * 1000.0 + i).ToArray();
if (size > 1)
{
    var received = new double[values.Length];
    int next = (rank + 1) % size, previous = (rank + size - 1) % size;
    if (rank % 2 == 0)
    {
        world.Send<double>(values, next, 1);
        world.Recv<double>(received, previous, 1);
    }
    else
    {
        world.Recv<double>(received, previous, 1);
        world.Send<double>(values, next, 1);
    }
    Check(received[0] == previous * 1000.0 && received[^1] == previous * 1000.0 + 999, "ring of doubles");
}
long sum = world.Allreduce((long)rank + 1, Op.Sum);
Check(sum == (long)size * (size + 1) / 2, $"Allreduce sum {sum}");

// Object transport: a broadcast graph with a cycle, a struct array and an enum.
Mesh? mesh = rank == 0 ? Mesh.Make(64) : null;
mesh = world.OBcast(mesh, 0);
Check(mesh is not null && mesh.Verify(64), "OBcast mesh");

// A point-to-point graph: each rank sends rank 0 a report that points back at itself.
if (rank != 0)
{
    world.OSend(new Report { Rank = rank, Label = $"rank {rank}", Cells = mesh!.Cells, Status = CellState.Done }.Linked(), 0, 2);
}
else
{
    for (int r = 1; r < size; r++)
    {
        Report? report = world.ORecv<Report>(r, 2);
        Check(report is { Self: not null } && ReferenceEquals(report.Self, report) && report.Rank == r &&
              report.Label == $"rank {r}" && report.Status == CellState.Done && report.Cells!.Length == 64, $"report from rank {r}");
    }
}

// Scatter and gather: blocks of cells.
Cell[]? all = rank == 0 ? Mesh.Make(10 * size).Cells : null;
Cell[] mine = world.OScatterBlocks(all, 0)!;
for (int i = 0; i < mine.Length; i++)
    mine[i].Value *= 2;
Cell[]? back = world.OGather(mine, 0);
if (rank == 0)
    Check(back!.Length == 10 * size && back.Select((c, i) => c.Value == 2.0 * i && c.Id == i).All(ok => ok), "OScatter/OGather cells");

// Collection fields: every rank sends rank 0 a catalog of its own (lists, a set, a dictionary,
// an array of lists, one list held by two fields).
if (rank != 0)
{
    world.OSend(Catalog.Make(rank), 0, 3);
}
else
{
    for (int r = 1; r < size; r++)
        Check(world.ORecv<Catalog>(r, 3) is { } catalog && catalog.Verify(r), $"catalog from rank {r}");
}

string mode = RuntimeFeature.IsDynamicCodeSupported ? "JIT" : "NativeAOT";
string line = failures.Count == 0
    ? string.Create(CultureInfo.InvariantCulture, $"rank {rank} of {size} ({mode}): typed messages and object transport OK")
    : $"rank {rank} of {size} ({mode}): FAILED {string.Join("; ", failures)}";
Console.WriteLine(line);
int failed = world.Allreduce(failures.Count, Op.Sum);
if (rank == 0)
    Console.WriteLine(failed == 0 ? $"all {size} ranks passed" : $"{failed} checks failed");
Mpi.Shutdown();
return failed == 0 ? 0 : 1;

/// <summary>What a cell is doing.</summary>
internal enum CellState : byte { Idle, Busy, Done }

/// <summary>A cell: a struct with a followed reference (its label).</summary>
[Transportable]
internal struct Cell
{
    public int Id;
    public double Value;
    public CellState State;

    [Transportable]
    public string? Label;
}

/// <summary>A mesh: an array of cells, and a ring of nodes (a cycle).</summary>
[Transportable]
internal sealed class Mesh
{
    [Transportable]
    public Cell[]? Cells;

    [Transportable]
    public Node? Ring;

    public static Mesh Make(int n)
    {
        var cells = new Cell[n];
        for (int i = 0; i < n; i++)
            cells[i] = new Cell { Id = i, Value = i, State = (CellState)(i % 3), Label = i % 4 == 0 ? $"cell {i}" : null };
        var first = new Node { Index = 0 };
        Node last = first;
        for (int i = 1; i < 8; i++)
            last = last.Next = new Node { Index = i };
        last.Next = first;
        return new Mesh { Cells = cells, Ring = first };
    }

    public bool Verify(int n)
    {
        if (Cells is not { } cells || cells.Length != n)
            return false;
        for (int i = 0; i < n; i++)
            if (cells[i].Id != i || cells[i].Value != i || cells[i].State != (CellState)(i % 3) || cells[i].Label != (i % 4 == 0 ? $"cell {i}" : null))
                return false;
        Node? node = Ring;
        for (int i = 0; i < 8; i++, node = node.Next)
            if (node is null || node.Index != i)
                return false;
        return ReferenceEquals(node, Ring);
    }
}

/// <summary>A node of a ring.</summary>
[Transportable]
internal sealed class Node
{
    public int Index;

    [Transportable]
    public Node? Next;
}

/// <summary>A report that points back at itself, with a readonly field and a private one.</summary>
[Transportable]
internal sealed class Report
{
    public int Rank;
    public CellState Status;

    [Transportable]
    public string? Label;

    [Transportable]
    public Cell[]? Cells;

    [Transportable]
    private Report? _self;

    public Report? Self => _self;

    public Report Linked()
    {
        _self = this;
        return this;
    }
}

/// <summary>
/// Collection fields: a list of structs, a set, a dictionary whose values form a cycle, an array
/// of lists, and the same list behind two fields (it arrives as one list).
/// </summary>
[Transportable]
internal sealed class Catalog
{
    [Transportable]
    public List<Cell>? Cells;

    [Transportable]
    public HashSet<int>? Ids;

    [Transportable]
    public Dictionary<string, Node>? ByName;

    [Transportable]
    public List<string>[]? Shelves;

    [Transportable]
    public List<Cell>? Same;

    public static Catalog Make(int seed)
    {
        var cells = new List<Cell>();
        for (int i = 0; i < 5 + seed; i++)
            cells.Add(new Cell { Id = seed * 100 + i, Value = i * 0.5, State = CellState.Busy, Label = $"c{i}" });
        var self = new Node { Index = seed };
        self.Next = self;
        return new Catalog
        {
            Cells = cells,
            Ids = [.. cells.Select(c => c.Id)],
            ByName = new() { ["self"] = self, ["other"] = new Node { Index = seed + 1, Next = self } },
            Shelves = [["a", "b"], [], [$"rank {seed}"]],
            Same = cells,
        };
    }

    public bool Verify(int seed)
    {
        Catalog expected = Make(seed);
        return Cells is { } cells && ReferenceEquals(cells, Same) && cells.Count == expected.Cells!.Count
            && cells.Zip(expected.Cells).All(p => p.First.Id == p.Second.Id && p.First.Value == p.Second.Value && p.First.State == p.Second.State && p.First.Label == p.Second.Label)
            && Ids is { } ids && ids.SetEquals(expected.Ids!)
            && ByName is { Count: 2 } byName && byName.TryGetValue("self", out Node? self) && byName.TryGetValue("other", out Node? other)
            && self.Index == seed && ReferenceEquals(self.Next, self) && other.Index == seed + 1 && ReferenceEquals(other.Next, self)
            && Shelves is { Length: 3 } shelves && shelves.Zip(expected.Shelves!).All(p => p.First.SequenceEqual(p.Second));
    }
}
