namespace System.MP;

/// <summary>An error reported by the MPI library (or by Motor's core on its behalf).</summary>
public class MpiException : Exception
{
    /// <summary>Creates an exception with no MPI error class.</summary>
    public MpiException() { }

    /// <summary>Creates an exception with a message and no MPI error class.</summary>
    public MpiException(string message) : base(message) { }

    /// <summary>Creates an exception wrapping another.</summary>
    public MpiException(string message, Exception innerException) : base(message, innerException) { }

    /// <summary>Creates an exception for an MPI error class.</summary>
    /// <param name="message">MPI's own error string, with the call that failed.</param>
    /// <param name="errorClass">The MPI error class as reported by the library (0 when Motor detected the error).</param>
    public MpiException(string message, int errorClass) : base(message) => ErrorClass = errorClass;

    /// <summary>An MPI error that followed another exception in the same call (a user operation's).</summary>
    internal MpiException(string message, int errorClass, Exception? innerException) : base(message, innerException) =>
        ErrorClass = errorClass;

    /// <summary>The MPI error class (MPI_ERR_*) as the MPI library numbers it; 0 when Motor itself detected the error.</summary>
    public int ErrorClass { get; }
}

/// <summary>
/// A message was longer than the receive buffer.  Only the buffer's range was
/// written; nothing outside it.
/// </summary>
public sealed class MessageTruncatedException : MpiException
{
    /// <summary>Creates the exception.</summary>
    public MessageTruncatedException() { }

    /// <summary>Creates the exception with a message.</summary>
    public MessageTruncatedException(string message) : base(message) { }

    /// <summary>Creates the exception wrapping another.</summary>
    public MessageTruncatedException(string message, Exception innerException) : base(message, innerException) { }

    /// <summary>Creates the exception for the MPI error class of truncation.</summary>
    public MessageTruncatedException(string message, int errorClass) : base(message, errorClass) { }

    /// <summary>A truncation that followed another exception in the same call (a user operation's).</summary>
    internal MessageTruncatedException(string message, int errorClass, Exception? innerException)
        : base(message, errorClass, innerException) { }
}

/// <summary>
/// An object could not be transported: its type is not eligible
/// (not <see cref="TransportableAttribute"/>), or a payload is malformed.
/// </summary>
public sealed class TransportException : Exception
{
    /// <summary>Creates the exception.</summary>
    public TransportException() { }

    /// <summary>Creates the exception with a message.</summary>
    public TransportException(string message) : base(message) { }

    /// <summary>Creates the exception wrapping another.</summary>
    public TransportException(string message, Exception innerException) : base(message, innerException) { }
}
