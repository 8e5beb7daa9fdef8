using System.IO;
using System.Reflection;
using System.Runtime.InteropServices;
using Scenarios;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// Parallel I/O (MpiFile.cs, Info.cs): 2-rank jobs (tests/Scenarios/IO/Files.cs) in library mode and
/// under motor, on the MPICH core (ROMIO) and on the Open MPI core (OMPIO): collective writes read
/// back byte-exactly by .NET, .NET files read by MPI-IO, interleaved views, both file pointers,
/// nonblocking accesses under GC torture, and every failure mode; plus one-rank checks in process.
/// </summary>
public class FileTests
{
    public static TheoryData<Scenario, bool, bool> Jobs() =>
        Job.EveryCoreAndMode(Scenario.FilesRoundTrip, Scenario.FilesNonblocking, Scenario.FilesErrors, Scenario.FilesOffsetUnits, Scenario.FilesSubarrayViews);

    [Theory]
    [MemberData(nameof(Jobs))]
    public void TwoRanks(Scenario scenario, bool hosted, bool openMpi) =>
        Job.RunTwoRanks(scenario, hosted, openMpi);

    /// <summary>
    /// IWriteAt and IReadAt at thread level Multiple (set for both modes by MOTOR_THREAD_LEVEL):
    /// the access runs on a thread of its own, so the request is still pending when the call
    /// returns while another rank holds a lock on the range (scenario FilesInBackground).  ROMIO
    /// locks a write's range in atomic mode; Open MPI's ufs component decides by file system
    /// whether to lock, and fs_ufs_lock_algorithm=3 makes it lock the ranges here too.
    /// </summary>
    [Theory]
    [MemberData(nameof(CoresAndModes))]
    public void NonblockingAccessesRunInTheBackgroundAtMultiple(bool hosted, bool openMpi) =>
        Job.RunScenario(Scenario.FilesInBackground, 2, hosted: hosted,
                        env: new Dictionary<string, string> { ["MOTOR_THREAD_LEVEL"] = "multiple", ["OMPI_MCA_fs_ufs_lock_algorithm"] = "3" },
                        launcher: openMpi ? Job.Launcher.OpenMpi : Job.Launcher.Mpich);

    public static TheoryData<bool, bool> CoresAndModes() => Job.CoresAndModes();

    /// <summary>
    /// Every explicit-offset access taking a <see cref="long"/> offset, whose unit changed with
    /// SetView, is refused at compile time with a message naming both units, beside a
    /// <see cref="FileOffset"/> form of the same shape.
    /// </summary>
    [Fact]
    public void LongOffsetsAreRefusedAtCompileTimeBesideFileOffsetForms()
    {
        string[] names = ["ReadAt", "WriteAt", "ReadAtAll", "WriteAtAll", "IReadAt", "IWriteAt"];
        var methods = typeof(MpiFile).GetMethods().Where(m => names.Contains(m.Name)).ToArray();
        var withLong = methods.Where(m => m.GetParameters()[0].ParameterType == typeof(long)).ToArray();
        Assert.Equal(16, withLong.Length);
        foreach (var m in withLong)
        {
            var obsolete = m.GetCustomAttributes(typeof(ObsoleteAttribute), false).Cast<ObsoleteAttribute>().SingleOrDefault();
            Assert.True(obsolete is { IsError: true }, $"{m} is refused at compile time");
            Assert.Contains("FileOffset.Elements(n)", obsolete!.Message);
            Assert.Contains("FileOffset.Bytes(n)", obsolete.Message);
            string[] rest = m.GetParameters().Skip(1).Select(p => p.ParameterType.Name).ToArray();
            Assert.Contains(methods, f => f.Name == m.Name && f.GetParameters()[0].ParameterType == typeof(FileOffset) &&
                                          f.GetParameters().Skip(1).Select(p => p.ParameterType.Name).SequenceEqual(rest));
        }
        Assert.All(methods.Where(m => m.GetParameters()[0].ParameterType == typeof(FileOffset)),
                   m => Assert.Empty(m.GetCustomAttributes(typeof(ObsoleteAttribute), false)));
    }

