using System.Diagnostics;
using System.Text;

namespace System.MP.Tests;

/// <summary>Launches programs of this repository as MPI jobs and captures what they print.</summary>
internal static class Job
{
    /// <summary>The repository root (holds Directory.Build.props).</summary>
    internal static readonly string Root = FindRoot();

    /// <summary>Build configuration folder of this test run ("release" or "debug").</summary>
    private static readonly string Configuration = new DirectoryInfo(AppContext.BaseDirectory).Name;

    internal sealed record Result(int ExitCode, string Output, bool TimedOut)
    {
        public override string ToString() => $"exit {ExitCode}{(TimedOut ? " (timed out)" : "")}\n{Output}";
    }

    internal static string ManagedProgram(string project) =>
        Path.Combine(Root, "artifacts", "dotnet", "bin", project, Configuration, project + ".dll");

    internal static string NativeProgram(string name) => Path.Combine(Root, "artifacts", "bin", name);

    /// <summary>Runs `mpiexec -n ranks dotnet program.dll args` (or a native program).</summary>
    internal static Result Mpi(int ranks, string program, string args = "", int timeoutSeconds = 120,
                               IDictionary<string, string>? env = null)
    {
        string launch = program.EndsWith(".dll", StringComparison.Ordinal) ? $"dotnet {program}" : program;
        return Run("mpiexec", $"-n {ranks} {launch} {args}", timeoutSeconds, env);
    }

    /// <summary>Runs a scenario of tests/Scenarios on <paramref name="ranks"/> ranks and asserts every rank passed.</summary>
    internal static Result Scenario(string name, int ranks, int timeoutSeconds = 120, IDictionary<string, string>? env = null)
    {
        Result r = Mpi(ranks, ManagedProgram("Scenarios"), name, timeoutSeconds, env);
        Xunit.Assert.False(r.TimedOut, $"{name} on {ranks} ranks hung:\n{r}");
        Xunit.Assert.True(r.ExitCode == 0, $"{name} on {ranks} ranks failed:\n{r}");
        for (int rank = 0; rank < ranks; rank++)
            Xunit.Assert.Contains($"PASS {name} rank {rank} ", r.Output);
        Xunit.Assert.DoesNotContain("FAIL", r.Output);
        return r;
    }

    internal static Result Run(string file, string args, int timeoutSeconds = 120, IDictionary<string, string>? env = null)
    {
        var psi = new ProcessStartInfo(file, args)
        {
            RedirectStandardOutput = true,
            RedirectStandardError = true,
            UseShellExecute = false,
        };
        // Keep the child runs independent of the test host's own settings.
        psi.Environment.Remove("MOTOR_CORE_LIBRARY");
        if (env is not null)
            foreach (var (k, v) in env)
                psi.Environment[k] = v;
        var output = new StringBuilder();
        using var p = new Process { StartInfo = psi };
        p.OutputDataReceived += (_, e) => { if (e.Data is not null) lock (output) output.AppendLine(e.Data); };
        p.ErrorDataReceived += (_, e) => { if (e.Data is not null) lock (output) output.AppendLine(e.Data); };
        p.Start();
        p.BeginOutputReadLine();
        p.BeginErrorReadLine();
        bool exited = p.WaitForExit(timeoutSeconds * 1000);
        if (!exited)
        {
            try
            {
                p.Kill(entireProcessTree: true);
            }
            catch (InvalidOperationException)
            {
            }
            p.WaitForExit();
        }
        else
        {
            p.WaitForExit(); // flush the asynchronous readers
        }
        lock (output)
            return new Result(exited ? p.ExitCode : -1, output.ToString(), !exited);
    }

    private static string FindRoot()
    {
        for (var d = new DirectoryInfo(AppContext.BaseDirectory); d is not null; d = d.Parent)
            if (File.Exists(Path.Combine(d.FullName, "Directory.Build.props")) && Directory.Exists(Path.Combine(d.FullName, "src")))
                return d.FullName;
        throw new InvalidOperationException("repository root not found above " + AppContext.BaseDirectory);
    }
}
