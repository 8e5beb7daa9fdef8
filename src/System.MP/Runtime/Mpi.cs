using System.MP.Interop;
using System.Runtime.CompilerServices;
using System.Text;
using System.Threading;

namespace System.MP;

/// <summary>
/// The MPI environment of this process: initialization and shutdown, the
/// special rank and tag values, timers and identification.
/// </summary>
public static unsafe class Mpi
{
    /// <summary>Receive from any rank (MPI_ANY_SOURCE).</summary>
    public const int AnySource = -1;

    /// <summary>Receive a message with any tag (MPI_ANY_TAG).</summary>
    public const int AnyTag = -1;

    /// <summary>The null peer: sends to it and receives from it complete at once and move nothing (MPI_PROC_NULL).</summary>
    public const int ProcNull = -2;

    /// <summary>
    /// "Not defined": a <see cref="Communicator.Split"/> color meaning "in no new
    /// communicator", and the value of <see cref="Status.GetCount{T}"/> when the
    /// count is not a whole number of elements (MPI_UNDEFINED).
    /// </summary>
    public const int Undefined = -3;

    /// <summary>
    /// The root argument of the root process in a collective over an
    /// intercommunicator (MPI_ROOT); the other processes of its group pass
    /// <see cref="ProcNull"/>.
    /// </summary>
    public const int Root = -4;

    private const int StateNone = 0, StateReady = 1, StateShutDown = 2;

    private static readonly Lock s_lock = new();
    private static volatile int s_state;
    private static ThreadLevel s_threadLevel;
    private static readonly string[] s_levelNames = ["single", "funneled", "serialized", "multiple"];
    private static Communicator? s_world, s_self;

    // MPI_TAG_UB once initialized; before, the standard's guaranteed minimum (the core's too).
    private static int s_mpiTagUpperBound = 32767, s_tagUpperBound = 32767 / 2;

    /// <summary>
    /// Largest tag a program may use: half of the MPI library's MPI_TAG_UB (at least 16383; 134,217,727
    /// under MPICH, 1,073,741,823 under Open MPI); tags run from 0 to it.
    /// </summary>
    /// <remarks>
    /// The tags above it carry the continuation messages of large object payloads on the
    /// communicator itself, so that no communicator needs a private duplicate: making one is a
    /// collective call that the ranks of other programs in an MPMD job (C, Fortran, Python) never
    /// make.  A receive with <see cref="AnyTag"/> therefore must not run on another thread while an
    /// object payload larger than the first message arrives from the same source on the same
    /// communicator: it could take one of its pieces.
    /// </remarks>
    public static int TagUpperBound
    {
        [MethodImpl(MethodImplOptions.AggressiveInlining)]
        get => s_tagUpperBound;
    }

    /// <summary>The MPI library's MPI_TAG_UB: the tags above <see cref="TagUpperBound"/> up to it are the object transport's.</summary>
    internal static int MpiTagUpperBound => s_mpiTagUpperBound;

    /// <summary>True when <see cref="Wtime"/> is synchronized across all ranks of the job (MPI_WTIME_IS_GLOBAL).</summary>
    public static bool WtimeIsGlobal => WorldAttribute(CoreWorldAttr.WtimeIsGlobal) == 1;

    /// <summary>
    /// How many processes the job may have in all, counting those that spawning
    /// may add (MPI_UNIVERSE_SIZE); null when the launcher does not say.
    /// </summary>
    public static int? UniverseSize => WorldAttribute(CoreWorldAttr.UniverseSize);

    /// <summary>
    /// Which application of a multiple-program launch (<c>mpiexec -n 2 a : -n 2 b</c>) this
    /// process belongs to, from 0 (MPI_APPNUM); null when the launcher does not say.
    /// </summary>
    public static int? AppNum => WorldAttribute(CoreWorldAttr.Appnum);

    /// <summary>A predefined attribute of MPI_COMM_WORLD (the core's world_attr); null when unset.</summary>
    private static int? WorldAttribute(int which)
    {
        RequireInitialized();
        int value = 0, flag = 0;
        int rc = Core.WorldAttr(which, &value, &flag);
        ThrowHelper.Check(rc);
        return flag != 0 ? value : null;
    }

