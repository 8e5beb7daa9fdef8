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
