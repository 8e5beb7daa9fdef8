using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>Intercommunicators and dynamic processes (spawn, ports, name service).</summary>
public class DynamicTests
{
    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void IntercommunicatorAcrossTwoHalves(int ranks) => Job.RunScenario(Scenario.Intercomm, ranks);

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void SpawnChildrenOrAClearError(int ranks) => Job.RunScenario(Scenario.Spawn, ranks);

    [Fact]
    public void NameServiceOrAClearError() => Job.RunScenario(Scenario.Names, 2);

    [Fact]
    public Task AcceptAndConnectBetweenTwoSeparateJobs() => AcceptAndConnect(Job.Launcher.Mpich, 1, 1, false, false, null);

    // ---- Open MPI: the MPI here that has dynamic processes; everything must work ----

    private static readonly Dictionary<string, string> Required = new() { ["MOTOR_TEST_DYNAMIC"] = "required" };

    [Theory]
    [InlineData(1, false)]
    [InlineData(2, false)]
    [InlineData(2, true)]
    public void SpawnMergeAndCollectivesUnderOpenMpi(int ranks, bool hosted) =>
        Job.RunScenario(Scenario.Spawn, ranks, hosted: hosted, env: Required, launcher: Job.Launcher.OpenMpi);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void IntercommunicatorUnderOpenMpi(bool hosted) =>
        Job.RunScenario(Scenario.Intercomm, 3, hosted: hosted, launcher: Job.Launcher.OpenMpi);

    [Fact]
    public void NameServiceUnderOpenMpi() =>
        Job.RunScenario(Scenario.Names, 2, hosted: true, env: Required, launcher: Job.Launcher.OpenMpi);

    /// <summary>
    /// Two jobs started by two separate mpiruns meet through ompi-server: the
    /// server job publishes its port by name, the client looks it up and
    /// connects; one job under dotnet and the other under motor.
    /// </summary>
    [Theory]
    [InlineData(1, 1, false, true)]
    [InlineData(2, 1, true, false)]
    public Task AcceptAndConnectBetweenTwoOpenMpiJobs(int serverRanks, int clientRanks, bool serverHosted, bool clientHosted)
    {
        using var names = new Job.OmpiServer();
        return AcceptAndConnect(Job.Launcher.OpenMpi, serverRanks, clientRanks, serverHosted, clientHosted, names);
    }

    private static async Task AcceptAndConnect(Job.Launcher launcher, int serverRanks, int clientRanks,
                                               bool serverHosted, bool clientHosted, Job.OmpiServer? names)
    {
        string portFile = Path.Combine(Path.GetTempPath(), $"motor-port-{Guid.NewGuid():N}");
        var env = new Dictionary<string, string> { ["MOTOR_TEST_PORT_FILE"] = portFile };
        if (names is not null)
        {
            env["MOTOR_TEST_DYNAMIC"] = "required";
            env["MOTOR_TEST_SERVICE"] = $"motor-test-{Guid.NewGuid():N}";
        }
        string options = names?.LauncherOption ?? "";
        string app = Job.ScenariosProgram;
        try
        {
            var server = Task.Run(() => Job.Mpi(serverRanks, app, Scenario.PortServer.Name(), 90, env, serverHosted, "", launcher, options));
            Job.Result client = Job.Mpi(clientRanks, app, Scenario.PortClient.Name(), 90, env, clientHosted, "", launcher, options);
            Job.Result s = await server;
            for (int r = 0; r < serverRanks; r++)
                Assert.True(s.ExitCode == 0 && s.Output.Contains($"PASS {Scenario.PortServer.Name()} rank {r} "), s.ToString());
            for (int r = 0; r < clientRanks; r++)
                Assert.True(client.ExitCode == 0 && client.Output.Contains($"PASS {Scenario.PortClient.Name()} rank {r} "), client.ToString());
            Assert.DoesNotContain("FAIL", s.Output + client.Output);
        }
        finally
        {
            File.Delete(portFile);
        }
    }
}