    /// <summary>True between a successful <see cref="Init"/> and <see cref="Shutdown"/>.</summary>
    public static bool IsInitialized => s_state == StateReady;

    /// <summary>
    /// True when the program runs under the motor VM (which owns MPI and pins
    /// in-flight buffers through its GC extension); false under plain dotnet.
    /// </summary>
    public static bool IsHosted => CoreLoader.IsHosted;

    /// <summary>The thread support MPI provides (at least what <see cref="Init"/> asked for, when the library can).</summary>
    public static ThreadLevel ThreadLevel
    {
        get
        {
            RequireInitialized();
            return s_threadLevel;
        }
    }

    /// <summary>
    /// True when the loaded MPI library provides <paramref name="feature"/>: portable code asks
    /// before it uses an optional MPI-4 feature instead of catching the
    /// <see cref="NotSupportedException"/> its calls throw where it is missing.  Needs no
    /// <see cref="Init"/>: it loads the library (as <see cref="LibraryVersion"/> does).
    /// </summary>
    /// <example>
    /// <code>
    /// // set up once and started every step where the library has it; a plain Allreduce elsewhere
    /// PersistentRequest? sum = Mpi.Supports(MpiFeature.PersistentCollectives)
    ///     ? world.AllreduceInit(local, total, Op.Sum)
    ///     : null;
    /// </code>
    /// </example>
    /// <param name="feature">The feature to ask about.</param>
    /// <returns>True under MPICH 4.0 or later for every feature; false under Open MPI 4.1 for every feature.</returns>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="feature"/> is not a value of <see cref="MpiFeature"/>.</exception>
    /// <exception cref="DllNotFoundException">No MPI library or message-passing core could be loaded.</exception>
    public static bool Supports(MpiFeature feature)
    {
        if ((uint)feature > (uint)MpiFeature.Sessions)
            throw new ArgumentOutOfRangeException(nameof(feature), feature, SR.Format(SR.FeatureRange, (int)feature));
        CoreLoader.EnsureLoaded();
        int rc = Core.MpiHas((int)feature);
        ThrowHelper.Check(rc);
        return rc != 0;
    }

    /// <summary>
    /// True on MPI's main thread: the thread that initialized MPI (MPI_Is_thread_main).  Under
    /// motor that is the thread that runs Main; at <see cref="ThreadLevel.Funneled"/> only it
    /// may call MPI.
    /// </summary>
    /// <exception cref="InvalidOperationException">MPI is not initialized.</exception>
    public static bool IsThreadMain
    {
        get
        {
            RequireInitialized();
            int flag = 0;
            int rc = Core.IsThreadMain(&flag);
            ThrowHelper.Check(rc);
            return flag != 0;
        }
    }

    /// <summary>
    /// Initializes MPI with the required thread level.  Idempotent: later calls
    /// return at once.  The first use of <see cref="Communicator.World"/> also
    /// initializes.  Under motor, MPI is already initialized by the VM.
    /// </summary>
    /// <remarks>
    /// The one setting that works in both modes is the project's runtime property
    /// <c>&lt;RuntimeHostConfigurationOption Include="Motor.ThreadLevel" Value="multiple" /&gt;</c>
    /// (or the environment variable MOTOR_THREAD_LEVEL): motor initializes MPI at that level
    /// before Main, and under plain dotnet this method (and the first use of
    /// <see cref="Communicator.World"/>) asks for at least that level.  Under motor a call
    /// asking for no more than the VM provided returns at once; one asking for more throws,
    /// since MPI cannot be initialized twice.
    /// </remarks>
    /// <exception cref="InvalidOperationException">MPI was already shut down in this process; the Motor.ThreadLevel setting names no level; or (under motor) the VM initialized MPI at a lower thread level than <paramref name="required"/>.</exception>
    /// <exception cref="DllNotFoundException">No MPI library or message-passing core could be loaded.</exception>
    /// <exception cref="MpiException">MPI_Init_thread failed.</exception>
    public static void Init(ThreadLevel required = ThreadLevel.Single)
    {
        if ((uint)required > (uint)ThreadLevel.Multiple)
            throw new ArgumentOutOfRangeException(nameof(required), required, SR.Format(SR.ThreadLevelRange, (int)required));
        if (s_state != StateReady)
            InitSlow(required);
        // Under motor the VM initialized MPI before Main, at the level it was
        // asked for; a program needing more must ask the VM.
        if (CoreLoader.IsHosted && required > s_threadLevel)
            throw new InvalidOperationException(SR.Format(SR.HostedThreadLevel, required, s_threadLevel, s_levelNames[(int)required]));
    }

