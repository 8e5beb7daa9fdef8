using System.Collections.Generic;
using System.Collections.Immutable;
using System.Globalization;
using System.Linq;
using System.Text;
using Microsoft.CodeAnalysis;
using Microsoft.CodeAnalysis.CSharp.Syntax;

namespace System.MP.Generators;

/// <summary>
/// Flattens one [Transportable] type's fields into leaves exactly as the run-time path does
/// (System.MP's CodecEmitter.Flatten: base classes first, fields in declaration order; a
/// primitive or enum is a primitive leaf, a struct without references one block, a struct with
/// references its own leaves, a [Transportable] reference field an object id, any other reference
/// field nothing), and writes the codec's C# (with the registrations of the enums, lists, sets and
/// dictionaries its fields name): the same bytes at the same offsets, and the same
/// layout hash.  Fields it may not name are reached through UnsafeAccessor, which also writes
/// readonly fields and works under NativeAOT.
/// </summary>
internal sealed class CodecModel
{
    internal const string ClassNamePlaceholder = "__CODEC__";

    private const int KindPrimitive = 0, KindBlit = 1, KindReference = 2;

    private static readonly SymbolDisplayFormat s_typeFormat = SymbolDisplayFormat.FullyQualifiedFormat
        .WithMiscellaneousOptions(SymbolDisplayMiscellaneousOptions.UseSpecialTypes | SymbolDisplayMiscellaneousOptions.EscapeKeywordIdentifiers);

    private sealed class Step
    {
        internal IFieldSymbol Field = null!;
        internal bool Direct;
    }

    private sealed class Leaf
    {
        internal Step[] Path = null!;
        internal int Kind;
        internal ITypeSymbol Type = null!;
        internal string Offset = null!;
        internal string Size = null!;
    }

    private readonly INamedTypeSymbol _type;
    private readonly Compilation _compilation;
    private readonly INamedTypeSymbol? _attribute;
    private readonly List<DiagnosticInfo> _diagnostics = new();
    private readonly List<Leaf> _leaves = new();
    private readonly SortedSet<string> _registrations = new(StringComparer.Ordinal);
    private readonly List<(ISymbol Symbol, string Name)> _accessors = new();
    private string? _unsupported;
    private int _constOffset;
    private readonly List<string> _sizeTerms = new();

    private CodecModel(INamedTypeSymbol type, Compilation compilation)
    {
        _type = type;
        _compilation = compilation;
        _attribute = compilation.GetTypeByMetadataName(TransportableGenerator.AttributeName);
    }

    internal static TypeResult Analyze(INamedTypeSymbol type, Compilation compilation) =>
        new CodecModel(type, compilation).Run();

    private TypeResult Run()
    {
        string fullName = FullName(_type);
        bool isStruct = _type.IsValueType;
        Location? where = _type.Locations.FirstOrDefault();
        if (_type.IsRefLikeType)
            return Refused(fullName, where, "a ref struct lives only on the stack and cannot be boxed, stored or sent");
        if (_type.IsStatic)
            return Refused(fullName, where, "a static class has no instances");
        if (_type.TypeKind is not (TypeKind.Class or TypeKind.Struct))
            return Refused(fullName, where, "only classes and structs travel");
        var chain = new List<INamedTypeSymbol>();
        for (INamedTypeSymbol? t = _type; t is not null && t.SpecialType is not (SpecialType.System_Object or SpecialType.System_ValueType); t = t.BaseType)
            chain.Add(t);
        for (int i = 1; i < chain.Count; i++)
        {
            if (!IsMarked(chain[i]))
            {
                _diagnostics.Add(DiagnosticInfo.Create(MotorDiagnostics.BaseNotTransportable, where, Display(_type), Display(chain[i])));
                return Result(fullName, null);
            }
            if (!SymbolEqualityComparer.Default.Equals(chain[i].ContainingAssembly, _compilation.Assembly))
                _unsupported ??= $"its base class {Display(chain[i])} is compiled in another assembly, whose private fields the generator cannot see";
        }
        if (chain.Any(t => t.IsGenericType) || ContainingTypes(_type).Any(t => t.IsGenericType))
            _unsupported ??= "a generic type's codec is built for each type argument at run time";
        if (!IsNameable(_type))
            _unsupported ??= "the type is private or protected, so code outside it cannot name it";
        if (HasPrimaryConstructorCaptures(_type))
            _unsupported ??= "the fields a primary constructor captures are not visible to the generator";
        for (int i = chain.Count - 1; i >= 0; i--)
            AddFields(chain[i], [], _type);
        if (_unsupported is not null)
        {
            _diagnostics.Add(DiagnosticInfo.Create(MotorDiagnostics.LeftToRunTime, where, Display(_type), _unsupported));
            return Result(fullName, null);
        }
        return Result(fullName, Write(fullName, isStruct));
    }

