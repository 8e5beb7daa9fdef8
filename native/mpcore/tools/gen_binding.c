/*
 * gen_binding.c - writes System.MP's binding of the core (Core.g.cs) from the
 * one interface list, mpcore_calls.def, the error map MP_ERROR_MAP, the
 * statistics' fields MP_STATS_FIELDS, and mpcore.h's lists of the handle kinds
 * (MP_HANDLE_KINDS: a C# struct each, with the handles of fixed value from
 * MP_*_HANDLES), of the enumerations System.MP passes (MP_OPS, MP_COLL_KINDS,
 * MP_DTYPES, MP_IOS, ...) and of the structs it hands the core (MP_STATUS_FIELDS,
 * MP_COLL_FIELDS: a C# struct each, field for field, whose layout is checked here
 * against the C compiler's offsetof and sizeof).  Nothing is listed here by hand.

 *
 *   gen_binding OUTPUT.cs     (rewrites OUTPUT only when its text changes)
 *
 * Each call becomes a field of CoreTable and a function pointer of Core:
 * FAST and ANY calls get SuppressGCTransition, BLOCKING ones a GC transition,
 * GC calls (for the GC extension) only their table slot.  C types map to C#
 * by the table below; a type it does not know stops the build, so a new type
 * is mapped on purpose, never guessed.
 */
#include "mpcore.h"

#include <ctype.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct call {
    const char *kind, *ret, *name, *params;
} call_t;

static const call_t k_calls[] = {
#define MP_CALL(kind, ret, name, params) { #kind, #ret, #name, #params },
#include "mpcore_calls.def"
#undef MP_CALL
};

static const char k_manifest[] =
#define MP_CALL MP_MANIFEST_LINE
#include "mpcore_calls.def"
#undef MP_CALL
    ;

typedef struct error_row {
    const char *cname, *csname, *message;
    int code;
} error_row_t;

static const error_row_t k_errors[] = {
#define MP_ERROR_ROW(name, code, csname, msg) { #name, #csname, msg, code },
    MP_ERROR_MAP(MP_ERROR_ROW)
#undef MP_ERROR_ROW
};

/* The fields of mp_stats_t (MP_STATS_FIELDS), mirrored as CoreStats. */
typedef struct stats_field {
    const char *name, *what;
} stats_field_t;

static const stats_field_t k_stats[] = {
#define MP_STATS_ROW(name, what) { #name, what },
    MP_STATS_FIELDS(MP_STATS_ROW)
#undef MP_STATS_ROW
};

