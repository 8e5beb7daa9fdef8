using Xunit;
using Xunit.Abstractions;

namespace System.MP.Tests;

/// <summary>
/// samples/Hello published self-contained, with the framework, System.MP and Hello compiled into one
/// composite ReadyToRun image (perf/publish-startup.sh composite), run under motor: motor takes the
/// runtime from the app's folder, as the app's own launcher would, whatever DOTNET_ROOT says, and
/// Main runs from the composite image without the JIT.  The same app trimmed (PublishTrimmed, perf/publish-startup.sh
/// composite-trim) keeps System.MP's entry, which only motor calls, by name.
/// </summary>
public class SelfContainedTests : IClassFixture<SelfContainedTests.Published>
{
    /// <summary>The composite publishes, once for the class (crossgen2 compiles the whole framework: minutes).</summary>
    public sealed class Published
    {
        internal string Folder { get; } = Path.Combine(Job.Root, "artifacts", "startup", "composite");
        internal string TrimmedFolder { get; } = Path.Combine(Job.Root, "artifacts", "startup", "composite-trim");
        internal Job.Result Publish { get; }

        public Published() =>
            Publish = Job.Run("bash", $"\"{Path.Combine(Job.Root, "perf", "publish-startup.sh")}\" composite composite-trim", 2400);

        internal string App => Path.Combine(Folder, "Hello.dll");
        internal string TrimmedApp => Path.Combine(TrimmedFolder, "Hello.dll");
    }

    /// <summary>READYTORUN_FLAG_COMPONENT: the assembly's code is in a composite image, not in the file.</summary>
    private const uint ComponentFlag = 0x20;

    private readonly Published _published;
    private readonly ITestOutputHelper _log;

    public SelfContainedTests(Published published, ITestOutputHelper log)
    {
        _published = published;
        _log = log;
    }

    /// <summary>The flags of a file's ReadyToRun header, or null for an IL-only assembly.</summary>
    private static uint? ReadyToRunFlags(string dll)
    {
        using var pe = new System.Reflection.PortableExecutable.PEReader(File.OpenRead(dll));
        var header = pe.PEHeaders.CorHeader!.ManagedNativeHeaderDirectory;
        if (header.Size == 0)
            return null;
        var reader = pe.GetSectionData(header.RelativeVirtualAddress).GetReader();
        Assert.Equal(0x00525452u, reader.ReadUInt32()); // "RTR"
        reader.ReadUInt16(); // major version
        reader.ReadUInt16(); // minor version
        return reader.ReadUInt32();
    }

    [Fact]
    public void ThePublishIsOneCompositeImageWithTheRuntimeBesideIt()
    {
        Job.Result p = _published.Publish;
        Assert.True(p.ExitCode == 0, p.ToString());
        foreach (string file in new[] { "Hello.r2r.dll", "libhostfxr.so", "libhostpolicy.so", "libcoreclr.so" })
            Assert.True(File.Exists(Path.Combine(_published.Folder, file)), $"{file} is missing from {_published.Folder}");
        foreach (string dll in new[] { "Hello.dll", "System.MP.dll", "System.Private.CoreLib.dll" })
        {
            uint? flags = ReadyToRunFlags(Path.Combine(_published.Folder, dll));
            Assert.True(flags is { } f && (f & ComponentFlag) != 0, $"{dll} is not a component of the composite image (flags {flags:x})");
        }
        // the framework-dependent build of the same program is IL, its code compiled by the JIT
        Assert.Null(ReadyToRunFlags(Job.ManagedProgram("Hello")));
    }