    private TypeResult Refused(string fullName, Location? where, string why)
    {
        _diagnostics.Add(DiagnosticInfo.Create(MotorDiagnostics.TypeCannotTravel, where, Display(_type), why));
        return Result(fullName, null);
    }

    private TypeResult Result(string fullName, string? body) =>
        new(fullName, body, _type.IsValueType ? "RegisterStruct" : "RegisterClass",
            new EquatableArray<string>(_registrations.ToImmutableArray()), new EquatableArray<DiagnosticInfo>(_diagnostics.ToImmutableArray()));

    private static bool HasPrimaryConstructorCaptures(INamedTypeSymbol t) =>
        !t.IsRecord && t.DeclaringSyntaxReferences.Any(r => r.GetSyntax() is TypeDeclarationSyntax { ParameterList: not null });

    private bool IsMarked(ISymbol s) =>
        _attribute is not null && s.GetAttributes().Any(a => SymbolEqualityComparer.Default.Equals(a.AttributeClass, _attribute));

    private static IEnumerable<INamedTypeSymbol> ContainingTypes(INamedTypeSymbol t)
    {
        for (INamedTypeSymbol? c = t.ContainingType; c is not null; c = c.ContainingType)
            yield return c;
    }

    /// <summary>The fields of <paramref name="declaring"/> in declaration order, as leaves appended at the current offset.</summary>
    private void AddFields(INamedTypeSymbol declaring, Step[] prefix, ITypeSymbol ownerStaticType)
    {
        foreach (IFieldSymbol f in declaring.GetMembers().OfType<IFieldSymbol>())
        {
            if (f.IsStatic || f.IsConst)
                continue;
            ITypeSymbol ft = f.Type;
            Location? where = (f.AssociatedSymbol ?? f).Locations.FirstOrDefault();
            if (ft.TypeKind is TypeKind.Pointer or TypeKind.FunctionPointer)
                continue; // an address means nothing on another rank
            if (f.IsFixedSizeBuffer)
            {
                _unsupported ??= $"field {f.Name} is a fixed-size buffer";
                continue;
            }
            var step = new Step
            {
                Field = f,
                Direct = !f.IsReadOnly && !f.IsImplicitlyDeclared && f.CanBeReferencedByName &&
                         f.DeclaredAccessibility is Accessibility.Public or Accessibility.Internal or Accessibility.ProtectedOrInternal &&
                         SymbolEqualityComparer.Default.Equals(declaring, ownerStaticType),
            };
            Step[] path = [.. prefix, step];
            bool marked = IsMarked(f);
            if (ft.IsValueType && marked && prefix.Length == 0)
                _diagnostics.Add(DiagnosticInfo.Create(MotorDiagnostics.ValueFieldMarked, where, FieldName(f), Display(declaring), Display(ft)));
            if (ft.TypeKind == TypeKind.TypeParameter)
            {
                _unsupported ??= "a generic type's codec is built for each type argument at run time";
                continue;
            }
            if (!IsNameable(ft))
                _unsupported ??= $"the type of field {FieldName(f)} is private or protected, so code outside it cannot name it";
            int primitive = PrimitiveSize(ft);
            if (primitive > 0)
            {
                AddRegistrations(ft);
                Add(path, KindPrimitive, ft, primitive.ToString(CultureInfo.InvariantCulture), primitive);
            }
            else if (ft.IsValueType && ft.IsUnmanagedType)
            {
                Add(path, KindBlit, ft, $"U.SizeOf<{ft.ToDisplayString(s_typeFormat)}>()", 0);
            }
            else if (ft.IsValueType)
            {
                if (ft is INamedTypeSymbol nested && SymbolEqualityComparer.Default.Equals(nested.ContainingAssembly, _compilation.Assembly) && !nested.IsGenericType)
                    AddFields(nested, path, nested); // nested struct with references: its own leaves
                else
                    _unsupported ??= $"field {FieldName(f)} is a struct holding references ({Display(ft)}) whose fields the generator cannot see";
            }
            else if (marked)
            {
                CheckReferenceField(f, declaring, where);
                Add(path, KindReference, ft, "4", 4);
            }
            // an unmarked reference field does not travel: it arrives null
        }
    }