/* mpcore.h's enumerations, each a C# class of constants (a class may take several lists). */
typedef struct enum_row {
    const char *name; /* without its prefix: "LOCK_EXCLUSIVE" */
    long value;
} enum_row_t;
#define MP_ENUM_ROW(prefix, name, value) { #name, value },
static const enum_row_t k_ops[] = { MP_OPS(MP_ENUM_ROW) };
static const enum_row_t k_coll_kinds[] = { MP_COLL_KINDS(MP_ENUM_ROW) };
static const enum_row_t k_neighbor_kinds[] = { MP_NEIGHBOR_KINDS(MP_ENUM_ROW) };
static const enum_row_t k_win[] = { MP_WIN_FLAVORS(MP_ENUM_ROW) MP_WIN_SYNCS(MP_ENUM_ROW) };
static const enum_row_t k_features[] = { MP_FEATURES(MP_ENUM_ROW) };
static const enum_row_t k_win_asserts[] = { MP_WIN_ASSERTS(MP_ENUM_ROW) };
static const enum_row_t k_thread_levels[] = { MP_THREAD_LEVELS(MP_ENUM_ROW) };
static const enum_row_t k_send_modes[] = { MP_SEND_MODES(MP_ENUM_ROW) };
static const enum_row_t k_states[] = { MP_STATES(MP_ENUM_ROW) };
static const enum_row_t k_mpi_abis[] = { MP_MPI_ABIS(MP_ENUM_ROW) };
static const enum_row_t k_limits[] = { MP_LIMITS(MP_ENUM_ROW) };
static const enum_row_t k_world_attrs[] = { MP_WORLD_ATTRS(MP_ENUM_ROW) };
static const enum_row_t k_compares[] = { MP_COMPARES(MP_ENUM_ROW) };
static const enum_row_t k_group_setops[] = { MP_GROUP_SETOPS(MP_ENUM_ROW) };
static const enum_row_t k_split_types[] = { MP_SPLIT_TYPES(MP_ENUM_ROW) };
static const enum_row_t k_dtypes[] = { MP_DTYPES(MP_ENUM_ROW) };
static const enum_row_t k_file_modes[] = { MP_FILE_MODES(MP_ENUM_ROW) };
static const enum_row_t k_ios[] = { MP_IOS(MP_ENUM_ROW) };
static const enum_row_t k_seeks[] = { MP_SEEKS(MP_ENUM_ROW) };
static const enum_row_t k_topos[] = { MP_TOPOS(MP_ENUM_ROW) };
#undef MP_ENUM_ROW
#define ROWS(a) a, sizeof a / sizeof *a
static const struct {
    const char *cs, *doc;
    const enum_row_t *rows;
    size_t n;
} k_enums[] = {
    { "CoreOp", "Built-in reduction operations (MP_OPS: mp_op)", k_ops, sizeof k_ops / sizeof *k_ops },
    { "CollKind", "Collective kinds (MP_COLL_KINDS: mp_coll_kind)", k_coll_kinds, sizeof k_coll_kinds / sizeof *k_coll_kinds },
    { "NeighborKind", "Neighborhood collective kinds (MP_NEIGHBOR_KINDS: mp_neighbor_kind)", k_neighbor_kinds,
      sizeof k_neighbor_kinds / sizeof *k_neighbor_kinds },
    { "CoreWin", "Window flavors and synchronization calls (MP_WIN_FLAVORS, MP_WIN_SYNCS)", k_win, sizeof k_win / sizeof *k_win },
    { "CoreFeature", "Optional MPI-4 features (MP_FEATURES: mp_feature)", ROWS(k_features) },
    { "CoreWinAssert", "Assertions of the window synchronization calls (MP_WIN_ASSERTS: mp_win_assert)", ROWS(k_win_asserts) },
    { "CoreThreadLevel", "Thread levels (MP_THREAD_LEVELS: mp_thread_level)", ROWS(k_thread_levels) },
    { "CoreSendMode", "Send modes (MP_SEND_MODES: mp_send_mode)", ROWS(k_send_modes) },
    { "CoreState", "The core's states (MP_STATES: mp_state)", ROWS(k_states) },
    { "CoreMpiAbi", "MPI ABIs a core is built for (MP_MPI_ABIS: mp_mpi_abi)", ROWS(k_mpi_abis) },
    { "CoreLimit", "Limits (MP_LIMITS: mp_limit)", ROWS(k_limits) },
    { "CoreWorldAttr", "Predefined attributes of MPI_COMM_WORLD (MP_WORLD_ATTRS: mp_world_attr)", ROWS(k_world_attrs) },
    { "CoreCompare", "Results of comparing groups and communicators (MP_COMPARES: mp_compare)", ROWS(k_compares) },
    { "CoreGroupSetop", "Group set operations (MP_GROUP_SETOPS: mp_group_setop)", ROWS(k_group_setops) },
    { "CoreSplitType", "Split types (MP_SPLIT_TYPES: mp_split_type)", ROWS(k_split_types) },
    { "CoreDType", "Element types (MP_DTYPES: mp_dtype)", ROWS(k_dtypes) },
    { "CoreFileMode", "File access modes (MP_FILE_MODES: mp_file_mode)", ROWS(k_file_modes) },
    { "CoreIo", "File data accesses (MP_IOS: mp_io)", ROWS(k_ios) },
    { "CoreSeek", "Seek origins (MP_SEEKS: mp_seek)", ROWS(k_seeks) },
    { "CoreTopo", "Topologies (MP_TOPOS: mp_topo)", ROWS(k_topos) },
};
#undef ROWS

/* The structs System.MP hands the core (MP_STATUS_FIELDS, MP_COLL_FIELDS): each a C# struct of
 * the same fields in the same order, laid out sequentially; generate() checks that the C#
 * layout rules put every field at the offset the C compiler gave it, and stops otherwise. */
