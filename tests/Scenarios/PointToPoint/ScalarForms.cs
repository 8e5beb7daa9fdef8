using System.MP;
using static Scenarios.Heap;

namespace Scenarios;

/// <summary>
/// One value exchanged by SendRecv and received by the nonblocking IRecv&lt;T&gt; (its Result, its
/// TryGetResult, await, and in a request set across compacting collections), with the refusals
/// and the short-message error of the one-value forms, waited alone or completed by a request set.
/// </summary>
internal static class ScalarForms
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.ScalarSendRecvIRecv] = Run;

    private static void Run(Communicator c)
    {
        int p = c.Size, r = c.Rank, left = (r + p - 1) % p, right = (r + 1) % p;

        int fromLeft = c.SendRecv(r * r, right, 1, left, 1);
        Check.Equal(left * left, fromLeft, "SendRecv of one value round the ring");
        double d = c.SendRecv(r + 0.5, right, 2, Mpi.AnySource, 2, out Status st);
        Check.Equal(left + 0.5, d, "SendRecv of one value from any source");
        Check.Equal(left, st.Source, "SendRecv status");
        Check.Equal(0L, c.SendRecv(7L, Mpi.ProcNull, 0, Mpi.ProcNull, 0), "SendRecv with Mpi.ProcNull gives default");

        // IRecv of one value: posted before the matching send, completed several ways.
        using (ValueRequest<long> first = c.IRecv<long>(left, 3))
        using (ValueRequest<long> second = c.IRecv<long>(left, 4))
        {
            c.Send(10L * r, right, 3);
            c.Send(10L * r + 1, right, 4);
            for (int i = 0; i < 3; i++)
                CompactAll(); // the box must not move under MPI
            MpiRequest.WaitAll(first.Request, second.Request);
            Check.Equal(10L * left, first.Result, "IRecv<long>.Result after a request set");
            Check.True(second.TryGetResult(out long v) && v == 10L * left + 1, "IRecv<long>.TryGetResult");
        }
        using (ValueRequest<int> awaited = c.IRecv<int>(left, 5))
        {
            c.Send(r + 100, right, 5);
            int got = Task.Run(async () => await awaited).GetAwaiter().GetResult();
            Check.Equal(left + 100, got, "await IRecv<int>");
        }
        Check.Equal(0, c.IRecv<int>(Mpi.ProcNull, 0).Result, "IRecv<int> from Mpi.ProcNull gives default");

        // A message shorter than the value is an error of the value's receive, not garbage.
        using (ValueRequest<long> shortOne = c.IRecv<long>(left, 6))
        {
            c.Send(new byte[3], right, 6);
            Check.Throws<MpiException>(() => _ = shortOne.Result, "IRecv<long> of a 3-byte message");
        }

        // The same error when a request set completes the receive: the set takes any copy of the
        // request, and the value's size check still sees the status (an int sent, a long expected).
        string? alone;
        using (ValueRequest<long> waited = c.IRecv<long>(left, 7))
        {
            c.Send(r, right, 7);
            alone = Check.Throws<MpiException>(() => _ = waited.Result, "IRecv<long> of an int, waited alone")?.Message;
        }
        using (ValueRequest<long> bySet = c.IRecv<long>(left, 8))
        using (ValueRequest<long> byMixedSet = c.IRecv<long>(left, 9))
        using (ValueRequest<long> byAny = c.IRecv<long>(left, 10))
        {
            c.Send(r, right, 8);
            c.Send(r, right, 9);
            c.Send(r, right, 10);
            Request.WaitAll(bySet.Request); // completes the receive: a short message is no MPI error
            MpiRequest.WaitAll(byMixedSet.Request);
            Check.Equal(0, Request.WaitAny([byAny.Request], out _), "WaitAny over one receive");
            Check.Equal(alone, Check.Throws<MpiException>(() => _ = bySet.Result, "Result of an int completed by Request.WaitAll")?.Message,
                        "the short-message error of a receive completed by Request.WaitAll");
            Check.Equal(alone, Check.Throws<MpiException>(() => byMixedSet.TryGetResult(out _), "TryGetResult of an int completed by MpiRequest.WaitAll")?.Message,
                        "the short-message error of a receive completed by MpiRequest.WaitAll");
            Check.Equal(alone, Check.Throws<MpiException>(() => _ = byAny.Result, "Result of an int completed by Request.WaitAny")?.Message,
                        "the short-message error of a receive completed by Request.WaitAny");
        }
        // A set that returns no statuses (the span form): the core writes none unless a status
        // reader is among its requests, and then each value still gets its own.
        using (ValueRequest<long> bySpan = c.IRecv<long>(left, 11))
        using (ValueRequest<long> spanRight = c.IRecv<long>(left, 12))
        {
            c.Send(r, right, 11);
            c.Send(10L * r + 2, right, 12);
            Request.WaitAll(new[] { bySpan.Request, spanRight.Request }.AsSpan());
            Check.Equal(10L * left + 2, spanRight.Result, "IRecv<long>.Result after Request.WaitAll over a span");
            Check.Equal(alone, Check.Throws<MpiException>(() => _ = bySpan.Result, "Result of an int completed by Request.WaitAll over a span")?.Message,
                        "the short-message error of a receive completed by Request.WaitAll over a span");
        }
        c.Barrier();

        long before = Mpi.GetStatistics().PointToPointOperations;
        Check.ThrowsNaming<ArgumentOutOfRangeException>("dest", () => c.SendRecv(1, p, 0, left, 0), "SendRecv to a rank outside");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("sendTag", () => c.SendRecv(1, right, -5, left, 0), "SendRecv with a negative tag");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("source", () => c.IRecv<int>(p, 0), "IRecv<int> from a rank outside");
        Check.ThrowsNaming<ArgumentOutOfRangeException>("tag", () => c.IRecv<int>(left, -5), "IRecv<int> with a negative tag");
        Check.Equal(before, Mpi.GetStatistics().PointToPointOperations, "no message started by a refused call");
    }
}
