using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Nonblocking buffers across compacting GCs: under motor the GC extension
/// pins them at mark time while in flight; under plain dotnet pinned
/// GCHandles do.  Each scenario verifies every byte received.
/// </summary>
public class GcExtensionTests
{
    [Theory]
    [InlineData(2, false)]
    [InlineData(2, true)]
    [InlineData(3, false)]
    [InlineData(3, true)]
    public void TortureExchangesSurviveCompactingGcs(int ranks, bool hosted) =>
        Job.Scenario("gc-torture", ranks, timeoutSeconds: 240, hosted: hosted);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void TortureWithATinyGen0BudgetSoGcsHappenInsideOperations(bool hosted) =>
        Job.Scenario("gc-torture", 2, timeoutSeconds: 240, hosted: hosted,
                     env: new Dictionary<string, string> { ["DOTNET_GCgen0size"] = "0x10000" });

    [Theory]
    [InlineData("-p System.GC.Server=true")] // one report per GC from heap 0, with several heaps scanning
    [InlineData("--gc segments")]            // the extension over the segments GC
    public void TortureUnderOtherGcConfigurations(string motorOptions) =>
        Job.Scenario("gc-torture", 2, timeoutSeconds: 240, hosted: true, motorOptions: motorOptions);

    [Theory]
    [InlineData(false, "")]
    [InlineData(true, "")]
    [InlineData(true, "--no-gc-extension")]
    [InlineData(true, "--gc segments")]
    public void AnInFlightBufferKeepsItsAddressAndIsReportedAtMark(bool hosted, string motorOptions) =>
        Job.Scenario("gc-pins-in-flight", 2, hosted: hosted, motorOptions: motorOptions);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void PinnedHeapBuffersAreNeitherPinnedNorRegistered(bool hosted) =>
        Job.Scenario("pinned-heap-buffers", 2, hosted: hosted);

    [Fact]
    public void ADroppedRequestLeaksNeitherItsBufferNorItsSlotUnderMotor() =>
        Job.Scenario("dropped-request", 2, hosted: true);

    public static TheoryData<string, int> HostedScenarios => new()
    {
        { "types", 2 },
        { "nonblocking", 2 },
        { "cancel", 2 },
        { "truncate", 2 },
        { "managed-exceptions", 2 },
        { "gc-not-starved", 2 },
        { "any-source-tag", 3 },
    };

    /// <summary>The same programs give the same results under motor as under dotnet.</summary>
    [Theory]
    [MemberData(nameof(HostedScenarios))]
    public void PointToPointUnderMotor(string name, int ranks) => Job.Scenario(name, ranks, hosted: true);
}