    /// <summary>
    /// The <see cref="long"/>-offset forms do not compile, but a binary built against them
    /// still calls them: through reflection, every array form of them reads and writes where
    /// MPI's offset says, in etypes of the view (bytes before SetView, elements of the view's
    /// type after), and a negative offset is refused naming it.
    /// </summary>
    [Fact]
    public void LongOffsetsStillCountTheViewsEtypesForBinariesBuiltAgainstThem()
    {
        string dir = Directory.CreateTempSubdirectory("motor-mpiio-").FullName;
        try
        {
            string[] writes = ["WriteAt", "WriteAtAll", "IWriteAt"], reads = ["ReadAt", "ReadAtAll", "IReadAt"];
            foreach (bool view in new[] { false, true })
            {
                string path = Path.Combine(dir, $"long-{view}.bin");
                using (var f = MpiFile.Open(Communicator.Self, path, MpiFileMode.ReadWrite | MpiFileMode.Create))
                {
                    if (view)
                        f.SetView<int>();
                    foreach (string[] names in new[] { writes, reads })
                    {
                        int element = 0; // each form of the group accesses its own int of the file
                        foreach (string name in names)
                            foreach (bool slice in new[] { false, true })
                            {
                                long offset = view ? element : 4L * element; // int k is byte 4k before SetView
                                int value = names == writes ? 100 + element : 0;
                                int[] buffer = slice ? [-1, value] : [value];
                                object?[] args = slice ? [offset, buffer, 1, 1] : [offset, buffer];
                                if (LongForm(name, args.Length).Invoke(f, args) is Request request)
                                    request.Wait();
                                Assert.Equal(100 + element, buffer[^1]); // a read finds what the write there wrote
                                element++;
                            }
                    }
                    var refused = Assert.Throws<TargetInvocationException>(() => LongForm("WriteAt", 2).Invoke(f, [-1L, new int[1]]));
                    Assert.Equal("offset", Assert.IsType<ArgumentOutOfRangeException>(refused.InnerException).ParamName);
                }
                Assert.Equal(Enumerable.Range(100, 6).ToArray(), MemoryMarshal.Cast<byte, int>(File.ReadAllBytes(path)).ToArray());
            }
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }

        static MethodInfo LongForm(string name, int parameters) =>
            typeof(MpiFile).GetMethods().Single(m => m.Name == name && m.GetParameters().Length == parameters &&
                                                     m.GetParameters()[0].ParameterType == typeof(long) &&
                                                     m.GetParameters()[1].ParameterType.IsArray).MakeGenericMethod(typeof(int));
    }

    [Fact]
    public void OneRankWritesWhatDotnetReadsAndReadsWhatDotnetWrote()
    {
        string dir = Directory.CreateTempSubdirectory("motor-mpiio-").FullName;
        try
        {
            string path = Path.Combine(dir, "self.bin");
            var values = new[] { 1.5, -2.25, 1e300, double.Epsilon };
            using (var f = MpiFile.Open(Communicator.Self, path, MpiFileMode.WriteOnly | MpiFileMode.Create))
            {
                f.SetView<double>(8);
                Assert.Equal(4, f.Write(values).GetCount<double>());
                Assert.Equal(4L, f.Position);
            }
            byte[] bytes = File.ReadAllBytes(path);
            Assert.Equal(new byte[8], bytes[..8]);
            Assert.Equal(values, MemoryMarshal.Cast<byte, double>(bytes.AsSpan(8)).ToArray());

            File.WriteAllBytes(path, [9, 8, 7, 6, 5]);
            using (var f = MpiFile.Open(Communicator.Self, path, MpiFileMode.ReadOnly))
            {
                Span<byte> back = stackalloc byte[8];
                Assert.Equal(4, f.ReadAt(FileOffset.Bytes(1), back).GetCount<byte>());
                Assert.Equal(new byte[] { 8, 7, 6, 5, 0, 0, 0, 0 }, back.ToArray());
                Assert.Equal(5L, f.GetSize());
            }
            MpiFile.Delete(path);
            Assert.False(File.Exists(path));
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    [Fact]
    public void InfoStoresHints()
    {
        using var info = new Info();
        Assert.Null(info["cb_nodes"]);
        info["cb_nodes"] = "2";
        info["cb_nodes"] = "4";
        info["striping_unit"] = "1048576";
        Assert.Equal("4", info["cb_nodes"]);
        Assert.Equal("1048576", info["striping_unit"]);
    }

    [Fact]
    public void AMissingFileIsAnMpiErrorNamingItsClass()
    {
        var e = Assert.Throws<MpiException>(() =>
            MpiFile.Open(Communicator.Self, "/nonexistent-motor-dir/none.bin", MpiFileMode.ReadOnly));
        Assert.NotEqual(0, e.ErrorClass);
        Assert.StartsWith("MPI_File_open", e.Message);
    }
}
