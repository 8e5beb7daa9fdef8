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
/// round completes nothing: it spins briefly, then yields, then sleeps 20 µs doubling up to
/// 1 ms; once nothing has completed for longer than 64 ms, each sleep is a 64th of the time
/// waited so far, up to <see cref="LongestSleep"/> (4 ms by default).  So a process whose awaited
/// operations wait for a long time uses almost no processor time (each wake-up costs tens of
/// microseconds in the kernel, more on a virtual machine), and an operation that completes
/// after a wait of T is noticed within max(1 ms, T/64) of it, at most LongestSleep.  A new
/// await or a cancellation wakes the engine at once.  With nothing awaited the thread blocks
/// until something is.
/// </summary>
/// <remarks>
/// <para>
/// The engine calls MPI from its own thread, so awaiting needs
/// <see cref="ThreadLevel.Multiple"/>: below it the first await throws
/// <see cref="InvalidOperationException"/> naming the level and how to ask for Multiple
/// (<c>Mpi.Init(ThreadLevel.Multiple)</c> before any other MPI use; under motor
/// <c>motor --thread-level multiple</c> or the runtime property Motor.ThreadLevel).
/// </para>
/// <para>
/// Where continuations run: <c>await request</c> (and <c>ConfigureAwait(false)</c>) resumes on
/// the engine's thread when the engine completed the request (<see cref="InlineContinuations"/>,
/// on by default): no hand-off to another thread, which is what an await through the engine
/// costs most.  <c>await request.ConfigureAwait(true)</c> resumes on the captured
/// <see cref="SynchronizationContext"/> (or task scheduler) as before.  A continuation that runs
/// longer than about a millisecond, or blocks (in MPI, on a lock, or on another awaited task),
/// does not hold the engine up: the engine moves to another thread (the one it left last time,
/// parked since its continuation returned, or a new one) and completes the other awaits
/// meanwhile (<see cref="HandOffs"/> counts these moves), so a continuation may wait for
/// what another await delivers.  An await inside such a continuation polls
/// (<see cref="CallerPolls"/>) as on any thread: a loop of awaits whose replies come at once
/// runs on as one long continuation, and the engine moves on without it.
/// </para>
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
    /// ping-pong, MPICH): an await through the engine alone costs about twice a blocking Recv;
    /// with the caller polling, about 1.1-1.2 times.
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

    private static bool s_inline = ReadInline();

    private static bool ReadInline() => Environment.GetEnvironmentVariable("MOTOR_AWAIT_INLINE") is not "0";

    /// <summary>
    /// True (the default; $MOTOR_AWAIT_INLINE=0 sets false at start): the engine runs the
    /// continuations of the awaits it completes on its own thread, handing itself over to a new
    /// thread when one runs long or blocks (see the remarks of <see cref="AsyncProgress"/>).  False:
    /// each completed await's continuations are queued to the thread pool, so the engine never
    /// runs user code, at the price of a thread switch per await.
    /// </summary>
    public static bool InlineContinuations
    {
        get => Volatile.Read(ref s_inline);
        set => Volatile.Write(ref s_inline, value);
    }

    /// <summary>Times so far that a continuation ran long or blocked on the engine's thread and the engine moved to another thread (a parked one, or a new one).</summary>
    public static long HandOffs => ProgressEngine.HandOffs;

    /// <summary>Requests the engine is completing now (awaited and not yet completed).</summary>
    public static int Pending => ProgressEngine.Pending;

    /// <summary>Rounds the engine has made so far (each tests every awaited request once).</summary>
    public static long Rounds => ProgressEngine.Rounds;

    /// <summary>Times the engine has slept (backed off) so far because a round completed nothing.</summary>
    public static long Sleeps => ProgressEngine.Sleeps;

    /// <summary>
    /// Times so far that a sleep of a millisecond or more was cut short because a new await or a
    /// cancellation arrived (the engine then tests at once instead of sleeping on).
    /// </summary>
    public static long WakeUps => ProgressEngine.WakeUps;

    /// <summary>
    /// The engine's current sleep between two rounds, or its last one while it is between
    /// sleeps; zero while it has not slept since something last completed or was awaited: about
    /// how long an operation completing now may go unnoticed.  It grows while nothing completes,
    /// up to <see cref="LongestSleep"/>.
    /// </summary>
    public static TimeSpan CurrentSleep => TimeSpan.FromTicks(ProgressEngine.CurrentSleepMicroseconds * TimeSpan.TicksPerMicrosecond);

    /// <summary>The default of <see cref="LongestSleep"/>: 4 ms.</summary>
    public static readonly TimeSpan DefaultLongestSleep = TimeSpan.FromMilliseconds(4);

    private static int s_longestSleepMs = ReadLongestSleep();

    private static int ReadLongestSleep()
    {
        string? s = Environment.GetEnvironmentVariable("MOTOR_AWAIT_LONGEST_SLEEP_MS");
        return s is not null && int.TryParse(s, out int ms) && ms is >= 1 and <= 1000 ? ms : (int)DefaultLongestSleep.TotalMilliseconds;
    }

    /// <summary>
    /// The longest the engine sleeps between two rounds while its awaited operations wait for a
    /// long time (default <see cref="DefaultLongestSleep"/>; $MOTOR_AWAIT_LONGEST_SLEEP_MS sets the
    /// starting value): the most an operation that completes after a long wait can go unnoticed.
    /// Whole milliseconds from 1 to 1000.  1 ms keeps that delay at most 1 ms at the price of a
    /// wake-up every millisecond while anything is awaited (about 2-5 % of a core on the
    /// machines measured, most of it the kernel's); the default wakes a long-idle engine 250
    /// times a second.
    /// </summary>
    /// <exception cref="ArgumentOutOfRangeException">The value is not a whole number of milliseconds from 1 to 1000.</exception>
    public static TimeSpan LongestSleep
    {
        get => TimeSpan.FromMilliseconds(Volatile.Read(ref s_longestSleepMs));
        set
        {
            if (value.Ticks % TimeSpan.TicksPerMillisecond != 0 || value < TimeSpan.FromMilliseconds(1) || value > TimeSpan.FromSeconds(1))
                throw new ArgumentOutOfRangeException(nameof(value), value, SR.LongestSleepRange);
            Volatile.Write(ref s_longestSleepMs, (int)value.TotalMilliseconds);
        }
    }

    internal static int LongestSleepMilliseconds => Volatile.Read(ref s_longestSleepMs);
}

