using System.Runtime.CompilerServices;

namespace System.MP.Tests;

/// <summary>
/// PATH setups a user's machine may have, which Motor's scripts and tests must not depend on.
/// The whole test run uses <see cref="OpenMpiFirst"/>: a plain <c>mpiexec</c> or <c>mpirun</c>
/// is Open MPI's, as on a fresh Debian machine with both MPIs installed, so any script or
/// test that ran a plain <c>mpiexec</c> for an MPICH job would fail here, whatever the
/// development machine's own default is.
/// </summary>
internal static class HostilePath
{
    private static readonly string Dir = Path.Combine(Path.GetTempPath(), $"motor-path-{Environment.ProcessId}");

    /// <summary>PATH of this test run as it was given, with Open MPI's launcher prepended as mpiexec and mpirun.</summary>
    internal static string OpenMpiFirst { get; private set; } = "";

    /// <summary>The given PATH of this run with no <c>mpiexec</c> or <c>mpirun</c> anywhere on it (made on first use).</summary>
    internal static string NoMpiexec => s_noMpiexec.Value;

    private static readonly Lazy<string> s_noMpiexec = new(MakeNoMpiexec);
    private static string s_original = "";

    [ModuleInitializer]
    internal static void Install()
    {
        s_original = Environment.GetEnvironmentVariable("PATH") ?? "/usr/bin:/bin";
        string openMpiFirst = Path.Combine(Dir, "openmpi-first");
        Directory.CreateDirectory(openMpiFirst);
        string? ompi = FindOnPath("mpirun.openmpi", s_original);
        if (ompi is not null)
        {
            foreach (string name in new[] { "mpiexec", "mpirun" })
            {
                string link = Path.Combine(openMpiFirst, name);
                if (!File.Exists(link))
                    File.CreateSymbolicLink(link, ompi);
            }
        }
        OpenMpiFirst = openMpiFirst + ":" + s_original;
        Environment.SetEnvironmentVariable("PATH", OpenMpiFirst);
        AppDomain.CurrentDomain.ProcessExit += (_, _) =>
        {
            try
            {
                Directory.Delete(Dir, recursive: true);
            }
            catch (IOException)
            {
            }
        };
    }

    /// <summary>Where <paramref name="name"/> is found on <paramref name="path"/>, like a shell looks it up.</summary>
    internal static string? FindOnPath(string name, string path) =>
        path.Split(':', StringSplitOptions.RemoveEmptyEntries)
            .Select(d => Path.Combine(d, name))
            .FirstOrDefault(File.Exists);

    // One folder of links to every program on the original PATH but mpiexec and mpirun.
    private static string MakeNoMpiexec() => LinkFarm("no-mpiexec", name => name is "mpiexec" or "mpirun");

    /// <summary>
    /// A PATH of one folder (<paramref name="label"/>, made once per run) holding links to every
    /// program on the run's original PATH except those <paramref name="leaveOut"/> names.
    /// </summary>
    internal static string LinkFarm(string label, Func<string, bool> leaveOut)
    {
        string farm = Path.Combine(Dir, label);
        lock (s_farms)
        {
            if (!s_farms.Add(label))
                return farm;
            Directory.CreateDirectory(farm);
            foreach (string dir in Enumerable.Reverse(s_original.Split(':', StringSplitOptions.RemoveEmptyEntries)))
            {
                if (!Directory.Exists(dir))
                    continue;
                foreach (string file in Directory.EnumerateFileSystemEntries(dir))
                {
                    string name = Path.GetFileName(file);
                    if (leaveOut(name) || Directory.Exists(file))
                        continue;
                    string link = Path.Combine(farm, name);
                    File.Delete(link); // earlier PATH entries win, as in a shell
                    File.CreateSymbolicLink(link, file);
                }
            }
        }
        return farm;
    }

    private static readonly HashSet<string> s_farms = new(StringComparer.Ordinal);
}
