using System.MP.Interop;

namespace System.MP;

/// <summary>
/// A message taken out of matching by <see cref="Communicator.MProbe"/> or
/// <see cref="Communicator.IMProbe"/> (MPI-4.0 §3.8.2): its size is known from
/// <see cref="Status"/> before it is received, and no other receive or thread
/// can take it.  Receive it exactly once.
/// </summary>
public sealed unsafe class Message
{
    private MessageHandle _handle;
    private bool _received;

    internal Message(MessageHandle handle, Status status)
    {
        _handle = handle;
        Status = status;
    }

    /// <summary>Source, tag and size of the message.</summary>
    public Status Status { get; }

    /// <summary>True once the message has been received.</summary>
    public bool IsReceived => _received;

    /// <summary>Receives the message into the whole array (MPI_Mrecv).</summary>
    /// <exception cref="MessageTruncatedException">The message is longer than the array.</exception>
    /// <exception cref="InvalidOperationException">The message was already received.</exception>
    public Status Recv<T>(T[] buffer) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        return Recv(buffer.AsSpan());
    }

    /// <summary>Receives the message into a span (MPI_Mrecv).</summary>
    /// <exception cref="MessageTruncatedException">The message is longer than the span.</exception>
    /// <exception cref="InvalidOperationException">The message was already received.</exception>
    public Status Recv<T>(Span<T> buffer) where T : unmanaged
    {
        MessageHandle handle = Take();
        fixed (T* p = buffer)
            return PointToPointCore.MRecv(p, (long)buffer.Length * sizeof(T), handle);
    }

    /// <summary>Receives a message of one element and returns it (MPI_Mrecv).</summary>
    /// <exception cref="MessageTruncatedException">The message is longer than one T.</exception>
    /// <exception cref="MpiException">The message is shorter than one T.</exception>
    /// <exception cref="InvalidOperationException">The message was already received.</exception>
    public T Recv<T>() where T : unmanaged
    {
        T value = default;
        Status status = Recv(new Span<T>(ref value));
        if (status.ByteCount != sizeof(T) && status.Source != Mpi.ProcNull)
            ThrowHelper.ThrowShortScalar(status.ByteCount, typeof(T), sizeof(T));
        return value;
    }

    /// <summary>
    /// Starts receiving the message into the whole array (MPI_Imrecv); the
    /// array must not be touched until the request completes.
    /// </summary>
    /// <exception cref="InvalidOperationException">The message was already received.</exception>
    public Request IRecv<T>(T[] buffer) where T : unmanaged
    {
        if (buffer is null)
            ThrowHelper.ThrowNull(nameof(buffer));
        return IRecv(buffer, 0, buffer.Length);
    }

    /// <summary>Starts receiving the message into <paramref name="count"/> elements from <paramref name="offset"/> (MPI_Imrecv).</summary>
    /// <exception cref="InvalidOperationException">The message was already received.</exception>
    /// <exception cref="InsufficientMemoryException">The core's table of pending requests is full; the
    /// message was not touched and can be received once requests complete.</exception>
    public Request IRecv<T>(T[] buffer, int offset, int count) where T : unmanaged
    {
        ThrowHelper.CheckSlice(buffer, offset, count, nameof(buffer));
        MessageHandle handle = Take();
        try
        {
            return Request.PostMatchedRecv(buffer, offset, count, handle);
        }
        catch (InsufficientMemoryException)
        {
            // The core's request table was full: refused before MPI saw the message, which is
            // still this Message's to receive.
            _handle = handle;
            _received = false;
            throw;
        }
    }

    /// <summary>The handle, once: a Message is received exactly once.</summary>
    private MessageHandle Take()

    {
        if (_received)
            throw new InvalidOperationException(SR.MessageReceived);
        _received = true;
        MessageHandle handle = _handle;
        _handle = default;
        return handle;
    }
}