    internal static void EnsureInitialized()
    {
        if (s_state != StateReady)
            InitSlow(ThreadLevel.Single);
    }

    private static unsafe void InitSlow(ThreadLevel required)
    {
        lock (s_lock)
        {
            if (s_state == StateReady)
                return;
            if (s_state == StateShutDown)
                throw new InvalidOperationException(SR.AfterShutdown);
            CoreLoader.EnsureLoaded();
            HangReport.Start(); // refuses a malformed setting before MPI starts
            MpiProfile.Start(); // the same, and a profile file that cannot be written
            if (!CoreLoader.IsHosted && ConfiguredThreadLevel() is ThreadLevel configured && configured > required)
                required = configured;
            int provided = 0, ub = 0;
            int rc = Core.Init((int)required, &provided);
            ThrowHelper.Check(rc);
            if (Core.TagUb(&ub) == 0)
                (s_mpiTagUpperBound, s_tagUpperBound) = (ub, ub / 2);
            ThrowHelper.Check(Core.ReserveTags(s_tagUpperBound)); // the object transport's pieces travel above it
            s_threadLevel = (ThreadLevel)provided;
            RequestPoster.UseSharedPoster(s_threadLevel < ThreadLevel.Multiple);
            // Known from here on and fixed: methods the JIT compiles later read them as constants,
            // so their posts keep no pinning path beside the registering one (or the reverse) and
            // their waits poll a known number of times.
            _ = BufferPolicy.RegistersBuffers;
            _ = Completion.SpinPolls;
            // motor sets this property to the level it asks MPI for before MPI says what it
            // provides (MPI starts beside the runtime); it names the level provided from here on.
            if (CoreLoader.IsHosted)
                AppContext.SetData("Motor.ThreadLevel", s_levelNames[provided]);
            s_world = new Communicator(CommHandle.World, predefined: true);
            s_self = new Communicator(CommHandle.Self, predefined: true);
            AppDomain.CurrentDomain.UnhandledException += OnUnhandledException;
            // MPI is finalized at process exit, also when Main does not return
            // (Environment.Exit); under motor the VM does it too if this did not run.
            AppDomain.CurrentDomain.ProcessExit += OnProcessExit;
            MpiMeter.Start();
            s_state = StateReady;
        }
    }

    /// <summary>
    /// The thread level the program's configuration asks for, the same setting motor reads
    /// before Main: the runtime property Motor.ThreadLevel (the project's
    /// <c>&lt;RuntimeHostConfigurationOption Include="Motor.ThreadLevel" Value="multiple" /&gt;</c>,
    /// in runtimeconfig.json), else the environment variable MOTOR_THREAD_LEVEL; null when
    /// neither is set.  Under motor the property holds the level the VM asked MPI for.
    /// </summary>
    /// <exception cref="InvalidOperationException">The setting names no thread level.</exception>
    internal static ThreadLevel? ConfiguredThreadLevel()
    {
        (string? value, string source) = AppContext.GetData("Motor.ThreadLevel") is string property
            ? (property, "The app's Motor.ThreadLevel")
            : (Environment.GetEnvironmentVariable("MOTOR_THREAD_LEVEL"), "MOTOR_THREAD_LEVEL");
        if (string.IsNullOrEmpty(value))
            return null;
        int level = Array.FindIndex(s_levelNames, n => string.Equals(n, value.Trim(), StringComparison.OrdinalIgnoreCase));
        return level >= 0 ? (ThreadLevel)level : throw new InvalidOperationException(SR.Format(SR.ThreadLevelSetting, source, value));
    }

