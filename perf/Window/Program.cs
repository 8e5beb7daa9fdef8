// Window: the request path alone, for instruction counts (perf/callgrind.sh);
// the C# twin of perf/native/window.c.  One rank posts a window of 64 IRecv
// from itself and 64 ISend to itself, then completes each half with one
// WaitAll: osu_bw's per-operation work without a second process, so an
// instruction count repeats from run to run.
//
//   dotnet Window.dll windows [bytes] [array|span|pinned|list]     (library mode)
//   motor  Window.dll windows [bytes] [array|span|pinned|list]     (hosted)
//
// array: ordinary byte[] buffers (pinned by a GCHandle in library mode,
// registered in the in-flight table under motor), Request.WaitAll(Request[]);
// span: the same with the allocation-free WaitAll(ReadOnlySpan<Request>);
// pinned: buffers from Mpi.AllocatePinned, which need neither, and spans;
// list: ordinary arrays posted into two RequestLists, each completed by its
// WaitAll (no Request object, no status array: nothing allocated per operation).
//
//   dotnet|motor Window.dll iterations [bytes] blocking
//
// blocking (CALLGRIND_CASE=blocking, the twin of perf/native/blocking.c): per
// iteration an ISend to itself, a blocking Recv of that message and the send's Wait.
using System.Globalization;
using System.MP;

const int Window = 64;
long windows = args.Length > 0 ? long.Parse(args[0], CultureInfo.InvariantCulture) : 1000;
int bytes = args.Length > 1 ? int.Parse(args[1], CultureInfo.InvariantCulture) : 8;
string mode = args.Length > 2 ? args[2] : "array";
bool pinned = mode == "pinned", spans = mode != "array";

var self = Communicator.Self;
byte[] send = pinned ? Mpi.AllocatePinned<byte>(bytes) : new byte[bytes];
byte[] recv = pinned ? Mpi.AllocatePinned<byte>(bytes) : new byte[bytes];
if (mode == "list")
{
    ListWindows(self, send, recv, bytes, windows);
    windows = 0;
}
else if (mode == "blocking")
{
    BlockingReceives(self, send, recv, bytes, windows);
    windows = 0;
}
RequestWindows(self, send, recv, bytes, windows, spans);
Console.WriteLine(Mpi.IsHosted ? (Mpi.GetStatistics().GcExtensionActive ? "motor, GC extension" : "motor, GCHandles") : "dotnet, GCHandles");
return 0;

// The list loop in a method of its own, as a user's solver step would be: the JIT
// keeps its values in registers instead of spilling them around Main's other locals.
static void ListWindows(Communicator self, byte[] send, byte[] recv, int bytes, long windows)
{
    using var recvList = new RequestList(Window);
    using var sendList = new RequestList(Window);
    for (long i = 0; i < windows; i++)
    {
        for (int w = 0; w < Window; w++)
            self.IRecv(recv, 0, bytes, 0, 100, recvList);
        for (int w = 0; w < Window; w++)
            self.ISend(send, 0, bytes, 0, 100, sendList);
        recvList.WaitAll();
        sendList.WaitAll();
    }
}

// The Request loop in a method of its own too, as the list loop.
static void RequestWindows(Communicator self, byte[] send, byte[] recv, int bytes, long windows, bool spans)
{
    var recvs = new Request[Window];
    var sends = new Request[Window];
    for (long i = 0; i < windows; i++)
    {
        for (int w = 0; w < Window; w++)
            recvs[w] = self.IRecv(recv, 0, bytes, 0, 100);
        for (int w = 0; w < Window; w++)
            sends[w] = self.ISend(send, 0, bytes, 0, 100);
        if (spans)
        {
            Request.WaitAll(recvs.AsSpan());
            Request.WaitAll(sends.AsSpan());
        }
        else
        {
            Request.WaitAll(recvs);
            Request.WaitAll(sends);
        }
    }
}

static void BlockingReceives(Communicator self, byte[] send, byte[] recv, int bytes, long iterations)
{
    for (long i = 0; i < iterations; i++)
    {
        using Request s = self.ISend(send, 0, bytes, 0, 100);
        self.Recv(recv, 0, 100);
        s.Wait();
    }
}
