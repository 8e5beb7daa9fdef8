using System.Diagnostics;
using System.IO.Compression;
using System.Text.RegularExpressions;
using Xunit;
using Xunit.Abstractions;

namespace System.MP.Tests;

/// <summary>
/// What a new user does, outside the repository: <c>./build.sh pack</c> into a feed folder and
/// <c>./build.sh install</c> into a prefix (both into a temporary folder), installs the
/// templates from the feed, creates a C# and an F# app with <c>dotnet new motor</c>, builds
/// them against the feed alone, and runs them under <c>mpiexec -n 2 motor</c> and
/// <c>mpiexec -n 2 dotnet</c>.  NuGet's package cache and the template engine's store are
/// temporary too, so nothing comes from an earlier run or from the repository.
/// </summary>
public sealed class PackageTests : IClassFixture<PackageTests.NewUser>
{
    private readonly NewUser _user;
    private readonly ITestOutputHelper _log;

    public PackageTests(NewUser user, ITestOutputHelper log)
    {
        _user = user;
        _log = log;
    }

    /// <summary>A temporary home with the packages and motor as a user would get them.</summary>
    public sealed class NewUser : IDisposable
    {
        internal readonly string Dir = Path.Combine(Path.GetTempPath(), $"motor-newuser-{Guid.NewGuid():N}");
        internal string Feed => Path.Combine(Dir, "feed");
        internal string Prefix => Path.Combine(Dir, "prefix");
        internal string Work => Path.Combine(Dir, "work");
        internal readonly string Version = File.ReadAllText(Path.Combine(Job.Root, "VERSION")).Trim();
        internal readonly Dictionary<string, string> Env;
        internal readonly Job.Result Pack, Install, Templates;
        internal readonly TimeSpan PackTime;

        public NewUser()
        {
            Directory.CreateDirectory(Work);
            Env = UserEnvironment(Dir);
            Env["PATH"] = $"{Path.Combine(Prefix, "bin")}:{Environment.GetEnvironmentVariable("PATH")}";
            // The feed is the only package source (FSharp.Core comes with the SDK).
            File.WriteAllText(Path.Combine(Work, "nuget.config"),
                $"""
                <?xml version="1.0" encoding="utf-8"?>
                <configuration>
                  <packageSources>
                    <clear />
                    <add key="motor" value="{Feed}" />
                  </packageSources>
                </configuration>
                """);
            var clock = Stopwatch.StartNew();
            string buildSh = Path.Combine(Job.Root, "build.sh");
            Pack = Job.Run("/bin/bash", $"{buildSh} pack {Feed}", 300, Env);
            PackTime = clock.Elapsed;
            Install = Job.Run("/bin/bash", $"{buildSh} install {Prefix}", 120, Env);
            Templates = Dotnet($"new install {Path.Combine(Feed, $"Motor.Templates.{Version}.nupkg")}", 120);
        }

        /// <summary>
        /// A new user's environment with everything .NET keeps (its home, NuGet's package cache)
        /// under <paramref name="dir"/>, for pack and install of the build the suite has just made.
        /// </summary>
        internal static Dictionary<string, string> UserEnvironment(string dir) => new()
        {
            ["DOTNET_CLI_HOME"] = Path.Combine(dir, "home"),
            ["NUGET_PACKAGES"] = Path.Combine(dir, "nuget-packages"),
            ["DOTNET_CLI_TELEMETRY_OPTOUT"] = "1",
            ["DOTNET_NOLOGO"] = "1",
            ["DOTNET_SKIP_FIRST_TIME_EXPERIENCE"] = "1",
            ["MSBUILDDISABLENODEREUSE"] = "1",
            ["DOTNET_CLI_DO_NOT_USE_MSBUILD_SERVER"] = "1",
            ["MOTOR_NO_BUILD"] = "1", // the suite has just built; pack and install that build
        };

        /// <summary>Runs dotnet with the user's environment, in the work folder.</summary>
        internal Job.Result Dotnet(string args, int timeoutSeconds = 300) =>
            Job.Run("/bin/bash", $"-c \"cd '{Work}' && dotnet {args}\"", timeoutSeconds, Env);

        public void Dispose()
        {
            try
            {
                Directory.Delete(Dir, recursive: true);
            }
            catch (IOException)
            {
            }
        }
    }

    private void RequirePackedAndInstalled()
    {
        Assert.True(_user.Pack.ExitCode == 0, _user.Pack.ToString());
        Assert.True(_user.Install.ExitCode == 0, _user.Install.ToString());
    }

    [Fact]
    public void TheSystemMPPackageHoldsTheAssemblyItsDocsAndBothCores()
    {
        RequirePackedAndInstalled();
        string package = Path.Combine(_user.Feed, $"System.MP.{_user.Version}.nupkg");
        using ZipArchive zip = ZipFile.OpenRead(package);
        var names = zip.Entries.Select(e => e.FullName).ToHashSet();
        foreach (string expected in new[]
                 {
                     "lib/net10.0/System.MP.dll", "lib/net10.0/System.MP.xml", "PACKAGE.md",
                     "runtimes/linux-x64/native/libmpcore.so", "runtimes/linux-x64/native/libmpcore-ompi.so",
                 })
            Assert.Contains(expected, names);
        // The packed cores are this build's, byte for byte.
        foreach (string core in new[] { "libmpcore.so", "libmpcore-ompi.so" })
        {
            using Stream packed = zip.GetEntry($"runtimes/linux-x64/native/{core}")!.Open();
            using var copy = new MemoryStream();
            packed.CopyTo(copy);
            Assert.Equal(File.ReadAllBytes(Job.NativeProgram(core)), copy.ToArray());
        }
        string nuspec = new StreamReader(zip.GetEntry("System.MP.nuspec")!.Open()).ReadToEnd();
        Assert.Contains($"<version>{_user.Version}</version>", nuspec);
        _log.WriteLine($"pack: {_user.PackTime.TotalSeconds:F1} s; " + string.Join(", ",
            Directory.GetFiles(_user.Feed, "*.nupkg").Select(f => $"{Path.GetFileName(f)} {new FileInfo(f).Length / 1024.0:F0} KiB")));
    }

