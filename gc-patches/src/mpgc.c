/*
 * mpgc.c - Motor's GC extension (libmpgc).
 *
 * The runtime loads a standalone GC from the path in the runtime property
 * System.GC.Path and calls two exports: GC_VersionInfo and GC_Initialize.
 * libmpgc forwards both to the stock GC library shipped beside libcoreclr
 * (regions: libclrgcexp.so by default), but hands that GC a proxy of the
 * runtime's IGCToCLR interface whose GcScanRoots, after the runtime's own
 * root scan, also reports mpcore's in-flight buffers as pinned roots.
 *
 * Facts this rests on (dotnet/runtime, src/coreclr/gc/gcinterface*.h):
 *  - IGCToCLR is a C++ class with only pure virtual methods and no virtual
 *    destructor; slot 2 of its vtable is
 *      void GcScanRoots(promote_func *fn, int condemned, int max_gen, ScanContext *sc);
 *    the runtime's implementation has no data members, so calling its
 *    methods with our proxy as `this` is sound;
 *  - promote_func is void (Object **, ScanContext *, uint32_t flags) and
 *    GC_CALL_PINNED = 0x2;
 *  - ScanContext starts { Thread *; int thread_number; int thread_count;
 *    uintptr_t stack_limit; bool promotion; bool concurrent; ... };
 *    promotion is true when marking, false when relocating; thread_number is
 *    the server-GC heap doing the scan.
 *
 * Data on cache lines.  The heap's Alloc is wrapped too, for one purpose: arrays
 * without references on the large and pinned object heaps get their data on a
 * 64-byte boundary (the stock GC aligns objects to 8 bytes; a copy between a user
 * buffer and MPI's or the kernel's runs up to 1.4 times slower off the boundary,
 * perf/README.md "Where the buffer lives").  The wrapper asks the stock GC for
 * ALIGN_SPARE bytes more, puts the object at the first offset k (0, or 32 to 88)
 * whose data is on the boundary, and makes the k bytes before it and the spare
 * bytes after it free objects, as the GC itself does around large objects (its
 * LOH padding, a 32-byte free object before each, whose last 16 bytes LOH
 * compaction uses for the object's relocation: gc.cpp loh_padding_obj).
 *   This is sound only without background GC: during a background mark the
 * stock GC marks a large allocation at its start (the filler, not the object)
 * and keeps the start in its allocation lock until PublishObject.  So the
 * wrapper aligns only when the GC read gcConcurrent as false (motor's default;
 * recorded from the GC's own configuration read through IGCToCLR), for an
 * interface whose layout is known (IGCHeap 5.x with x >= 3: Alloc is slot 53;
 * IGCToCLR: GetFreeObjectMethodTable slot 31, Get{Boolean,Int,String}ConfigValue
 * slots 32-34, FreeStringConfigValue 35),
 * and never for finalizable objects (registered by address inside Alloc).
 * MOTOR_GC_ALIGN=0 turns it off.  The core's statistics say whether it is on
 * (gc_aligned_arrays).
 *
 * Facts for that (dotnet/runtime, src/coreclr/gc): an object of size S at P
 * occupies [P - 8, P + S - 8) (its header word precedes it), S rounded up to 8
 * (Alloc is asked for sizes that are not: a byte array's 24 + length); a free object is
 * { free MethodTable, size_t count = bytes - 24 }, 24 bytes at least (gc.cpp SetFree,
 * which also marks one of 48 bytes or more as on no free list: DOUBLY_LINKED_FL);
 * GC_ALLOC_FLAGS: FINALIZE 1, CONTAINS_REF 2, ALIGN8_BIAS 4, ALIGN8 8,
 * ZEROING_OPTIONAL 16, LARGE_OBJECT_HEAP 32, PINNED_OBJECT_HEAP 64.
 *
 * A gen0 budget for a machine shared by ranks.  .NET sizes the bytes allocated
 * between gen0 collections from the largest cache (about 5/8 of it: 16 MiB for a
 * 32 MiB L3) as if the process had the machine to itself; MPI runs a rank on every
 * core, and the ranks share that cache.  Then every allocation clears memory that
 * left the cache long ago (perf/README.md "The gen0 budget").  So for workstation
 * GC, when DOTNET_GCgen0size does not set GCgen0size, the proxy answers the GC's
 * read of it with the runtime property System.GC.Gen0Size if the app sets one (the
 * GC has no public name for it), else with GEN0_MOTOR; MOTOR_GC_GEN0=<bytes> sets
 * another value, MOTOR_GC_GEN0=0 leaves .NET's.  Both are decided, and a value that
 * is not a budget refused, before the GC starts (decide_gen0).  The GC still grows the budget when much survives
 * (up to gen0_max_size); the statistics report the budget configured
 * (gc_gen0_budget).  GCConfig stores whatever the call writes into the value, found
 * or not, so the proxy writes it only when it answers.  4 MiB is measured
 * (perf/README.md): a received graph takes 0.8 of its time with .NET's budget, an
 * allocation loop 0.9; 1-2 MiB would save a little more per message but costs more
 * collections, which streaming under allocation pressure pays for.
 *
 * Why regions (libclrgcexp.so): it is the same GC flavour the runtime uses
 * built in since .NET 7, so a program behaves under motor as under dotnet
 * (same generation budgets, same compaction of gen2 and LOH).  Segments
 * (libclrgc.so) are the legacy flavour; MOTOR_STOCK_GC=libclrgc.so selects it.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpcore_gc.h"
#include "pal.h"

#define MPGC_API __attribute__((visibility("default")))

#define GC_CALL_PINNED 0x2
#define E_FAIL_HR ((int32_t)0x80004005)
#define MAX_SLOTS 512            /* far above IGCToCLR's ~50 methods */
#define MIN_SLOTS 8              /* anything shorter is not an IGCToCLR */
#define SLOT_GC_SCAN_ROOTS 2

