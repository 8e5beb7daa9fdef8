using Xunit;
using Xunit.Abstractions;

namespace System.MP.Tests;

/// <summary>
/// samples/NativeAot published with PublishAot (no JIT at run time) and run in library mode on 2
/// ranks under both MPIs: typed messages and object transport through the codecs the System.MP
/// source generator wrote.  The publish treats every AOT and trim warning as an error
/// (IlcTreatWarningsAsErrors), so it also proves System.MP has none on that path.
/// </summary>
public class NativeAotTests : IClassFixture<NativeAotTests.Published>
{
    /// <summary>The sample published once for the class (ILC takes minutes; an unchanged sample is not compiled again).</summary>
    public sealed class Published
    {
        internal string Program { get; }
        internal Job.Result Publish { get; }

        public Published()
        {
            string output = Path.Combine(Job.Root, "artifacts", "aot", "NativeAot");
            Publish = Job.Run("dotnet", $"publish \"{Path.Combine(Job.Root, "samples", "NativeAot", "NativeAot.csproj")}\" -c {Job.Configuration} " +
                                        $"-r linux-x64 -nologo -p:MotorSkipNativeBuild=true -o \"{output}\"", 1500);
            Program = Path.Combine(output, "NativeAot");
        }
    }

    private readonly Published _published;
    private readonly ITestOutputHelper _log;

    public NativeAotTests(Published published, ITestOutputHelper log)
    {
        _published = published;
        _log = log;
    }

    [Fact]
    public void ThePublishHasNoAotOrTrimWarnings()
    {
        Job.Result p = _published.Publish;
        Assert.True(p.ExitCode == 0, p.ToString());
        Assert.DoesNotMatch(@"warning IL\d{4}", p.Output);
        Assert.True(File.Exists(_published.Program), _published.Program);
        Assert.False(File.Exists(Path.ChangeExtension(_published.Program, ".dll")), "a NativeAOT publish has no managed entry assembly");
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void TypedMessagesAndObjectTransportRunWithoutTheJit(bool openMpi)
    {
        Assert.True(_published.Publish.ExitCode == 0, _published.Publish.ToString());
        Job.Result r = Job.Mpi(2, _published.Program, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);
        _log.WriteLine(r.Output);
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains("rank 0 of 2 (NativeAOT): typed messages and object transport OK", r.Output);
        Assert.Contains("rank 1 of 2 (NativeAOT): typed messages and object transport OK", r.Output);
        Assert.Contains("all 2 ranks passed", r.Output);
    }
}
