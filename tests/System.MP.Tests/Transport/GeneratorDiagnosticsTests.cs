using System.Collections.Immutable;
using System.Reflection;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp;
using Xunit;

namespace System.MP.Tests;

/// <summary>
/// The System.MP source generator on snippets compiled in the test (docs/diagnostics.md): each
/// misuse the run-time path refuses is reported at compile time with its own ID, a correct type
/// compiles with its generated codec and no diagnostic.  (#pragma and .editorconfig apply as to
/// the compiler's diagnostics: tests/Scenarios silences MOTOR002 on the type whose run-time refusal it tests.)
/// </summary>
public class GeneratorDiagnosticsTests
{
    /// <summary>The generator as the build ran it (src/System.MP.Generators, beside this test's output in artifacts/).</summary>
    private static readonly Lazy<Type> s_generator = new(() =>
    {
        string bin = Path.GetDirectoryName(typeof(Communicator).Assembly.Location)!;   // artifacts/dotnet/bin/System.MP.Tests/release
        string dll = Path.GetFullPath(Path.Combine(bin, "..", "..", "System.MP.Generators", Path.GetFileName(bin), "System.MP.Generators.dll"));
        return Assembly.LoadFrom(dll).GetType("System.MP.Generators.TransportableGenerator", throwOnError: true)!;
    });

    private static readonly Lazy<MetadataReference[]> s_references = new(() =>
        [.. ((string)AppContext.GetData("TRUSTED_PLATFORM_ASSEMBLIES")!).Split(Path.PathSeparator)
            .Where(p => Path.GetDirectoryName(p) == Path.GetDirectoryName(typeof(object).Assembly.Location)) // the shared framework
            .Select(p => MetadataReference.CreateFromFile(p)),
         MetadataReference.CreateFromFile(typeof(Communicator).Assembly.Location)]);

    /// <summary>Compiles <paramref name="source"/> with the generator: its diagnostics, the compiler's on the result, and the generated source.</summary>
    private static (ImmutableArray<Diagnostic> Generator, ImmutableArray<Diagnostic> Compiler, string Generated) Compile(string source)
    {
        var compilation = CSharpCompilation.Create("Snippet", [CSharpSyntaxTree.ParseText("using System.MP;\n" + source)], s_references.Value,
            new CSharpCompilationOptions(OutputKind.DynamicallyLinkedLibrary, nullableContextOptions: NullableContextOptions.Enable));
        var generator = (IIncrementalGenerator)Activator.CreateInstance(s_generator.Value)!;
        GeneratorDriver driver = CSharpGeneratorDriver.Create(generator);
        driver = driver.RunGeneratorsAndUpdateCompilation(compilation, out Compilation output, out ImmutableArray<Diagnostic> diagnostics);
        string generated = string.Concat(driver.GetRunResult().GeneratedTrees.Select(t => t.ToString()));
        return (diagnostics, output.GetDiagnostics().Where(d => d.Severity == DiagnosticSeverity.Error).ToImmutableArray(), generated);
    }

    private static Diagnostic Only(string source, string id)
    {
        var (diagnostics, errors, _) = Compile(source);
        Assert.Empty(errors.Where(e => !e.Id.StartsWith("MOTOR", StringComparison.Ordinal)));
        Diagnostic d = Assert.Single(diagnostics);
        Assert.Equal(id, d.Id);
        return d;
    }

    [Fact]
    public void ACorrectTypeGetsItsCodecAndNoDiagnostic()
    {
        var (diagnostics, errors, generated) = Compile("""
            public enum Kind { A, B }
            [Transportable] public class Node { public int Id; public Kind K; private readonly double _w = 1; [Transportable] public Node? Next; [Transportable] public string[]? Tags; public object? Dropped; }
            [Transportable] public struct Cell { public long A; [Transportable] public Node? Owner; public System.DateTime When; }
            """);
        Assert.Empty(diagnostics);
        Assert.Empty(errors);
        Assert.Matches(@"RegisterClass\(new Codec\d+_Node\(\)\)", generated);
        Assert.Contains("RegisterStruct(new Codec", generated);
        Assert.Contains("RegisterEnum<global::Kind>(\"Kind\", \"Snippet\")", generated);
        Assert.Contains("UnsafeAccessor", generated); // the private readonly field
    }