/* Data on cache lines (see the top of this file). */
#define SLOT_GET_FREE_MT 31      /* IGCToCLR::GetFreeObjectMethodTable */
#define SLOT_GET_BOOL_CONFIG 32  /* IGCToCLR::GetBooleanConfigValue */
#define SLOT_GET_INT_CONFIG 33   /* IGCToCLR::GetIntConfigValue */
#define SLOT_GET_STRING_CONFIG 34 /* IGCToCLR::GetStringConfigValue */
#define SLOT_FREE_STRING_CONFIG 35 /* IGCToCLR::FreeStringConfigValue */
#define CLR_SLOTS_KNOWN 52       /* IGCToCLR's methods in .NET 10 */
#define SLOT_HEAP_ALLOC 53       /* IGCHeap::Alloc */
#define HEAP_SLOTS_KNOWN 89      /* IGCHeap's methods in interface 5.5 */
#define DATA_ALIGN 64
#define ARRAY_DATA_OFFSET 16     /* MethodTable*, length: an array's data starts 16 bytes in */
#define MIN_OBJ 24               /* the smallest object, and a free object's base size */
#define MIN_FREE_LIST (2 * MIN_OBJ) /* the GC's min_free_list */
#define PREV_EMPTY 1             /* free_list_prev of a free object on no free list */
#define LOH_PAD 32               /* the free object the GC puts before every large object */
#define ALIGN_SPARE 112          /* leading filler <= 88, trailing filler >= 24 */
#define GC_ALLOC_FINALIZE 0x1
#define GC_ALLOC_CONTAINS_REF 0x2
#define GC_ALLOC_ALIGN8_BIAS 0x4
#define GC_ALLOC_ALIGN8 0x8
#define GC_ALLOC_UOH (0x20 | 0x40)  /* large or pinned object heap */

/* The gen0 budget (see the top of this file). */
#define GEN0_KEY "GCgen0size"
#define GEN0_PUBLIC_KEY "System.GC.Gen0Size"
#define GEN0_MIN_VALID (64 * 1024)    /* the GC ignores a smaller GCgen0size (IsValidGen0MaxSize) */
#define GEN0_MOTOR (4 << 20)          /* motor's budget */

typedef struct version_info {
    uint32_t major, minor, build;
    const char *name;
} version_info_t;

typedef struct scan_context {
    void *thread_under_crawl;
    int thread_number;
    int thread_count;
    uintptr_t stack_limit;
    _Bool promotion;
    _Bool concurrent;
} scan_context_t;

