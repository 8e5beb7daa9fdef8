using System.Runtime.CompilerServices;
using Scenarios;

namespace System.MP.Tests;

/// <summary>
/// Under tests/gc-stress.sh (MOTOR_GC_STRESS=1) the tests' own process collects all the time as
/// well: the in-process tests call System.MP with the Scenarios program's collector thread
/// (GcStress.cs) beside them, and the process reports the collections it forced when it ends.
/// </summary>
internal static class GcStressHost
{
    private static GcStress? s_stress;

#pragma warning disable CA2255 // the test assembly is loaded once per test run, before any test: the place to start it
    [ModuleInitializer]
#pragma warning restore CA2255
    internal static void Start()
    {
        s_stress = GcStress.FromEnvironment();
        if (s_stress is null)
            return;
        GcStress.Counts start = GcStress.Counts.Now(s_stress);
        AppDomain.CurrentDomain.ProcessExit += (_, _) =>
            GcStress.Print(GcStress.Report("in-process-tests", 0, 1, start, GcStress.Counts.Now(s_stress)));
    }
}
