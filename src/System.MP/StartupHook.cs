using System;
using System.IO;
using System.MP;
using System.MP.Interop;
using System.Reflection;
using System.Runtime.InteropServices;

/// <summary>
/// The startup hook the motor VM installs (runtime property STARTUP_HOOKS =
/// "System.MP"): runs before Main, binds System.MP to the VM's
/// message-passing core and arms the handler that turns an unhandled
/// exception on any rank into an MPI_Abort of the whole job.  Not used under
/// plain dotnet.  The runtime requires this exact name, in no namespace.
/// </summary>
internal static unsafe class StartupHook
{
    /// <summary>
    /// Called by motor on the thread that starts the runtime, while MPI initializes on the main
    /// thread (motor.c, step 3): binds System.MP to the VM's core and loads the app, so that less
    /// is left to do on the main thread once MPI_Init returns.  Calls nothing in MPI and runs no
    /// code of the app.  It does not compile Main: the JIT may run the static constructors of
    /// beforefieldinit types that Main uses, and one of those may use MPI (a static field holding
    /// Communicator.World) before MPI is initialized, off MPI's main thread.  Never throws:
    /// whatever fails here fails again on the main thread, where the startup hook or the
    /// runtime reports it.
    /// </summary>
    /// <param name="appPath">The app's path (UTF-8), as given to motor.</param>
    [UnmanagedCallersOnly]
    internal static void Prepare(byte* appPath)
    {
        try
        {
            CoreLoader.EnsureLoaded();
            string? path = Marshal.PtrToStringUTF8((nint)appPath);
            if (path is not null)
                Assembly.Load(Path.GetFileNameWithoutExtension(path));
            StartupTrace.Mark("System.MP bound and the app loaded");
        }
        catch (Exception)
        {
            // The main thread meets the same failure and reports it.
        }
    }

    /// <summary>Called by the runtime before Main.</summary>
    public static void Initialize()
    {
        StartupTrace.Mark("startup hook: System.MP loaded");
        if (Mpi.IsHosted)
            Mpi.EnsureInitialized();
        StartupTrace.Mark("startup hook: System.MP ready; Main next");
    }
}
