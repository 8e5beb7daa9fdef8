// ObjectTransport: object graphs between ranks, with no serialization code.
// Rank 0 builds particles that share Species objects and pair up with each
// other (references going both ways), broadcasts the settings (OBcast),
// deals the particles out (OScatterBlocks: each rank gets its block as a graph of
// its own), every rank moves its particles, and rank 0 collects them
// (OGather) and checks them against the same steps done serially.  Finally
// a token object travels round the ring of ranks (OSend/ORecv).
//
// usage: mpiexec -n 3 motor ObjectTransport.dll [particles=1000] [steps=100]
using System.Globalization;
using System.MP;

int count = args.Length > 0 ? int.Parse(args[0], CultureInfo.InvariantCulture) : 1000;
int steps = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 100;
var world = Communicator.World;
int rank = world.Rank, size = world.Size;

Settings settings = world.OBcast(rank == 0 ? new Settings { Dt = 0.01, Steps = steps, Label = "ballistic" } : null, 0)!;
Particle[]? all = rank == 0 ? Particle.Make(count) : null;
Particle[] mine = world.OScatterBlocks(all, 0)!;

// Shared references survive inside a block: particles of one species point at one Species object.
int speciesObjects = mine.Select(p => p.Kind).Distinct(ReferenceEqualityComparer.Instance).Count();
foreach (Particle p in mine)
    for (int s = 0; s < settings.Steps; s++)
        p.Advance(settings.Dt);
Particle[]? moved = world.OGather(mine, 0);

// The token goes 0 -> 1 -> ... -> size-1 -> 0, each rank signing it.
Token token = rank == 0 ? new Token() : world.ORecv<Token>(rank - 1, 7)!;
token.Signatures = [.. token.Signatures, $"rank {rank} ({mine.Length} particles, {speciesObjects} species objects)"];
if (size > 1)
    world.OSend(token, (rank + 1) % size, 7);
if (rank == 0 && size > 1)
    token = world.ORecv<Token>(size - 1, 7)!;

if (rank != 0)
    return 0;
Particle[] serial = Particle.Make(count);
foreach (Particle p in serial)
    for (int s = 0; s < steps; s++)
        p.Advance(settings.Dt);
bool same = moved!.Length == serial.Length && moved.Zip(serial).All(x => x.First.X == x.Second.X && x.First.Vx == x.Second.Vx);
// A pair inside one block arrives linked both ways; a pair split between two
// blocks (each block is decoded on its own) arrives as two copies.
int Block(int i)
{
    int r = 0;
    for (int first = 0; first + count / size + (r < count % size ? 1 : 0) <= i; r++)
        first += count / size + (r < count % size ? 1 : 0);
    return r;
}
int kept = 0, split = 0;
bool pairs = Enumerable.Range(0, count).All(i =>
{
    int j = i ^ 1;
    Particle? partner = moved[i].Partner;
    if (j >= count)
        return partner is null;
    if (Block(i) != Block(j))
    {
        split++;
        return partner is not null && partner.Id == j && !ReferenceEquals(partner, moved[j]);
    }
    kept++;
    return ReferenceEquals(partner, moved[j]) && ReferenceEquals(moved[j].Partner, moved[i]);
});
double energy = moved.Sum(p => 0.5 * p.Kind!.Mass * p.Vx * p.Vx);
Console.WriteLine(string.Create(CultureInfo.InvariantCulture,
    $"{count} particles, {settings.Label}, {steps} steps of {settings.Dt} on {size} ranks: kinetic energy {energy:F4}"));
Console.WriteLine($"  partner links kept within blocks: {kept / 2} pairs; split between blocks (a copy on each side): {split / 2}");
foreach (string s in token.Signatures)
    Console.WriteLine($"  token signed by {s}");
Console.WriteLine(same && pairs && token.Signatures.Length == size
    ? "gathered particles match the serial computation"
    : "MISMATCH between the gathered particles and the serial computation");
return same && pairs && token.Signatures.Length == size ? 0 : 1;

/// <summary>Broadcast once: value fields travel, the marked string too.</summary>
[Transportable]
internal sealed class Settings
{
    public double Dt;
    public int Steps;

    [Transportable]
    public string? Label;
}

[Transportable]
internal sealed class Species
{
    [Transportable]
    public string? Name;

    public double Mass;
}

/// <summary>A particle: its species is shared, its partner points back at it.</summary>
[Transportable]
internal sealed class Particle
{
    public int Id;
    public double X, Vx;

    [Transportable]
    public Species? Kind;

    [Transportable]
    public Particle? Partner;

    public void Advance(double dt)
    {
        Vx -= 9.81 * dt * Kind!.Mass / (1 + Kind.Mass);
        X += Vx * dt;
    }

    internal static Particle[] Make(int n)
    {
        Species[] kinds = [new Species { Name = "light", Mass = 1 }, new Species { Name = "heavy", Mass = 4 }];
        var ps = new Particle[n];
        for (int i = 0; i < n; i++)
            ps[i] = new Particle { Id = i, X = i, Vx = i % 7 - 3, Kind = kinds[i % 2] };
        for (int i = 0; i + 1 < n; i += 2)
            (ps[i].Partner, ps[i + 1].Partner) = (ps[i + 1], ps[i]);
        return ps;
    }
}

[Transportable]
internal sealed class Token
{
    [Transportable]
    public string[] Signatures = [];
}
