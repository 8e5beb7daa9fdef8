using System.MP.Interop;
using System.Reflection;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The C and C# views of the core's interface agree: both come from one list
/// (native/mpcore/include/mpcore_calls.def), and these tests read the list as the
/// loaded core reports it (mp_table_t.manifest) against the generated binding.
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
}
