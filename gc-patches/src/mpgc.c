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
 * Why regions (libclrgcexp.so): it is the same GC flavour the runtime uses
 * built in since .NET 7, so a program behaves under motor as under dotnet
 * (same generation budgets, same compaction of gen2 and LOH).  Segments
 * (libclrgc.so) are the legacy flavour; MOTOR_STOCK_GC=libclrgc.so selects it.
 */
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

/* The proxy: an object whose first word is our copy of the vtable. */
static struct { void **vtbl; } g_proxy;
static void *g_proxy_vtbl[MAX_SLOTS];
static void *g_clr;                 /* the runtime's IGCToCLR */
static scan_roots_fn g_scan_roots;  /* its GcScanRoots */
static void *g_stock;               /* the stock GC library */
static int g_trace;
static const mp_table_t *g_core;    /* the core this process uses (mp_core_table) */

static void trace(const char *fmt, const char *arg)
{
    if (g_trace) {
        fprintf(stderr, "mpgc: ");
        fprintf(stderr, fmt, arg);
        fputc('\n', stderr);
    }
}

static void fail(const char *fmt, const char *arg)
{
    fprintf(stderr, "motor GC extension (libmpgc): ");
    fprintf(stderr, fmt, arg);
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
            fail("%s", "libcoreclr.so is not loaded in this process; libmpgc must be loaded by the .NET runtime");
            return NULL;
        }
        slash = strrchr(path, '/');
        if (!slash || (size_t)(slash + 1 - path) + strlen(name) + 1 > sizeof path) {
            fail("unexpected runtime path %s", path);
            return NULL;
        }
        strcpy(slash + 1, name);
    }
    g_stock = pal_dl_open(path, 0);
    if (!g_stock)
        fail("cannot load the stock GC: %s", pal_dl_error());
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

/* Copies the runtime's vtable: every leading entry that points into the
 * runtime's code is a method (the word after the last one is another
 * vtable's offset-to-top or type info, never code). */
static int build_proxy(void *clr)
{
    void **vtbl = *(void ***)clr;
    uintptr_t lo = 0, hi = 0;
    int n = 0;
    if (pal_module_text(vtbl[0], &lo, &hi) != 0) {
        fail("%s", "the runtime's IGCToCLR does not point into loaded code");
        return -1;
    }
    while (n < MAX_SLOTS && (uintptr_t)vtbl[n] >= lo && (uintptr_t)vtbl[n] < hi) {
        g_proxy_vtbl[n] = vtbl[n];
        n++;
    }
    if (n < MIN_SLOTS || n == MAX_SLOTS) {
        fail("%s", "the runtime's IGCToCLR has an unexpected shape");
        return -1;
    }
    g_clr = clr;
    g_scan_roots = (scan_roots_fn)vtbl[SLOT_GC_SCAN_ROOTS];
    g_proxy_vtbl[SLOT_GC_SCAN_ROOTS] = (void *)proxy_scan_roots;
    g_proxy.vtbl = g_proxy_vtbl;
    if (g_trace)
        fprintf(stderr, "mpgc: IGCToCLR proxy with %d slots\n", n);
    return 0;
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
}

MPGC_API int32_t GC_Initialize(void *clr, void **heap, void **handles, void *dac_vars)
{
    void *lib = stock_gc();
    initialize_fn f = lib ? (initialize_fn)pal_dl_sym(lib, "GC_Initialize") : NULL;
    int32_t hr;
    if (!f || build_proxy(clr) != 0)
        return E_FAIL_HR;
    g_core = mp_core_table(); /* the same core the host initialized */
    hr = f(&g_proxy, heap, handles, dac_vars);
    if (hr >= 0) {
        g_core->gc_attach();
        trace("%s", "attached: in-flight buffers are pinned at GC mark time");
    }
    return hr;
}
