using System.MP.Interop;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The C and C# views of the core's interface agree: both come from one list
/// (native/mpcore/include/mpcore_calls.def), and these tests read the list as the
/// loaded core reports it (mp_table_t.manifest) against the generated binding
/// (Interop/Core.g.cs).  The stale-core guard: the committed binding is what the list
/// generates today, and a core built from another list or ABI is refused when loaded
/// (Interop/CoreLoader.cs), in library mode and under motor, naming the difference.
/// </summary>
public unsafe class CoreInterfaceTests
{
    private static string[] ManifestLines()
    {
        CoreLoader.EnsureLoaded();
        string manifest = Marshal.PtrToStringUTF8(CoreLoader.Table->Manifest)!;
        return manifest.Split('\n', StringSplitOptions.RemoveEmptyEntries);
    }

    // "FAST int isend(const void *buf, ...)" -> (FAST, isend, parameter count)
    private static (string Kind, string Name, int Parameters) Parse(string line)
    {
        int open = line.IndexOf('(', StringComparison.Ordinal);
        string head = line[..open];
        string kind = head[..head.IndexOf(' ', StringComparison.Ordinal)];
        string name = head[(head.LastIndexOf(' ') + 1)..];
        string parameters = line[(open + 1)..line.LastIndexOf(')')];
        return (kind, name, parameters == "void" ? 0 : parameters.Split(',').Length);
    }

    private static string Pascal(string snake) =>
        string.Concat(snake.Split('_').Select(w => char.ToUpperInvariant(w[0]) + w[1..]));

    [Fact]
    public void TheLoadedCoreReportsTheListThisAssemblyWasGeneratedFrom()
    {
        CoreLoader.EnsureLoaded();
        Assert.Equal(CoreTable.ExpectedAbiVersion, CoreLoader.Table->AbiVersion);
        Assert.Equal((uint)sizeof(CoreTable), CoreLoader.Table->Size);
        Assert.Equal(CoreTable.ExpectedManifest, Marshal.PtrToStringUTF8(CoreLoader.Table->Manifest));
        // One table slot per entry, after the three header fields.
        Assert.Equal(ManifestLines().Length, typeof(CoreTable).GetFields(BindingFlags.Instance | BindingFlags.NonPublic).Length - 3);
    }

    [Fact]
    public void EveryFastCallAndOnlyFastCallsSkipTheGcTransition()
    {
        var bound = typeof(Core).GetFields(BindingFlags.Static | BindingFlags.NonPublic)
            .Where(f => f.FieldType.IsFunctionPointer)
            .ToDictionary(f => f.Name);
        int checkedCalls = 0;
        foreach (string line in ManifestLines())
        {
            var (kind, name, parameters) = Parse(line);
            string field = Pascal(name);
            if (kind == "GC")
            {
                Assert.False(bound.ContainsKey(field), $"{field} is for the GC extension and must not be bound in C#");
                continue;
            }
            Assert.True(bound.Remove(field, out FieldInfo? f), $"no binding Core.{field} for '{line}'");
            Type type = f!.GetModifiedFieldType();
            Assert.True(type.IsFunctionPointer && type.IsUnmanagedFunctionPointer, $"Core.{field} is not an unmanaged function pointer");
            bool suppresses = type.GetFunctionPointerCallingConventions().Contains(typeof(CallConvSuppressGCTransition));
            Assert.True(suppresses == (kind is "FAST" or "ANY"), $"Core.{field} ({kind}) is bound {(suppresses ? "with" : "without")} SuppressGCTransition");
            Assert.Equal(parameters, type.GetFunctionPointerParameterTypes().Length);
            checkedCalls++;
        }
        Assert.Empty(bound.Keys); // nothing bound that the list does not have
        Assert.True(checkedCalls > 80, $"only {checkedCalls} calls checked");
    }

    [Fact]
    public void ADifferentListIsNamedAtItsFirstDifference()
    {
        Assert.Equal("none", CoreLoader.FirstDifference("FAST int a(void)\n", "FAST int a(void)\n"));
        Assert.Equal("entry 1: the core has 'BLOCKING int b(void)', System.MP expects 'FAST int b(void)'",
                     CoreLoader.FirstDifference("FAST int a(void)\nBLOCKING int b(void)\n", "FAST int a(void)\nFAST int b(void)\n"));
        Assert.Equal("entry 1: the core has '(nothing)', System.MP expects 'FAST int c(int x)'",
                     CoreLoader.FirstDifference("FAST int a(void)", "FAST int a(void)\nFAST int c(int x)"));
    }