typedef struct field_row {
    const char *name, *ctype, *cs; /* C name, C type, C# name */
    size_t offset, size;
} field_row_t;
#define MP_FIELD_ROW(type, field, cs) { #field, #type, #cs, offsetof(STRUCT, field), sizeof(((STRUCT *)0)->field) },
#define STRUCT mp_status_t
static const field_row_t k_status_fields[] = { MP_STATUS_FIELDS(MP_FIELD_ROW) };
#undef STRUCT
#define STRUCT mp_coll_t
static const field_row_t k_coll_fields[] = { MP_COLL_FIELDS(MP_FIELD_ROW) };
#undef STRUCT
#undef MP_FIELD_ROW
static const struct k_struct_row {
    const char *cs, *layout, *c, *list, *doc;
    size_t size;
    const field_row_t *fields;
    size_t n;
} k_structs[] = {
    { "CoreStatus", "Status", "mp_status_t", "MP_STATUS_FIELDS", "the outcome of a receive, probe or wait; System.MP's public Status wraps it",
      sizeof(mp_status_t), k_status_fields, sizeof k_status_fields / sizeof *k_status_fields },
    { "CollDesc", "Coll", "mp_coll_t", "MP_COLL_FIELDS", "one collective call", sizeof(mp_coll_t), k_coll_fields,
      sizeof k_coll_fields / sizeof *k_coll_fields },
};

/* The handle kinds (MP_HANDLE_KINDS): each a C# struct of one field, the size of its C type. */
typedef struct handle_kind {
    const char *c, *repr, *cs, *what;
    size_t size;
} handle_kind_t;
static const handle_kind_t k_handles[] = {
#define MP_HANDLE_ROW(ctype, repr, cs, what) { #ctype, #repr, #cs, what, sizeof(ctype) },
    MP_HANDLE_KINDS(MP_HANDLE_ROW)
#undef MP_HANDLE_ROW
};

/* The handles with a fixed value, as members of their kind's struct (CommHandle.World, ...). */
typedef struct handle_value {
    const char *cname, *name; /* "MP_COMM_WORLD", "WORLD" */
    long value;
} handle_value_t;
#define MP_HANDLE_VALUE_ROW(prefix, name, value) { #prefix #name, #name, value },
static const handle_value_t k_comm_handles[] = { MP_COMM_HANDLES(MP_HANDLE_VALUE_ROW) };
static const handle_value_t k_req_handles[] = { MP_REQ_HANDLES(MP_HANDLE_VALUE_ROW) };
static const handle_value_t k_group_handles[] = { MP_GROUP_HANDLES(MP_HANDLE_VALUE_ROW) };
static const handle_value_t k_info_handles[] = { MP_INFO_HANDLES(MP_HANDLE_VALUE_ROW) };
static const handle_value_t k_win_handles[] = { MP_WIN_HANDLES(MP_HANDLE_VALUE_ROW) };
static const handle_value_t k_file_handles[] = { MP_FILE_HANDLES(MP_HANDLE_VALUE_ROW) };
static const handle_value_t k_session_handles[] = { MP_SESSION_HANDLES(MP_HANDLE_VALUE_ROW) };
static const handle_value_t k_op_handles[] = { MP_OPS(MP_HANDLE_VALUE_ROW) }; /* the built-in operations */
#undef MP_HANDLE_VALUE_ROW
static const struct {
    const char *c;
    const handle_value_t *rows;
    size_t n;
} k_handle_values[] = {
    { "mp_comm_t", k_comm_handles, sizeof k_comm_handles / sizeof *k_comm_handles },
    { "mp_req_t", k_req_handles, sizeof k_req_handles / sizeof *k_req_handles },
    { "mp_group_t", k_group_handles, sizeof k_group_handles / sizeof *k_group_handles },
    { "mp_info_t", k_info_handles, sizeof k_info_handles / sizeof *k_info_handles },
    { "mp_win_t", k_win_handles, sizeof k_win_handles / sizeof *k_win_handles },
    { "mp_file_t", k_file_handles, sizeof k_file_handles / sizeof *k_file_handles },
    { "mp_session_t", k_session_handles, sizeof k_session_handles / sizeof *k_session_handles },
    { "mp_op_t", k_op_handles, sizeof k_op_handles / sizeof *k_op_handles },
};