typedef void (*promote_fn)(void **obj, scan_context_t *sc, uint32_t flags);
typedef void (*scan_roots_fn)(void *self, promote_fn fn, int condemned, int max_gen, scan_context_t *sc);
typedef void (*version_info_fn)(version_info_t *);
typedef int32_t (*initialize_fn)(void *clr, void **heap, void **handles, void *dac_vars);
typedef _Bool (*bool_config_fn)(void *self, const char *private_key, const char *public_key, _Bool *value);
typedef _Bool (*int_config_fn)(void *self, const char *private_key, const char *public_key, int64_t *value);
typedef _Bool (*string_config_fn)(void *self, const char *private_key, const char *public_key, const char **value);
typedef void (*free_string_fn)(void *self, const char *value);
typedef void *(*free_mt_fn)(void *self);
typedef void *(*heap_alloc_fn)(void *self, void *acontext, size_t size, uint32_t flags);

/* The proxy: an object whose first word is our copy of the vtable. */
static struct { void **vtbl; } g_proxy;
static void *g_proxy_vtbl[MAX_SLOTS];
static void *g_clr;                 /* the runtime's IGCToCLR */
static scan_roots_fn g_scan_roots;  /* its GcScanRoots */
static void *g_stock;               /* the stock GC library */
static int g_trace;
static const mp_table_t *g_core;    /* the core this process uses (mp_core_table) */
static int g_clr_slots;             /* methods in the runtime's IGCToCLR vtable */
static version_info_t g_version;    /* the stock GC's interface version */
static bool_config_fn g_bool_config;
static int g_concurrent = -1;       /* gcConcurrent as the GC read it; -1 not read */
static int_config_fn g_int_config;
static uint64_t g_gen0_answer;      /* what the proxy answers when the runtime has no GCgen0size; 0 none */
static uint64_t g_gen0_budget;      /* the budget the GC gets (decided before it starts); 0 its own */
static const char *g_gen0_why = "the runtime's IGCToCLR is not the known one";
static void *g_heap_vtbl[2 + MAX_SLOTS]; /* offset-to-top, type info, then the heap's methods */
static heap_alloc_fn g_heap_alloc;  /* the stock GC's Alloc */
static void *g_free_mt;             /* the runtime's free-object MethodTable */

static void trace(const char *fmt, const char *arg)
{
    if (g_trace) {
        fprintf(stderr, "mpgc: ");
        fprintf(stderr, fmt, arg);
        fputc('\n', stderr);
    }
}

static void fail(const char *fmt, const char *arg, const char *arg2)
{
    fprintf(stderr, "motor GC extension (libmpgc): ");
    fprintf(stderr, fmt, arg, arg2);
    fputc('\n', stderr);
}

/* Loads the stock GC beside libcoreclr (once). */
static void *stock_gc(void)
{
    char path[4096];
    const char *name;
    char *slash;
    if (g_stock)
        return g_stock;
    g_trace = getenv("MOTOR_GC_TRACE") != NULL;
    name = getenv("MOTOR_STOCK_GC");
    if (!name || !*name)
        name = "libclrgcexp.so";
    if (strchr(name, '/')) {
        snprintf(path, sizeof path, "%s", name);
    } else {
        if (pal_module_path("libcoreclr.so", path, (int)sizeof path) != 0) {
            fail("%s", "libcoreclr.so is not loaded in this process; libmpgc must be loaded by the .NET runtime", NULL);
            return NULL;
        }
        slash = strrchr(path, '/');
        if (!slash || (size_t)(slash + 1 - path) + strlen(name) + 1 > sizeof path) {
            fail("unexpected runtime path %s", path, NULL);
            return NULL;
        }
        strcpy(slash + 1, name);
    }
    g_stock = pal_dl_open(path, 0);
    if (!g_stock)
        fail("cannot load the stock GC: %s", pal_dl_error(), NULL);
    else
        trace("forwarding to %s", path);
    return g_stock;
}

struct report_ctx {
    promote_fn fn;
    scan_context_t *sc;
};

static void report_slot(void **slot, void *ctx)
{
    struct report_ctx *c = ctx;
    c->fn(slot, c->sc, GC_CALL_PINNED);
}