    /// <summary>
    /// Allocates an array on the pinned object heap for use as a message
    /// buffer.  It never moves, so nonblocking operations on it need no pin of
    /// any kind (no GCHandle under plain dotnet, no in-flight registration
    /// under motor).  Worth it for buffers reused by many nonblocking
    /// operations; any other array works too.  Its data starts on a 64-byte
    /// boundary (checked; where the heap cannot arrange it, the array is
    /// returned as the GC placed it, on 8 bytes): copies of large messages
    /// between it and MPI's or the kernel's own buffers then run at full speed
    /// (perf/README.md, the placement experiment).
    /// </summary>
    /// <param name="length">Number of elements.</param>
    /// <exception cref="ArgumentOutOfRangeException"><paramref name="length"/> is negative.</exception>
    public static T[] AllocatePinned<T>(int length) where T : unmanaged
    {
        ArgumentOutOfRangeException.ThrowIfNegative(length);
        return PinnedBuffers.Allocate<T>(length);
    }

    /// <summary>A snapshot of this process's message-passing counters (also published as the meter "System.MP").</summary>
    public static MpiStatistics GetStatistics()
    {
        RequireInitialized();
        return MpiStatistics.Read();
    }

    internal static Communicator World
    {
        get
        {
            EnsureInitialized();
            return s_world!;
        }
    }

    internal static Communicator Self
    {
        get
        {
            EnsureInitialized();
            return s_self!;
        }
    }

    /// <summary>
    /// Finalizes MPI (MPI_Finalize), collectively over all ranks.  Happens
    /// automatically at process exit; after it, MPI cannot be used again in this
    /// process.  Calling it again does nothing.
    /// </summary>
    /// <remarks>
    /// Every rank enters MPI_Finalize together (the core puts a barrier first).  Some MPI
    /// libraries can then wait forever for peers that already left (MPICH 4.0.2 over UCX's TCP
    /// transport, between hosts); if MPI_Finalize has not returned <c>MOTOR_FINALIZE_TIMEOUT</c>
    /// seconds after every rank entered it (default 30; 0 waits forever), the process says so on
    /// stderr and ends with <see cref="Environment.ExitCode"/> as it was when this was called.
    /// </remarks>
    public static void Shutdown()
    {
        lock (s_lock)
        {
            if (s_state != StateReady)
                return;
            MpiProfile.Finish(); // collective over World, so before anything else of the shutdown
            s_self!.DeleteAttributes(); // MPI_Finalize first frees MPI_COMM_SELF's attributes (MPI-4.0 §11.2.4)
            ProgressEngine.Stop(); // it calls MPI: before MPI_Finalize
            s_state = StateShutDown;
            // The code this process would end with now, should MPI_Finalize never return
            // once every rank entered it (MOTOR_FINALIZE_TIMEOUT).
            StartupTrace.Mark("Mpi.Shutdown: finalizing MPI");
            int rc = Core.Finalize(Environment.ExitCode);
            StartupTrace.Mark("Mpi.Shutdown: MPI finalized");
            ThrowHelper.Check(rc);
        }
    }

    /// <summary>Seconds since an arbitrary time in the past (MPI_Wtime).</summary>
    public static double Wtime()
    {
        RequireInitialized();
        return Core.Wtime();
    }

    /// <summary>Resolution of <see cref="Wtime"/> in seconds (MPI_Wtick).</summary>
    public static double Wtick
    {
        get
        {
            RequireInitialized();
            return Core.Wtick();
        }
    }

    /// <summary>Name of the processor (host) this rank runs on (MPI_Get_processor_name).</summary>
    public static unsafe string ProcessorName
    {
        get
        {
            RequireInitialized();
            return CoreString(static (buf, cap) => Core.ProcessorName(buf, cap));
        }
    }

    /// <summary>The MPI library's version string (MPI_Get_library_version); available before <see cref="Init"/>.</summary>
    public static unsafe string LibraryVersion
    {
        get
        {
            CoreLoader.EnsureLoaded();
            return CoreString(static (buf, cap) => Core.LibraryVersion(buf, cap));
        }
    }