/// <summary>
/// One awaited request: its task, the cancellation asked for it, and its outcome once the engine
/// has it (set on the engine's thread, then delivered: inline or on the thread pool).
/// </summary>
internal sealed class AwaitEntry : TaskCompletionSource<Status>, IThreadPoolWorkItem
{
    private enum Outcome : byte { Result, Error, Cancelled }

    internal readonly MpiRequest Request;
    internal readonly CancellationToken Token;
    internal CancellationTokenRegistration Registration;
    internal volatile bool CancelAsked;
    internal bool CancelDone; // the engine's: MPI_Cancel was issued (or the request given back)
    private Outcome _outcome;
    private Status _status;
    private Exception? _error;

    // No RunContinuationsAsynchronously: the engine decides where continuations run (Deliver).
    internal AwaitEntry(MpiRequest request, CancellationToken token)
    {
        Request = request;
        Token = token;
    }

    internal void SetOutcome(Status status) => (_outcome, _status) = (Outcome.Result, status);

    internal void SetOutcome(Exception error) => (_outcome, _error) = (Outcome.Error, error);

    internal void SetOutcomeCancelled() => _outcome = Outcome.Cancelled;

    /// <summary>Completes the task with the outcome set; its synchronous continuations run on this thread.</summary>
    internal void Complete()
    {
        switch (_outcome)
        {
            case Outcome.Result:
                TrySetResult(_status);
                break;
            case Outcome.Error:
                TrySetException(_error!);
                break;
            default:
                TrySetCanceled(Token);
                break;
        }
    }

