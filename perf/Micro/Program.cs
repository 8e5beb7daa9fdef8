// Micro-benchmarks of Motor's call path (BenchmarkDotNet, in-process, short runs):
//   dotnet Micro.dll --filter '*' [--artifacts dir]
// MOTOR_MICRO_JOB=dry runs each benchmark once (a check that they all run, not a measurement).
using System.MP;
using System.Runtime.InteropServices;
using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Exporters;
using BenchmarkDotNet.Jobs;
using BenchmarkDotNet.Running;
using BenchmarkDotNet.Toolchains.InProcess.Emit;

var job = Environment.GetEnvironmentVariable("MOTOR_MICRO_JOB") switch
{
    null or "" or "short" => Job.ShortRun,
    "dry" => Job.Dry,
    string other => throw new ArgumentException($"MOTOR_MICRO_JOB must be 'short' or 'dry', not '{other}'"),
};
var config = ManualConfig.CreateMinimumViable()
    .AddJob(job.WithToolchain(InProcessEmitToolchain.Instance))
    .AddExporter(MarkdownExporter.GitHub);
BenchmarkSwitcher.FromAssembly(typeof(CallPath).Assembly).Run(args, config);

/// <summary>
/// One call into the core (mp_core_table, its one export: returns the call table's
/// address, touches no MPI) by each way .NET can call native code.  System.MP uses
/// the first for every call that never waits.
/// </summary>
[MemoryDiagnoser]
public unsafe class CallPath
{
    private delegate* unmanaged[Cdecl, SuppressGCTransition]<nint> _fast;
    private delegate* unmanaged[Cdecl]<nint> _normal;

    [GlobalSetup]
    public void Setup()
    {
        nint lib = NativeLibrary.Load(Path.Combine(AppContext.BaseDirectory, "libmpcore.so"));
        nint table = NativeLibrary.GetExport(lib, "mp_core_table");
        _fast = (delegate* unmanaged[Cdecl, SuppressGCTransition]<nint>)table;
        _normal = (delegate* unmanaged[Cdecl]<nint>)table;
    }

    [Benchmark(Baseline = true, Description = "fn ptr + SuppressGCTransition (System.MP fast call)")]
    public nint FastCall() => _fast();

    [Benchmark(Description = "fn ptr with GC transition")]
    public nint NormalCall() => _normal();

    [Benchmark(Description = "DllImport")]
    public nint DllImportCall() => Native.mp_core_table();

    private static class Native
    {
        [DllImport("libmpcore.so")]
        internal static extern nint mp_core_table();
    }
}

/// <summary>The managed and core cost around an operation, with the MPI library out of the way (ProcNull).</summary>
[MemoryDiagnoser]
public class Requests
{
    private readonly byte[] _buffer = new byte[64];
    private readonly byte[] _pinned = Mpi.AllocatePinned<byte>(64);
    private Communicator _world = null!;

    [GlobalSetup]
    public void Setup() => _world = Communicator.World;

    [Benchmark(Description = "blocking Send (fixed + one fast call)")]
    public void BlockingSend() => _world.Send(_buffer, Mpi.ProcNull, 0);

    [Benchmark(Description = "ISend + Wait (Request, GCHandle in library mode)")]
    public Status ISendWait() => _world.ISend(_buffer, Mpi.ProcNull, 0).Wait();

    [Benchmark(Description = "ISend + Wait on a pinned-heap buffer (no pin)")]
    public Status ISendWaitPinnedHeap() => _world.ISend(_pinned, Mpi.ProcNull, 0).Wait();

    [Benchmark(Description = "IRecv + Test + Status.GetCount")]
    public int IRecvTest()
    {
        _world.IRecv(_buffer, Mpi.ProcNull, 0).Test(out Status st);
        return st.GetCount<byte>();
    }
}

/// <summary>A node of Motor's Figure 5 list: an array and a link, both followed.</summary>
[Transportable]
public sealed class Node
{
    [Transportable] public int[]? Data;
    [Transportable] public Node? Next;
}

/// <summary>
/// Object transport on one rank: OISend to self, ORecv, Wait - encode, one
/// self message and decode.  (cost(N) − cost(1)) / (N − 1) is the serializer's
/// per-object cost (two objects per node: the node and its array).
/// </summary>
[MemoryDiagnoser]
public class ObjectTransport
{
    private Node? _list;
    private Communicator _world = null!;

    [Params(1, 1024)]
    public int Nodes { get; set; }

    [GlobalSetup]
    public void Setup()
    {
        _world = Communicator.World;
        for (int i = 0; i < Nodes; i++)
            _list = new Node { Data = new int[Math.Max(1, 1024 / Nodes)], Next = _list };
    }

    [Benchmark(Description = "OISend to self + ORecv (4 KiB of ints over N nodes)")]
    public object? RoundTrip()
    {
        using ObjectRequest send = _world.OISend(_list, 0, 7);
        object? received = _world.ORecv(0, 7);
        send.Wait();
        return received;
    }
}
