using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The Open MPI core (libmpcore-ompi.so): a cross-section of the scenarios run
/// under Open MPI's mpirun, in library mode and under motor (where the GC
/// extension pins in-flight buffers through the same core).  Dynamic processes
/// under Open MPI are in <see cref="DynamicTests"/>.
/// </summary>
public class OpenMpiTests
{
    [Theory]
    [InlineData("nonblocking", false)]
    [InlineData("truncate", false)]
    [InlineData("cancel", true)]
    [InlineData("mprobe", true)]
    [InlineData("coll-reduce", false)]
    [InlineData("coll-vector", true)]
    [InlineData("objects-p2p", true)]
    [InlineData("dropped-request", true)]
    [InlineData("managed-exceptions", false)]
    [InlineData("managed-exceptions", true)]
    [InlineData("gc-pins-in-flight", true)]
    [InlineData("gc-torture", true)]
    public void ScenarioUnderOpenMpi(string name, bool hosted) =>
        Job.Scenario(name, 2, hosted: hosted, launcher: Job.Launcher.OpenMpi);

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
