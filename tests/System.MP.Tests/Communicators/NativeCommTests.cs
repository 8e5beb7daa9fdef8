using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Communicators across the native boundary: the scenario native-comm on 2 ranks calls the native
/// MPI library tests/native/mixed/commlib.c (built per MPI into build/native/tests/mixed) with
/// handles in C and Fortran form and adopts the communicators it makes, owned and borrowed; in
/// library mode and under motor, on MPICH and Open MPI.
/// </summary>
public class NativeCommTests
{
    public static TheoryData<Scenario, bool, bool> Runs() => Job.EveryCoreAndMode(Scenario.NativeComm);

    [Theory]
    [MemberData(nameof(Runs))]
    public void NativeLibraryOnMotorCommunicators(Scenario scenario, bool hosted, bool openMpi)
    {
        string lib = Path.Combine(Job.Root, "build", "native", "tests", "mixed", openMpi ? "libcommlib-ompi.so" : "libcommlib.so");
        Assert.True(File.Exists(lib), $"{lib} is missing: ./build.sh build");
        Job.RunScenario(scenario, 2, timeoutSeconds: 90, hosted: hosted, env: new Dictionary<string, string> { ["MOTOR_TEST_COMMLIB"] = lib },
                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
    }
}