    // ---- the stale-core guard ----

    /// <summary>
    /// A core that forwards to the real one with its table changed (tests/native/forged_core.c,
    /// MOTOR_FORGED_CORE = kind, abi or size): library mode loads it as MOTOR_CORE_LIBRARY,
    /// motor has it preloaded so the host's own lookup of the table lands there.
    /// </summary>
    private static Job.Result RunHelloOnForgedCore(string change, bool hosted)
    {
        string forged = Path.Combine(Job.Root, "build", "native", "tests", "libmpcore-forged.so");
        Assert.True(File.Exists(forged), $"{forged} is missing: build native first (./build.sh build)");
        var env = new Dictionary<string, string> { ["MOTOR_FORGED_CORE"] = change, [hosted ? "LD_PRELOAD" : "MOTOR_CORE_LIBRARY"] = forged };
        string hello = Job.ManagedProgram("Hello");
        Job.Result r = hosted ? Job.Run(Job.Motor, hello, 60, env) : Job.Run("dotnet", hello, 60, env);
        Assert.False(r.TimedOut, r.ToString());
        Assert.NotEqual(0, r.ExitCode);
        Assert.DoesNotContain("Hello from rank", r.Output);
        return r;
    }

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public void ACoreBuiltFromAnotherListIsRefusedAtItsFirstDifference(bool hosted)
    {
        string[] expected = CoreTable.ExpectedManifest.Split('\n');
        int entry = Array.FindIndex(expected, l => l.StartsWith("FAST ", StringComparison.Ordinal));
        string forged = "BLOCKING " + expected[entry]["FAST ".Length..];
        Job.Result r = RunHelloOnForgedCore("kind", hosted);
        Assert.Contains("built from different interface lists", r.Output);
        Assert.Contains($"entry {entry}: the core has '{forged}', System.MP expects '{expected[entry]}'", r.Output);
    }

    [Theory]
    [InlineData("abi", false)]
    [InlineData("abi", true)]
    [InlineData("size", false)]
    public void ACoreOfAnotherAbiIsRefused(string change, bool hosted)
    {
        uint version = CoreTable.ExpectedAbiVersion, size = (uint)sizeof(CoreTable);
        (uint coreVersion, uint coreSize) = change == "abi" ? (version + 1, size) : (version, size - (uint)sizeof(nint));
        Job.Result r = RunHelloOnForgedCore(change, hosted);
        Assert.Contains($"speaks ABI version {coreVersion} (table of {coreSize} bytes); this System.MP needs version {version} (table of at least {size} bytes)", r.Output);
    }

    /// <summary>
    /// Core.g.cs as committed and compiled into this System.MP is what gen_binding writes from
    /// today's mpcore_calls.def and mpcore.h (compiled here afresh, so a build that failed to
    /// regenerate the binding after the list changed is caught even when its own gen_binding is stale).
    /// </summary>
    [Fact]
    public void TheBindingIsWhatTheListGeneratesToday()
    {
        string dir = Directory.CreateTempSubdirectory("motor-gen-binding-").FullName;
        try
        {
            string include = Path.Combine(Job.Root, "native", "mpcore", "include");
            string generator = Path.Combine(dir, "gen_binding"), output = Path.Combine(dir, "Core.g.cs");
            Job.Result cc = Job.Run("cc", $"-std=c11 -D_GNU_SOURCE -I {include} -o {generator} {Path.Combine(Job.Root, "native", "mpcore", "tools", "gen_binding.c")}", 120);
            Assert.True(cc.ExitCode == 0, cc.ToString());
            Job.Result gen = Job.Run(generator, output, 60);
            Assert.True(gen.ExitCode == 0, gen.ToString());
            string committed = Path.Combine(Job.Root, "src", "System.MP", "Interop", "Core.g.cs");
            Assert.True(File.ReadAllText(output) == File.ReadAllText(committed),
                        $"{committed} is not what mpcore_calls.def generates: the native build (BuildMotorNative, cmake --build) did not run since the list changed");
            string text = File.ReadAllText(output);
            foreach (string line in CoreTable.ExpectedManifest.Split('\n', StringSplitOptions.RemoveEmptyEntries)) // the list compiled into this assembly
                Assert.Contains($"\"{line}\\n\"", text);
        }
        finally
        {
            Directory.Delete(dir, recursive: true);
        }
    }

