using System.MP;
using System.Runtime.InteropServices;

namespace Scenarios;

/// <summary>
/// API fuzzing (scenario api-fuzz): a seeded sequence of calls on the public API with random
/// and boundary arguments — negative and huge counts, offsets past the end, ranks and tags out
/// of range, null buffers, freed communicators, completed, disposed and repeated requests,
/// spans over stack and native memory.  An oracle says, before each call, whether its
/// arguments are valid; an invalid call must throw one of the documented argument exceptions
/// (and, on World, send nothing), a valid one must not throw anything but the documented
/// outcome of its operation.  Receive buffers keep guard values outside the slice they name.
/// Valid traffic runs on Self (and to ProcNull), completed at quiescent points; at the end
/// every rank exchanges over World and checks that all still agree.
/// </summary>
/// <remarks>
/// MOTOR_API_FUZZ_SEED (default 1) and MOTOR_API_FUZZ_CALLS (default 100000 per rank). A
/// failure prints the seed and the calls since the last quiescent point, which reproduce it.
/// </remarks>
internal static class ApiFuzz
{
    internal static void Register(Dictionary<Scenario, Action<Communicator>> s) => s[Scenario.ApiFuzz] = Run;

    private const int Guard = unchecked((int)0xDEADBEEF);
    private const int MaxPending = 16;

    private static int Seed => int.TryParse(Environment.GetEnvironmentVariable("MOTOR_API_FUZZ_SEED"), out int s) ? s : 1;
    private static int Calls => int.TryParse(Environment.GetEnvironmentVariable("MOTOR_API_FUZZ_CALLS"), out int n) ? n : 100_000;

    private sealed class State(Communicator world, Random rng)
    {
        public readonly Communicator World = world;
        public readonly Random Rng = rng;
        public readonly List<string> Log = [];                 // calls since the last quiescent point
        public readonly List<(Request R, int[] Buffer, int Offset, int Count, bool IsRecv, int Tag)> Pending = [];
        public readonly List<Request> Finished = [];           // completed or disposed: using them must be refused
        public readonly List<(int Tag, int Count)> Dropped = [];  // sends disposed while pending, maybe not received yet
        public readonly Dictionary<Type, int> Thrown = [];
        public Communicator? Freed;
        public int Valid, Invalid;
    }

    private static void Run(Communicator world)
    {
        int seed = Seed * 1000 + world.Rank;
        var st = new State(world, new Random(seed));
        int calls = Calls;
        for (int i = 0; i < calls; i++)
        {
            if (st.Pending.Count >= MaxPending || st.Rng.Next(64) == 0)
                Quiesce(st);
            try
            {
                Step(st, i);
            }
            catch (Exception e) when (e is not FuzzFailure)
            {
                Fail(st, seed, $"call {i} threw {e.GetType().Name}: {e.Message}");
                return;
            }
            catch (FuzzFailure f)
            {
                Fail(st, seed, f.Message);
                return;
            }
        }
        Quiesce(st);
        // The ranks still agree: every rank's seed and call count, everywhere.
        long[] all = new long[world.Size];
        world.Allgather(new[] { (long)seed * 1_000_000 + calls }, all);
        for (int r = 0; r < world.Size; r++)
            Check.Equal(((long)Seed * 1000 + r) * 1_000_000 + calls, all[r], $"rank {r}'s seed and calls after the fuzz");
        int next = (world.Rank + 1) % world.Size, prev = (world.Rank + world.Size - 1) % world.Size;
        var ring = new int[64];
        world.SendRecv(Enumerable.Range(world.Rank * 100, 64).ToArray(), next, 3, ring, prev, 3);
        Check.Sequence<int>(Enumerable.Range(prev * 100, 64).ToArray(), ring, "ring exchange after the fuzz");
        Console.WriteLine($"api-fuzz rank {world.Rank}: {calls} calls (seed {seed}): {st.Valid} valid, {st.Invalid} refused; " +
                          string.Join(", ", st.Thrown.OrderBy(kv => kv.Key.Name).Select(kv => $"{kv.Key.Name} {kv.Value}")));
    }

