using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The thread level set one way for both modes (Mpi.ConfiguredThreadLevel, motor.c): the app's
/// runtime property Motor.ThreadLevel in its runtimeconfig.json (what
/// <c>&lt;RuntimeHostConfigurationOption Include="Motor.ThreadLevel" Value="multiple" /&gt;</c>
/// writes), or MOTOR_THREAD_LEVEL, gives MPI that level in library mode without Mpi.Init and
/// under motor without --thread-level; Mpi.Init at the level then returns in both modes
/// (scenario ThreadLevelFromSettings in tests/Scenarios/Runtime/Hosting.cs).  On 2 ranks, on both
/// cores; a setting that names no level is refused with a message naming it.
/// </summary>
public class ThreadLevelTests
{
    public static TheoryData<bool, bool> CoresAndModes() => Job.CoresAndModes();

    /// <summary>A copy of the Scenarios program whose runtimeconfig.json sets Motor.ThreadLevel, as a project's setting does.</summary>
    private static string ProgramWithThreadLevel(string level)
    {
        string from = Path.GetDirectoryName(Job.ScenariosProgram)!;
        string to = Path.Combine(Path.GetTempPath(), $"motor-threadlevel-{level}-{Guid.NewGuid():N}");
        Directory.CreateDirectory(to);
        foreach (string f in Directory.GetFiles(from))
            File.Copy(f, Path.Combine(to, Path.GetFileName(f)));
        string config = Path.Combine(to, "Scenarios.runtimeconfig.json");
        string text = File.ReadAllText(config);
        int options = text.IndexOf("\"configProperties\": {", StringComparison.Ordinal);
        text = options >= 0
            ? text.Insert(options + "\"configProperties\": {".Length, $"\n      \"Motor.ThreadLevel\": \"{level}\",")
            : text.Replace("\"runtimeOptions\": {", $"\"runtimeOptions\": {{\n    \"configProperties\": {{ \"Motor.ThreadLevel\": \"{level}\" }},", StringComparison.Ordinal);
        File.WriteAllText(config, text);
        return Path.Combine(to, "Scenarios.dll");
    }

    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void TheProjectSettingGivesTheLevelInBothModes(bool hosted, bool openMpi)
    {
        string program = ProgramWithThreadLevel("multiple");
        try
        {
            Job.Result r = Job.Mpi(2, program, Scenario.ThreadLevelFromSettings.Name(), hosted: hosted,
                                   env: new Dictionary<string, string> { ["SCENARIOS_EXPECT_LEVEL"] = "multiple" },
                                   launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
            Job.AssertScenariosPassed(r, [Scenario.ThreadLevelFromSettings], 2, hosted ? "under motor" : "under dotnet");
        }
        finally
        {
            Directory.Delete(Path.GetDirectoryName(program)!, recursive: true);
        }
    }

    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void TheEnvironmentVariableGivesTheLevelInBothModes(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.ThreadLevelFromSettings, 2, hosted: hosted,
                        env: new Dictionary<string, string> { ["MOTOR_THREAD_LEVEL"] = "multiple", ["SCENARIOS_EXPECT_LEVEL"] = "multiple" },
                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    /// <summary>Without a setting both modes run at Single (the scenario's Init(Single) and Init(level) return).</summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void WithoutASettingBothModesRunAtSingle(bool hosted) =>
        Job.RunScenario(Scenario.ThreadLevelFromSettings, 2, hosted: hosted,
                        env: new Dictionary<string, string> { ["SCENARIOS_EXPECT_LEVEL"] = "single" });

    [Theory]
    [InlineData(false, "MOTOR_THREAD_LEVEL 'lots' is not single, funneled, serialized or multiple")]
    [InlineData(true, "MOTOR_THREAD_LEVEL 'lots' is not single, funneled, serialized or multiple")]
    public void ASettingThatNamesNoLevelIsRefused(bool hosted, string message)
    {
        Job.Result r = Job.Mpi(2, Job.ScenariosProgram, Scenario.ThreadLevelFromSettings.Name(), hosted: hosted,
                               env: new Dictionary<string, string> { ["MOTOR_THREAD_LEVEL"] = "lots", ["SCENARIOS_EXPECT_LEVEL"] = "single" });
        Assert.NotEqual(0, r.ExitCode);
        Assert.Contains(message, r.Output);
        Assert.DoesNotContain("PASS", r.Output);
    }
}