    private void Add(Step[] path, int kind, ITypeSymbol type, string size, int constSize)
    {
        string offset = OffsetExpression();
        _leaves.Add(new Leaf { Path = path, Kind = kind, Type = type, Offset = offset, Size = size });
        if (constSize > 0)
            _constOffset += constSize;
        else
            _sizeTerms.Add(size);
    }

    private string OffsetExpression()
    {
        var sb = new StringBuilder(_constOffset.ToString(CultureInfo.InvariantCulture));
        foreach (string term in _sizeTerms)
            sb.Append(" + ").Append(term);
        return sb.ToString();
    }

    /// <summary>MOTOR001 and MOTOR003: what a followed reference field may hold.</summary>
    private void CheckReferenceField(IFieldSymbol f, INamedTypeSymbol declaring, Location? where)
    {
        ITypeSymbol ft = f.Type;
        if (ft.TypeKind == TypeKind.Interface)
        {
            _diagnostics.Add(DiagnosticInfo.Create(MotorDiagnostics.InterfaceField, where, FieldName(f), Display(declaring), Display(ft)));
            return;
        }
        string? why = WhyCannotTravel(ft);
        if (why is not null)
            _diagnostics.Add(DiagnosticInfo.Create(MotorDiagnostics.FieldCannotTravel, where, FieldName(f), Display(declaring), Display(ft), why));
        else
            AddRegistrations(ft);
    }

    /// <summary>
    /// The registrations (GeneratedCodecs calls) a field of type <paramref name="t"/> needs to travel
    /// without code built at run time: each enum, List, HashSet and Dictionary it names, also as
    /// element or type argument (a [Transportable] class or struct registers itself).
    /// </summary>
    private void AddRegistrations(ITypeSymbol t)
    {
        switch (t)
        {
            case IArrayTypeSymbol a:
                AddRegistrations(a.ElementType);
                break;
            case INamedTypeSymbol { TypeKind: TypeKind.Enum } e when IsNameable(e):
                _registrations.Add($"RegisterEnum<{e.ToDisplayString(s_typeFormat)}>({Literal(FullName(e))}, {Literal(e.ContainingAssembly.Name)})");
                break;
            case INamedTypeSymbol n when CollectionRegistration(n) is string method && IsNameable(n):
                foreach (ITypeSymbol arg in n.TypeArguments)
                    AddRegistrations(arg);
                _registrations.Add($"{method}<{string.Join(", ", n.TypeArguments.Select(a => a.ToDisplayString(s_typeFormat)))}>()");
                break;
        }
    }

    /// <summary>The GeneratedCodecs method that registers <paramref name="t"/> when it is List&lt;T&gt;, HashSet&lt;T&gt; or Dictionary&lt;TKey,TValue&gt;, else null.</summary>
    private static string? CollectionRegistration(INamedTypeSymbol t)
    {
        if (!t.IsGenericType || t.ContainingType is not null ||
            t.ContainingNamespace?.ToDisplayString() != "System.Collections.Generic" || t.ContainingAssembly is null)
            return null;
        return t.MetadataName switch
        {
            "List`1" => "RegisterList",
            "HashSet`1" => "RegisterHashSet",
            "Dictionary`2" => "RegisterDictionary",
            _ => null,
        };
    }