    [Fact]
    public void TheVersionComesFromOnePlace()
    {
        RequirePackedAndInstalled();
        Assert.Matches(@"^\d+\.\d+\.\d+$", _user.Version);
        Assert.True(File.Exists(Path.Combine(_user.Feed, $"System.MP.{_user.Version}.nupkg")));
        Assert.True(File.Exists(Path.Combine(_user.Feed, $"Motor.Templates.{_user.Version}.nupkg")));
        Assert.Equal(_user.Version, typeof(Communicator).Assembly.GetName().Version!.ToString(3));
        Job.Result motor = Job.Run(Path.Combine(_user.Prefix, "bin", "motor"), "--version", 60, _user.Env);
        Assert.True(motor.ExitCode == 0, motor.ToString());
        Assert.StartsWith($"Motor {_user.Version} ", motor.Output);
        // The template references exactly this version of System.MP.
        using ZipArchive zip = ZipFile.OpenRead(Path.Combine(_user.Feed, $"Motor.Templates.{_user.Version}.nupkg"));
        foreach (string project in new[] { "content/motor-csharp/MotorApp.csproj", "content/motor-fsharp/MotorApp.fsproj" })
        {
            string text = new StreamReader(zip.GetEntry(project)!.Open()).ReadToEnd();
            Assert.Contains($"<PackageReference Include=\"System.MP\" Version=\"{_user.Version}\" />", text);
        }
    }

    [Fact]
    public void TheInstalledMotorRunsFromItsPrefixAlone()
    {
        RequirePackedAndInstalled();
        string lib = Path.Combine(_user.Prefix, "lib", "motor");
        foreach (string f in new[] { "motor", "libmpgc.so", "libmpcore.so", "libmpcore-ompi.so", "System.MP.dll", "System.MP.xml" })
            Assert.True(File.Exists(Path.Combine(lib, f)), $"{f} is not installed in {lib}");
        Job.Result version = Job.Run(Path.Combine(_user.Prefix, "bin", "motor"), "--version", 60, _user.Env);
        // Its GC extension and core are the installed copies, not the build's.
        Assert.Contains($"GC extension: {Path.Combine(lib, "libmpgc.so")}", version.Output);
        Job.Result readelf = Job.Run("/usr/bin/readelf", $"-d {Path.Combine(lib, "motor")} {Path.Combine(lib, "libmpgc.so")}", 60);
        Assert.DoesNotContain(Job.Root, readelf.Output);
    }

    [Theory]
    [InlineData("C#", "MyApp")]
    [InlineData("F#", "MyFsApp")]
    public void ANewAppFromTheTemplateRunsUnderMotorAndDotnet(string language, string name)
    {
        RequirePackedAndInstalled();
        Assert.True(_user.Templates.ExitCode == 0, _user.Templates.ToString());
        Assert.Contains("motor", _user.Templates.Output);
        var clock = Stopwatch.StartNew();
        Job.Result created = _user.Dotnet($"new motor -lang {language} -o {name}", 120);
        Assert.True(created.ExitCode == 0, created.ToString());
        string project = Path.Combine(_user.Work, name, name + (language == "F#" ? ".fsproj" : ".csproj"));
        Assert.True(File.Exists(project), created.ToString());
        Assert.DoesNotContain("ProjectReference", File.ReadAllText(project));

        Job.Result built = _user.Dotnet($"build {name} -nologo", 300);
        Assert.True(built.ExitCode == 0, built.ToString());
        // Restored from the feed into the temporary cache, not from the repository.
        string assets = File.ReadAllText(Path.Combine(_user.Work, name, "obj", "project.assets.json"));
        Assert.Contains($"\"System.MP/{_user.Version}\"", assets);
        string app = Path.Combine(_user.Work, name, "bin", "Debug", "net10.0", name + ".dll");
        string native = Path.Combine(Path.GetDirectoryName(app)!, "runtimes", "linux-x64", "native");
        Assert.True(File.Exists(Path.Combine(native, "libmpcore.so")), $"no core in {native}");

        string mpiexec = Job.FindLauncher(Job.Launcher.Mpich);
        foreach (string host in new[] { "motor", "dotnet" })
        {
            Job.Result run = Job.Run(mpiexec, $"-n 2 {host} {app}", 120, _user.Env);
            if (host == "motor")
                _log.WriteLine($"{language}: dotnet new motor to the end of the first mpiexec run: {clock.Elapsed.TotalSeconds:F1} s");
            CheckOutput(run, host == "motor" ? "Motor VM" : "library mode");
        }
        // Library mode on Open MPI takes the package's second core.
        CheckOutput(Job.Mpi(2, app, env: _user.Env, launcher: Job.Launcher.OpenMpi), "library mode");
    }

    private static void CheckOutput(Job.Result run, string mode)
    {
        Assert.True(run.ExitCode == 0, run.ToString());
        for (int rank = 0; rank < 2; rank++)
            Assert.Matches(new Regex($"rank {rank} of 2 \\({mode}\\): {(1 - rank) * (1 - rank)} from rank {1 - rank}, " +
                                     "sum of ranks 1, run 'first run' of 10 steps"), run.Output);
    }
}
