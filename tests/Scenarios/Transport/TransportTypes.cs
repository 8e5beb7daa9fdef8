using System.MP;

namespace Scenarios;

// Types for the object-transport tests.  This file is compiled into both the
// Scenarios program (multi-rank) and System.MP.Tests (in-process).

/// <summary>Motor's Figure 5: array and next are followed, next2 is not.</summary>
[Transportable]
public class LinkedList
{
    [Transportable]
    public int[]? array;

    [Transportable]
    public LinkedList? next;

    public LinkedList? next2;

    public int value;
}

/// <summary>A doubly-linked node: prev/next form cycles.</summary>
[Transportable]
public class DNode
{
    public int Id;

    [Transportable]
    public DNode? Prev;

    [Transportable]
    public DNode? Next;
}

/// <summary>Two followed fields of any type.</summary>
[Transportable]
public class Pair
{
    [Transportable]
    public object? A;

    [Transportable]
    public object? B;
}

public enum Color : byte { Red, Green, Blue = 200 }

/// <summary>A base class with a private field and a followed reference.</summary>
[Transportable]
public class Shape
{
    private int _serial;
    public double X;

    [Transportable]
    public string? Name;

    public int Serial => _serial;

    public void SetSerial(int s) => _serial = s;
}

[Transportable]
public class Circle : Shape
{
    public double Radius;
    public Color Fill;
    public readonly long Stamp;

    public Circle()
    {
    }

    public Circle(long stamp) => Stamp = stamp;
}

/// <summary>An unmarked struct: travels as a value when nested.</summary>
public struct Inner
{
    public long A;
    public byte B;
    public bool Flag;
}

[Transportable]
public struct Vec3
{
    public double X, Y, Z;

    public Vec3(double x, double y, double z)
    {
        X = x;
        Y = y;
        Z = z;
    }
}

/// <summary>Nested structs, no references: travels as one block (a particle).</summary>
[Transportable]
public struct Body
{
    public Vec3 Pos;
    public Vec3 Vel;
    public Inner In;
    public int Id;
}

/// <summary>A struct with a followed reference and an unfollowed one.</summary>
[Transportable]
public struct Tagged
{
    public int Id;

    [Transportable]
    public string? Label;

    public object? Dropped;
    public Vec3 Where;
}

/// <summary>Value fields of many kinds inside a class, struct fields with references, a struct array.</summary>
[Transportable]
public class Holder
{
    public Tagged One;

    [Transportable]
    public Tagged[]? Many;

    public DateTime When;
    public decimal Money;
    public Color Hue;
    public int? Maybe;
    public nint Native;
    public char Letter;
    public Guid Id;
}

[Transportable]
public class Box<T>
{
    [Transportable]
    public T? Value;
}

/// <summary>Not marked: may not travel.</summary>
public class Plain
{
    public int X;
}

public class UnmarkedBase
{
    public int B;
}

/// <summary>Marked, but its base class is not (the run-time refusal is tested; the generator reports it at compile time).</summary>
#pragma warning disable MOTOR002
[Transportable]
public class DerivedOfUnmarked : UnmarkedBase
{
    public int D;
}
#pragma warning restore MOTOR002

/// <summary>A key whose hash code and equality come from its fields, one of them a followed reference.</summary>
[Transportable]
public sealed class Key
{
    public int A;

    [Transportable]
    public string? B;

    public override bool Equals(object? obj) => obj is Key k && k.A == A && k.B == B;

    public override int GetHashCode() => HashCode.Combine(A, B);
}

/// <summary>
/// Fields of every collection type that travels: lists, sets and dictionaries of values, strings,
/// structs and [Transportable] objects, an array of lists, empty and null ones, a collection and
/// an object reached twice, and a cycle back to the bag through a dictionary's list.
/// </summary>
[Transportable]
public class Bag
{
    public int Stamp;
    [Transportable] public List<int>? Ints;
    [Transportable] public List<Shape?>? Shapes;
    [Transportable] public List<string?>? Strings;
    [Transportable] public Dictionary<string, string>? Names;
    [Transportable] public Dictionary<int, Circle>? CirclesById;
    [Transportable] public HashSet<long>? Longs;
    [Transportable] public HashSet<string>? Words;
    [Transportable] public List<int>? Empty;
    [Transportable] public Dictionary<string, string>? EmptyNames;
    [Transportable] public List<int>? Missing;
    [Transportable] public HashSet<long>? MissingSet;
    [Transportable] public List<int>[]? Lists;
    [Transportable] public List<Vec3>? Points;
    [Transportable] public List<Tagged>? Tags;
    [Transportable] public List<Color>? Colors;
    [Transportable] public Dictionary<Key, int>? ByKey;
    [Transportable] public Dictionary<int, List<Bag>>? Children;
}