    private sealed class FuzzFailure(string message) : Exception(message);

    private static void Fail(State st, int seed, string what)
    {
        Check.True(false, $"api-fuzz seed {seed}: {what}\n  calls since the last quiescent point:\n    " + string.Join("\n    ", st.Log));
    }

    // ---- arguments ----

    private static int AnyInt(State st, int size) => st.Rng.Next(12) switch
    {
        0 => int.MinValue,
        1 => int.MaxValue,
        2 => -1,
        3 => -2,
        4 => -3,
        5 => size,
        6 => size + 1,
        7 => Mpi.TagUpperBound,
        8 => Mpi.TagUpperBound == int.MaxValue ? int.MinValue : Mpi.TagUpperBound + 1,
        _ => st.Rng.Next(0, Math.Max(1, size)),
    };

    private static int[]? AnyArray(State st) => st.Rng.Next(8) switch
    {
        0 => null,
        1 => [],
        _ => new int[st.Rng.Next(1, 40)],
    };

    /// <summary>Expects <paramref name="call"/> to throw an argument exception (the arguments are invalid).</summary>
    private static void Refused(State st, string what, Action call)
    {
        st.Log.Add(what + " (invalid)");
        try
        {
            call();
        }
        catch (ArgumentException e)
        {
            st.Invalid++;
            st.Thrown[e.GetType()] = st.Thrown.GetValueOrDefault(e.GetType()) + 1;
            return;
        }
        catch (ObjectDisposedException e)
        {
            st.Invalid++;
            st.Thrown[e.GetType()] = st.Thrown.GetValueOrDefault(e.GetType()) + 1;
            return;
        }
        throw new FuzzFailure($"{what}: invalid arguments were accepted");
    }

    private static bool SliceValid(int[]? a, int offset, int count) =>
        a is not null && offset >= 0 && count >= 0 && offset <= a.Length && count <= a.Length - offset;

    // ---- one call ----