static void proxy_scan_roots(void *self, promote_fn fn, int condemned, int max_gen, scan_context_t *sc)
{
    struct report_ctx ctx = { fn, sc };
    (void)self;
    g_scan_roots(g_clr, fn, condemned, max_gen, sc);
    /* One report per pass: workstation GC scans as heap 0, server GC calls
     * this once per heap thread, concurrently; heap 0 speaks for the table. */
    if (sc->thread_number > 0)
        return;
    if (sc->promotion)
        g_core->gc_scan(MP_GC_MARK | (sc->concurrent ? MP_GC_CONCURRENT : 0), report_slot, &ctx);
    else
        g_core->gc_scan(MP_GC_RELOCATE, report_slot, &ctx);
}

/* The number of leading entries of vtbl that point into the code of the module
 * vtbl[0] is in: every one is a method (the word after the last one is another
 * vtable's offset-to-top or type info, never code).  -1 if vtbl[0] is not code. */
static int code_slots(void **vtbl)
{
    uintptr_t lo = 0, hi = 0;
    int n = 0;
    if (pal_module_text(vtbl[0], &lo, &hi) != 0)
        return -1;
    while (n < MAX_SLOTS && (uintptr_t)vtbl[n] >= lo && (uintptr_t)vtbl[n] < hi)
        n++;
    return n;
}

/* The runtime's answer, and the GC's reading of gcConcurrent (default true). */
static _Bool proxy_bool_config(void *self, const char *private_key, const char *public_key, _Bool *value)
{
    _Bool found = g_bool_config(g_clr, private_key, public_key, value);
    (void)self;
    if (private_key && strcmp(private_key, "gcConcurrent") == 0)
        g_concurrent = found ? *value : 1;
    return found;
}

/* A gen0 budget as text (bytes, decimal or 0x hex; 0: .NET's own), or -1 and a message
 * naming `what` when it is not one the GC takes. */
static int64_t parse_gen0(const char *what, const char *v)
{
    char *end = NULL;
    int64_t n;
    errno = 0;
    n = (int64_t)strtoll(v, &end, 0);
    if (errno || end == v || *end || n < 0 || (n > 0 && n < GEN0_MIN_VALID)) {
        fail("%s=%s is not a gen0 budget: give bytes (decimal, or hex with 0x), at least 65536, "
             "or 0 to leave .NET's budget", what, v);
        return -1;
    }
    return n;
}

/* Decides, before the GC starts, the gen0 budget it gets (see the top of this file), in
 * order: DOTNET_GCgen0size (the GC reads it itself), the runtime property
 * System.GC.Gen0Size, server GC's own, MOTOR_GC_GEN0, motor's.  -1 for a bad value. */
static int decide_gen0(void)
{
    const char *text = NULL, *v = getenv("MOTOR_GC_GEN0");
    int64_t n = 0, motor = v && *v ? parse_gen0("MOTOR_GC_GEN0", v) : GEN0_MOTOR;
    _Bool server = 0;
    if (motor < 0)
        return -1;
    if (g_clr_slots < CLR_SLOTS_KNOWN)
        return 0;
    if (g_int_config(g_clr, GEN0_KEY, NULL, &n)) {
        g_gen0_budget = n >= GEN0_MIN_VALID ? (uint64_t)n : 0; /* the GC ignores a smaller one, as under dotnet */
        g_gen0_why = "set by DOTNET_GCgen0size";
        return 0;
    }
    if (((string_config_fn)g_proxy_vtbl[SLOT_GET_STRING_CONFIG])(g_clr, GEN0_KEY, GEN0_PUBLIC_KEY, &text)) {
        n = parse_gen0("the runtime property " GEN0_PUBLIC_KEY, text);
        ((free_string_fn)g_proxy_vtbl[SLOT_FREE_STRING_CONFIG])(g_clr, text);
        g_gen0_why = n > 0 ? "set by the runtime property " GEN0_PUBLIC_KEY : GEN0_PUBLIC_KEY "=0: .NET sizes it from the cache";
    } else if (g_bool_config(g_clr, "gcServer", NULL, &server) && server) {
        g_gen0_why = "server GC sizes its own";
        return 0;
    } else {
        n = motor;
        g_gen0_why = !(v && *v) ? "motor's default" : n > 0 ? "set by MOTOR_GC_GEN0" : "MOTOR_GC_GEN0=0: .NET sizes it from the cache";
    }
    if (n < 0)
        return -1;
    g_gen0_answer = g_gen0_budget = (uint64_t)n;
    return 0;
}