/* C base types (after const and '*' are taken off) and their C# names; handle kinds come from k_handles. */
static const char *const k_types[][2] = {
    { "void", "void" },         { "int", "int" },          { "int32_t", "int" },
    { "uint32_t", "uint" },     { "int64_t", "long" },     { "uint64_t", "ulong" },
    { "double", "double" },     { "char", "byte" },
    { "mp_status_t", "Status" }, { "mp_coll_t", "CollDesc" },
    { "mp_stats_t", "CoreStats" },
    { "mp_user_fn", "delegate* unmanaged[Cdecl]<void*, void*, long, void*, void>" },
};

static void die(const char *what, const char *detail)
{
    fprintf(stderr, "gen_binding: %s: %s\n", what, detail);
    exit(1);
}

/* Bytes of a C# type cs_type wrote (struct fields: primitives, handle kinds, pointers); 0 if unknown. */
static size_t cs_size(const char *cs)
{
    static const struct {
        const char *cs;
        size_t size;
    } k_sizes[] = { { "int", 4 }, { "uint", 4 }, { "long", 8 }, { "ulong", 8 }, { "double", 8 }, { "byte", 1 } };
    if (cs[0] && cs[strlen(cs) - 1] == '*')
        return sizeof(void *);
    for (size_t i = 0; i < sizeof k_handles / sizeof *k_handles; i++)
        if (strcmp(cs, k_handles[i].cs) == 0)
            return k_handles[i].size;
    for (size_t i = 0; i < sizeof k_sizes / sizeof *k_sizes; i++)
        if (strcmp(cs, k_sizes[i].cs) == 0)
            return k_sizes[i].size;
    return 0;
}

/* C# spelling of one C type such as "const char *const *". */
static void cs_type(const char *c, char *out, size_t cap)
{
    char base[64] = "";
    int stars = 0;
    size_t n = 0;
    for (const char *p = c; *p;) {
        if (*p == '*') {
            stars++;
            p++;
        } else if (isalnum((unsigned char)*p) || *p == '_') {
            char word[64];
            size_t w = 0;
            while ((isalnum((unsigned char)*p) || *p == '_') && w + 1 < sizeof word)
                word[w++] = *p++;
            word[w] = '\0';
            if (strcmp(word, "const") != 0) {
                if (base[0])
                    die("a type of two words", c);
                snprintf(base, sizeof base, "%s", word);
            }
        } else {
            p++;
        }
    }
    const char *cs = NULL;
    for (size_t i = 0; i < sizeof k_handles / sizeof *k_handles; i++)
        if (strcmp(base, k_handles[i].c) == 0)
            cs = k_handles[i].cs;
    for (size_t i = 0; !cs && i < sizeof k_types / sizeof *k_types; i++)
        if (strcmp(base, k_types[i][0]) == 0)
            cs = k_types[i][1];
    if (cs) {
        n = (size_t)snprintf(out, cap, "%s", cs);
        for (int s = 0; s < stars && n + 1 < cap; s++)
            out[n++] = '*';
        out[n] = '\0';
        return;
    }
    die("no C# type for this C type (add it to k_types)", c);
}

/* The function pointer type of a call: delegate* unmanaged[Cdecl(, SuppressGCTransition)]<params, ret>. */
static void cs_pointer(const call_t *c, char *out, size_t cap)
{
    char params[512], one[128], t[96];
    size_t n;
    int fast = strcmp(c->kind, "BLOCKING") != 0;
    snprintf(params, sizeof params, "%s", c->params + 1); /* skip '(' */
    params[strlen(params) - 1] = '\0';                   /* and ')' */
    n = (size_t)snprintf(out, cap, "delegate* unmanaged[Cdecl%s]<", fast ? ", SuppressGCTransition" : "");
    if (strcmp(params, "void") != 0) {
        for (char *save = NULL, *p = strtok_r(params, ",", &save); p; p = strtok_r(NULL, ",", &save)) {
            /* drop the parameter's name: the last identifier */
            size_t len = strlen(p);
            while (len && isspace((unsigned char)p[len - 1]))
                len--;
            while (len && (isalnum((unsigned char)p[len - 1]) || p[len - 1] == '_'))
                len--;
            snprintf(one, sizeof one, "%.*s", (int)len, p);
            cs_type(one, t, sizeof t);
            n += (size_t)snprintf(out + n, cap - n, "%s, ", t);
        }
    }
    cs_type(c->ret, t, sizeof t);
    snprintf(out + n, cap - n, "%s>", t);
}