/// <summary>Builders and checkers shared by the tests.</summary>
public static class TransportSamples
{
    /// <summary>A Figure 5 list of <paramref name="n"/> nodes; node i holds [i, i+1, ...] of length i % 4 and a next2 link.</summary>
    public static LinkedList Figure5(int n)
    {
        LinkedList? head = null;
        for (int i = n - 1; i >= 0; i--)
        {
            var a = new int[i % 4];
            for (int j = 0; j < a.Length; j++)
                a[j] = i + j;
            head = new LinkedList { array = a, next = head, next2 = head, value = i };
        }
        return head!;
    }

    /// <summary>Null when the list is Figure5(n) with every next2 null; otherwise what differs.</summary>
    public static string? CheckFigure5(LinkedList? head, int n)
    {
        int i = 0;
        for (LinkedList? node = head; node is not null; node = node.next, i++)
        {
            if (node.value != i)
                return $"node {i} has value {node.value}";
            if (node.next2 is not null)
                return $"node {i}: next2 is not null";
            if (node.array is null || node.array.Length != i % 4)
                return $"node {i}: array length {node.array?.Length}";
            for (int j = 0; j < node.array.Length; j++)
                if (node.array[j] != i + j)
                    return $"node {i}: array[{j}] = {node.array[j]}";
        }
        return i == n ? null : $"{i} nodes, expected {n}";
    }

    /// <summary>A ring of <paramref name="n"/> doubly-linked nodes.</summary>
    public static DNode Ring(int n)
    {
        var nodes = new DNode[n];
        for (int i = 0; i < n; i++)
            nodes[i] = new DNode { Id = i };
        for (int i = 0; i < n; i++)
        {
            nodes[i].Next = nodes[(i + 1) % n];
            nodes[i].Prev = nodes[(i + n - 1) % n];
        }
        return nodes[0];
    }

    public static string? CheckRing(DNode? first, int n)
    {
        DNode? node = first;
        for (int i = 0; i < n; i++)
        {
            if (node is null || node.Id != i)
                return $"node {i} is {node?.Id}";
            if (node.Next?.Prev != node || node.Prev?.Next != node)
                return $"node {i}: prev/next do not point back";
            node = node.Next;
        }
        return node == first ? null : "the ring does not close on the first node";
    }

    /// <summary>A bag with every field set (<see cref="Bag"/>); <paramref name="seed"/> varies its contents.</summary>
    public static Bag MakeBag(int seed = 0)
    {
        var shared = new Circle(seed + 1) { Name = "shared", Radius = 2.5 };
        var ints = new List<int>();
        for (int i = 0; i < 5 + seed % 7; i++)
            ints.Add(i * i - seed);
        var bag = new Bag
        {
            Stamp = seed,
            Ints = ints,
            Shapes = [shared, null, new Shape { X = seed }, shared],
            Strings = ["α", null, "", "s" + seed],
            Names = new() { ["one"] = "eins", ["two"] = "zwei", ["seed"] = seed.ToString(System.Globalization.CultureInfo.InvariantCulture) },
            CirclesById = new() { [7] = shared, [-1] = new Circle(9) { Name = "nine" } },
            Longs = [long.MinValue, -1, seed + 1, long.MaxValue],
            Words = ["x", "y", "z" + seed],
            Empty = [],
            EmptyNames = [],
            Lists = [ints, [], null!, [seed, seed + 1]],
            Points = [new Vec3(1, 2, 3), new Vec3(-seed, 0, 0.5)],
            Tags = [new Tagged { Id = 1, Label = "one", Dropped = "gone" }, new Tagged { Id = 2, Where = new Vec3(4, 5, 6) }],
            Colors = [Color.Blue, Color.Red, (Color)7],
            ByKey = new() { [new Key { A = 1, B = "x" }] = 5, [new Key { A = 1, B = "y" }] = 6, [new Key { A = 2 }] = 7 },
        };
        bag.Children = new() { [1] = [bag], [2] = [] };
        return bag;
    }

