using System.MP;
using System.Runtime.InteropServices;

namespace Scenarios;

/// <summary>
/// Motor ranks in MPMD jobs beside ranks of other languages (MixedJobTests).  World rank 0 is
/// a C, Fortran or Python program (tests/native/mixed/peer.*) that runs the same protocol in its
/// own language; every other rank runs this scenario (dotnet or motor, one program or several):
/// arrays both ways with exact checks, Bcast/Allreduce/Gather across languages, MPI_Comm_split
/// by application number and work inside each program's communicator (object transport too),
/// object transport on the world between the Motor ranks, and a message longer than the receive
/// buffer that the peer sends, refused here as truncated.
/// </summary>
internal static class MixedJobs
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s)
    {
        s[Scenario.MixedWorld] = World;
        s[Scenario.MixedApart] = Apart;
    }

    // Beside a peer that makes no call with the Motor ranks ("peer-c apart SECONDS"): MPI starts,
    // and each rank ends when it is done, whenever the peer ends.
    private static void Apart(Communicator world)
    {
        Check.True(Mpi.AppNum is int app && app >= 0, $"an application number (MPI_APPNUM) on world rank {world.Rank}");
    }

    private const int Doubles = 1000;

    private static void World(Communicator world)
    {
        int me = world.Rank, n = world.Size;
        int app = Mpi.AppNum ?? -1;
        // Who runs which program: an Allgather every language makes.
        int[] apps = world.Allgather(app);
        Check.Equal(0, apps[0], "world rank 0 is the other-language program (application 0)");
        Check.True(app > 0, "this rank's application number (MPI_APPNUM) is past the peer's");
        for (int r = 1; r < n; r++)
            Check.True(apps[r] > 0, $"world rank {r} is a Motor rank");

        // Arrays both ways: the peer's doubles in, their sum and an int array back.
        var d = new double[Doubles];
        Status st = world.Recv(d, 0, 1);
        Check.Equal(Doubles * 8L, st.ByteCount, "1000 doubles from the peer");
        bool exact = true;
        double sum = 0;
        for (int i = 0; i < Doubles; i++)
        {
            exact &= d[i] == me + i * 0.25;
            sum += d[i];
        }
        Check.True(exact, "every double the peer sent, exactly");
        world.Send(new[] { sum }, 0, 2);
        var back = new int[Doubles];
        for (int i = 0; i < Doubles; i++)
            back[i] = me * 1000 + i;
        world.Send(back, 0, 3);

        // Collectives across languages.
        var b = new long[16];
        world.Bcast(b, 0);
        bool bcast = true;
        for (int i = 0; i < 16; i++)
            bcast &= b[i] == (3L << i) + i;
        Check.True(bcast, "Bcast of 16 int64 from the peer");
        Check.Equal(n * (n + 1) / 2.0, world.Allreduce(me + 1.0, Op.Sum), "Allreduce (sum of doubles) with the peer");
        Check.Equal((n - 1) * 7, world.Allreduce(me * 7, Op.Max), "Allreduce (max of ints) with the peer");
        world.Gather(me * 10 + 1, 0); // the peer checks
        var pairs = me == n - 1 ? new int[2 * n] : null;
        world.Gather(new[] { me, me * me }, pairs, n - 1);
        if (pairs is not null)
        {
            bool gathered = true;
            for (int r = 0; r < n; r++)
                gathered &= pairs[2 * r] == r && pairs[2 * r + 1] == r * r;
            Check.True(gathered, "Gather at a Motor root, the peer's block among them");
        }

        // Each program in a communicator of its own: split by application number.
        using (Communicator mine = world.Split(app, me)!)
        {
            int members = apps.Count(a => a == app);
            Check.Equal(members, mine.Size, "the split by application number holds this program's ranks");
            Check.Equal(mine.Size * (mine.Size - 1) / 2, mine.Allreduce(mine.Rank, Op.Sum), "Allreduce inside this program's communicator");
            if (mine.Size > 1)
                ObjectRing(mine, "inside this program's communicator");
        }

        // Object transport on the world between the Motor ranks (the peer takes no part).
        int[] motor = Enumerable.Range(1, n - 1).ToArray();
        if (motor.Length > 1)
        {
            int at = Array.IndexOf(motor, me);
            ObjectPair(world, motor[(at + 1) % motor.Length], motor[(at + motor.Length - 1) % motor.Length], "on the world between Motor ranks");
        }

        // The peer sends 10 ints where this rank receives 5: truncated here, and the next message fine.
        var five = new int[5];
        try
        {
            world.Recv(five, 0, 5);
            Check.True(false, "a receive of 5 ints of the peer's 10 throws");
        }
        catch (MessageTruncatedException)
        {
            Check.True(true, "a receive of 5 ints of the peer's 10 throws MessageTruncatedException");
        }
        var one = new int[1];
        world.Recv(one, 0, 6);
        Check.Equal(4242 + me, one[0], "the peer's next message after the truncated one");
        world.Barrier();
    }

    /// <summary>A small object and one larger than a payload's first message (continuation pieces) around a ring.</summary>
    private static void ObjectRing(Communicator c, string where) =>
        ObjectPair(c, (c.Rank + 1) % c.Size, (c.Rank + c.Size - 1) % c.Size, where);

    private static void ObjectPair(Communicator c, int next, int prev, string where)
    {
        int me = c.Rank;
        string[] small = ["from", me.ToString()];
        byte[] large = Pattern(200_000, me);
        using ObjectRequest s1 = c.OISend(small, next, 11), s2 = c.OISend(large, next, 12);
        string[]? gotSmall = c.ORecv<string[]>(prev, 11);
        byte[]? gotLarge = c.ORecv<byte[]>(prev, 12);
        s1.Wait();
        s2.Wait();
        Check.Sequence<string>(["from", prev.ToString()], gotSmall, $"a small object {where}");
        Check.True(gotLarge is not null && gotLarge.AsSpan().SequenceEqual(Pattern(200_000, prev)), $"a 200,000-byte object {where}");
    }

    private static byte[] Pattern(int n, int seed)
    {
        var b = new byte[n];
        for (int i = 0; i < n; i++)
            b[i] = (byte)(i * 7 + seed);
        return b;
    }
}
