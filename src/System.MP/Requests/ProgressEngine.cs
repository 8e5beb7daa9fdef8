using System.Collections.Concurrent;
using System.Collections.Generic;
using System.MP.Interop;
using System.Runtime.InteropServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP;

/// <summary>
/// What the progress engine of <see cref="MpiRequest.WaitAsync"/> does and how it is tuned.
/// One engine per process completes every awaited request: a background thread that tests
/// them all in batches (one MPI_Testsome per round through the core), and backs off when a
/// round completes nothing (spins briefly, then yields, then sleeps 20 µs doubling up to 1 ms),
/// so a process whose awaited operations wait for a long time uses almost no processor time.
/// With nothing awaited the thread blocks until something is.
/// </summary>
/// <remarks>
/// The engine calls MPI from its own thread, so awaiting needs
/// <see cref="ThreadLevel.Multiple"/>: below it the first await throws
/// <see cref="InvalidOperationException"/> naming the level and how to ask for Multiple
/// (<c>Mpi.Init(ThreadLevel.Multiple)</c> before any other MPI use; under motor
/// <c>motor --thread-level multiple</c> or the runtime property Motor.ThreadLevel).
/// Continuations never run on the engine's thread: awaiting a request directly
/// (<c>await request</c>) resumes on the thread pool; <c>await request.ConfigureAwait(true)</c>
/// resumes on the captured <see cref="SynchronizationContext"/> (or task scheduler).
/// </remarks>
public static class AsyncProgress
{
    private static int s_callerPolls = ReadCallerPolls();

    /// <summary>The default of <see cref="CallerPolls"/>.</summary>
    public const int DefaultCallerPolls = 1000;

    private static int ReadCallerPolls()
    {
        string? s = Environment.GetEnvironmentVariable("MOTOR_AWAIT_CALLER_POLLS");
        return s is not null && int.TryParse(s, out int n) && n >= 0 ? n : DefaultCallerPolls;
    }

    /// <summary>
    /// Progress on the caller, for latency (default <see cref="DefaultCallerPolls"/>;
    /// $MOTOR_AWAIT_CALLER_POLLS sets the starting value, 0 turns it off): how many times
    /// <see cref="MpiRequest.WaitAsync"/> tests the request on the awaiting thread before handing
    /// it to the engine (<see cref="MpiRequest.WhenAll"/> and <see cref="MpiRequest.WhenAny"/>:
    /// that many tests over the whole set).  An operation that completes meanwhile (a message
    /// already on its way: a ping-pong's reply, a transfer of tens of microseconds) completes the
    /// await at once, on the awaiting thread, with no hand-off to the engine and no thread
    /// switch.  The price is those tests' processor time on the caller, at most tens of
    /// microseconds per await that does not complete so soon (a server's wait for its next
    /// request); the engine then completes it and an idle rank still sleeps.  Measured (8-byte
    /// ping-pong, MPICH): an await through the engine costs about 7 times a blocking Wait; with
    /// the caller polling, about as much as Wait.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is negative.</exception>
    public static int CallerPolls
    {
        get => Volatile.Read(ref s_callerPolls);
        set
        {
            ArgumentOutOfRangeException.ThrowIfNegative(value);
            Volatile.Write(ref s_callerPolls, value);
        }
    }

    /// <summary>Requests the engine is completing now (awaited and not yet completed).</summary>
    public static int Pending => ProgressEngine.Pending;

    /// <summary>Rounds the engine has made so far (each tests every awaited request once).</summary>
    public static long Rounds => ProgressEngine.Rounds;

    /// <summary>Times the engine has slept (backed off) so far because a round completed nothing.</summary>
    public static long Sleeps => ProgressEngine.Sleeps;
}

/// <summary>One awaited request: its task, and the cancellation asked for it.</summary>
internal sealed class AwaitEntry : TaskCompletionSource<Status>
{
    internal readonly MpiRequest Request;
    internal readonly CancellationToken Token;
    internal CancellationTokenRegistration Registration;
    internal volatile bool CancelAsked;
    internal bool CancelDone; // the engine's: MPI_Cancel was issued (or the request given back)

    internal AwaitEntry(MpiRequest request, CancellationToken token)
        : base(TaskCreationOptions.RunContinuationsAsynchronously) // never user code on the engine's thread
    {
        Request = request;
        Token = token;
    }
}

