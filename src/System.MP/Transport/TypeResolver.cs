using System.Collections.Generic;
using System.Collections.Concurrent;
using System.Diagnostics.CodeAnalysis;
using System.Reflection;
using System.Runtime.CompilerServices;

namespace System.MP.Transport;

/// <summary>
/// Turns a type name from a payload into a type, looking only at assemblies
/// already loaded (resolving never loads an assembly, so no module
/// initializer runs) and accepting only types that may travel: enums,
/// types marked [Transportable], and interfaces (named as element types,
/// never instantiated).  A name with type-syntax characters
/// (arrays, pointers, generic arguments, assembly qualification) is refused:
/// those shapes are built from separate table entries, each checked.
/// </summary>
internal static class TypeResolver
{
    private static readonly ConcurrentDictionary<(string Name, string Assembly), Type> s_resolved = new();
    private static volatile Dictionary<string, Assembly>? s_assemblies;

    static TypeResolver() => AppDomain.CurrentDomain.AssemblyLoad += (_, _) => s_assemblies = null;

    /// <summary>The eligible type named <paramref name="name"/> in the loaded assembly <paramref name="assembly"/>.</summary>
    /// <exception cref="TransportException">No such loaded type, or it may not travel.</exception>
    internal static Type Resolve(string name, string assembly)
    {
        if (s_resolved.TryGetValue((name, assembly), out Type? known) || (known = CodecRegistry.Named(name, assembly)) is not null)
            return known;
        if (!RuntimeFeature.IsDynamicCodeSupported)
            throw new TransportException(SR.Format(SR.PayloadUnknownType, name, assembly) + " " + SR.Format(SR.NoCompileTimeCodec, name));
        return ResolveLoaded(name, assembly);
    }

    /// <summary>Looks the type up by name in the loaded assemblies (the types of generated codecs are known by name without this).</summary>
    [UnconditionalSuppressMessage("Trimming", "IL2026", Justification = "Types with a generated codec are registered by name; only the others, whose codecs are built at run time, are looked up here.")]
    private static Type ResolveLoaded(string name, string assembly)
    {
        Type? t = null;
        if (name.Length > 0 && name.AsSpan().IndexOfAny("[]*&,\\ ") < 0 && Assemblies().TryGetValue(assembly, out Assembly? a))
            t = a.GetType(name, throwOnError: false, ignoreCase: false);
        if (t is null)
            throw new TransportException(SR.Format(SR.PayloadUnknownType, name, assembly));
        if (!t.IsEnum && !t.IsInterface && !t.IsDefined(typeof(TransportableAttribute), inherit: false))
            throw new TransportException(SR.Format(SR.PayloadIneligibleType, TransportErrors.Name(t)));
        s_resolved.TryAdd((name, assembly), t);
        return t;
    }

    private static Dictionary<string, Assembly> Assemblies()
    {
        Dictionary<string, Assembly>? map = s_assemblies;
        if (map is not null)
            return map;
        map = new Dictionary<string, Assembly>(StringComparer.Ordinal);
        foreach (Assembly a in AppDomain.CurrentDomain.GetAssemblies())
            if (!a.IsDynamic && a.GetName().Name is string n)
                map.TryAdd(n, a);
        return s_assemblies = map;
    }
}
