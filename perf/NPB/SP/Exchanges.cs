using MultiPartition = Npb.Multipartition.MultiPartition<Npb.SP.Cell>;
using System.MP;

namespace Npb.SP;

/// <summary>Message tags of SP's exchanges.</summary>
internal static class Tags
{
    /// <summary>The face exchange's first tag: faces travel up along axis a on 1 + 2a, down on 2 + 2a.</summary>
    public const int Faces = 1;

    /// <summary>The forward elimination's and the back substitution's messages along axis a.</summary>
    public static int Forward(int a) => 11 + a;

    public static int Backward(int a) => 21 + a;
}

/// <summary>
/// The messages of one axis's pipelined line solve: at stage s a rank takes its predecessor's
/// last two eliminated rows for its cell at position s (sent at the predecessor's stage s − 1)
/// and, in the back substitution, its successor's first two solved rows. Persistent requests
/// per stage over pinned buffers made once; the receives of a whole solve are posted at its
/// start, in the order they will be consumed.
/// </summary>
internal sealed class Pipeline : IDisposable
{
    private readonly PersistentRequest?[] _fwdRecv, _fwdSend, _bwdRecv, _bwdSend;
    private readonly double[]?[] _fwdIn, _fwdOut, _bwdIn, _bwdOut;
    private readonly int _p;

    public Pipeline(Communicator comm, MultiPartition part, int a)
    {
        int p = _p = part.P;
        (_fwdRecv, _fwdSend, _bwdRecv, _bwdSend) = (new PersistentRequest?[p], new PersistentRequest?[p], new PersistentRequest?[p], new PersistentRequest?[p]);
        (_fwdIn, _fwdOut, _bwdIn, _bwdOut) = (new double[]?[p], new double[]?[p], new double[]?[p], new double[]?[p]);
        for (int s = 0; s < p; s++)
        {
            var lines = new Lines(part.Cells[part.Slice[a][s]], a);
            if (s > 0)
            {
                _fwdIn[s] = Mpi.AllocatePinned<double>(lines.ForwardCount);
                _fwdRecv[s] = comm.RecvInit(_fwdIn[s]!, part.Predecessor[a], Tags.Forward(a));
                _bwdOut[s] = Mpi.AllocatePinned<double>(lines.BackwardCount);
                _bwdSend[s] = comm.SendInit(_bwdOut[s]!, part.Predecessor[a], Tags.Backward(a));
            }
            if (s < p - 1)
            {
                _fwdOut[s] = Mpi.AllocatePinned<double>(lines.ForwardCount);
                _fwdSend[s] = comm.SendInit(_fwdOut[s]!, part.Successor[a], Tags.Forward(a));
                _bwdIn[s] = Mpi.AllocatePinned<double>(lines.BackwardCount);
                _bwdRecv[s] = comm.RecvInit(_bwdIn[s]!, part.Successor[a], Tags.Backward(a));
            }
        }
    }

    /// <summary>Posts the solve's receives: forward in stage order, backward in reverse stage order.</summary>
    public void Begin()
    {
        for (int s = 1; s < _p; s++)
            _fwdRecv[s]!.Start();
        for (int s = _p - 2; s >= 0; s--)
            _bwdRecv[s]!.Start();
    }

    public Span<double> ReceiveForward(int s)
    {
        _fwdRecv[s]!.Wait();
        return _fwdIn[s];
    }

    public Span<double> ForwardBuffer(int s) => _fwdOut[s];

    public void SendForward(int s) => _fwdSend[s]!.Start();

    public Span<double> ReceiveBackward(int s)
    {
        _bwdRecv[s]!.Wait();
        return _bwdIn[s];
    }

    public Span<double> BackwardBuffer(int s) => _bwdOut[s];

    public void SendBackward(int s) => _bwdSend[s]!.Start();

    /// <summary>Completes the solve's sends, so their buffers can be filled again.</summary>
    public void End()
    {
        for (int s = 0; s < _p; s++)
        {
            if (_fwdSend[s] is { IsActive: true } f)
                f.Wait();
            if (_bwdSend[s] is { IsActive: true } b)
                b.Wait();
        }
    }

    public void Dispose()
    {
        foreach (PersistentRequest? r in _fwdRecv.Concat(_fwdSend).Concat(_bwdRecv).Concat(_bwdSend))
            r?.Dispose();
    }
}
