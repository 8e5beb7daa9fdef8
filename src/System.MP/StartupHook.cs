using System.MP;

/// <summary>
/// The startup hook the motor VM installs (runtime property STARTUP_HOOKS =
/// "System.MP"): runs before Main, binds System.MP to the VM's
/// message-passing core and arms the handler that turns an unhandled
/// exception on any rank into an MPI_Abort of the whole job.  Not used under
/// plain dotnet.  The runtime requires this exact name, in no namespace.
/// </summary>
internal static class StartupHook
{
    /// <summary>Called by the runtime before Main.</summary>
    public static void Initialize()
    {
        if (Mpi.IsHosted)
            Mpi.EnsureInitialized();
    }
}