    private static unsafe void Step(State st, int i)
    {
        Communicator self = Communicator.Self, world = st.World;
        var rng = st.Rng;
        switch (rng.Next(11))
        {
            case 0: // ISend on Self, or to ProcNull
            case 1: // IRecv on Self
            {
                bool recv = rng.Next(2) == 1;
                int[]? a = AnyArray(st);
                int offset = AnyInt(st, a?.Length ?? 0), count = AnyInt(st, a?.Length ?? 0);
                int peer = rng.Next(4) == 0 ? AnyInt(st, 1) : rng.Next(3) == 0 ? Mpi.ProcNull : 0;
                int tag = rng.Next(4) == 0 ? AnyInt(st, 8) : rng.Next(8);
                bool peerValid = peer == 0 || peer == Mpi.ProcNull || (recv && peer == Mpi.AnySource);
                bool tagValid = (tag >= 0 && tag <= Mpi.TagUpperBound) || (recv && tag == Mpi.AnyTag);
                string what = $"Self.{(recv ? "IRecv" : "ISend")}(int[{a?.Length.ToString() ?? "null"}], {offset}, {count}, {peer}, {tag})";
                if (!SliceValid(a, offset, count) || !peerValid || !tagValid)
                {
                    Refused(st, what, () => (recv ? self.IRecv(a!, offset, count, peer, tag) : self.ISend(a!, offset, count, peer, tag)).Dispose());
                    return;
                }
                if (peer == Mpi.AnySource || tag == Mpi.AnyTag)
                    return; // valid, but a wildcard receive could take another one's partner at Quiesce
                st.Log.Add(what);
                if (recv)
                    Array.Fill(a!, Guard);
                Request r = recv ? self.IRecv(a!, offset, count, peer, tag) : self.ISend(a!, offset, count, peer, tag);
                st.Pending.Add((r, a!, offset, count, recv, tag));
                st.Valid++;
                return;
            }
            case 2: // point-to-point on World with at least one bad argument: refused, nothing sent
            {
                int[]? a = AnyArray(st);
                int offset = AnyInt(st, a?.Length ?? 0), count = AnyInt(st, a?.Length ?? 0);
                int peer = AnyInt(st, world.Size), tag = AnyInt(st, 8);
                bool recv = rng.Next(2) == 1;
                bool valid = SliceValid(a, offset, count) &&
                             ((peer >= 0 && peer < world.Size) || peer == Mpi.ProcNull || (recv && peer == Mpi.AnySource)) &&
                             ((tag >= 0 && tag <= Mpi.TagUpperBound) || (recv && tag == Mpi.AnyTag));
                if (valid)
                    return; // a valid call would need a partner: not made here
                string what = $"World.{(recv ? "Recv" : "Send")}(int[{a?.Length.ToString() ?? "null"}], {offset}, {count}, {peer}, {tag})";
                Refused(st, what, () =>
                {
                    if (recv)
                        world.Recv(a!, offset, count, peer, tag);
                    else
                        world.Send(a!, offset, count, peer, tag);
                });
                return;
            }
            case 3: // completing a random request, pending or already finished
            {
                if (st.Finished.Count > 0 && rng.Next(2) == 0)
                {
                    Request old = st.Finished[rng.Next(st.Finished.Count)];
                    string op = rng.Next(3) switch { 0 => "Wait", 1 => "Test", _ => "Cancel" };
                    // Completed requests answer with their stored status; disposed ones are refused.
                    st.Log.Add($"finished request.{op}");
                    try
                    {
                        if (op == "Wait")
                            old.Wait();
                        else if (op == "Test")
                            old.Test(out _);
                        else
                            old.Cancel();
                    }
                    catch (ObjectDisposedException e)
                    {
                        st.Thrown[e.GetType()] = st.Thrown.GetValueOrDefault(e.GetType()) + 1;
                    }
                    return;
                }
                if (st.Pending.Count == 0)
                    return;
                int k = rng.Next(st.Pending.Count);
                var p = st.Pending[k];
                if (!IsCompleted(p.R))
                    return; // not waited for: its partner may not exist yet
                st.Log.Add("pending request completed");
                Status s = WaitTruncatedOk(p.R);
                CheckGuards(p.Buffer, p.Offset, p.Count, p.IsRecv, s);
                st.Pending.RemoveAt(k);
                st.Finished.Add(p.R);
                if (rng.Next(2) == 0)
                    p.R.Dispose();
                return;
            }
            case 4: // sets with repeats
            {
                if (st.Pending.Count == 0)
                    return;
                Request r = st.Pending[rng.Next(st.Pending.Count)].R;
                if (IsCompleted(r))
                    return; // a completed request may repeat in a set: only pending ones are refused
                Request[] set = [r, r];
                const string what = "set of 2 (repeated)";
                switch (rng.Next(3))
                {
                    case 0: Refused(st, "WaitAll " + what, () => Request.WaitAll(set)); break;
                    case 1: Refused(st, "TestAll " + what, () => Request.TestAll(set)); break;
                    default: Refused(st, "WaitAny " + what, () => Request.WaitAny(set, out _)); break;
                }
                return;
            }
            case 5: // a freed communicator
            {
                if (st.Freed is null || rng.Next(8) == 0)
                {
                    st.Log.Add("Self.Dup().Dispose()");
                    st.Freed = self.Dup();
                    st.Freed.Dispose();
                    st.Valid++;
                    return;
                }
                Communicator f = st.Freed;
                switch (rng.Next(4))
                {
                    case 0: Refused(st, "freed.Send", () => f.Send(new int[1], 0, 0)); break;
                    case 1: Refused(st, "freed.IRecv", () => f.IRecv(new int[1], 0, 0)); break;
                    case 2: Refused(st, "freed.Barrier", f.Barrier); break;
                    default: Refused(st, "freed.Rank", () => _ = f.Rank); break;
                }
                return;
            }
            case 6: // probes on Self with any source and tag
            {
                int source = rng.Next(3) == 0 ? AnyInt(st, 1) : 0, tag = rng.Next(3) == 0 ? AnyInt(st, 8) : rng.Next(8);
                bool valid = (source == 0 || source == Mpi.AnySource || source == Mpi.ProcNull) &&
                             ((tag >= 0 && tag <= Mpi.TagUpperBound) || tag == Mpi.AnyTag);
                if (!valid)
                {
                    Refused(st, $"Self.IProbe({source}, {tag})", () => self.IProbe(source, tag, out _));
                    return;
                }
                st.Log.Add($"Self.IProbe({source}, {tag})");
                self.IProbe(source, tag, out _);
                st.Valid++;
                return;
            }
            case 7: // spans over the stack and over native memory, to and from ProcNull
            {
                int n = rng.Next(0, 32);
                Span<int> stack = stackalloc int[n];
                int* native = (int*)NativeMemory.Alloc((nuint)Math.Max(1, n) * sizeof(int));
                try
                {
                    var span = rng.Next(2) == 0 ? stack : new Span<int>(native, n);
                    span.Fill(7);
                    st.Log.Add($"span of {n} to/from ProcNull");
                    world.Send((ReadOnlySpan<int>)span, Mpi.ProcNull, 1);
                    Status s = world.Recv(span, Mpi.ProcNull, 1);
                    if (s.Source != Mpi.ProcNull || s.ByteCount != 0)
                        throw new FuzzFailure($"a receive from ProcNull reported {s.Source}, {s.ByteCount} bytes");
                    foreach (int v in span)
                        if (v != 7)
                            throw new FuzzFailure("a receive from ProcNull wrote into the buffer");
                    st.Valid++;
                }
                finally
                {
                    NativeMemory.Free(native);
                }
                return;
            }
            case 8: // collectives on Self, bad roots and lengths
            {
                int root = rng.Next(3) == 0 ? AnyInt(st, 1) : 0;
                int[]? a = AnyArray(st);
                if (root != 0 || a is null)
                {
                    Refused(st, $"Self.Bcast(int[{a?.Length.ToString() ?? "null"}], {root})", () => self.Bcast(a!, root));
                    return;
                }
                st.Log.Add($"Self.Bcast(int[{a.Length}], 0)");
                self.Bcast(a, 0);
                int[] recv = new int[rng.Next(3) == 0 && a.Length > 0 ? a.Length - 1 : a.Length + rng.Next(2)];
                if (recv.Length < a.Length)
                    Refused(st, "Self.Allreduce into a shorter receive array", () => self.Allreduce(a, recv, Op.Sum));
                else
                    self.Allreduce(a, recv, Op.Sum);
                st.Valid++;
                return;
            }
            case 9: // objects to ProcNull and bad tags
            {
                int tag = rng.Next(3) == 0 ? AnyInt(st, 8) : 1;
                bool valid = tag >= 0 && tag <= Mpi.TagUpperBound;
                if (!valid)
                {
                    Refused(st, $"World.OSend(.., ProcNull, {tag})", () => world.OSend("x", Mpi.ProcNull, tag));
                    return;
                }
                st.Log.Add($"World.OSend/ORecv ProcNull {tag}");
                world.OSend(new[] { 1, 2 }, Mpi.ProcNull, tag);
                if (world.ORecv(Mpi.ProcNull, tag) is not null)
                    throw new FuzzFailure("an object from ProcNull was not null");
                st.Valid++;
                return;
            }
            default: // Dispose of a pending request (orphaned; completes later)
            {
                if (st.Pending.Count == 0 || rng.Next(4) != 0)
                    return;
                int k = rng.Next(st.Pending.Count);
                var p = st.Pending[k];
                if (p.IsRecv)
                    return; // an orphaned receive would take a later send's message
                // A pending send to self is orphaned: its message still arrives, in order, and
                // Quiesce gives it a receive (on MPICH a send to self completes only when matched).
                bool pending = !IsCompleted(p.R);
                st.Log.Add(pending ? "pending send disposed" : "completed send disposed");
                if (pending)
                    st.Dropped.Add((p.Tag, p.Count));
                p.R.Dispose();
                st.Pending.RemoveAt(k);
                st.Finished.Add(p.R);
                return;
            }
        }
    }