/* "req_testall" -> "ReqTestall" */
static void pascal(const char *snake, char *out, size_t cap)
{
    size_t n = 0;
    for (int up = 1; *snake && n + 1 < cap; snake++) {
        if (*snake == '_') {
            up = 1;
            continue;
        }
        out[n++] = up ? (char)toupper((unsigned char)*snake) : *snake;
        up = 0;
    }
    out[n] = '\0';
}

/* "LOCK_EXCLUSIVE" -> "LockExclusive" */
static void pascal_upper(const char *upper, char *out, size_t cap)
{
    char lower[64];
    size_t n = 0;
    for (; *upper && n + 1 < sizeof lower; upper++)
        lower[n++] = (char)tolower((unsigned char)*upper);
    lower[n] = '\0';
    pascal(lower, out, cap);
}

static void put_cs_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '\n')
            fputs("\\n\" +\n        \"", f);
        else if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else
            fputc(*s, f);
    }
    fputc('"', f);
}

/* One handle kind as a C# struct: one field of the C type's size (a pointer: nint), equality, the
 * handles with a fixed value as members, and the number itself for diagnostics only.  == and != take
 * their operands by reference (in), so that the JIT compares a handle in an array with no load first. */
static void put_handle(FILE *f, const handle_kind_t *h)
{
    const char *repr = strchr(h->repr, '*') ? "nint" : h->size == 4 ? "int" : h->size == 8 ? "long" : NULL;
    char name[64];
    if (!repr)
        die("a handle kind of no C# size", h->c);
    fprintf(f, "/// <summary>%s (%s): %s.</summary>\n"
               "[StructLayout(LayoutKind.Sequential)]\n"
               "internal readonly struct %s : IEquatable<%s>\n{\n"
               "    private readonly %s _value;\n\n"
               "    /// <summary>The handle the core knows by this number.</summary>\n"
               "    internal %s(%s value) => _value = value;\n\n"
               "    /// <summary>The core's number for the handle: for diagnostics, never to pass as another kind.</summary>\n"
               "    internal %s Value => _value;\n\n",
            h->c, h->repr, h->what, h->cs, h->cs, repr, h->cs, repr, repr);
    for (size_t k = 0; k < sizeof k_handle_values / sizeof *k_handle_values; k++) {
        if (strcmp(k_handle_values[k].c, h->c) != 0)
            continue;
        for (size_t i = 0; i < k_handle_values[k].n; i++) {
            pascal_upper(k_handle_values[k].rows[i].name, name, sizeof name);
            fprintf(f, "    /// <summary>%s (%ld).</summary>\n    internal static %s %s => new(%ld);\n\n",
                    k_handle_values[k].rows[i].cname, k_handle_values[k].rows[i].value, h->cs, name,
                    k_handle_values[k].rows[i].value);
        }
    }
    fprintf(f, "    /// <summary>True when both name the same handle.</summary>\n"
               "    public bool Equals(%s other) => _value == other._value;\n\n"
               "    /// <inheritdoc/>\n    public override bool Equals(object? obj) => obj is %s other && Equals(other);\n\n"
               "    /// <inheritdoc/>\n    public override int GetHashCode() => _value.GetHashCode();\n\n"
               "    /// <inheritdoc/>\n    public override string ToString() => $\"%s {_value}\";\n\n"
               "    /// <summary>True when both name the same handle.</summary>\n"
               "    public static bool operator ==(in %s a, in %s b) => a._value == b._value;\n\n"
               "    /// <summary>True when they name different handles.</summary>\n"
               "    public static bool operator !=(in %s a, in %s b) => a._value != b._value;\n}\n\n",

            h->cs, h->cs, h->c, h->cs, h->cs, h->cs, h->cs);
}

/* One struct of mpcore.h as a sequential C# struct, field for field.  Each field's C# type has the
 * size of the C field, and C#'s sequential layout (each field at the next multiple of its own
 * size, the struct padded to its largest field) lands every field at the C offset: else stop. */
