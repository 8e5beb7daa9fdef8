using System.Runtime.CompilerServices;
using System.Threading;
using System.Threading.Tasks;

namespace System.MP;

/// <summary>
/// A nonblocking receive of one value (<see cref="Communicator.IRecv{T}(int, int)"/>):
/// <see cref="Result"/>, <see cref="TryGetResult"/> or <c>await</c> give the value once it has arrived.
/// The receive itself is <see cref="Request"/>, which request sets (<see cref="MpiRequest.WaitAll(MpiRequest[])"/>
/// and the others) take like any request.
/// </summary>
/// <typeparam name="T">The type of the value.</typeparam>
/// <remarks>Not thread-safe, as <see cref="System.MP.Request"/> is not: complete it from one thread.</remarks>
public sealed class ValueRequest<T> : IDisposable, IStatusReader where T : unmanaged
{
    private readonly T[] _box; // the one element MPI writes, held by the request until it completes
    private Status _status; // the receive's status once it completed, through any copy of Request
    private bool _completed;

    internal ValueRequest(Request request, T[] box)
    {
        Request = request;
        _box = box;
        request.ReportStatusTo(this);
    }

    /// <summary>The underlying receive: wait for it, test it or put it in a request set.</summary>
    public Request Request { get; }

    /// <summary>The received value; waits for it when the receive has not completed.</summary>
    /// <returns>The value; default when the source was <see cref="Mpi.ProcNull"/> or the receive was cancelled.</returns>
    /// <exception cref="MpiException">The incoming message was shorter than one value.</exception>
    /// <exception cref="ObjectDisposedException">The receive was disposed.</exception>
    public T Result => Take(_completed ? _status : Request.Wait());

    /// <summary>Tests the receive without waiting.</summary>
    /// <param name="value">The received value when the result is true; default otherwise.</param>
    /// <returns>True once the value has arrived.</returns>
    /// <exception cref="MpiException">The incoming message was shorter than one value.</exception>
    public bool TryGetResult(out T value)
    {
        if (_completed)
        {
            value = Take(_status);
            return true;
        }
        if (!Request.Test(out Status status))
        {
            value = default;
            return false;
        }
        value = Take(status);
        return true;
    }

    /// <summary>
    /// Waits for the value asynchronously, through the progress engine (see
    /// <see cref="MpiRequest.WaitAsync"/>, which says what cancelling does and which thread level it needs).
    /// </summary>
    /// <param name="cancellationToken">Cancels the receive if it has not matched its message (then <see cref="OperationCanceledException"/>).</param>
    /// <returns>The received value.</returns>
    public async Task<T> ResultAsync(CancellationToken cancellationToken = default) =>
        Take(_completed ? _status : await Request.WaitAsync(cancellationToken).ConfigureAwait(false));

    /// <summary>Makes <c>await request</c> give the received value (<see cref="ResultAsync"/>), resuming where the engine completed it (see <see cref="AsyncProgress.InlineContinuations"/>).</summary>
    /// <returns>The awaiter; the await's result is the value.</returns>
    public ConfiguredTaskAwaitable<T>.ConfiguredTaskAwaiter GetAwaiter() => ResultAsync().ConfigureAwait(false).GetAwaiter();

    /// <summary>Gives up the receive (<see cref="System.MP.Request.Dispose"/>).</summary>
    public void Dispose() => Request.Dispose();

    /// <summary>
    /// The receive completed, through this object or another copy of <see cref="Request"/> (a request
    /// set such as WaitAll, or a Wait on <see cref="Request"/> itself): its status is kept for the size check.
    /// </summary>
    void IStatusReader.Completed(in Status status)
    {
        _status = status;
        _completed = true;
    }

    private unsafe T Take(in Status status)
    {
        if (status.ByteCount != sizeof(T) && status.Source != Mpi.ProcNull && !status.Cancelled)
            ThrowHelper.ThrowShortScalar(status.ByteCount, typeof(T), sizeof(T));
        return _box[0];
    }
}