    void IThreadPoolWorkItem.Execute() => Complete();
}

/// <summary>
/// The process's one progress engine (see <see cref="AsyncProgress"/>): a background thread that
/// owns every awaited request from <see cref="Add"/> until its task completes.  It alone tests,
/// cancels and finishes them, so the single-thread rule of the request types holds.
/// </summary>
/// <remarks>
/// The engine's state (<see cref="State"/>) belongs to one thread at a time, the runner.  A
/// runner delivers completed awaits by running their continuations itself; while it is inside one
/// (<see cref="s_inline"/> odd), a watchdog thread checks every millisecond, and a continuation
/// that is still the same one a tick later, or that is about to block in MPI on this thread, loses
/// the engine: a new runner takes the state over, and the old thread, once its continuation
/// returns, parks as the spare runner that the next such move wakes instead of starting a thread
/// (one spare at most; a thread that finds the place taken ends).  One compare-and-swap on
/// <see cref="s_inline"/> decides each such race, so the state never has two owners.
/// </remarks>
internal static unsafe class ProgressEngine
{
    private const int SpinRounds = 64, YieldRounds = 64, MinSleepMicroseconds = 20, MaxSleepMicroseconds = 1000;

    /// <summary>Past the first millisecond sleeps, each sleep is this share (1/N) of the time slept since the last completion.</summary>
    private const int WaitedShare = 64;

    /// <summary>Watchdog ticks without a continuation on the engine after which the watchdog sleeps until the next one.</summary>
    private const int QuietTicks = 16;

    private static readonly ConcurrentQueue<AwaitEntry> s_incoming = new();
    private static readonly ManualResetEventSlim s_wake = new(false, spinCount: 0); // the engine's sleeps wait on it: no spinning there (Drive spins where it helps)
    private static readonly ManualResetEventSlim s_exited = new(false);
    private static readonly ManualResetEventSlim s_watchWake = new(false);
    private static readonly Lock s_lock = new();
    private static readonly State s_state = new();
    private static Thread? s_runner;
    private static Thread? s_watchdog;
    private static Spare? s_spare;
    private static volatile bool s_stopping;
    private static volatile bool s_watchArmed;
    private static int s_pending;
    private static long s_rounds, s_sleeps, s_handOffs, s_wakeUps, s_currentSleepUs;

    /// <summary>Even: the runner is in no continuation; odd: it is in one (each continuation adds 2).</summary>
    private static long s_inline;

    /// <summary>
    /// On the thread running a continuation it delivered as the runner: that continuation's odd
    /// <see cref="s_inline"/> value (0 elsewhere).  Still set on a thread deposed meanwhile, whose
    /// value then no longer matches.
    /// </summary>
    [ThreadStatic]
    private static long t_continuation;