    /// <summary>Completes everything pending on Self: each receive gets a send (and each send a receive) to match.</summary>
    private static void Quiesce(State st)
    {
        Communicator self = Communicator.Self;
        var partners = new List<Request>();
        // Every pending send gets a receive with its tag, every pending receive a send with its
        // tag: per tag as many sends as receives (no wildcards), matched in order, so lengths
        // may not fit (MessageTruncatedException, a documented outcome).
        foreach (var p in st.Pending.Where(p => !p.IsRecv && !IsCompleted(p.R)))
            partners.Add(self.IRecv(new int[Math.Max(1, p.Count)], 0, p.Tag));
        // Sends disposed while pending get a receive each, after those: per tag there are then
        // at least as many receives as unreceived messages (a message of a disposed send that
        // a fuzzed receive took leaves one receive spare, cancelled below).
        var spares = st.Dropped.Select(d => self.IRecv(new int[Math.Max(1, d.Count)], 0, d.Tag)).ToList();
        int[] filler = new int[64];
        Array.Fill(filler, 1);
        foreach (var p in st.Pending.Where(p => p.IsRecv && !IsCompleted(p.R)))
            partners.Add(self.ISend(filler, 0, Math.Min(p.Count, 64), 0, p.Tag));
        foreach (var p in st.Pending)
        {
            CheckGuards(p.Buffer, p.Offset, p.Count, p.IsRecv, WaitTruncatedOk(p.R));
            st.Finished.Add(p.R);
        }
        foreach (Request r in partners)
            WaitTruncatedOk(r);
        foreach (Request r in spares)
        {
            if (!IsCompleted(r))
                r.Cancel();
            WaitTruncatedOk(r);
        }
        st.Dropped.Clear();
        // A receive posted with a specific tag may still wait for nobody: drain Self.
        while (self.IProbe(Mpi.AnySource, Mpi.AnyTag, out Status left))
            self.Recv(new byte[left.ByteCount], 0, left.Tag);
        st.Pending.Clear();
        if (st.Finished.Count > 256)
            st.Finished.RemoveRange(0, st.Finished.Count - 256);
        st.Log.Clear();
    }

    // A receive that matched a longer message completes with MessageTruncatedException:
    // a documented outcome of a valid call (the status then says what arrived).
    private static bool IsCompleted(Request r)
    {
        try
        {
            return r.IsCompleted;
        }
        catch (MessageTruncatedException)
        {
            return true;
        }
    }

    private static Status WaitTruncatedOk(Request r)
    {
        try
        {
            return r.Wait();
        }
        catch (MessageTruncatedException)
        {
            return default;
        }
    }

    private static void CheckGuards(int[] buffer, int offset, int count, bool isRecv, Status s)
    {
        if (!isRecv)
            return;
        for (int i = 0; i < buffer.Length; i++)
            if ((i < offset || i >= offset + count) && buffer[i] != Guard)
                throw new FuzzFailure($"a receive into [{offset}, {offset + count}) of int[{buffer.Length}] wrote element {i}");
        // (The status's byte count is MPI's: after a truncation it may name the incoming size.)
        _ = s;
    }
}
