using Xunit;

namespace System.MP.Tests;

/// <summary>Clear errors when the message-passing core or the MPI library cannot be found.</summary>
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
}
