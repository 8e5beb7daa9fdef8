using System.MP.Interop;

namespace System.MP;

/// <summary>The level of thread support MPI provides (MPI-4.0 §11.2.1).</summary>
public enum ThreadLevel
{
    /// <summary>Only one thread exists in the process.</summary>
    Single = CoreThreadLevel.Single,
    /// <summary>Only the thread that initialized MPI makes MPI calls.</summary>
    Funneled = CoreThreadLevel.Funneled,
    /// <summary>Any thread may make MPI calls, one at a time.</summary>
    Serialized = CoreThreadLevel.Serialized,
    /// <summary>Any thread may make MPI calls at any time.</summary>
    Multiple = CoreThreadLevel.Multiple,
}