    /// <summary>
    /// The public constants C# programs pass (Mpi.AnySource, …) are the values the core
    /// understands (MP_ANY_SOURCE, … in mpcore.h): written in C# because they are API, checked here.
    /// </summary>
    [Fact]
    public void ThePublicConstantsAreTheCoresValues()
    {
        string header = File.ReadAllText(Path.Combine(Job.Root, "native", "mpcore", "include", "mpcore.h"));
        int Define(string name)
        {
            var m = Text.RegularExpressions.Regex.Match(header, $@"#define {name}\s+\((-?\d+)\)");
            Assert.True(m.Success, $"{name} is not defined in mpcore.h");
            return int.Parse(m.Groups[1].Value, Globalization.CultureInfo.InvariantCulture);
        }
        Assert.Equal(Mpi.AnySource, Define("MP_ANY_SOURCE"));
        Assert.Equal(Mpi.AnyTag, Define("MP_ANY_TAG"));
        Assert.Equal(Mpi.ProcNull, Define("MP_PROC_NULL"));
        Assert.Equal(Mpi.Undefined, Define("MP_UNDEFINED"));
        Assert.Equal(Mpi.Root, Define("MP_ROOT"));
    }

    // ---- handle kinds ----

    /// <summary>mpcore.h's handle kinds (MP_HANDLE_KINDS): C type -> the C# type gen_binding makes of it.</summary>
    private static Dictionary<string, string> HandleKinds()
    {
        string header = File.ReadAllText(Path.Combine(Job.Root, "native", "mpcore", "include", "mpcore.h"));
        var kinds = Text.RegularExpressions.Regex.Matches(header, @"X\((mp_\w+_t), [^,]+, (\w+Handle), """)
            .ToDictionary(m => m.Groups[1].Value, m => m.Groups[2].Value);
        Assert.True(kinds.Count >= 8, $"only {kinds.Count} handle kinds found in mpcore.h");
        return kinds;
    }

    // "const mp_req_t *reqs" -> ("mp_req_t", "reqs")
    private static (string Type, string Name) CParameter(string p)
    {
        string[] words = p.Replace("*", " ", StringComparison.Ordinal).Split(' ', StringSplitOptions.RemoveEmptyEntries);
        return (words.Where(w => w != "const").SkipLast(1).Last(), words[^1]);
    }

    /// <summary>Names the interface list gives handles; a parameter so named must be of a handle kind.</summary>
    private static readonly string[] s_handleNames =
        ["comm", "newcomm", "intercomm", "parent", "local", "peer", "inter", "req", "reqs", "win", "file", "info", "infos",
         "group", "session", "msg", "token", "op"];

    /// <summary>The names System.MP's own code gives handles (local, peer and pending there are ranks and counts).</summary>
    private static readonly string[] s_managedHandleNames =
        ["comm", "newcomm", "req", "reqs", "win", "file", "info", "infos", "group", "session", "msg", "message", "token", "list"];

    /// <summary>
    /// Every handle crosses the native boundary as its own C# type: each parameter the list types
    /// as a handle kind (mp_comm_t, mp_req_t, ...) is bound to that kind's struct, a blittable
    /// struct of one field, and no two kinds share a type, so a group cannot be passed where a
    /// communicator is wanted; and no parameter named like a handle is a bare integer in C.
    /// </summary>
    [Fact]
    public void EveryHandleCrossesTheBoundaryAsItsOwnType()
    {
        Dictionary<string, string> kinds = HandleKinds();
        Assert.Equal(kinds.Count, kinds.Values.Distinct().Count());
        var bound = typeof(Core).GetFields(BindingFlags.Static | BindingFlags.NonPublic).Where(f => f.FieldType.IsFunctionPointer).ToDictionary(f => f.Name);
        var seen = new HashSet<string>();
        foreach (string line in ManifestLines())
        {
            var (kind, name, _) = Parse(line);
            if (kind == "GC")
                continue;
            string inside = line[(line.IndexOf('(', StringComparison.Ordinal) + 1)..line.LastIndexOf(')')];
            if (inside == "void")
                continue;
            string[] cParams = inside.Split(',');
            Type[] csParams = bound[Pascal(name)].FieldType.GetFunctionPointerParameterTypes();
            for (int i = 0; i < cParams.Length; i++)
            {
                var (cType, cName) = CParameter(cParams[i]);
                Type cs = csParams[i];
                while (cs.IsPointer)
                    cs = cs.GetElementType()!;
                if (kinds.TryGetValue(cType, out string? handle))
                {
                    Assert.True(cs.Name == handle, $"{name}: parameter {cName} ({cType}) is bound as {cs.Name}, not {handle}");
                    seen.Add(cType);
                }
                else
                {
                    Assert.False(s_handleNames.Contains(cName), $"{name}: parameter {cName} is a {cType}, not a handle kind");
                }
            }
        }
        Assert.Equal(kinds.Keys.Order(), seen.Order()); // every kind is used, so each one is checked
        foreach (string handle in kinds.Values)
        {
            Type t = typeof(Core).Assembly.GetType("System.MP.Interop." + handle)!;
            Assert.True(t is { IsValueType: true } && t.IsDefined(typeof(IsReadOnlyAttribute)), $"{handle} is not a readonly struct");
            Assert.True(t.IsLayoutSequential, $"{handle} is not sequential");
            FieldInfo[] fields = t.GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
            Assert.True(fields.Length == 1 && fields[0].FieldType.IsPrimitive, $"{handle} is not one primitive field");
            Assert.False(t.GetMethods(BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic).Any(m => m.Name is "op_Implicit" or "op_Explicit"),
                         $"{handle} converts to or from another type");
        }
    }

