using System.MP.Interop;

namespace System.MP;

/// <summary>How two groups or communicators relate (MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL).</summary>
public enum Comparison
{
    /// <summary>The same object (communicators) or the same members in the same order (groups).</summary>
    Identical,
    /// <summary>Communicators with the same members in the same order but different contexts.</summary>
    Congruent,
    /// <summary>The same members in a different order.</summary>
    Similar,
    /// <summary>Different members.</summary>
    Unequal,
}

/// <summary>An ordered set of processes (MPI_Group), used to build communicators.</summary>
public sealed unsafe class Group : IDisposable
{
    private GroupHandle _handle;

    internal Group(GroupHandle handle) => _handle = handle;

    /// <summary>The group with no members (MPI_GROUP_EMPTY).</summary>
    public static Group Empty { get; } = new(GroupHandle.Empty);

    internal GroupHandle Handle
    {
        get
        {
            if (_handle == GroupHandle.Null)
                throw new ObjectDisposedException(nameof(Group));
            return _handle;
        }
    }

    /// <summary>
    /// The MPI group in C form, for a native library that takes an <c>MPI_Group</c> (MPICH's
    /// <c>int</c>, sign-extended, or Open MPI's pointer; see <see cref="Communicator.MpiHandle"/>).
    /// Valid while this Group is not disposed; the native code never frees it.
    /// </summary>
    public nint MpiHandle => (nint)Communicator.MpiHandleOf(Core.GroupHandle, Handle, fortran: false);

    /// <summary>The MPI group in Fortran form (MPI_Group_c2f); valid while this Group is not disposed.</summary>
    public int FortranHandle => (int)Communicator.MpiHandleOf(Core.GroupHandle, Handle, fortran: true);

    /// <summary>Number of members.</summary>
    public int Size
    {
        get
        {
            int n = 0;
            ThrowHelper.Check(Core.GroupSize(Handle, &n));
            return n;
        }
    }

    /// <summary>This process's rank in the group, or <see cref="Mpi.Undefined"/> when it is not a member.</summary>
    public int Rank
    {
        get
        {
            int r = 0;
            ThrowHelper.Check(Core.GroupRank(Handle, &r));
            return r;
        }
    }

    /// <summary>Members of <paramref name="a"/>, then those of <paramref name="b"/> not in <paramref name="a"/>.</summary>
    public static Group Union(Group a, Group b) => SetOp(0, a, b);

    /// <summary>Members of <paramref name="a"/> that are also in <paramref name="b"/>, in <paramref name="a"/>'s order.</summary>
    public static Group Intersection(Group a, Group b) => SetOp(1, a, b);

    /// <summary>Members of <paramref name="a"/> that are not in <paramref name="b"/>, in <paramref name="a"/>'s order.</summary>
    public static Group Difference(Group a, Group b) => SetOp(2, a, b);

    /// <summary>The members with the given ranks, in the given order (MPI_Group_incl).</summary>
    /// <param name="ranks">Distinct ranks of this group.</param>
    public Group Include(params int[] ranks) => Select(0, ranks);

    /// <summary>All members but the given ranks, in order (MPI_Group_excl).</summary>
    /// <param name="ranks">Distinct ranks of this group.</param>
    public Group Exclude(params int[] ranks) => Select(1, ranks);

    /// <summary>The ranks in <paramref name="other"/> of the given ranks of this group (<see cref="Mpi.Undefined"/> when absent).</summary>
    /// <param name="ranks">Ranks in this group.</param>
    /// <param name="other">The group to translate into.</param>
    public int[] TranslateRanks(int[] ranks, Group other)
    {
        ArgumentNullException.ThrowIfNull(ranks);
        ArgumentNullException.ThrowIfNull(other);
        var result = new int[ranks.Length];
        fixed (int* a = ranks)
        fixed (int* b = result)
            ThrowHelper.Check(Core.GroupTranslate(Handle, ranks.Length, a, other.Handle, b));
        return result;
    }

    /// <summary>Compares the members and their order (MPI_Group_compare).</summary>
    /// <param name="other">The other group.</param>
    public Comparison Compare(Group other)
    {
        ArgumentNullException.ThrowIfNull(other);
        int r = 0;
        ThrowHelper.Check(Core.GroupCompare(Handle, other.Handle, &r));
        return (Comparison)r;
    }

    /// <summary>Frees the group (MPI_Group_free); <see cref="Empty"/> is never freed.</summary>
    public void Dispose()
    {
        GroupHandle h = _handle;
        if (h == GroupHandle.Empty || h == GroupHandle.Null)
            return;
        _handle = GroupHandle.Null;

        if (Core.State() == CoreConst.StateReady) // also when MPI runs through sessions alone
            ThrowHelper.Check(Core.GroupFree(h));
    }

    private static Group SetOp(int op, Group a, Group b)
    {
        ArgumentNullException.ThrowIfNull(a);
        ArgumentNullException.ThrowIfNull(b);
        GroupHandle g = GroupHandle.Null;
        ThrowHelper.Check(Core.GroupSetop(op, a.Handle, b.Handle, &g));
        return new Group(g);
    }

    private Group Select(int exclude, int[] ranks)
    {
        ArgumentNullException.ThrowIfNull(ranks);
        int size = Size;
        GroupHandle g = GroupHandle.Null;

        for (int i = 0; i < ranks.Length; i++)
        {
            if ((uint)ranks[i] >= (uint)size)
                throw new ArgumentOutOfRangeException(nameof(ranks), ranks[i], SR.Format(SR.RankOutOfRange, ranks[i], size, "a member"));
            if (Array.IndexOf(ranks, ranks[i], 0, i) >= 0)
                throw new ArgumentException(SR.Format(SR.RankTwice, ranks[i]), nameof(ranks));
        }
        fixed (int* r = ranks)
            ThrowHelper.Check(Core.GroupSelect(Handle, exclude, ranks.Length, r, &g));
        return new Group(g);
    }
}