    internal static int Pending => Volatile.Read(ref s_pending);
    internal static long Rounds => Volatile.Read(ref s_rounds);
    internal static long Sleeps => Volatile.Read(ref s_sleeps);
    internal static long HandOffs => Volatile.Read(ref s_handOffs);
    internal static long WakeUps => Volatile.Read(ref s_wakeUps);
    internal static long CurrentSleepMicroseconds => Volatile.Read(ref s_currentSleepUs);

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
        if (s_runner is null)
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
            if (s_runner is not null)
                return;
            if (s_stopping)
                throw new InvalidOperationException(SR.AfterShutdown);
            s_runner = StartRunner();
        }
    }

    private static Thread StartRunner()
    {
        var t = new Thread(Run) { IsBackground = true, Name = "MPI progress" };
        t.Start();
        return t;
    }

    /// <summary>A deposed runner's thread, parked until a move of the engine wakes it to run again, or until the engine stops.</summary>
    private sealed class Spare
    {
        internal readonly Thread Thread = Thread.CurrentThread;
        internal readonly ManualResetEventSlim Go = new(false);
        internal volatile bool Exit;
    }

    [ThreadStatic]
    private static Spare? t_spare;

    /// <summary>
    /// On a thread that lost the engine, once its continuation returned: waits as the spare runner.
    /// True when woken to run the engine; false at once when there is a spare already or the engine
    /// stops (the thread then ends).
    /// </summary>
    private static bool Park()
    {
        Spare me = t_spare ??= new Spare();
        me.Go.Reset();
        me.Exit = false;
        if (Interlocked.CompareExchange(ref s_spare, me, null) is not null)
            return false;
        // A runner that stopped before the place was taken did not see this spare.
        if (s_stopping && Interlocked.CompareExchange(ref s_spare, null, me) == me)
            return false;
        me.Go.Wait();
        return !me.Exit;
    }

    /// <summary>
    /// Before MPI_Finalize: stops the engine; the awaits still pending fail with
    /// <see cref="InvalidOperationException"/> (their operations never completed).
    /// </summary>
    internal static void Stop()
    {
        lock (s_lock)
        {
            s_stopping = true;
            if (s_runner is null)
                return;
        }
        if (t_continuation != 0)
            HandOff(); // called from a continuation on the runner: a new runner winds the engine up
        s_wake.Set();
        s_watchWake.Set();
        s_exited.Wait(); // set by the runner that stops, whichever thread that is by then
    }

    /// <summary>
    /// On the runner inside a continuation, before it blocks: gives the engine to a new runner at
    /// once (the watchdog would after a tick).  Elsewhere nothing.
    /// </summary>
    internal static void BeforeBlocking()
    {
        if (t_continuation != 0)
            HandOff();
    }

    /// <summary>Gives the engine away from inside this thread's continuation, unless it was taken already.</summary>
    private static void HandOff()
    {
        long v = t_continuation;
        t_continuation = 0;
        Depose(v);
    }

    /// <summary>Takes the engine from the runner stuck in continuation <paramref name="v"/>; false when it has left it meanwhile.</summary>
    private static bool Depose(long v)
    {
        if (Interlocked.CompareExchange(ref s_inline, v + 1, v) != v)
            return false;
        Interlocked.Increment(ref s_handOffs);
        lock (s_lock)
        {
            if (Interlocked.Exchange(ref s_spare, null) is { } spare)
            {
                s_runner = spare.Thread;
                spare.Go.Set();
            }
            else
                s_runner = StartRunner();
        }
        return true;
    }

    /// <summary>The engine's state, owned by the runner of the moment.</summary>
    private sealed class State
    {
        internal readonly List<AwaitEntry> Pending = [];
        internal readonly Batch Batch = new();
        internal readonly List<AwaitEntry> Ready = []; // completed, outcome set, not yet delivered
        internal int Next; // Ready's next to deliver
        internal int Idle; // rounds since the last completion or new await
        internal long SleptMicroseconds; // slept since then
    }

    private static void Run()
    {
        while (Drive() && Park())
        {
        }
    }

    /// <summary>Runs the engine until it stops (false) or this thread loses it (true).</summary>
    private static bool Drive()
    {
        State st = s_state;
        if (!Deliver(st))
            return true;
        for (; ; )
        {
            s_wake.Reset(); // before the queue is read: an Add after it sets it again
            int added = st.Pending.Count;
            while (s_incoming.TryDequeue(out AwaitEntry? e))
                st.Pending.Add(e);
            if (s_stopping)
                break;
            if (st.Pending.Count == 0)
            {
                // A short spin first: the next await often comes within microseconds (a loop of them).
                var spin = new SpinWait();
                while (!s_wake.IsSet && !spin.NextSpinWillYield)
                    spin.SpinOnce();
                s_wake.Wait();
                continue;
            }
            if (st.Pending.Count > added)
                Awake(st); // a new await: its operation may complete soon
            Interlocked.Increment(ref s_rounds);
            if (Round(st) > 0)
            {
                Awake(st);
                if (!Deliver(st))
                    return true; // deposed: another runner has the state
            }
            else
                BackOff(st);
        }
        while (s_incoming.TryDequeue(out AwaitEntry? e))
            st.Pending.Add(e);
        foreach (AwaitEntry e in st.Pending)
        {
            e.SetOutcome(new InvalidOperationException(SR.AfterShutdown));
            Finish(e);
            st.Ready.Add(e);
        }
        st.Pending.Clear();
        // MPI is being finalized: no continuation runs here; they get the pool.
        for (; st.Next < st.Ready.Count; st.Next++)
            ThreadPool.UnsafeQueueUserWorkItem(st.Ready[st.Next], preferLocal: false);
        st.Ready.Clear();
        if (Interlocked.Exchange(ref s_spare, null) is { } spare)
        {
            spare.Exit = true;
            spare.Go.Set();
        }
        s_exited.Set();
        s_watchWake.Set();
        return false;
    }

    /// <summary>
    /// Completes the awaits of <see cref="State.Ready"/>: continuations inline on this thread
    /// (<see cref="AsyncProgress.InlineContinuations"/>) or on the thread pool.  False when a
    /// continuation ran long or blocked and this thread lost the engine meanwhile.
    /// </summary>
    private static bool Deliver(State st)
    {
        List<AwaitEntry> ready = st.Ready;
        while (st.Next < ready.Count)
        {
            AwaitEntry e = ready[st.Next++];
            if (!AsyncProgress.InlineContinuations || s_stopping) // stopping: MPI is about to be finalized
            {
                ThreadPool.UnsafeQueueUserWorkItem(e, preferLocal: false);
                continue;
            }
            long v = Volatile.Read(ref s_inline); // even: only this thread changes it now
            Interlocked.Exchange(ref s_inline, v + 1);
            if (!s_watchArmed)
                ArmWatchdog();
            t_continuation = v + 1;
            try
            {
                e.Complete();
            }
            finally
            {
                t_continuation = 0;
            }
            if (Interlocked.CompareExchange(ref s_inline, v + 2, v + 1) != v + 1)
                return false;
        }
        ready.Clear();
        st.Next = 0;
        return true;
    }

    private static void ArmWatchdog()
    {
        s_watchArmed = true;
        if (s_watchdog is null)
        {
            lock (s_lock)
            {
                if (s_watchdog is null)
                {
                    var t = new Thread(Watch) { IsBackground = true, Name = "MPI progress watchdog" };
                    t.Start();
                    s_watchdog = t;
                }
            }
        }
        s_watchWake.Set();
    }

    /// <summary>
    /// The watchdog: while continuations run on the engine, every millisecond, deposes a runner
    /// that is still in the continuation it was in at the last tick.  Sleeps when none ran for
    /// <see cref="QuietTicks"/> ticks, until the next.
    /// </summary>
    private static void Watch()
    {
        long last = -1;
        int quiet = 0;
        while (!s_exited.IsSet) // until the engine has stopped: a continuation may hold the runner up in Stop
        {
            if (!s_watchArmed)
            {
                s_watchWake.Wait();
                s_watchWake.Reset();
                last = -1;
                quiet = 0;
                continue;
            }
            Thread.Sleep(1);
            long v = Interlocked.Read(ref s_inline);
            if ((v & 1) != 0 && v == last && Depose(v))
                v = -1;
            quiet = v == last ? quiet + 1 : 0;
            last = v;
            if (quiet >= QuietTicks)
            {
                s_watchArmed = false;
                // A runner that entered a continuation after the read above saw the flag still
                // set and did not arm: look again, now that the flag is down.
                if (Interlocked.Read(ref s_inline) != last)
                    s_watchArmed = true;
            }
        }
    }

    /// <summary>Something completed or was newly awaited: the back-off starts over.</summary>
    private static void Awake(State st)
    {
        st.Idle = 0;
        st.SleptMicroseconds = 0;
        Volatile.Write(ref s_currentSleepUs, 0);
    }

    /// <summary>
    /// Spin, then yield, then sleep with growing intervals (up to 1 ms, then a share of the time
    /// waited, up to <see cref="AsyncProgress.LongestSleep"/>) while nothing completes.  Sleeps
    /// of a millisecond or more wait on <see cref="s_wake"/>, which a new await or a
    /// cancellation sets.
    /// </summary>
    private static void BackOff(State st)
    {
        int idle = ++st.Idle;
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
        if (us < MaxSleepMicroseconds)
        {
            st.SleptMicroseconds += us;
            Volatile.Write(ref s_currentSleepUs, us);
            _ = usleep((uint)us);
            return;
        }
        int ms = (int)Math.Clamp(st.SleptMicroseconds / WaitedShare / 1000, 1, AsyncProgress.LongestSleepMilliseconds);
        st.SleptMicroseconds += ms * 1000L;
        Volatile.Write(ref s_currentSleepUs, ms * 1000L);
        if (s_wake.Wait(ms))
            Interlocked.Increment(ref s_wakeUps);
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
    private static int Round(State state)
    {
        List<AwaitEntry> pending = state.Pending, ready = state.Ready;
        Batch b = state.Batch;
        int n = pending.Count, k = 0, completed = 0;
        b.Fit(n);
        Array.Clear(b.Finished, 0, n);
        for (int i = 0; i < n; i++)
        {
            AwaitEntry e = pending[i];
            try
            {
                if (e.CancelAsked && !e.CancelDone && Cancel(e, ready))
                {
                    b.Finished[i] = true;
                    completed++;
                    continue;
                }
                RequestHandle h = e.Request.SetEntry();
                if (h == RequestHandle.Null)
                    Done(ready, e, e.Request.IdleStatus()); // completed by its owner meanwhile (against the rules, but harmless)
                else if (h == MpiRequest.ObjectPending)
                {
                    if (!e.Request.Test(out Status st))
                        continue;
                    Done(ready, e, st);
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
                Done(ready, e, x);
            }
            b.Finished[i] = true;
            completed++;
        }
        if (k > 0)
            completed += TestSome(pending, ready, b, k);
        if (completed > 0)
            Compact(pending, b.Finished);
        return completed;
    }

    /// <summary>One core testsome over the buffer and persistent requests of the round.</summary>
    private static int TestSome(List<AwaitEntry> pending, List<AwaitEntry> ready, Batch b, int k)
    {
        int done;
        fixed (RequestHandle* h = b.Handles)
        fixed (int* idx = b.Indices)
        fixed (Status* st = b.Statuses)
            done = Core.ReqTestsome(k, h, idx, st);
        if (done < 0)
            return OneByOne(pending, ready, b, k); // a handle was refused: some request was completed or freed behind the engine
        for (int j = 0; j < done; j++)
        {
            int i = b.Owner[b.Indices[j]];
            AwaitEntry e = pending[i];
            Status st = b.Statuses[j];
            try
            {
                Done(ready, e, e.Request.FinishAlone(st.ErrorCode, st));
            }
            catch (Exception x)
            {
                Done(ready, e, x);
            }
            b.Finished[i] = true;
        }
        return done;
    }

    private static int OneByOne(List<AwaitEntry> pending, List<AwaitEntry> ready, Batch b, int k)
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
                Done(ready, e, st);
            }
            catch (Exception x)
            {
                Done(ready, e, x);
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
    private static bool Cancel(AwaitEntry e, List<AwaitEntry> ready)
    {
        e.CancelDone = true;
        if (e.Request.CancelAwaited())
            return false;
        Cancelled(ready, e);
        return true;
    }

    private static void Done(List<AwaitEntry> ready, AwaitEntry e, Status status)
    {
        if (status.Cancelled && e.CancelAsked)
            e.SetOutcomeCancelled();
        else
            e.SetOutcome(status);
        ready.Add(Finish(e));
    }

    private static void Done(List<AwaitEntry> ready, AwaitEntry e, Exception error)
    {
        e.SetOutcome(error);
        ready.Add(Finish(e));
    }

    private static void Cancelled(List<AwaitEntry> ready, AwaitEntry e)
    {
        e.SetOutcomeCancelled();
        ready.Add(Finish(e));
    }

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