    /// <summary>The List, HashSet or Dictionary class <paramref name="t"/> derives from, if any.</summary>
    private static INamedTypeSymbol? CollectionBase(ITypeSymbol t)
    {
        for (INamedTypeSymbol? b = t.BaseType; b is not null; b = b.BaseType)
            if (CollectionRegistration(b) is not null)
                return b;
        return null;
    }

    /// <summary>Null when objects of <paramref name="t"/> may travel (as the run-time path decides), else why not.</summary>
    private string? WhyCannotTravel(ITypeSymbol t)
    {
        switch (t)
        {
            case IArrayTypeSymbol a:
                return WhyCannotTravel(a.ElementType) is string inner ? $"its elements cannot travel ({inner})" : null;
            case ITypeParameterSymbol or IDynamicTypeSymbol:
                return null;
        }
        if (t.SpecialType is SpecialType.System_Object or SpecialType.System_String || PrimitiveSize(t) > 0 || t.TypeKind == TypeKind.Interface)
            return null;
        if (t.SpecialType == SpecialType.System_Decimal)
            return null;
        if (t.TypeKind == TypeKind.Delegate)
            return "a delegate is code, which does not travel";
        if (t.TypeKind == TypeKind.Pointer || t.TypeKind == TypeKind.FunctionPointer || t.IsRefLikeType)
            return "a pointer or ref struct cannot travel";
        if (t is INamedTypeSymbol collection && CollectionRegistration(collection) is not null)
        {
            foreach (ITypeSymbol arg in collection.TypeArguments)
                if (WhyCannotTravel(arg) is string elementWhy)
                    return $"its element type {Display(arg)} cannot travel ({elementWhy})";
            return null;
        }
        if (!IsMarked(t.OriginalDefinition) && CollectionBase(t) is INamedTypeSymbol collectionBase)
            return $"it derives from {Display(collectionBase)}, and only List<T>, HashSet<T> and Dictionary<TKey,TValue> themselves travel, not classes derived from them; declare the field as {Display(collectionBase)}";
        if (!IsMarked(t.OriginalDefinition))
            return $"{Display(t)} is not marked [Transportable]";
        if (t is INamedTypeSymbol { IsGenericType: true } g)
            foreach (ITypeSymbol arg in g.TypeArguments)
                if (WhyCannotTravel(arg) is string argWhy)
                    return $"its type argument {Display(arg)} cannot travel ({argWhy})";
        return null;
    }

    /// <summary>Bytes of a primitive or enum leaf (nint and nuint travel as 8 bytes), 0 for other types.</summary>
    private static int PrimitiveSize(ITypeSymbol t)
    {
        if (t is INamedTypeSymbol { TypeKind: TypeKind.Enum, EnumUnderlyingType: { } underlying })
            t = underlying;
        return t.SpecialType switch
        {
            SpecialType.System_Boolean or SpecialType.System_SByte or SpecialType.System_Byte => 1,
            SpecialType.System_Char or SpecialType.System_Int16 or SpecialType.System_UInt16 => 2,
            SpecialType.System_Int32 or SpecialType.System_UInt32 or SpecialType.System_Single => 4,
            SpecialType.System_Int64 or SpecialType.System_UInt64 or SpecialType.System_Double or
            SpecialType.System_IntPtr or SpecialType.System_UIntPtr => 8,
            _ => 0,
        };
    }

    /// <summary>Code in a top-level class of this assembly can name <paramref name="t"/>.</summary>
    private bool IsNameable(ITypeSymbol t)
    {
        switch (t)
        {
            case IArrayTypeSymbol a:
                return IsNameable(a.ElementType);
            case INamedTypeSymbol n:
                for (INamedTypeSymbol? c = n; c is not null; c = c.ContainingType)
                {
                    bool own = SymbolEqualityComparer.Default.Equals(c.ContainingAssembly, _compilation.Assembly);
                    if (c.DeclaredAccessibility is not (Accessibility.Public or Accessibility.NotApplicable) &&
                        !(own && c.DeclaredAccessibility is Accessibility.Internal or Accessibility.ProtectedOrInternal))
                        return false;
                    if (c.IsImplicitlyDeclared || c.Name.Length == 0 || c.Name.Contains("<"))
                        return false;
                }
                return n.TypeArguments.All(IsNameable);
            default:
                return t.TypeKind != TypeKind.TypeParameter;
        }
    }

