using System.MP;

namespace Scenarios;

/// <summary>Groups, communicator construction, names and Cartesian topologies.</summary>
internal static class Communicators
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.Groups] = Groups;
        s[Scenario.Cartesian] = Cartesian;
    }

    private static void Groups(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        using Group world = c.Group;
        Check.Equal(p, world.Size, "group size");
        Check.Equal(r, world.Rank, "group rank");
        int[] reversed = Enumerable.Range(0, p).Reverse().ToArray();
        using Group rev = world.Include(reversed);
        Check.Equal(p - 1 - r, rev.Rank, "rank in the reversed group");
        Check.Equal(p == 1 ? Comparison.Identical : Comparison.Similar, world.Compare(rev), "reversed group is similar");
        int[] evens = Enumerable.Range(0, p).Where(i => i % 2 == 0).ToArray();
        using Group even = world.Include(evens), odd = world.Exclude(evens);
        Check.Equal(evens.Length, even.Size, "include size");
        Check.Equal(p - evens.Length, odd.Size, "exclude size");
        Check.Equal(r % 2 == 0 ? r / 2 : Mpi.Undefined, even.Rank, "rank in the even group");
        using Group union = Group.Union(odd, even), inter = Group.Intersection(world, even), diff = Group.Difference(world, even);
        Check.Equal(p, union.Size, "union size");
        Check.Equal(Comparison.Identical, inter.Compare(even), "intersection with world");
        Check.Equal(Comparison.Identical, diff.Compare(odd), "difference");
        Check.Equal(p == 1 ? Comparison.Identical : Comparison.Similar, union.Compare(world), "odd+even is world reordered");
        Check.Sequence<int>(reversed, world.TranslateRanks(Enumerable.Range(0, p).ToArray(), rev), "translate into reversed");
        if (p > 1)
            Check.Equal(Mpi.Undefined, world.TranslateRanks(new[] { 1 }, even)[0], "translate a rank missing from the target");
        Check.Equal(0, Group.Empty.Size, "empty group");
        Check.Throws<ArgumentException>(() => world.Include(0, 0), "duplicate rank");
        Check.Throws<ArgumentOutOfRangeException>(() => world.Include(p), "rank outside the group");

        using Communicator? evenComm = c.Create(even);
        Check.Equal(r % 2 == 0, evenComm is not null, "create gives members a communicator");
        if (evenComm is not null)
        {
            Check.Equal(evens.Length, evenComm.Size, "created size");
            Check.Equal(evens.Length, evenComm.Allreduce(1, Op.Sum), "collective on the created communicator");
        }
        using Communicator dup = c.Dup();
        Check.Equal(Comparison.Identical, Communicator.Compare(c, c), "compare with itself");
        Check.Equal(Comparison.Congruent, Communicator.Compare(c, dup), "compare with a dup");
        dup.Name = "halo-exchange π";
        Check.Equal("halo-exchange π", dup.Name, "communicator name");
        Check.Throws<ArgumentException>(() => dup.Name = new string('x', 200), "name too long");
        using Communicator node = c.SplitShared();
        Check.Equal(p, node.Size, "one node: every rank shares memory");
    }

    private static void Cartesian(Communicator c)
    {
        int p = c.Size, r = c.Rank;
        int[] dims = Mpi.DimsCreate(p, new int[2]);
        Check.Equal(p, dims[0] * dims[1], "dims product");
        Check.True(dims[0] >= dims[1], "dims are balanced, largest first");
        using CartesianCommunicator grid = c.CreateCartesian(dims, new[] { false, true })!;
        Check.Sequence<int>(dims, grid.Dimensions.ToArray(), "dimensions");
        Check.Sequence<int>(grid.Coordinates.ToArray(), grid.GetCoordinates(grid.Rank), "own coordinates");
        Check.Equal(grid.Rank, grid.GetRank(grid.Coordinates.ToArray()), "rank of own coordinates");
        // The grid's description is the communicator's own: what a caller got cannot change it.
        Check.True(grid.Dimensions is not int[] && grid.Coordinates is not int[] && grid.Periodic is not bool[],
                   "grid properties are read-only views, not the communicator's arrays");
        Check.Throws<NotSupportedException>(() => ((IList<int>)grid.Dimensions)[0] = 99, "writing through the dimensions view");
        dims[0] += 7; // the caller's own array: the grid keeps what it was given
        Check.Equal(p, grid.Dimensions[0] * grid.Dimensions[1], "dimensions unchanged after the caller edits its array");
        dims[0] -= 7;
        var (up, down) = grid.Shift(0, 1);
        int row = grid.Coordinates[0], col = grid.Coordinates[1];
        Check.Equal(row == 0 ? Mpi.ProcNull : grid.GetRank(row - 1, col), up, "non-periodic shift source");
        Check.Equal(row == dims[0] - 1 ? Mpi.ProcNull : grid.GetRank(row + 1, col), down, "non-periodic shift dest");
        var (left, right) = grid.Shift(1, 1);
        Check.Equal(grid.GetRank(row, (col + 1) % dims[1]), right, "periodic shift wraps");
        Check.Equal(grid.GetRank(row, (col - 1 + dims[1]) % dims[1]), left, "periodic shift wraps back");
        // Halo exchange along the non-periodic dimension: ProcNull needs no special case.
        var fromUp = new[] { -1 };
        grid.SendRecv(new[] { grid.Rank }, down, 0, fromUp, up, 0);
        Check.Equal(up == Mpi.ProcNull ? -1 : up, fromUp[0], "halo from above");
        using CartesianCommunicator rowComm = grid.Sub(false, true);
        Check.Equal(dims[1], rowComm.Size, "row sub-grid size");
        Check.Equal(col, rowComm.Rank, "rank in the row");
        Check.Equal(dims[1] * (dims[1] - 1) / 2, rowComm.Allreduce(col, Op.Sum), "reduction along a row");
        Check.Throws<ArgumentException>(() => c.CreateCartesian(new[] { p + 1 }, new[] { false }), "grid larger than the communicator");
        Check.Throws<ArgumentOutOfRangeException>(() => grid.Shift(2, 1), "shift along a missing dimension");
        Check.Throws<ArgumentOutOfRangeException>(() => grid.GetRank(dims[0], 0), "coordinate past a non-periodic edge");
        // A grid smaller than the communicator leaves ranks out.
        using CartesianCommunicator? small = c.CreateCartesian(new[] { 1 }, new[] { false });
        Check.Equal(r == 0, small is not null, "ranks outside the grid get null");
    }
}