    /// <summary>Path of the MPI library file in use (empty before it is loaded).</summary>
    public static unsafe string LibraryPath
    {
        get
        {
            CoreLoader.EnsureLoaded();
            return new string((sbyte*)Core.LibraryPath());
        }
    }

    /// <summary>
    /// The command and arguments that start this program again: the motor VM
    /// and the app under motor, dotnet and the app in library mode.  Pass them
    /// to <see cref="Communicator.Spawn(string, string[], int, int)"/> (add the app's own arguments).
    /// </summary>
    public static (string Command, string[] Args) SelfCommand
    {
        get
        {
            string app = Environment.GetCommandLineArgs()[0]; // the entry assembly (.dll) of a framework-dependent app
            string? host = AppContext.GetData("Motor.HostPath") as string;
            if (CoreLoader.IsHosted && !string.IsNullOrEmpty(host))
                return (host, [app]);
            return (Environment.ProcessPath ?? "dotnet", [app]);
        }
    }

    /// <summary>Opens a port other jobs can <see cref="Communicator.Connect"/> to (MPI_Open_port).</summary>
    public static string OpenPort()
    {
        RequireInitialized();
        // Room for MPI_MAX_PORT_NAME (1024 in MPICH and Open MPI) from the start: the core closes
        // a port whose name does not fit and refuses, so asking again would open another.
        return CoreString(static (buf, cap) => Core.OpenPort(buf, cap), stackBytes: 4096);
    }

    /// <summary>Closes a port from <see cref="OpenPort"/> (MPI_Close_port).</summary>
    public static void ClosePort(string port)
    {
        ArgumentException.ThrowIfNullOrEmpty(port);
        RequireInitialized();
        fixed (byte* p = Encoding.UTF8.GetBytes(port + "\0"))
            ThrowHelper.Check(Core.ClosePort(p));
    }