    // ---- the C# of the codec ----

    private string Write(string fullName, bool isStruct)
    {
        string t = _type.ToDisplayString(s_typeFormat);
        var sb = new StringBuilder();
        string bodyBytes = OffsetExpression();
        sb.Append($"    /// <summary>The codec of {Escape(Display(_type))}.</summary>\n");
        sb.Append($"    internal sealed class {ClassNamePlaceholder} : global::System.MP.CompilerServices.GeneratedCodec<{t}>\n    {{\n");
        sb.Append($"        public {ClassNamePlaceholder}() : base({Literal(fullName)}, {Literal(_compilation.AssemblyName ?? "")}) {{ }}\n\n");
        sb.Append($"        public override int BodyBytes => {bodyBytes};\n\n");
        sb.Append($"        public override bool HasReferences => {(_leaves.Any(l => l.Kind == KindReference) ? "true" : "false")};\n\n");
        if (!isStruct && !_type.IsAbstract)
            sb.Append($"        public override {t} CreateUninitialized() => ({t})global::System.Runtime.CompilerServices.RuntimeHelpers.GetUninitializedObject(typeof({t}));\n\n");
        sb.Append("        public override void AddLayout(ref global::System.MP.CompilerServices.TransportLayoutHash hash)\n        {\n");
        foreach (Leaf l in _leaves)
        {
            foreach (Step s in l.Path)
                sb.Append($"            hash.Add({Literal(s.Field.Name)});\n");
            sb.Append($"            hash.Add({Literal(ClrName(l.Type))});\n");
            sb.Append($"            hash.Add({l.Kind * 1000} + {l.Size});\n");
        }
        sb.Append("        }\n\n");
        var encode = new StringBuilder();
        var decode = new StringBuilder();
        foreach (Leaf l in _leaves)
        {
            string at = $"ref U.Add(ref body, {l.Offset})";
            string field = Access(l.Path, isStruct);
            string ft = l.Type.ToDisplayString(s_typeFormat);
            switch (l.Kind)
            {
                case KindReference:
                    encode.Append($"            U.WriteUnaligned({at}, encoder.Reference({field}));\n");
                    decode.Append($"            {field} = decoder.Reference<{ft}>(U.ReadUnaligned<int>({at}));\n");
                    break;
                case KindBlit:
                    encode.Append($"            U.CopyBlockUnaligned({at}, ref U.As<{ft}, byte>(ref {field}), (uint){l.Size});\n");
                    decode.Append($"            U.CopyBlockUnaligned(ref U.As<{ft}, byte>(ref {field}), {at}, (uint){l.Size});\n");
                    break;
                default:
                    SpecialType special = l.Type is INamedTypeSymbol { EnumUnderlyingType: { } u } ? u.SpecialType : l.Type.SpecialType;
                    if (special is SpecialType.System_IntPtr or SpecialType.System_UIntPtr)
                    {
                        string wide = special == SpecialType.System_IntPtr ? "long" : "ulong";
                        encode.Append($"            U.WriteUnaligned({at}, ({wide}){field});\n");
                        decode.Append($"            {field} = ({ft})U.ReadUnaligned<{wide}>({at});\n");
                    }
                    else if (special == SpecialType.System_Boolean && l.Type.TypeKind != TypeKind.Enum)
                    {
                        encode.Append($"            U.WriteUnaligned({at}, {field});\n");
                        decode.Append($"            {field} = U.ReadUnaligned<byte>({at}) != 0; // any non-zero byte is true\n");
                    }
                    else
                    {
                        encode.Append($"            U.WriteUnaligned({at}, {field});\n");
                        decode.Append($"            {field} = U.ReadUnaligned<{ft}>({at});\n");
                    }
                    break;
            }
        }
        string valueParam = $"ref {t} value";
        sb.Append($"        public override void Encode(global::System.MP.CompilerServices.ObjectEncoder encoder, {valueParam}, ref byte body)\n        {{\n");
        sb.Append(encode).Append("        }\n\n");
        sb.Append($"        public override void Decode(global::System.MP.CompilerServices.ObjectDecoder decoder, {valueParam}, ref byte body)\n        {{\n");
        sb.Append(decode).Append("        }\n");
        for (int i = 0; i < _accessors.Count; i++)
        {
            var f = (IFieldSymbol)_accessors[i].Symbol;
            string owner = f.ContainingType.ToDisplayString(s_typeFormat);
            string param = f.ContainingType.IsValueType ? $"ref {owner} o" : $"{owner} o";
            sb.Append($"\n        [global::System.Runtime.CompilerServices.UnsafeAccessor(global::System.Runtime.CompilerServices.UnsafeAccessorKind.Field, Name = {Literal(f.Name)})]\n");
            sb.Append($"        private static extern ref {f.Type.ToDisplayString(s_typeFormat)} {_accessors[i].Name}({param});\n");
        }
        sb.Append("    }\n\n");
        return sb.ToString();
    }