/// <summary>
/// The process's one progress engine (see <see cref="AsyncProgress"/>): a background thread that
/// owns every awaited request from <see cref="Add"/> until its task completes.  It alone tests,
/// cancels and finishes them, so the single-thread rule of the request types holds.
/// </summary>
internal static unsafe class ProgressEngine
{
    private const int SpinRounds = 64, YieldRounds = 64, MinSleepMicroseconds = 20, MaxSleepMicroseconds = 1000;

    private static readonly ConcurrentQueue<AwaitEntry> s_incoming = new();
    private static readonly ManualResetEventSlim s_wake = new(false);
    private static readonly Lock s_lock = new();
    private static Thread? s_thread;
    private static volatile bool s_stopping;
    private static int s_pending;
    private static long s_rounds, s_sleeps;

    internal static int Pending => Volatile.Read(ref s_pending);
    internal static long Rounds => Volatile.Read(ref s_rounds);
    internal static long Sleeps => Volatile.Read(ref s_sleeps);

    /// <summary>Refuses to await below <see cref="ThreadLevel.Multiple"/> (the engine calls MPI from its own thread).</summary>
    internal static void RequireMultiple()
    {
        ThreadLevel level = Mpi.ThreadLevel; // throws before Init and after Shutdown
        if (level < ThreadLevel.Multiple)
            throw new InvalidOperationException(SR.Format(SR.AwaitThreadLevel, level));
    }

    /// <summary>Hands an awaited request to the engine (started at the first).</summary>
    internal static void Add(AwaitEntry e)
    {
        if (s_thread is null)
            Start();
        Interlocked.Increment(ref s_pending);
        if (e.Token.CanBeCanceled) // before the engine can see the entry (it disposes the registration)
            e.Registration = e.Token.UnsafeRegister(static o => AskCancel((AwaitEntry)o!), e);
        s_incoming.Enqueue(e);
        s_wake.Set();
    }

    private static void AskCancel(AwaitEntry e)
    {
        e.CancelAsked = true;
        s_wake.Set();
    }

    private static void Start()
    {
        lock (s_lock)
        {
            if (s_thread is not null)
                return;
            if (s_stopping)
                throw new InvalidOperationException(SR.AfterShutdown);
            var t = new Thread(Run) { IsBackground = true, Name = "MPI progress" };
            t.Start();
            s_thread = t;
        }
    }

    /// <summary>
    /// Before MPI_Finalize: stops the engine; the awaits still pending fail with
    /// <see cref="InvalidOperationException"/> (their operations never completed).
    /// </summary>
    internal static void Stop()
    {
        Thread? t;
        lock (s_lock)
        {
            s_stopping = true;
            t = s_thread;
        }
        if (t is null || t == Thread.CurrentThread)
            return;
        s_wake.Set();
        t.Join();
    }

    private static void Run()
    {
        var pending = new List<AwaitEntry>();
        var batch = new Batch();
        int idle = 0;
        for (; ; )
        {
            s_wake.Reset(); // before the queue is read: an Add after it sets it again
            while (s_incoming.TryDequeue(out AwaitEntry? e))
                pending.Add(e);
            if (s_stopping)
                break;
            if (pending.Count == 0)
            {
                s_wake.Wait();
                idle = 0;
                continue;
            }
            Interlocked.Increment(ref s_rounds);
            if (Round(pending, batch) > 0)
                idle = 0;
            else
                BackOff(ref idle);
        }
        while (s_incoming.TryDequeue(out AwaitEntry? e))
            pending.Add(e);
        foreach (AwaitEntry e in pending)
            Done(e, new InvalidOperationException(SR.AfterShutdown));
    }

    /// <summary>Spin, then yield, then sleep with growing intervals (up to 1 ms) while nothing completes.</summary>
    private static void BackOff(ref int idle)
    {
        idle++;
        if (idle <= SpinRounds)
        {
            Thread.SpinWait(20);
            return;
        }
        if (idle <= SpinRounds + YieldRounds)
        {
            Thread.Yield();
            return;
        }
        int doublings = Math.Min(idle - SpinRounds - YieldRounds - 1, 6);
        int us = Math.Min(MinSleepMicroseconds << doublings, MaxSleepMicroseconds);
        Interlocked.Increment(ref s_sleeps);
        _ = usleep((uint)us);
    }

    // A sleep shorter than Thread.Sleep's millisecond; a normal P/Invoke, so the GC proceeds meanwhile.
    [DllImport("libc", SetLastError = false)]
    private static extern int usleep(uint microseconds);

    /// <summary>The scratch arrays of a round, grown as needed.</summary>
    private sealed class Batch
    {
        internal RequestHandle[] Handles = new RequestHandle[16];
        internal int[] Owner = new int[16];   // per handle: its entry's index in pending
        internal int[] Indices = new int[16];
        internal Status[] Statuses = new Status[16];
        internal bool[] Finished = new bool[16];

