using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Which core and MPI library a process loads (Interop/CoreLoader.cs, native select.c, pal):
/// the Open MPI core when asked for, and clear errors when the core, the MPI library or the
/// asked-for ABI cannot be had.
/// </summary>
public class LoaderTests
{
    [Fact]
    public void MissingCoreLibraryIsNamed()
    {
        var env = new Dictionary<string, string> { ["MOTOR_CORE_LIBRARY"] = "/nonexistent/libmpcore.so" };
        Job.Result r = Job.Run("dotnet", $"{Job.ManagedProgram("Hello")}", 60, env);
        Assert.NotEqual(0, r.ExitCode);
        Assert.Contains("DllNotFoundException", r.Output);
        Assert.Contains("MOTOR_CORE_LIBRARY", r.Output);
    }

    [Fact]
    public void MissingMpiLibraryIsNamed()
    {
        var env = new Dictionary<string, string> { ["MOTOR_MPI_LIBRARY"] = "/nonexistent/libmpi.so.12" };
        Job.Result r = Job.Run("dotnet", $"{Job.ManagedProgram("Hello")}", 60, env);
        Assert.NotEqual(0, r.ExitCode);
        Assert.Contains("MOTOR_MPI_LIBRARY=/nonexistent/libmpi.so.12", r.Output);
    }

    [Fact]
    public void MotorReportsTheOpenMpiCore()
    {
        Job.RequireOpenMpi();
        Job.Result r = Job.Run(Job.Motor, "--version", 30, new Dictionary<string, string> { ["MOTOR_MPI_ABI"] = "openmpi" });
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains("Open MPI v", r.Output);
        Assert.Contains("core for Open MPI", r.Output);
    }

    [Fact]
    public void AnUnknownAbiIsAClearError()
    {
        Job.Result r = Job.Mpi(1, Job.ManagedProgram("Hello"), "", 60, new Dictionary<string, string> { ["MOTOR_MPI_ABI"] = "lam" }, hosted: true);
        Assert.Equal(4, r.ExitCode); // motor: no usable MPI library
        Assert.Contains("MOTOR_MPI_ABI=lam is not one of: mpich, openmpi", r.Output);
    }
}