    /// <summary>
    /// Two ranks under both MPIs, with DOTNET_ROOT naming a folder that holds no runtime: the app's
    /// own runtime is the one that starts.
    /// </summary>
    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void ASelfContainedAppRunsOnTheRuntimeInItsFolder(bool openMpi)
    {
        Assert.True(_published.Publish.ExitCode == 0, _published.Publish.ToString());
        string empty = Directory.CreateTempSubdirectory("motor-no-dotnet-").FullName;
        try
        {
            Job.Result r = Job.Mpi(2, _published.App, hosted: true, launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich,
                                   env: new Dictionary<string, string> { ["DOTNET_ROOT"] = empty });
            _log.WriteLine(r.Output);
            Assert.True(r.ExitCode == 0, r.ToString());
            Assert.Contains("Hello from rank 0 of 2", r.Output);
            Assert.Contains("Hello from rank 1 of 2", r.Output);
            Assert.Contains("(motor VM, thread level", r.Output);
        }
        finally
        {
            Directory.Delete(empty, recursive: true);
        }
    }

    /// <summary>
    /// Which hostfxr motor loaded (its start-up trace names it) and which code ran: the JIT's list of
    /// what it compiled (DOTNET_JitStdOutFile) lacks Main under the composite image, whose Hello.dll
    /// carries no code of its own, and has it for the framework-dependent build of the same program.
    /// </summary>
    [Fact]
    public void MainRunsFromTheCompositeImage()
    {
        Assert.True(_published.Publish.ExitCode == 0, _published.Publish.ToString());
        string dir = Directory.CreateTempSubdirectory("motor-jit-").FullName;
        try
        {
            string Compiled(string app, string name)
            {
                string list = Path.Combine(dir, name);
                Job.Result r = Job.Mpi(1, app, hosted: true, env: new Dictionary<string, string>
                {
                    ["MOTOR_STARTUP_TRACE"] = "1", ["DOTNET_JitStdOutFile"] = list, ["DOTNET_JitDisasmSummary"] = "1",
                });
                _log.WriteLine(r.Output);
                Assert.True(r.ExitCode == 0, r.ToString());
                Assert.Contains("Hello from rank 0 of 1", r.Output);
                Assert.True(File.Exists(list), $"the JIT wrote no list of what it compiled:\n{r.Output}");
                return File.ReadAllText(list) + r.Output;
            }
            string composite = Compiled(_published.App, "composite.txt");
            Assert.Contains($"hostfxr loaded ({Path.Combine(_published.Folder, "libhostfxr.so")})", composite);
            Assert.Contains("JIT compiled", composite); // the list is written (stubs are always compiled)
            Assert.DoesNotContain("Program:<Main>$", composite);

            string jitted = Compiled(Job.ManagedProgram("Hello"), "framework-dependent.txt");
            Assert.DoesNotContain($"hostfxr loaded ({_published.Folder}", jitted);
            Assert.Contains("Program:<Main>$", jitted);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    /// <summary>
    /// Trimming keeps HostEntry.Prepare (System.MP's ILLink descriptor): motor finds it and System.MP starts
    /// before Main, as in an untrimmed app, on 2 ranks.
    /// </summary>
    [Fact]
    public void ATrimmedAppKeepsSystemMpsStartBeforeMain()
    {
        Assert.True(_published.Publish.ExitCode == 0, _published.Publish.ToString());
        Job.Result r = Job.Mpi(2, _published.TrimmedApp, hosted: true, env: new Dictionary<string, string> { ["MOTOR_STARTUP_TRACE"] = "1" });
        _log.WriteLine(r.Output);
        Assert.True(r.ExitCode == 0, r.ToString());
        Assert.Contains("Hello from rank 1 of 2", r.Output);
        Assert.Contains($"hostfxr loaded ({Path.Combine(_published.TrimmedFolder, "libhostfxr.so")})", r.Output);
        Assert.Equal(2, r.Output.Split('\n').Count(l => l.Contains("System.MP entry found (runtime's native loader)", StringComparison.Ordinal)));
        Assert.Equal(2, r.Output.Split('\n').Count(l => l.Contains("System.MP bound and the app loaded", StringComparison.Ordinal)));
    }
}