static void put_struct(FILE *f, const struct k_struct_row *st)
{
    char t[96], what[160];
    size_t at = 0, align = 1;
    fprintf(f, "/// <summary>%s (%s in mpcore.h): %s.</summary>\n"
               "[StructLayout(LayoutKind.Sequential)]\n"
               "internal unsafe struct %s\n{\n", st->c, st->list, st->doc, st->cs);
    for (size_t i = 0; i < st->n; i++) {
        const field_row_t *fd = &st->fields[i];
        size_t size;
        cs_type(fd->ctype, t, sizeof t);
        size = cs_size(t);
        snprintf(what, sizeof what, "%s.%s (%s as %s)", st->c, fd->name, fd->ctype, t);
        if (size != fd->size)
            die("a field whose C# type has another size than in C", what);
        at = (at + size - 1) / size * size;
        if (at != fd->offset)
            die("a field C# would lay out at another offset than C (padding C# does not reproduce)", what);
        at += size;
        if (size > align)
            align = size;
        fprintf(f, "    /// <summary>%s (%s, at %zu).</summary>\n    internal %s %s;\n", fd->name, fd->ctype, fd->offset, t, fd->cs);
    }
    if ((at + align - 1) / align * align != st->size)
        die("a struct C# would size otherwise than C", st->c);
    fputs("}\n\n", f);
}

