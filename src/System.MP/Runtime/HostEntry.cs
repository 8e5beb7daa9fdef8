using System;
using System.IO;
using System.MP;
using System.MP.Interop;
using System.Reflection;
using System.Runtime.InteropServices;

/// <summary>
/// Where the motor VM enters System.MP (runtime/src/motor.c): <see cref="Prepare"/> on the thread
/// that starts the runtime while MPI initializes, then <see cref="Start"/> on MPI's main thread
/// after both joined, before the runtime runs Main.  Not used under plain dotnet.  The host finds
/// Prepare by this name; it hands back Start itself, so the type name is parsed once, off the
/// main thread (a startup hook was looked up by name again there, and invoked by reflection).
/// </summary>
internal static unsafe class HostEntry
{
    /// <summary>
    /// Called by motor on the thread that starts the runtime, while MPI initializes on the main
    /// thread (motor.c, step 3): binds System.MP to the VM's core and loads the app, so that less
    /// is left to do on the main thread once MPI_Init returns.  Calls nothing in MPI and runs no
    /// code of the app.  It does not compile Main: the JIT may run the static constructors of
    /// beforefieldinit types that Main uses, and one of those may use MPI (a static field holding
    /// Communicator.World) before MPI is initialized, off MPI's main thread.  Never throws:
    /// whatever fails here fails again on the main thread, in <see cref="Start"/> or in the app.
    /// </summary>
    /// <param name="appPath">The app's path (UTF-8), as given to motor.</param>
    /// <returns><see cref="Start"/>, for motor to call on the main thread.</returns>
    [UnmanagedCallersOnly]
    internal static delegate* unmanaged<void> Prepare(byte* appPath)
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
        return &Start;
    }

    /// <summary>
    /// Called by motor on MPI's main thread once MPI is initialized and the runtime started, before
    /// the app's startup hooks and Main: arms the handler that turns an unhandled exception on any
    /// rank into an MPI_Abort of the whole job.  An exception here is unhandled: the runtime
    /// reports it and the process aborts, which ends the job.
    /// </summary>
    [UnmanagedCallersOnly]
    private static void Start()
    {
        if (Mpi.IsHosted)
            Mpi.EnsureInitialized();
        StartupTrace.Mark("System.MP ready; Main next");
    }
}