    /// <summary>
    /// Publishes <paramref name="port"/> under <paramref name="service"/> (MPI_Publish_name).
    /// Needs a name server shared by the jobs that look the name up (Open MPI: start
    /// <c>ompi-server -r file</c> and pass <c>--ompi-server file:file</c> to each mpirun; within
    /// one mpirun its own server suffices. MPICH's hydra: <c>hydra_nameserver</c> and
    /// <c>-nameserver host</c>); without one the MPI library's error surfaces as <see cref="MpiException"/>.
    /// </summary>
    public static void PublishName(string service, string port)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        ArgumentException.ThrowIfNullOrEmpty(port);
        RequireInitialized();
        fixed (byte* s = Encoding.UTF8.GetBytes(service + "\0"))
        fixed (byte* p = Encoding.UTF8.GetBytes(port + "\0"))
            ThrowHelper.Check(Core.PublishName(s, p));
    }

    /// <summary>Removes a published name (MPI_Unpublish_name).</summary>
    public static void UnpublishName(string service, string port)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        ArgumentException.ThrowIfNullOrEmpty(port);
        RequireInitialized();
        fixed (byte* s = Encoding.UTF8.GetBytes(service + "\0"))
        fixed (byte* p = Encoding.UTF8.GetBytes(port + "\0"))
            ThrowHelper.Check(Core.UnpublishName(s, p));
    }

    /// <summary>The port published under <paramref name="service"/> (MPI_Lookup_name).</summary>
    public static string LookupName(string service)
    {
        ArgumentException.ThrowIfNullOrEmpty(service);
        RequireInitialized();
        byte[] name = Encoding.UTF8.GetBytes(service + "\0");
        return CoreString((buf, cap) =>
        {
            fixed (byte* s = name)
                return Core.LookupName(s, buf, cap);
        });
    }

    /// <summary>A core call that writes a string into (buf, cap) and returns its full length.</summary>
    private unsafe delegate int StringQuery(byte* buffer, int capacity);

    /// <summary>
    /// The whole string a core query returns: a second call with a buffer of the full
    /// length when the first did not hold it (nothing is ever cut short).
    /// </summary>
    private static unsafe string CoreString(StringQuery query, int stackBytes = 512)
    {
        byte* stack = stackalloc byte[stackBytes];
        int n = query(stack, stackBytes);
        ThrowHelper.Check(n);
        if (n < stackBytes)
            return Encoding.UTF8.GetString(stack, n);
        var heap = new byte[n + 1];
        fixed (byte* p = heap)
            n = query(p, heap.Length);
        ThrowHelper.Check(n);
        return Encoding.UTF8.GetString(heap, 0, Math.Min(n, heap.Length - 1));
    }

    /// <summary>
    /// Balanced extents for a grid of <paramref name="nodes"/> ranks in
    /// dims.Length dimensions (MPI_Dims_create); positive entries of
    /// <paramref name="dims"/> are kept, zeros are filled in.
    /// </summary>
    /// <exception cref="ArgumentException">An entry of <paramref name="dims"/> is negative, or the positive
    /// ones multiply to no divisor of <paramref name="nodes"/> (MPI-4.0 8.5.2).</exception>
    public static int[] DimsCreate(int nodes, int[] dims)
    {
        ArgumentNullException.ThrowIfNull(dims);
        ArgumentOutOfRangeException.ThrowIfNegativeOrZero(nodes);
        // The kept extents must divide nodes; multiplied only while at most nodes, so never wrapping.
        for (int i = 0; i < dims.Length; i++)
            if (dims[i] < 0)
                throw new ArgumentOutOfRangeException(nameof(dims), dims[i], SR.Format(SR.DimsNegative, i, dims[i]));
        long kept = 1;
        for (int i = 0; i < dims.Length; i++)
            if (dims[i] > 0 && (kept *= dims[i]) > nodes)
                break;
        if (kept > nodes || nodes % kept != 0)
            throw new ArgumentException(SR.Format(SR.DimsNotDivisor, nodes), nameof(dims));
        RequireInitialized();
        var result = (int[])dims.Clone();
        int rc;
        fixed (int* d = result)
            rc = Core.DimsCreate(nodes, result.Length, d);
        ThrowHelper.Check(rc);
        return result;
    }

    /// <summary>
    /// Ends every rank of the job with <paramref name="errorCode"/> (MPI_Abort
    /// on the world communicator).  Does not return.
    /// </summary>
    public static void Abort(int errorCode)
    {
        RequireInitialized();
        Console.Out.Flush(); // what the rank printed reaches the launcher first (the core waits for it to be read)
        Console.Error.Flush();
        int rc = Core.Abort(CommHandle.World, errorCode);
        ThrowHelper.ThrowCore(rc < 0 ? rc : CoreError.Mpi);
    }

    private static void RequireInitialized()
    {
        if (s_state != StateReady)
            throw new InvalidOperationException(s_state == StateShutDown ? SR.AfterShutdown : SR.NotInitialized);
    }

    private const int ExitAbortGraceMs = 1000;

    private static void OnProcessExit(object? sender, EventArgs e)
    {
        // A rank leaving with a failure code (Environment.Exit(3), or Main returning it)
        // must not wait in MPI_Finalize for ranks that wait for it: the job ends instead.
        int code = Environment.ExitCode;
        if (code != 0 && s_state == StateReady && s_world is { Size: > 1 } world)
        {
            Console.Error.WriteLine(SR.Format(SR.FailedExitAborts, world.Rank, code));
            // Ranks that leave with the same code at the same time (all of them failing
            // together) get a moment to have their last output read before the job ends.
            Thread.Sleep(ExitAbortGraceMs);
            Abort(code);
        }
        try
        {
            Shutdown();
        }
        catch (MpiException)
        {
            // Exit goes on; the MPI library reports what it must.
        }
    }

    private static unsafe void OnUnhandledException(object? sender, UnhandledExceptionEventArgs e)
    {
        if (s_state != StateReady)
            return;
        int rank = -1;
        Core.CommRank(CommHandle.World, &rank);
        Console.Error.WriteLine(SR.Format(SR.Unhandled, rank, e.ExceptionObject));
        Console.Error.Flush();
        Core.Abort(CommHandle.World, 1); // waits until the launcher has read the report
    }
}