    /// <summary>The field at the end of <paramref name="path"/> as a C# variable of the codec's <c>value</c>.</summary>
    private string Access(Step[] path, bool rootIsStruct)
    {
        string expr = "value";
        foreach (Step s in path)
        {
            if (s.Direct)
            {
                expr = $"{expr}.@{s.Field.Name}";
                continue;
            }
            string accessor = AccessorFor(s.Field);
            expr = s.Field.ContainingType.IsValueType ? $"{accessor}(ref {expr})" : $"{accessor}({expr})";
        }
        _ = rootIsStruct;
        return expr;
    }

    private string AccessorFor(IFieldSymbol f)
    {
        foreach ((ISymbol symbol, string name) in _accessors)
            if (SymbolEqualityComparer.Default.Equals(symbol, f))
                return name;
        string n = "Field" + _accessors.Count.ToString(CultureInfo.InvariantCulture);
        _accessors.Add((f, n));
        return n;
    }

    /// <summary>The run-time type's Name, as the layout hash mixes it (Int32, Nullable`1, Int32[], String).</summary>
    private static string ClrName(ITypeSymbol t) => t switch
    {
        IArrayTypeSymbol a => ClrName(a.ElementType) + (a.IsSZArray ? "[]" : a.Rank == 1 ? "[*]" : "[" + new string(',', a.Rank - 1) + "]"),
        IDynamicTypeSymbol => "Object",
        _ => t.MetadataName,
    };

    /// <summary>The run-time type's FullName: namespace, containing types joined by '+', metadata name.</summary>
    internal static string FullName(INamedTypeSymbol t)
    {
        string name = t.MetadataName;
        for (INamedTypeSymbol? c = t.ContainingType; c is not null; c = c.ContainingType)
            name = c.MetadataName + "+" + name;
        string ns = t.ContainingNamespace is { IsGlobalNamespace: false } n ? n.ToDisplayString() + "." : "";
        return ns + name;
    }

    private static readonly SymbolDisplayFormat s_messageFormat = SymbolDisplayFormat.CSharpErrorMessageFormat
        .RemoveMiscellaneousOptions(SymbolDisplayMiscellaneousOptions.IncludeNullableReferenceTypeModifier);

    private static string Display(ISymbol s) => s.ToDisplayString(s_messageFormat);

    private static string FieldName(IFieldSymbol f) => f.AssociatedSymbol?.Name ?? f.Name;

    private static string Escape(string s) => s.Replace("&", "&amp;").Replace("<", "&lt;").Replace(">", "&gt;");

    private static string Literal(string s) => "\"" + s.Replace("\\", "\\\\").Replace("\"", "\\\"") + "\"";
}
