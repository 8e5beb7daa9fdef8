using System.Globalization;
using System.IO;
using System.Runtime.InteropServices;

namespace System.MP.Interop;

/// <summary>
/// Finds mpcore's call table: under the motor host it arrives as the runtime
/// property <c>Motor.CoreTable</c> and no native library is bound here; under
/// plain <c>dotnet</c> (library mode) libmpcore is loaded with NativeLibrary.
/// </summary>
internal static unsafe class CoreLoader
{
    internal const string TableProperty = "Motor.CoreTable";
    internal const string LibraryEnvironmentVariable = "MOTOR_CORE_LIBRARY";
    private const string LibraryFileName = "libmpcore.so";

    private static readonly object s_lock = new();
    private static CoreTable* s_table;
    private static bool s_hosted;

    /// <summary>True once the table came from the motor host.</summary>
    internal static bool IsHosted
    {
        get
        {
            EnsureLoaded();
            return s_hosted;
        }
    }

    /// <summary>The validated table; loads it on first use.</summary>
    internal static CoreTable* Table
    {
        get
        {
            if (s_table == null)
                EnsureLoaded();
            return s_table;
        }
    }

    internal static void EnsureLoaded()
    {
        if (s_table != null)
            return;
        lock (s_lock)
        {
            if (s_table != null)
                return;
            CoreTable* table;
            bool hosted = false;
            if (AppContext.GetData(TableProperty) is string address)
            {
                table = (CoreTable*)ParseAddress(address);
                hosted = true;
            }
            else
            {
                nint lib = LoadLibrary();
                var getTable = (delegate* unmanaged[Cdecl]<CoreTable*>)NativeLibrary.GetExport(lib, "mp_core_table");
                table = getTable();
            }
            Validate(table);
            s_hosted = hosted;
            s_table = table;
        }
    }

    private static nint ParseAddress(string text)
    {
        string digits = text.StartsWith("0x", StringComparison.OrdinalIgnoreCase) ? text[2..] : text;
        if (!ulong.TryParse(digits, NumberStyles.AllowHexSpecifier, CultureInfo.InvariantCulture, out ulong value) || value == 0)
            throw new InvalidOperationException(SR.Format(SR.BadCoreTableProperty, TableProperty, text));
        return (nint)value;
    }

    private static void Validate(CoreTable* table)
    {
        if (table == null)
            throw new InvalidOperationException(SR.CoreTableNull);
        if (table->AbiVersion != CoreTable.ExpectedAbiVersion || table->Size < (uint)sizeof(CoreTable))
            throw new InvalidOperationException(SR.Format(SR.CoreAbiMismatch, table->AbiVersion, table->Size,
                CoreTable.ExpectedAbiVersion, sizeof(CoreTable)));
        // Same version, same size: the list itself must agree too, entry by entry
        // (a call whose kind or parameters changed would otherwise be called wrongly).
        string manifest = Marshal.PtrToStringUTF8(table->Manifest) ?? "";
        if (!string.Equals(manifest, CoreTable.ExpectedManifest, StringComparison.Ordinal))
            throw new InvalidOperationException(SR.Format(SR.CoreManifestMismatch, FirstDifference(manifest, CoreTable.ExpectedManifest)));
    }

    /// <summary>The first line in which the core's interface list and this assembly's differ.</summary>
    internal static string FirstDifference(string core, string expected)
    {
        string[] a = core.Split('\n'), b = expected.Split('\n');
        for (int i = 0; i < Math.Max(a.Length, b.Length); i++)
        {
            string x = i < a.Length ? a[i] : "(nothing)", y = i < b.Length ? b[i] : "(nothing)";
            if (!string.Equals(x, y, StringComparison.Ordinal))
                return $"entry {i}: the core has '{x}', System.MP expects '{y}'";
        }
        return "none";
    }

    /// <summary>
    /// Where libmpcore may be, in order: beside System.MP.dll (a build inside this repository,
    /// or an app folder it was copied to), the app's folder, and the native folders the host
    /// took from the app's deps.json (the System.MP package's runtimes/linux-x64/native).
    /// </summary>
    private static Collections.Generic.IEnumerable<string> SearchDirectories(string assemblyDir)
    {
        var seen = new Collections.Generic.HashSet<string>(StringComparer.Ordinal);
        var dirs = new Collections.Generic.List<string> { assemblyDir, AppContext.BaseDirectory };
        if (AppContext.GetData("NATIVE_DLL_SEARCH_DIRECTORIES") is string probe)
            dirs.AddRange(probe.Split(Path.PathSeparator, StringSplitOptions.RemoveEmptyEntries));
        foreach (string dir in dirs)
            if (!string.IsNullOrEmpty(dir) && seen.Add(Path.TrimEndingDirectorySeparator(dir)))
                yield return dir;
    }

    [Diagnostics.CodeAnalysis.UnconditionalSuppressMessage("SingleFile", "IL3000", Justification = "Empty in a single-file or NativeAOT app: the base directory is tried too.")]
    private static nint LoadLibrary()
    {
        var tried = new Collections.Generic.List<string>();
        string? forced = Environment.GetEnvironmentVariable(LibraryEnvironmentVariable);
        if (!string.IsNullOrEmpty(forced))
        {
            if (NativeLibrary.TryLoad(forced, out nint h))
                return h;
            throw new DllNotFoundException(SR.Format(SR.CoreLibraryForcedMissing, LibraryEnvironmentVariable, forced));
        }
        string assemblyDir = Path.GetDirectoryName(typeof(CoreLoader).Assembly.Location) ?? "";
        foreach (string dir in SearchDirectories(assemblyDir))
        {
            if (string.IsNullOrEmpty(dir))
                continue;
            string path = Path.Combine(dir, LibraryFileName);
            tried.Add(path);
            if (File.Exists(path) && NativeLibrary.TryLoad(path, out nint h))
                return h;
        }
        tried.Add(LibraryFileName);
        if (NativeLibrary.TryLoad(LibraryFileName, out nint byName))
            return byName;
        throw new DllNotFoundException(SR.Format(SR.CoreLibraryMissing, string.Join(", ", tried), LibraryEnvironmentVariable));
    }
}