static void generate(FILE *f)
{
    const size_t ncalls = sizeof k_calls / sizeof *k_calls;
    char name[64], ptr[768];
    fputs("// <auto-generated>\n"
          "// Written by native/mpcore/tools/gen_binding.c from native/mpcore/include/mpcore_calls.def\n"
          "// (the core's interface, listed once) and mpcore.h's lists (errors, statistics, enumerations, structs,\n"
          "// layouts), at every native build.\n"
          "// Do not edit: change the list and run ./build.sh build.\n"
          "// </auto-generated>\n"
          "#nullable enable\nusing System.Runtime.InteropServices;\n\n"
          "namespace System.MP.Interop;\n\n"
          "/// <summary>Error codes of mpcore (MP_ERROR_MAP in mpcore.h).</summary>\n"
          "internal static class CoreError\n{\n", f);
    for (size_t i = 0; i < sizeof k_errors / sizeof *k_errors; i++)
        fprintf(f, "    /// <summary>MP_%s: %s.</summary>\n    internal const int %s = %d;\n",
                k_errors[i].cname, k_errors[i].message, k_errors[i].csname, k_errors[i].code);
    fputs("}\n\n", f);
    for (size_t h = 0; h < sizeof k_handles / sizeof *k_handles; h++)
        put_handle(f, &k_handles[h]);
    for (size_t e = 0; e < sizeof k_enums / sizeof *k_enums; e++) {
        fprintf(f, "/// <summary>%s in mpcore.h.</summary>\ninternal static class %s\n{\n", k_enums[e].doc, k_enums[e].cs);
        for (size_t i = 0; i < k_enums[e].n; i++) {
            pascal_upper(k_enums[e].rows[i].name, name, sizeof name);
            fprintf(f, "    internal const int %s = %ld;\n", name, k_enums[e].rows[i].value);
        }
        fputs("}\n\n", f);
    }
    for (size_t l = 0; l < sizeof k_structs / sizeof *k_structs; l++)
        put_struct(f, &k_structs[l]);
    fputs("/// <summary>\n"
          "/// The C layout of the structs above (MP_STATUS_FIELDS, MP_COLL_FIELDS in mpcore.h): each field's\n"
          "/// name and offset, and the size, as the C compiler laid them out (checked again by CoreInterfaceTests).\n"
          "/// </summary>\n"
          "internal static class CoreLayout\n{\n", f);
    for (size_t l = 0; l < sizeof k_structs / sizeof *k_structs; l++) {
        fprintf(f, "    /// <summary>sizeof(%s).</summary>\n    internal const int %sSize = %zu;\n", k_structs[l].c,
                k_structs[l].layout, k_structs[l].size);
        fprintf(f, "    /// <summary>The fields of %s in order: C name and offset.</summary>\n"
                   "    internal static readonly (string Name, int Offset)[] %sFields =\n    [\n", k_structs[l].c, k_structs[l].layout);
        for (size_t i = 0; i < k_structs[l].n; i++)
            fprintf(f, "        (\"%s\", %zu),\n", k_structs[l].fields[i].name, k_structs[l].fields[i].offset);
        fputs("    ];\n", f);
    }
    fputs("}\n\n"
          "/// <summary>Mirror of mp_stats_t (MP_STATS_FIELDS in mpcore.h): the core's counters.</summary>\n"
          "[StructLayout(LayoutKind.Sequential)]\n"
          "internal struct CoreStats\n{\n", f);
    for (size_t i = 0; i < sizeof k_stats / sizeof *k_stats; i++) {
        pascal(k_stats[i].name, name, sizeof name);
        fprintf(f, "    /// <summary>%s: %s.</summary>\n    internal ulong %s;\n", k_stats[i].name, k_stats[i].what, name);
    }
    fputs("}\n\n"
          "/// <summary>Mirror of mp_table_t: the core's call table, one slot per entry of mpcore_calls.def.</summary>\n"
          "[StructLayout(LayoutKind.Sequential)]\n"
          "internal struct CoreTable\n{\n"
          "    internal uint AbiVersion;\n    internal uint Size;\n    internal nint Manifest;\n", f);
    for (size_t i = 0; i < ncalls; i++) {
        pascal(k_calls[i].name, name, sizeof name);
        fprintf(f, "    internal nint %s;\n", name);
    }
    fprintf(f, "\n    /// <summary>MP_ABI_VERSION this binding was generated from.</summary>\n"
               "    internal const uint ExpectedAbiVersion = %d;\n\n"
               "    /// <summary>The interface list this binding was generated from, as the core reports it (mp_table_t.manifest).</summary>\n"
               "    internal const string ExpectedManifest =\n        ", MP_ABI_VERSION);
    put_cs_string(f, k_manifest);
    fputs(";\n}\n\n"
          "/// <summary>\n"
          "/// The core's functions as unmanaged function pointers, read once from the call table.\n"
          "/// FAST and ANY calls are bound with SuppressGCTransition (they never wait), BLOCKING ones with\n"
          "/// a GC transition, so the GC runs while the thread waits.\n"
          "/// </summary>\n"
          "internal static unsafe partial class Core\n{\n", f);
    for (size_t i = 0; i < ncalls; i++) {
        if (strcmp(k_calls[i].kind, "GC") == 0)
            continue;
        pascal(k_calls[i].name, name, sizeof name);
        cs_pointer(&k_calls[i], ptr, sizeof ptr);
        fprintf(f, "    /// <summary>%s: %s mp_%s%s</summary>\n    internal static readonly %s %s;\n",
                k_calls[i].kind, k_calls[i].ret, k_calls[i].name, k_calls[i].params, ptr, name);
    }
    fputs("\n#pragma warning disable CA1810 // the table must be validated before any field is read\n"
          "    static Core()\n#pragma warning restore CA1810\n    {\n"
          "        CoreTable* t = CoreLoader.Table;\n", f);
    for (size_t i = 0; i < ncalls; i++) {
        if (strcmp(k_calls[i].kind, "GC") == 0)
            continue;
        pascal(k_calls[i].name, name, sizeof name);
        cs_pointer(&k_calls[i], ptr, sizeof ptr);
        fprintf(f, "        %s = (%s)t->%s;\n", name, ptr, name);
    }
    fputs("    }\n}\n", f);
}

int main(int argc, char **argv)
{
    char *now = NULL, *old = NULL;
    size_t now_len = 0, old_len = 0;
    FILE *f;
    if (argc != 2)
        die("usage", "gen_binding OUTPUT.cs");
    if (!(f = open_memstream(&now, &now_len)))
        die("open_memstream", "failed");
    generate(f);
    fclose(f);
    if ((f = fopen(argv[1], "rb"))) {
        old = malloc(now_len + 2);
        old_len = old ? fread(old, 1, now_len + 1, f) : 0;
        fclose(f);
    }
    if (old && old_len == now_len && memcmp(old, now, now_len) == 0)
        return 0;
    if (!(f = fopen(argv[1], "wb")) || fwrite(now, 1, now_len, f) != now_len || fclose(f) != 0)
        die("cannot write", argv[1]);
    free(old);
    free(now);
    return 0;
}