    /// <summary>
    /// Inside System.MP, no method takes a handle as a bare integer: a parameter named like one
    /// (comm, req, win, file, group, info, session, msg, token, list) of type int, long or nint
    /// would let one kind pass for another.  (MPI's own handles, public API for native code, are
    /// named handle and stay integers.)
    /// </summary>
    [Fact]
    public void NoMethodTakesAHandleAsABareInteger()
    {
        Type[] bare = [typeof(int), typeof(long), typeof(nint), typeof(int*), typeof(long*), typeof(nint*)];
        var found = new List<string>();
        const BindingFlags all = BindingFlags.Instance | BindingFlags.Static | BindingFlags.Public | BindingFlags.NonPublic | BindingFlags.DeclaredOnly;
        foreach (Type t in typeof(Core).Assembly.GetTypes())
        {
            foreach (MethodBase m in t.GetMethods(all).Cast<MethodBase>().Concat(t.GetConstructors(all)))
                foreach (ParameterInfo p in m.GetParameters())
                    if (p.Name is { } n && s_managedHandleNames.Contains(n) && bare.Contains(p.ParameterType))
                        found.Add($"{t.FullName}.{m.Name}({p.ParameterType.Name} {n})");
        }
        Assert.True(found.Count == 0, "handles taken as bare integers:\n" + string.Join("\n", found));
        Assert.Contains(typeof(PointToPointCore).GetMethods(all).SelectMany(m => m.GetParameters()), p => p.Name == "comm"); // the scan sees them
    }

    /// <summary>
    /// The structs System.MP hands the core, which gen_binding writes from mpcore.h's
    /// MP_STATUS_FIELDS and MP_COLL_FIELDS (CoreStatus, CollDesc), have the C layout (CoreLayout,
    /// written with the C compiler's sizeof and offsetof): the same size, and each C field a C#
    /// field of the same name (case and underscores aside) at the same offset, none more, none
    /// less.  The public Status is CoreStatus and nothing else, so the core fills it in place.
    /// </summary>
    [Fact]
    public void TheMirroredStructsHaveTheCLayout()
    {
        Assert.Equal(CoreLayout.StatusSize, sizeof(CoreStatus));
        AssertFields<CoreStatus>(CoreLayout.StatusFields);
        Assert.Equal(CoreLayout.StatusSize, sizeof(Status));
        FieldInfo[] status = typeof(Status).GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
        Assert.True(status.Length == 1 && status[0].FieldType == typeof(CoreStatus), "Status is not one CoreStatus");
        Assert.Equal(CoreLayout.CollSize, sizeof(CollDesc));
        AssertFields<CollDesc>(CoreLayout.CollFields);
    }

    private static void AssertFields<T>((string Name, int Offset)[] c)
    {
        static string Key(string name) => name.Replace("_", "", StringComparison.Ordinal).ToUpperInvariant();
        FieldInfo[] cs = typeof(T).GetFields(BindingFlags.Instance | BindingFlags.Public | BindingFlags.NonPublic);
        Assert.Equal(c.Length, cs.Length);
        foreach (var (name, offset) in c)
        {
            FieldInfo? f = Array.Find(cs, x => Key(x.Name) == Key(name));
            Assert.True(f != null, $"{typeof(T).Name} has no field for {name}");
            Assert.True(offset == (int)Marshal.OffsetOf<T>(f!.Name), $"{typeof(T).Name}.{f.Name} is at {Marshal.OffsetOf<T>(f.Name)}, {name} at {offset}");
        }
    }
}
