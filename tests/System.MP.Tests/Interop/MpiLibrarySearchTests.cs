using Xunit;

namespace System.MP.Tests;

/// <summary>
/// A machine with no MPI, with only one of the two, or with a library that is not MPI:
/// motor, System.MP in library mode and build.sh each say in one message what they found and
/// what to install.  The MPI libraries are hidden by tests/tools/without-mpi.sh (a private
/// mount namespace in which their files are empty), so the real search path is what runs.
/// </summary>
public class MpiLibrarySearchTests
{
    private static string Hello => Job.ManagedProgram("Hello");
    private static string WithoutMpi => Path.Combine(Job.Root, "tests", "tools", "without-mpi.sh");

    private static Job.Result Without(string mpi, string command, IDictionary<string, string>? env = null) =>
        Job.Run("/bin/bash", $"{WithoutMpi} {mpi} {command}", 120, env);

    private static void AssertAdvice(Job.Result r)
    {
        Assert.Contains("apt-get install mpich", r.Output);
        Assert.Contains("apt-get install openmpi-bin", r.Output);
        Assert.Contains("MOTOR_MPI_LIBRARY", r.Output);
        Assert.DoesNotContain("Hello from rank", r.Output);
    }

    [Fact]
    public void NoMpiAtAllIsOneMessageNamingWhatWasTriedAndWhatToInstall()
    {
        Job.Result motor = Without("all", $"{Job.Motor} {Hello}");
        Assert.True(motor.ExitCode == 4, motor.ToString()); // motor's "no usable MPI library"
        Assert.Contains("motor: no usable MPI library: no MPI library found; tried: [libmpi.so.12: ", motor.Output);
        Assert.Contains("[libmpi.so.40 (Open MPI): not found]", motor.Output);
        AssertAdvice(motor);

        Job.Result library = Without("all", $"dotnet {Hello}");
        Assert.NotEqual(0, library.ExitCode);
        Assert.Contains("System.DllNotFoundException: no MPI library found; tried: [libmpi.so.12: ", library.Output);
        Assert.Contains("[libmpi.so.40 (Open MPI): not found]", library.Output);
        AssertAdvice(library);
    }

    [Fact]
    public void ALibraryThatIsNotMpiIsNamedAsSuch()
    {
        var env = new Dictionary<string, string> { ["MOTOR_MPI_LIBRARY"] = "libz.so.1" };
        Job.Result motor = Job.Run(Job.Motor, Hello, 60, env);
        Assert.True(motor.ExitCode == 4, motor.ToString());
        Assert.Contains("MOTOR_MPI_LIBRARY=libz.so.1 is not an MPI library Motor can use: it speaks no known MPI ABI", motor.Output);
        AssertAdvice(motor);

        Job.Result library = Job.Run("dotnet", Hello, 60, env);
        Assert.NotEqual(0, library.ExitCode);
        Assert.Contains("System.DllNotFoundException: MOTOR_MPI_LIBRARY=libz.so.1 is not an MPI library Motor can use", library.Output);
        AssertAdvice(library);
    }

    /// <summary>Only Open MPI installed: both hosts take the Open MPI core, alone and under mpirun.</summary>
    [Fact]
    public void OnlyOpenMpiRunsOnTheOpenMpiCore()
    {
        Job.RequireOpenMpi();
        foreach (string host in new[] { Job.Motor, "dotnet" })
        {
            Job.Result single = Without("mpich", $"{host} {Hello}", Job.OpenMpiEnvironment);
            Assert.True(single.ExitCode == 0, single.ToString());
            Assert.Contains("MPI library: Open MPI", single.Output);

            Job.Result two = Without("mpich", $"{Job.OpenMpiLauncher} --oversubscribe -n 2 {host} {Hello}", Job.OpenMpiEnvironment);
            Assert.True(two.ExitCode == 0, two.ToString());
            Assert.Contains("Hello from rank 1 of 2", two.Output);
            Assert.Contains("MPI library: Open MPI", two.Output);
        }
    }

    /// <summary>Only MPICH installed: nothing needs Open MPI to run an MPICH job.</summary>
    [Fact]
    public void OnlyMpichRunsOnTheMpichCore()
    {
        foreach (string host in new[] { Job.Motor, "dotnet" })
        {
            Job.Result two = Without("openmpi", $"{Job.MpichLauncher} -n 2 {host} {Hello}");
            Assert.True(two.ExitCode == 0, two.ToString());
            Assert.Contains("Hello from rank 1 of 2", two.Output);
            Assert.Contains("MPI library: MPICH", two.Output);
        }
    }

    /// <summary>
    /// build.sh on a machine with no MPI (or only Open MPI) and no apt-get to install one: one
    /// message naming what is missing, what was found, and what to install.
    /// </summary>
    [Theory]
    [InlineData("none")]
    [InlineData("openmpi-only")]
    public void BuildShNamesTheMissingMpiAndWhatItFound(string machine)
    {
        bool keepOpenMpi = machine == "openmpi-only";
        string path = HostilePath.LinkFarm($"build-{machine}", name =>
            name.StartsWith("apt", StringComparison.Ordinal) ||
            (name.StartsWith("mpi", StringComparison.Ordinal) && !(keepOpenMpi && name.EndsWith(".openmpi", StringComparison.Ordinal))));
        Job.Result r = Job.Run("/bin/bash", $"{Path.Combine(Job.Root, "build.sh")} deps", 120,
                               new Dictionary<string, string> { ["PATH"] = path });
        Assert.Equal(1, r.ExitCode);
        Assert.Contains("build.sh: missing mpich libmpich-dev", r.Output);
        Assert.Contains("no apt-get to install them", r.Output);
        Assert.Contains("Install MPICH", r.Output);
        if (keepOpenMpi)
        {
            Assert.DoesNotContain("openmpi-bin", r.Output.Split("Found:")[0]);
            Assert.Contains($"mpirun.openmpi -> ", r.Output);
        }
        else
        {
            Assert.Contains("missing mpich libmpich-dev openmpi-bin libopenmpi-dev", r.Output);
            Assert.Contains("Found: no MPI launcher or compiler", r.Output);
        }
    }
}