/* The runtime's answer; for GCgen0size, when the runtime has none, the budget decided
 * by decide_gen0. */
static _Bool proxy_int_config(void *self, const char *private_key, const char *public_key, int64_t *value)
{
    _Bool found = g_int_config(g_clr, private_key, public_key, value);
    (void)self;
    if (!found && g_gen0_answer && private_key && strcmp(private_key, GEN0_KEY) == 0) {
        *value = (int64_t)g_gen0_answer;
        found = 1;
    }
    return found;
}

/* Copies the runtime's vtable into the proxy, with our GcScanRoots and, where the
 * layout is the known one, our GetBooleanConfigValue. */
static int build_proxy(void *clr)
{
    void **vtbl = *(void ***)clr;
    int n = code_slots(vtbl);
    if (n < 0) {
        fail("%s", "the runtime's IGCToCLR does not point into loaded code", NULL);
        return -1;
    }
    if (n < MIN_SLOTS || n == MAX_SLOTS) {
        fail("%s", "the runtime's IGCToCLR has an unexpected shape", NULL);
        return -1;
    }
    memcpy(g_proxy_vtbl, vtbl, (size_t)n * sizeof *vtbl);
    g_clr = clr;
    g_clr_slots = n;
    g_scan_roots = (scan_roots_fn)vtbl[SLOT_GC_SCAN_ROOTS];
    g_proxy_vtbl[SLOT_GC_SCAN_ROOTS] = (void *)proxy_scan_roots;
    if (n >= CLR_SLOTS_KNOWN) {
        g_bool_config = (bool_config_fn)vtbl[SLOT_GET_BOOL_CONFIG];
        g_proxy_vtbl[SLOT_GET_BOOL_CONFIG] = (void *)proxy_bool_config;
        g_int_config = (int_config_fn)vtbl[SLOT_GET_INT_CONFIG];
        g_proxy_vtbl[SLOT_GET_INT_CONFIG] = (void *)proxy_int_config;
    }
    g_proxy.vtbl = g_proxy_vtbl;
    if (g_trace)
        fprintf(stderr, "mpgc: IGCToCLR proxy with %d slots\n", n);
    return 0;
}

/* A free object of `bytes` (0, or MIN_OBJ and more) at p, as the GC's own SetFree makes
 * one: the free MethodTable, the count as a size_t, and from MIN_FREE_LIST bytes on the
 * free-list "prev" word (p[3]) set to PREV_EMPTY, which marks a free object that is on no
 * free list (its header word, p[-1], is the free list's undo word: left zero). */
static void make_free(uint8_t *p, size_t bytes)
{
    if (bytes == 0)
        return;
    ((void **)p)[-1] = NULL;
    ((void **)p)[0] = g_free_mt;
    ((size_t *)p)[1] = bytes - MIN_OBJ;
    if (bytes >= MIN_FREE_LIST)
        ((uintptr_t *)p)[3] = PREV_EMPTY;
}

/* The heap's Alloc: arrays without references on the large and pinned object
 * heaps with their data on a DATA_ALIGN boundary (see the top of this file). */
static void *heap_alloc(void *self, void *acontext, size_t size, uint32_t flags)
{
    uint8_t *r;
    size_t k;
    if (!(flags & GC_ALLOC_UOH) ||
        (flags & (GC_ALLOC_FINALIZE | GC_ALLOC_CONTAINS_REF | GC_ALLOC_ALIGN8 | GC_ALLOC_ALIGN8_BIAS)) ||
        size > ((size_t)1 << 62))
        return g_heap_alloc(self, acontext, size, flags);
    r = g_heap_alloc(self, acontext, size + ALIGN_SPARE, flags);
    if (!r) /* no room for the spare: the object as the GC places it, or its own failure */
        return g_heap_alloc(self, acontext, size, flags);
    k = (DATA_ALIGN - ((uintptr_t)r + ARRAY_DATA_OFFSET) % DATA_ALIGN) % DATA_ALIGN;
    /* Whatever precedes the object is a free object of LOH_PAD bytes or more: LOH
     * compaction keeps an object's relocation in the 16 bytes before it, which must lie
     * in a free object's payload, as they do in the pad the GC puts before every large
     * object.  So k is 0 (the GC's own pad) or LOH_PAD and more. */
    if (k != 0 && k < LOH_PAD)
        k += DATA_ALIGN;
    make_free(r, k);
    make_free(r + k + ((size + 7) & ~(size_t)7), ALIGN_SPARE - k); /* the GC rounds sizes up to 8 */
    ((void **)(r + k))[-1] = NULL; /* the object's header word (not cleared when zeroing is optional) */
    return r + k;
}