    [Fact]
    public void MOTOR001AFollowedFieldWhoseTypeCannotTravel()
    {
        Diagnostic d = Only("""
            public class Plain { public int X; }
            [Transportable] public class Holder { [Transportable] public Plain? P; }
            """, "MOTOR001");
        Assert.Equal(DiagnosticSeverity.Warning, d.Severity);
        Assert.Contains("'P' of 'Holder'", d.GetMessage());
        Assert.Contains("Plain is not marked [Transportable]", d.GetMessage());
        Assert.Equal("P", d.Location.SourceTree!.ToString().Substring(d.Location.SourceSpan.Start, d.Location.SourceSpan.Length));

        Assert.Contains("a delegate is code", Only("[Transportable] public class H { [Transportable] public System.Action? A; }", "MOTOR001").GetMessage());
        Assert.Contains("its elements cannot travel", Only("[Transportable] public class H { [Transportable] public System.IO.Stream[]? S; }", "MOTOR001").GetMessage());
    }

    [Fact]
    public void CollectionFieldsTravelAndAreRegistered()
    {
        var (diagnostics, errors, generated) = Compile("""
            using System.Collections.Generic;
            public enum Kind { A, B }
            [Transportable] public class Node { [Transportable] public List<int>? Ints; [Transportable] public Dictionary<string, List<Node>>? ByName;
                [Transportable] public HashSet<long>[]? Sets; [Transportable] public List<Kind>? Kinds; }
            """);
        Assert.Empty(diagnostics);
        Assert.Empty(errors);
        Assert.Contains("GeneratedCodecs.RegisterList<int>()", generated);
        Assert.Contains("GeneratedCodecs.RegisterList<global::Node>()", generated);
        Assert.Contains("GeneratedCodecs.RegisterDictionary<string, global::System.Collections.Generic.List<global::Node>>()", generated);
        Assert.Contains("GeneratedCodecs.RegisterHashSet<long>()", generated);
        Assert.Contains("GeneratedCodecs.RegisterEnum<global::Kind>(\"Kind\", \"Snippet\")", generated);
    }

    [Fact]
    public void MOTOR001ACollectionWhoseElementsCannotTravelOrAClassDerivedFromOne()
    {
        Assert.Contains("its element type Plain cannot travel", Only("""
            public class Plain { public int X; }
            [Transportable] public class H { [Transportable] public System.Collections.Generic.Dictionary<int, Plain>? D; }
            """, "MOTOR001").GetMessage());
        Assert.Matches("not classes derived from them; declare the field as (System.Collections.Generic.)?List<int>", Only("""
            public class Ints : System.Collections.Generic.List<int> { }
            [Transportable] public class H { [Transportable] public Ints? L; }
            """, "MOTOR001").GetMessage());
    }

    [Fact]
    public void MOTOR002ABaseClassThatIsNotTransportable()
    {
        Diagnostic d = Only("""
            public class Base { public int B; }
            [Transportable] public class Derived : Base { public int D; }
            """, "MOTOR002");
        Assert.Contains("'Derived' is marked [Transportable], but its base class 'Base' is not", d.GetMessage());
    }

    [Fact]
    public void MOTOR003AnInterfaceField()
    {
        Diagnostic d = Only("""
            public interface IShape { }
            [Transportable] public class Scene { [Transportable] public IShape? First; }
            """, "MOTOR003");
        Assert.Equal(DiagnosticSeverity.Info, d.Severity);
    }

    [Fact]
    public void MOTOR004AMarkedValueField() =>
        Assert.Contains("value fields always travel", Only("[Transportable] public class H { [Transportable] public int X; }", "MOTOR004").GetMessage());

    [Fact]
    public void MOTOR005ATypeLeftToRunTime()
    {
        Assert.Contains("generic type", Only("[Transportable] public class Box<T> { [Transportable] public T? Value; }", "MOTOR005").GetMessage());
        Assert.Contains("private or protected", Only("public class Outer { [Transportable] private class Hidden { public int X; } }", "MOTOR005").GetMessage());
    }

    [Fact]
    public void MOTOR006ATypeThatCanNeverTravel()
    {
        Diagnostic d = Only("[Transportable] public ref struct Span2 { public int X; }", "MOTOR006");
        Assert.Equal(DiagnosticSeverity.Error, d.Severity);
        Assert.Contains("ref struct", d.GetMessage());
    }
}
