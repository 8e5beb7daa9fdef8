using Xunit;

namespace System.MP.Tests;

/// <summary>Intercommunicators and dynamic processes (spawn, ports, name service).</summary>
public class DynamicTests
{
    [Theory]
    [InlineData(2)]
    [InlineData(3)]
    [InlineData(4)]
    public void IntercommunicatorAcrossTwoHalves(int ranks) => Job.Scenario("intercomm", ranks);

    [Theory]
    [InlineData(1)]
    [InlineData(2)]
    public void SpawnChildrenOrAClearError(int ranks) => Job.Scenario("spawn", ranks);

    [Fact]
    public void NameServiceOrAClearError() => Job.Scenario("names", 2);

    [Fact]
    public async Task AcceptAndConnectBetweenTwoSeparateJobs()
    {
        string portFile = Path.Combine(Path.GetTempPath(), $"motor-port-{Guid.NewGuid():N}");
        var env = new Dictionary<string, string> { ["MOTOR_TEST_PORT_FILE"] = portFile };
        try
        {
            var server = Task.Run(() => Job.Mpi(1, Job.ManagedProgram("Scenarios"), "port-server", 90, env));
            Job.Result client = Job.Mpi(1, Job.ManagedProgram("Scenarios"), "port-client", 90, env);
            Job.Result s = await server;
            Assert.True(s.ExitCode == 0 && s.Output.Contains("PASS port-server rank 0 "), s.ToString());
            Assert.True(client.ExitCode == 0 && client.Output.Contains("PASS port-client rank 0 "), client.ToString());
        }
        finally
        {
            File.Delete(portFile);
        }
    }
}