/* Wraps the heap's Alloc when that is sound (see the top of this file); returns 1 if it did. */
static int align_arrays(void *heap, const char **why)
{
    void **vtbl = *(void ***)heap;
    const char *v = getenv("MOTOR_GC_ALIGN");
    int n;
    if (v && strcmp(v, "0") == 0)
        return *why = "MOTOR_GC_ALIGN=0", 0;
    if (g_version.major != 5 || g_version.minor < 3)
        return *why = "the GC's interface version is not 5.3 or later 5.x", 0;
    if (g_clr_slots < CLR_SLOTS_KNOWN)
        return *why = "the runtime's IGCToCLR is not the known one", 0;
    if (g_concurrent != 0)
        return *why = g_concurrent < 0 ? "the GC did not read gcConcurrent" : "background GC is on (gcConcurrent)", 0;
    n = code_slots(vtbl);
    if (n < HEAP_SLOTS_KNOWN || n == MAX_SLOTS)
        return *why = "the GC's IGCHeap has an unexpected shape", 0;
    g_free_mt = ((free_mt_fn)g_proxy_vtbl[SLOT_GET_FREE_MT])(g_clr);
    if (!g_free_mt)
        return *why = "the runtime has no free-object MethodTable yet", 0;
    memcpy(g_heap_vtbl, vtbl - 2, (size_t)(n + 2) * sizeof *vtbl);
    g_heap_alloc = (heap_alloc_fn)vtbl[SLOT_HEAP_ALLOC];
    g_heap_vtbl[2 + SLOT_HEAP_ALLOC] = (void *)heap_alloc;
    *(void ***)heap = g_heap_vtbl + 2;
    return 1;
}

MPGC_API void GC_VersionInfo(version_info_t *info)
{
    void *lib = stock_gc();
    version_info_fn f = lib ? (version_info_fn)pal_dl_sym(lib, "GC_VersionInfo") : NULL;
    if (!f) {
        /* Report a version no runtime accepts, so it fails with its own message. */
        info->major = 0;
        info->minor = 0;
        info->build = 0;
        info->name = "libmpgc (stock GC not found)";
        return;
    }
    f(info);
    g_version = *info;
}

MPGC_API int32_t GC_Initialize(void *clr, void **heap, void **handles, void *dac_vars)
{
    void *lib = stock_gc();
    initialize_fn f = lib ? (initialize_fn)pal_dl_sym(lib, "GC_Initialize") : NULL;
    int32_t hr;
    const char *why = "";
    uint32_t features = 0;
    if (!f || build_proxy(clr) != 0)
        return E_FAIL_HR;
    if (decide_gen0() != 0)
        return E_FAIL_HR;
    g_core = mp_core_table(); /* the same core the host initialized */
    hr = f(&g_proxy, heap, handles, dac_vars);
    if (hr >= 0) {
        if (align_arrays(*heap, &why))
            features |= MP_GC_ALIGNED_ARRAYS;
        g_core->gc_attach(features, g_gen0_budget);
        trace("%s", "attached: in-flight buffers are pinned at GC mark time");
        if (features & MP_GC_ALIGNED_ARRAYS)
            trace("%s", "large and pinned-heap arrays without references start their data on 64-byte boundaries");
        else
            trace("arrays are placed by the stock GC alone: %s", why);
        if (g_trace)
            fprintf(stderr, "mpgc: gen0 budget %llu bytes (%s)\n", (unsigned long long)g_gen0_budget, g_gen0_why);
    }
    return hr;
}
