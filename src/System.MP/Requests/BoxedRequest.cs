using System.MP.Interop;

namespace System.MP;

/// <summary>
/// A <see cref="Request"/> as an <see cref="MpiRequest"/> (its implicit conversion), for the sets
/// and awaits that mix kinds: the object owns the request from then on, completes it once and
/// keeps its status, so repeated waits on the object return it as on any MpiRequest.
/// </summary>
internal sealed unsafe class BoxedRequest : MpiRequest
{
    private readonly Request _request;
    private bool _completed, _disposed;
    private Status _status;

    internal BoxedRequest(Request request)
    {
        _request = request;
        _completed = request.IsNull; // a stale request throws at its first use
        _status = Request.EmptyStatus;
    }

    /// <summary>True when this object stands for <paramref name="request"/> (the same use of the same state).</summary>
    internal bool Holds(Request request) => _request.Equals(request);

    public override bool IsCompleted => _completed || Test(out _);

    public override Status Wait()
    {
        CheckDisposed();
        if (_completed)
            return _status;
        try
        {
            return _status = _request.Wait();
        }
        finally
        {
            _completed = !_request.IsLive;
        }
    }

    public override bool Test(out Status status)
    {
        CheckDisposed();
        if (_completed)
        {
            status = _status;
            return true;
        }
        try
        {
            if (!_request.Test(out status))
                return false;
            _status = status;
            return true;
        }
        finally
        {
            _completed = !_request.IsLive;
        }
    }

    public override void Cancel()
    {
        CheckDisposed();
        if (!_completed)
            _request.Cancel();
    }

    public override void Dispose()
    {
        if (_disposed)
            return;
        _disposed = true;
        if (!_completed)
            _request.Dispose();
    }

    internal override RequestHandle SetEntry()
    {
        CheckDisposed();
        return _completed ? RequestHandle.Null : _request.SetEntry();
    }

    internal override Status IdleStatus() => _status;

    internal override void CompletedInSet(int rc, RequestHandle handle, in Status status)
    {
        if (rc < 0 && Core.ReqLive(handle) != 0)
            return; // a refused set (bad or repeated request) stays as it was
        try
        {
            _status = _request.FinishAlone(0, status);
        }
        finally
        {
            _completed = true;
        }
    }

    internal override Status FinishAlone(int rc, in Status status)
    {
        try
        {
            return _status = _request.FinishAlone(rc, status);
        }
        finally
        {
            _completed = true;
        }
    }

    internal override bool CancelAwaited()
    {
        RequestHandle h = _completed ? RequestHandle.Null : _request.SetEntry();
        if (h == RequestHandle.Null || Core.ReqIsRecv(h) != 1)
            return false;
        _request.Cancel();
        return true;
    }

    private void CheckDisposed()
    {
        if (_disposed)
            throw new ObjectDisposedException(nameof(Request));
    }
}