    /// <summary>Null when <paramref name="b"/> is <see cref="MakeBag"/>(<paramref name="seed"/>) as it arrives: equal contents, shared references and the cycle kept; otherwise what differs.</summary>
    public static string? CheckBag(Bag? b, int seed = 0)
    {
        if (b is null)
            return "null bag";
        Bag e = MakeBag(seed);
        if (b.Stamp != seed)
            return $"Stamp = {b.Stamp}";
        if (b.Ints is null || !b.Ints.SequenceEqual(e.Ints!))
            return $"Ints = {Show(b.Ints)}";
        if (b.Shapes is not { Count: 4 } || b.Shapes[0] is not Circle c || c.Name != "shared" || c.Radius != 2.5 || c.Stamp != seed + 1 ||
            b.Shapes[1] is not null || b.Shapes[2]?.GetType() != typeof(Shape) || b.Shapes[2]!.X != seed || !ReferenceEquals(b.Shapes[3], c))
            return "Shapes differ";
        if (b.Strings is null || !b.Strings.SequenceEqual(e.Strings!))
            return $"Strings = {Show(b.Strings)}";
        if (!SameMap(b.Names, e.Names) || !SameMap(b.EmptyNames, e.EmptyNames))
            return "Names differ";
        if (b.CirclesById is not { Count: 2 } || !ReferenceEquals(b.CirclesById[7], c) || b.CirclesById[-1].Name != "nine" ||
            !b.CirclesById.Keys.SequenceEqual(e.CirclesById!.Keys))
            return "CirclesById differs";
        if (b.Longs is null || !b.Longs.SetEquals(e.Longs!) || b.Longs.Count != 4 || b.Words is null || !b.Words.SetEquals(e.Words!))
            return "sets differ";
        if (b.Empty is not { Count: 0 } || b.Missing is not null || b.MissingSet is not null)
            return "empty or null collections differ";
        if (b.Lists is not { Length: 4 } || !ReferenceEquals(b.Lists[0], b.Ints) || b.Lists[1] is not { Count: 0 } || b.Lists[2] is not null ||
            !b.Lists[3].SequenceEqual([seed, seed + 1]))
            return "Lists differ";
        if (b.Points is null || !b.Points.SequenceEqual(e.Points!))
            return "Points differ";
        if (b.Tags is not { Count: 2 } || b.Tags[0].Label != "one" || b.Tags[0].Dropped is not null || b.Tags[1].Where.Z != 6 || b.Tags[1].Label is not null)
            return "Tags differ";
        if (b.Colors is null || !b.Colors.SequenceEqual(e.Colors!))
            return "Colors differ";
        if (b.ByKey is not { Count: 3 } || b.ByKey.Comparer != EqualityComparer<Key>.Default ||
            !b.ByKey.TryGetValue(new Key { A = 1, B = "x" }, out int x) || x != 5 ||
            !b.ByKey.TryGetValue(new Key { A = 1, B = "y" }, out int y) || y != 6 || b.ByKey[new Key { A = 2 }] != 7)
            return "ByKey differs (keys hashed before their fields were filled?)";
        if (b.Children is not { Count: 2 } || b.Children[1] is not { Count: 1 } || !ReferenceEquals(b.Children[1][0], b) || b.Children[2].Count != 0)
            return "Children differ (the cycle back to the bag)";
        return null;
    }

    private static bool SameMap(Dictionary<string, string>? a, Dictionary<string, string>? b) =>
        a is not null && b is not null && a.Count == b.Count && a.Keys.SequenceEqual(b.Keys) && a.All(kv => b[kv.Key] == kv.Value);

    private static string Show<T>(IEnumerable<T>? items) => items is null ? "null" : "[" + string.Join(", ", items) + "]";

    public static Holder MakeHolder() => new()
    {
        One = new Tagged { Id = 7, Label = "seven", Dropped = "gone", Where = new Vec3(1, 2, 3) },
        Many = [new Tagged { Id = 1, Label = "α" }, new Tagged { Id = 2, Label = null, Where = new Vec3(-1, 0, 1) }],
        When = new DateTime(2024, 2, 29, 12, 0, 0, DateTimeKind.Utc),
        Money = 12345.6789m,
        Hue = Color.Blue,
        Maybe = 42,
        Native = -5,
        Letter = 'ж',
        Id = new Guid("0f8fad5b-d9cb-469f-a165-70867728950e"),
    };

    public static string? CheckHolder(Holder? h)
    {
        if (h is null)
            return "null holder";
        if (h.One.Id != 7 || h.One.Label != "seven" || h.One.Dropped is not null || h.One.Where.Z != 3)
            return $"One = {h.One.Id} {h.One.Label} {h.One.Dropped} {h.One.Where.Z}";
        if (h.Many is not { Length: 2 } || h.Many[0].Label != "α" || h.Many[1].Label is not null || h.Many[1].Where.X != -1 || h.Many[1].Id != 2)
            return "Many differs";
        if (h.When != new DateTime(2024, 2, 29, 12, 0, 0, DateTimeKind.Utc) || h.When.Kind != DateTimeKind.Utc)
            return $"When = {h.When}";
        if (h.Money != 12345.6789m || h.Hue != Color.Blue || h.Maybe != 42 || h.Native != -5 || h.Letter != 'ж')
            return $"values: {h.Money} {h.Hue} {h.Maybe} {h.Native} {h.Letter}";
        return h.Id == new Guid("0f8fad5b-d9cb-469f-a165-70867728950e") ? null : "Id differs";
    }
}

/// <summary>Counts constructor runs: decoding must not run any.</summary>
[Transportable]
public class Counted
{
    public static int Constructed;
    public int Init = 5;

    public Counted() => Constructed++;
}

public interface IArea
{
    double Area { get; }
}

[Transportable]
public class Square : IArea
{
    public double Side;

    public double Area => Side * Side;
}