        internal void Fit(int n)
        {
            if (Handles.Length >= n)
                return;
            int size = Math.Max(n, Handles.Length * 2);
            Handles = new RequestHandle[size];
            Owner = new int[size];
            Indices = new int[size];
            Statuses = new Status[size];
            Finished = new bool[size];
        }
    }

    /// <summary>Tests every pending request once; finishes those completed.  Returns how many.</summary>
    private static int Round(List<AwaitEntry> pending, Batch b)
    {
        int n = pending.Count, k = 0, completed = 0;
        b.Fit(n);
        Array.Clear(b.Finished, 0, n);
        for (int i = 0; i < n; i++)
        {
            AwaitEntry e = pending[i];
            try
            {
                if (e.CancelAsked && !e.CancelDone && Cancel(e))
                {
                    b.Finished[i] = true;
                    completed++;
                    continue;
                }
                RequestHandle h = e.Request.SetEntry();
                if (h == RequestHandle.Null)
                    Done(e, e.Request.IdleStatus()); // completed by its owner meanwhile (against the rules, but harmless)
                else if (h == MpiRequest.ObjectPending)
                {
                    if (!e.Request.Test(out Status st))
                        continue;
                    Done(e, st);
                }
                else
                {
                    b.Handles[k] = h;
                    b.Owner[k++] = i;
                    continue;
                }
            }
            catch (Exception x)
            {
                Done(e, x);
            }
            b.Finished[i] = true;
            completed++;
        }
        if (k > 0)
            completed += TestSome(pending, b, k);
        if (completed > 0)
            Compact(pending, b.Finished);
        return completed;
    }

    /// <summary>One core testsome over the buffer and persistent requests of the round.</summary>
    private static int TestSome(List<AwaitEntry> pending, Batch b, int k)
    {
        int done;
        fixed (RequestHandle* h = b.Handles)
        fixed (int* idx = b.Indices)
        fixed (Status* st = b.Statuses)
            done = Core.ReqTestsome(k, h, idx, st);
        if (done < 0)
            return OneByOne(pending, b, k); // a handle was refused: some request was completed or freed behind the engine
        for (int j = 0; j < done; j++)
        {
            int i = b.Owner[b.Indices[j]];
            AwaitEntry e = pending[i];
            Status st = b.Statuses[j];
            try
            {
                Done(e, e.Request.FinishAlone(st.ErrorCode, st));
            }
            catch (Exception x)
            {
                Done(e, x);
            }
            b.Finished[i] = true;
        }
        return done;
    }

    private static int OneByOne(List<AwaitEntry> pending, Batch b, int k)
    {
        int done = 0;
        for (int j = 0; j < k; j++)
        {
            int i = b.Owner[j];
            AwaitEntry e = pending[i];
            try
            {
                if (!e.Request.Test(out Status st))
                    continue;
                Done(e, st);
            }
            catch (Exception x)
            {
                Done(e, x);
            }
            b.Finished[i] = true;
            done++;
        }
        return done;
    }

    /// <summary>
    /// Acts on a cancelled await.  A receive is cancelled in MPI (it then completes, cancelled
    /// or with its message, through the usual test); any other operation is not cancelled: its
    /// await ends now and the request goes back to its owner, still in flight.  True when the
    /// entry is done.
    /// </summary>
    private static bool Cancel(AwaitEntry e)
    {
        e.CancelDone = true;
        if (e.Request.CancelAwaited())
            return false;
        Cancelled(e);
        return true;
    }

    private static void Done(AwaitEntry e, Status status)
    {
        if (status.Cancelled && e.CancelAsked)
            Cancelled(e);
        else
            Finish(e).TrySetResult(status);
    }

    private static void Done(AwaitEntry e, Exception error) => Finish(e).TrySetException(error);

    private static void Cancelled(AwaitEntry e) => Finish(e).TrySetCanceled(e.Token);

    /// <summary>The request is its owner's again: forgets the await, drops the token's registration.</summary>
    private static AwaitEntry Finish(AwaitEntry e)
    {
        e.Request.AwaitEnded(e);
        e.Registration.Dispose();
        Interlocked.Decrement(ref s_pending);
        return e;
    }

    private static void Compact(List<AwaitEntry> pending, bool[] finished)
    {
        int w = 0;
        for (int r = 0; r < pending.Count; r++)
            if (!finished[r])
                pending[w++] = pending[r];
        pending.RemoveRange(w, pending.Count - w);
    }
}
