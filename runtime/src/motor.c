/*
 * motor.c - the Motor VM: a .NET host with MPI built in.
 *
 *   mpiexec -n 4 motor [options] app.dll [args]
 *
 * Order of events:
 *   1. find hostfxr (nethost) and prepare the app (hostfxr_initialize_for_dotnet_command_line:
 *      reads app.runtimeconfig.json and app.deps.json, does not start the runtime);
 *   2. hand the runtime our settings: Motor.CoreTable (the address of mpcore's
 *      call table, so System.MP binds no native library), Motor.Hosted,
 *      Motor.Version, Motor.HostPath, Motor.ThreadLevel (the level asked for:
 *      --thread-level, else the app's runtime setting Motor.ThreadLevel, else
 *      MOTOR_THREAD_LEVEL, else Single), Motor.GcExtension, and
 *      System.GC.Path = libmpgc.so beside motor (the GC extension);
 *      QuickJitForLoops = false and System.GC.Concurrent = false unless the app
 *      says otherwise;
 *   3. at the same time: MPI_Init_thread on this, the process's first thread, and
 *      the runtime's start (CoreCLR, its GC, CoreLib) on a host thread; join both;
 *   4. on this thread, System.MP's start (HostEntry.Start: from here an unhandled
 *      exception on a rank aborts the job, even before the app touches MPI), then
 *      Main (hostfxr_run_app);
 *   5. finalize MPI if the app did not, and exit with Main's exit code.
 *
 * Why step 3 is concurrent and on which threads: MPI_Init is mostly the launcher's
 * PMI exchange between the ranks, and the runtime's start is the runtime's own
 * work; one may hide much of the other.  MPI's main thread is the thread that
 * called MPI_Init_thread (MPI-4.0 11.2.2), and at the levels Funneled and below
 * only it may call MPI; Main must run on it.  So MPI initializes on the first
 * thread, the one that later runs Main, and the runtime starts on a host thread
 * that ends once CoreCLR is up (hostfxr_get_runtime_delegate loads it; no
 * managed code of the app or of System.MP runs there).  Nothing can use MPI
 * before the join: System.MP's start and its unhandled-exception abort run after it,
 * the app and Environment.Exit inside hostfxr_run_app.  The
 * thread level is therefore exactly what the app asked for, without asking MPI
 * for more.
 *   Under Open MPI the two stay in sequence (MPI_Init, then the runtime): its
 * MPI_Init adds environment variables (PSM2_DEVICES, PMIX_MCA_psec; seen with an
 * interposed setenv), and glibc's setenv may free the environment array that a
 * getenv on the other thread is reading.  MPICH's MPI_Init sets none; motor sets
 * its own (MOTOR_STOCK_GC, and UCX_ERROR_SIGNALS when it loads the MPI library)
 * before the thread starts.  MOTOR_START_OVERLAP=0 keeps them in sequence under
 * MPICH too (for measuring, or an MPI library of the MPICH family that does set
 * variables in MPI_Init).
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <pthread.h>

#include <coreclr_delegates.h>
#include <hostfxr.h>
#include <nethost.h>

#include "mpcore.h"
#include "pal.h"

#ifndef MOTOR_VERSION
#define MOTOR_VERSION "0.0.0"
#endif

enum motor_exit {
    EXIT_USAGE = 2,       /* bad command line */
    EXIT_NO_RUNTIME = 3,  /* no .NET runtime (hostfxr) found */
    EXIT_NO_MPI = 4,      /* no usable MPI library, or MPI_Init failed */
    EXIT_APP = 5,         /* the app could not be prepared or started */
};

#define MAX_PROPERTIES 64
#define PATH_CAP 4096

typedef struct options {
    int thread_level;                /* -1: not given */
    int gc_extension;                /* 1 unless --no-gc-extension */
    const char *stock_gc;            /* NULL (regions), or a file name */
    const char *dotnet_root;         /* NULL: nethost's search */
    const char *prop_names[MAX_PROPERTIES];
    const char *prop_values[MAX_PROPERTIES];
    int nprops;
    int app;                         /* index of app.dll in argv */
} options_t;

typedef struct fxr {
    hostfxr_initialize_for_dotnet_command_line_fn init;
    hostfxr_get_runtime_property_value_fn get;
    hostfxr_set_runtime_property_value_fn set;
    hostfxr_run_app_fn run;
    hostfxr_get_runtime_delegate_fn get_delegate;
    hostfxr_close_fn close;
    hostfxr_set_error_writer_fn set_error_writer;
    hostfxr_get_dotnet_environment_info_fn env_info;
    char path[PATH_CAP];             /* libhostfxr.so */
    char root[PATH_CAP];             /* the .NET installation it belongs to */
} fxr_t;

static const char *const k_levels[] = { "single", "funneled", "serialized", "multiple" };
static const char k_quick_jit_for_loops[] = "System.Runtime.TieredCompilation.QuickJitForLoops";
static const char k_gc_concurrent[] = "System.GC.Concurrent";

static char g_exe[PATH_CAP];   /* this executable */
static char g_bin[PATH_CAP];   /* its folder: libmpcore, libmpgc, System.MP.dll */
static char g_own_dotnet[PATH_CAP + 8]; /* a .NET installation of its own, g_bin/dotnet (an arm64 install) */
static const mp_table_t *g_core; /* the core for this process's MPI (mp_core_table) */

/* ---- messages ---- */

static void usage(FILE *f)
{
    fprintf(f,
        "Usage: motor [options] <app.dll> [app arguments]\n"
        "       mpiexec -n <ranks> motor [options] <app.dll> [app arguments]\n"
        "\n"
        "Runs a .NET program on the Motor VM: MPI is initialized before Main and\n"
        "finalized after it, System.MP uses the VM's message-passing core, and the\n"
        "GC pins nonblocking buffers only while their operation is in flight.\n"
        "\n"
        "Options:\n"
        "  --thread-level <level>     MPI thread support to request: single, funneled,\n"
        "                             serialized or multiple.  Default: the app's runtime\n"
        "                             setting Motor.ThreadLevel (runtimeconfig.json), else single\n"
        "  -p, --runtime-property <name>=<value>\n"
        "                             pass a runtime setting, as in runtimeconfig.json\n"
        "                             configProperties (e.g. System.GC.Server=true); repeatable\n"
        "  --no-gc-extension          use the stock GC; nonblocking buffers are held by\n"
        "                             pinned GCHandles as under plain dotnet\n"
        "  --gc <regions|segments>    stock GC the extension forwards to (default regions)\n"
        "  --hang-report <seconds>[,abort]\n"
        "                             when a thread has been blocked in one MPI call that\n"
        "                             long, print the call, its communicator, peer and tag,\n"
        "                             the wait and the thread's managed stack; then keep\n"
        "                             waiting, or with ,abort end the job (library mode:\n"
        "                             MOTOR_HANG_REPORT=<seconds>[,abort])\n"
        "  --profile <mode>           profile the job's MPI operations: 1 or profile (a table\n"
        "                             at exit on rank 0's stderr), profile:FILE (the table in\n"
        "                             FILE), trace[:FILE] (the table, and every operation's\n"
        "                             begin and end as Chrome trace JSON in FILE, default\n"
        "                             motor-trace.json), events (EventSource System.MP only)\n"
        "                             (library mode: MOTOR_PROFILE=<mode>)\n"
        "  --dotnet-root <dir>        .NET installation to use (default: DOTNET_ROOT, then\n"
        "                             a dotnet folder beside motor, then the registered or\n"
        "                             default location); a self-contained app (dotnet publish\n"
        "                             --self-contained) always runs on the runtime in its folder\n"
        "  --version                  print Motor, .NET runtime and MPI library versions\n"
        "  -h, --help                 print this help\n"
        "\n"
        "Environment: MOTOR_MPI_LIBRARY selects the MPI library (MPICH ABI, e.g. libmpi.so.12,\n"
        "or Open MPI's libmpi.so.40); MOTOR_MPI_ABI (mpich|openmpi) the core;\n"
        "DOTNET_* variables configure the runtime as usual.\n"
        "Methods with loops are compiled optimized at their first call (runtime property\n"
        "System.Runtime.TieredCompilation.QuickJitForLoops=false); -p ...QuickJitForLoops=true\n"
        "or DOTNET_TC_QuickJitForLoops=1 restores .NET's default (tier-0 and OSR).\n"
        "Background GC is off (System.GC.Concurrent=false), so that the GC extension can start\n"
        "large arrays' data on 64-byte boundaries; -p System.GC.Concurrent=true or\n"
        "DOTNET_gcConcurrent=1 turns it back on (and that alignment off).\n"
        "Workstation GC collects gen0 every 4 MiB allocated rather than .NET's share of the\n"
        "largest cache, which ranks on every core share; MOTOR_GC_GEN0=<bytes> sets another\n"
        "budget, MOTOR_GC_GEN0=0 leaves .NET's; DOTNET_GCgen0size or -p System.GC.Gen0Size\n"
        "win over both.\n"
        "Exit status: Main's exit code; 2 bad usage, 3 no .NET runtime, 4 no usable MPI\n"
        "library, 5 the app could not be started.  An unhandled exception on any rank\n"
        "aborts the whole job (MPI_Abort).\n");
}

static int parse_level(const char *text)
{
    for (int i = 0; i < 4; i++)
        if (strcasecmp(text, k_levels[i]) == 0 || (text[0] == '0' + i && text[1] == '\0'))
            return i;
    return -1;
}

/* Takes an option's value from "--opt=value" or the next argument. */
static const char *option_value(int argc, char **argv, int *i, const char *name)
{
    size_t n = strlen(name);
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (*i + 1 >= argc) {
        fprintf(stderr, "motor: option %s needs a value (see motor --help)\n", name);
        return NULL;
    }
    return argv[++*i];
}

static int is_option(const char *arg, const char *name)
{
    size_t n = strlen(name);
    return strncmp(arg, name, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

/* Adds a runtime property; 0 (said on stderr) when there are too many. */
static int add_property(options_t *o, const char *name, const char *value)
{
    if (o->nprops == MAX_PROPERTIES) {
        fprintf(stderr, "motor: at most %d runtime properties\n", MAX_PROPERTIES);
        return 0;
    }
    o->prop_names[o->nprops] = name;
    o->prop_values[o->nprops++] = value;
    return 1;
}

/* A --profile mode System.MP accepts (MpiProfile.cs): MODE or MODE:FILE, FILE not empty, events alone. */
static int profile_mode_valid(const char *v)
{
    const char *colon = strchr(v, ':');
    size_t n = colon ? (size_t)(colon - v) : strlen(v);
    if (colon && colon[1] == '\0')
        return 0;
    if (n == 7 && strncmp(v, "profile", 7) == 0)
        return 1;
    if ((n == 1 && v[0] == '1') || (n == 5 && strncmp(v, "trace", 5) == 0))
        return 1;
    return !colon && strcmp(v, "events") == 0;
}

/* Returns 0 to run, 1 when done (help/version printed), or an exit code + 100 on error. */
static int parse(int argc, char **argv, options_t *o, int *want_version)
{
    o->thread_level = -1;
    o->gc_extension = 1;
    o->app = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (a[0] != '-' || strcmp(a, "-") == 0) {
            o->app = i;
            return 0;
        }
        if (strcmp(a, "--") == 0) {
            o->app = i + 1 < argc ? i + 1 : 0;
            break;
        }
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 1;
        }
        if (strcmp(a, "--version") == 0) {
            *want_version = 1;
            return 1;
        }
        if (strcmp(a, "--no-gc-extension") == 0) {
            o->gc_extension = 0;
        } else if (is_option(a, "--thread-level")) {
            if (!(v = option_value(argc, argv, &i, "--thread-level")))
                return 100 + EXIT_USAGE;
            if ((o->thread_level = parse_level(v)) < 0) {
                fprintf(stderr, "motor: thread level '%s' is not single, funneled, serialized or multiple\n", v);
                return 100 + EXIT_USAGE;
            }
        } else if (is_option(a, "--gc")) {
            if (!(v = option_value(argc, argv, &i, "--gc")))
                return 100 + EXIT_USAGE;
            if (strcmp(v, "regions") == 0)
                o->stock_gc = NULL;
            else if (strcmp(v, "segments") == 0)
                o->stock_gc = "libclrgc.so";
            else {
                fprintf(stderr, "motor: --gc '%s' is not regions or segments\n", v);
                return 100 + EXIT_USAGE;
            }
        } else if (is_option(a, "--hang-report")) {
            char *end = NULL;
            double seconds;
            if (!(v = option_value(argc, argv, &i, "--hang-report")))
                return 100 + EXIT_USAGE;
            seconds = strtod(v, &end);
            if (end == v || !(seconds > 0) || seconds > 1e9 || (*end && strcmp(end, ",abort") != 0)) {
                fprintf(stderr, "motor: --hang-report '%s' is not SECONDS or SECONDS,abort (SECONDS > 0)\n", v);
                return 100 + EXIT_USAGE;
            }
            if (!add_property(o, "Motor.HangReport", v)) /* read by System.MP (HangReport.cs) */
                return 100 + EXIT_USAGE;
        } else if (is_option(a, "--profile")) {
            if (!(v = option_value(argc, argv, &i, "--profile")))
                return 100 + EXIT_USAGE;
            if (!profile_mode_valid(v)) {
                fprintf(stderr, "motor: --profile '%s' is not 1, profile, profile:FILE, trace, trace:FILE or events\n", v);
                return 100 + EXIT_USAGE;
            }
            if (!add_property(o, "Motor.Profile", v)) /* read by System.MP (MpiProfile.cs) */
                return 100 + EXIT_USAGE;
        } else if (is_option(a, "--dotnet-root")) {
            if (!(o->dotnet_root = option_value(argc, argv, &i, "--dotnet-root")))
                return 100 + EXIT_USAGE;
        } else if (is_option(a, "--runtime-property") || strcmp(a, "-p") == 0) {
            const char *eq;
            if (!(v = option_value(argc, argv, &i, a[1] == 'p' ? "-p" : "--runtime-property")))
                return 100 + EXIT_USAGE;
            eq = strchr(v, '=');
            if (!eq || eq == v) {
                fprintf(stderr, "motor: runtime property '%s' is not <name>=<value>\n", v);
                return 100 + EXIT_USAGE;
            }
            if (!add_property(o, strndup(v, (size_t)(eq - v)), eq + 1))
                return 100 + EXIT_USAGE;
        } else {
            fprintf(stderr, "motor: unknown option '%s' (see motor --help)\n", a);
            return 100 + EXIT_USAGE;
        }
    }
    if (!o->app) {
        fprintf(stderr, "motor: no application given\n\n");
        usage(stderr);
        return 100 + EXIT_USAGE;
    }
    return 0;
}

/* ---- hostfxr ---- */

static int file_exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

static void error_writer(const char_t *message)
{
    fprintf(stderr, "motor: %s\n", message);
}

static void strip_components(char *path, int n)
{
    while (n-- > 0) {
        char *slash = strrchr(path, '/');
        if (!slash)
            return;
        *slash = '\0';
    }
}

/* A self-contained app (dotnet publish --self-contained) carries its runtime in its own folder:
 * hostfxr and hostpolicy beside app.dll, its framework assemblies (possibly compiled with the
 * app into one ReadyToRun composite image) listed in app.deps.json.  As its apphost does, motor
 * then uses that hostfxr with the app's folder as the .NET root, whatever DOTNET_ROOT or
 * --dotnet-root say.  Fills fx->path and fx->root; 0 when the app is not laid out so. */
static int self_contained_runtime(const char *app, fxr_t *fx)
{
    char dir[PATH_CAP], policy[PATH_CAP + 32];
    if (!app || !realpath(app, dir))
        return 0;
    strip_components(dir, 1);
    if (snprintf(fx->path, sizeof fx->path, "%s/libhostfxr.so", dir) >= (int)sizeof fx->path ||
        snprintf(policy, sizeof policy, "%s/libhostpolicy.so", dir) >= (int)sizeof policy ||
        !file_exists(fx->path) || !file_exists(policy))
        return 0;
    snprintf(fx->root, sizeof fx->root, "%s", dir);
    return 1;
}

static int load_hostfxr(const options_t *o, const char *app, fxr_t *fx)
{
    size_t size = sizeof fx->path;
    struct get_hostfxr_parameters params = { sizeof params, app, o->dotnet_root };
    int own = self_contained_runtime(app, fx);
    int rc = own ? 0 : get_hostfxr_path(fx->path, &size, &params);
    void *lib;
    if (rc != 0) {
        fprintf(stderr,
                "motor: no .NET runtime found (%s%s; nethost error 0x%x).\n"
                "       Install the .NET 10 runtime, or point DOTNET_ROOT or --dotnet-root at it.\n",
                o->dotnet_root ? "looked in " : "looked in DOTNET_ROOT and the default locations",
                o->dotnet_root ? o->dotnet_root : "", (unsigned)rc);
        return -1;
    }
    if (!(lib = pal_dl_open(fx->path, 0))) {
        fprintf(stderr, "motor: cannot load the .NET host resolver %s: %s\n", fx->path, pal_dl_error());
        return -1;
    }
    fx->init = (hostfxr_initialize_for_dotnet_command_line_fn)pal_dl_sym(lib, "hostfxr_initialize_for_dotnet_command_line");
    fx->get = (hostfxr_get_runtime_property_value_fn)pal_dl_sym(lib, "hostfxr_get_runtime_property_value");
    fx->set = (hostfxr_set_runtime_property_value_fn)pal_dl_sym(lib, "hostfxr_set_runtime_property_value");
    fx->run = (hostfxr_run_app_fn)pal_dl_sym(lib, "hostfxr_run_app");
    fx->get_delegate = (hostfxr_get_runtime_delegate_fn)pal_dl_sym(lib, "hostfxr_get_runtime_delegate");
    fx->close = (hostfxr_close_fn)pal_dl_sym(lib, "hostfxr_close");
    fx->set_error_writer = (hostfxr_set_error_writer_fn)pal_dl_sym(lib, "hostfxr_set_error_writer");
    fx->env_info = (hostfxr_get_dotnet_environment_info_fn)pal_dl_sym(lib, "hostfxr_get_dotnet_environment_info");
    if (!fx->init || !fx->get || !fx->set || !fx->run || !fx->get_delegate || !fx->close) {
        fprintf(stderr, "motor: %s is too old to host apps (needs .NET 5 or later)\n", fx->path);
        return -1;
    }
    if (!own) { /* <root>/host/fxr/<version>/libhostfxr.so */
        snprintf(fx->root, sizeof fx->root, "%s", fx->path);
        strip_components(fx->root, 4);
    }
    if (fx->set_error_writer)
        fx->set_error_writer(error_writer);
    return 0;
}

static const char *get_prop(const fxr_t *fx, hostfxr_handle h, const char *name)
{
    const char_t *value = NULL;
    return fx->get(h, name, &value) == 0 ? value : NULL;
}

static int set_prop(const fxr_t *fx, hostfxr_handle h, const char *name, const char *value)
{
    int rc = fx->set(h, name, value);
    if (rc != 0)
        fprintf(stderr, "motor: cannot set runtime property %s (error 0x%x)\n", name, (unsigned)rc);
    return rc;
}

/* True when a ':'-separated list holds an entry ending in "/<file>". */
static int list_has_file(const char *list, const char *file)
{
    size_t n = strlen(file);
    for (const char *p = list; p && *p;) {
        const char *end = strchr(p, ':');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        if (len > n && p[len - n - 1] == '/' && strncmp(p + len - n, file, n) == 0)
            return 1;
        p = end ? end + 1 : NULL;
    }
    return 0;
}

/* ---- --version ---- */

struct env_result {
    char text[2048];
};

static void env_info_result(const struct hostfxr_dotnet_environment_info *info, void *ctx)
{
    struct env_result *r = ctx;
    size_t used = 0;
    for (size_t i = 0; i < info->framework_count; i++) {
        const struct hostfxr_dotnet_environment_framework_info *f = &info->frameworks[i];
        if (strcmp(f->name, "Microsoft.NETCore.App") != 0)
            continue;
        used += (size_t)snprintf(r->text + used, sizeof r->text - used, "%s%s", used ? ", " : "", f->version);
        if (used >= sizeof r->text)
            break;
    }
}

/* A runtime installed with motor (g_bin/dotnet/host/fxr: ./build.sh install --arch arm64
 * lays one out) is used unless --dotnet-root or DOTNET_ROOT names another. */
static void use_own_runtime(options_t *o)
{
    char fxr[PATH_CAP + 24];
    struct stat st;
    const char *env = getenv("DOTNET_ROOT");
    if (o->dotnet_root || (env && *env))
        return;
    snprintf(g_own_dotnet, sizeof g_own_dotnet, "%s/dotnet", g_bin);
    snprintf(fxr, sizeof fxr, "%s/host/fxr", g_own_dotnet);
    if (stat(fxr, &st) == 0 && S_ISDIR(st.st_mode))
        o->dotnet_root = g_own_dotnet;
}

static int print_version(const options_t *o)
{
    char mpi[4096];
    fxr_t fx;
    int ok = 1, rc;
    memset(&fx, 0, sizeof fx);
    printf("Motor %s (message-passing core ABI %d)\n", MOTOR_VERSION, MP_ABI_VERSION);
    if (load_hostfxr(o, NULL, &fx) == 0) {
        struct env_result r = { "" };
        if (fx.env_info)
            fx.env_info(fx.root, NULL, env_info_result, &r);
        printf(".NET runtime: Microsoft.NETCore.App %s in %s\n", r.text[0] ? r.text : "(none installed)", fx.root);
        ok &= r.text[0] != '\0';
    } else {
        printf(".NET runtime: not found\n");
        ok = 0;
    }
    if ((rc = g_core->library_version(mpi, (int)sizeof mpi)) >= 0) {
        char *nl = strchr(mpi, '\n');
        for (char *t = mpi; *t; t++)
            if (*t == '\t')
                *t = ' ';
        if (nl)
            *nl = '\0';
        printf("MPI library: %s (%s; core for %s)\n", mpi, g_core->library_path(),
               g_core->mpi_abi() == MP_MPI_ABI_OPENMPI ? "Open MPI" : "the MPICH ABI");
    } else {
        char err[2048];
        g_core->last_error(NULL, err, (int)sizeof err);
        printf("MPI library: not found: %s\n", err);
        ok = 0;
    }
    {
        char gc[PATH_CAP + 16];
        snprintf(gc, sizeof gc, "%s/libmpgc.so", g_bin);
        printf("GC extension: %s%s\n", gc, file_exists(gc) ? "" : " (missing)");
    }
    return ok ? 0 : 1;
}

/* ---- MPI lifecycle ---- */

/* Main's exit code, once it returned: the code a rank ends with if MPI_Finalize never
 * returns after every rank entered it (mp_finalize's watchdog). */
static int g_main_rc;

static void finalize_if_ready(void)
{
    if (g_core->state() == MP_STATE_READY)
        g_core->finalize(g_main_rc);
}

/* ---- MOTOR_STARTUP_TRACE=1: where start-up time goes ---- */

static int g_trace = -1;       /* -1: not read yet */
static struct timespec g_t0;   /* the first mark */

static double ms_since(const struct timespec *t0)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - t0->tv_sec) * 1e3 + (double)(t.tv_nsec - t0->tv_nsec) / 1e6;
}

/* Prints "motor[pid]: <ms since the first mark> <phase>" to stderr when MOTOR_STARTUP_TRACE=1
 * (perf/compare-startup.sh, docs/reference/motor-vm.md "Start-up").  The first mark is made by main alone; later
 * ones may come from the runtime's start thread too (one fprintf each). */
static void trace_mark(const char *format, ...) __attribute__((format(printf, 1, 2)));
static void trace_mark(const char *format, ...)
{
    char phase[256];
    va_list ap;
    if (g_trace < 0) {
        const char *v = getenv("MOTOR_STARTUP_TRACE");
        g_trace = v && strcmp(v, "1") == 0;
        clock_gettime(CLOCK_MONOTONIC, &g_t0);
    }
    if (!g_trace)
        return;
    va_start(ap, format);
    vsnprintf(phase, sizeof phase, format, ap);
    va_end(ap);
    fprintf(stderr, "motor[%ld]: %8.2f ms %s\n", (long)getpid(), ms_since(&g_t0), phase);
}

/* ---- the runtime's start, beside MPI_Init (step 3) ---- */

typedef struct runtime_start {
    const fxr_t *fx;
    hostfxr_handle h;
    const char *app;  /* app.dll as given */
    int prepare;      /* call System.MP's HostEntry.Prepare once the runtime is up */
    const char *thread; /* "host thread", or "main thread" when not overlapped (for the trace) */
    int rc;           /* hostfxr_get_runtime_delegate's result */
    void (*start)(void); /* HostEntry.Start, as Prepare returned it; NULL without System.MP */
} runtime_start_t;

/* CoreCLR's own hosting interface, which the runtime exports beside hostfxr's: an
 * ICLRRuntimeHost4 object (GetCLRRuntimeHost) and coreclr_create_delegate, which finds a
 * static [UnmanagedCallersOnly] method by assembly, type and method name in the runtime's
 * native loader.  The object acts on the runtime already running in the process; only its
 * IUnknown slots are called here (Release is slot 2). */
typedef struct { uint32_t a; uint16_t b, c; uint8_t d[8]; } clr_iid_t;
static const clr_iid_t k_iid_runtime_host4 = /* IID_ICLRRuntimeHost4 */
    { 0x64F6D366, 0xD7C2, 0x4F1F, { 0xB4, 0xB2, 0xE8, 0x16, 0x0C, 0xAC, 0x43, 0xAF } };
enum { CLR_DEFAULT_DOMAIN = 1 };
typedef int32_t (*clr_get_host_fn)(const clr_iid_t *iid, void **host);
typedef int (*clr_create_delegate_fn)(void *host, unsigned domain, const char *assembly, const char *type,
                                      const char *method, void **fn);

/* System.MP's HostEntry.Prepare, found by the runtime's native loader (above), or NULL when
 * the runtime lacks those exports or System.MP cannot be loaded.  hostfxr's only way in,
 * hdt_get_function_pointer, finds a method with CoreLib's managed ComponentActivator: it
 * parses the type's name, reflects over the type and checks its attributes, code that CoreLib
 * has not all precompiled, so the JIT compiles it first. */
static void *find_prepare(void)
{
    char path[PATH_CAP];
    void *lib, *host = NULL, *fn = NULL;
    clr_get_host_fn get_host;
    clr_create_delegate_fn create;
    if (pal_module_path("libcoreclr.so", path, (int)sizeof path) != 0 || !(lib = pal_dl_open(path, 0)))
        return NULL;
    get_host = (clr_get_host_fn)pal_dl_sym(lib, "GetCLRRuntimeHost");
    create = (clr_create_delegate_fn)pal_dl_sym(lib, "coreclr_create_delegate");
    if (get_host && create && get_host(&k_iid_runtime_host4, &host) >= 0 && host) {
        if (create(host, CLR_DEFAULT_DOMAIN, "System.MP", "HostEntry", "Prepare", &fn) < 0)
            fn = NULL;
        ((uint32_t (**)(void *))*(void **)host)[2](host); /* IUnknown::Release */
    }
    return fn;
}

/* Starts CoreCLR for the prepared app: hostfxr_get_runtime_delegate loads the runtime (its GC,
 * CoreLib, the app's properties); hostfxr_run_app then runs Main in that runtime.  On the host
 * thread, while MPI initializes, it also lets System.MP do what the main thread would otherwise
 * do after MPI_Init (HostEntry.Prepare: bind to the core, load the app); that calls nothing
 * in MPI and runs no code of the app.  Prepare is found by the runtime's native loader
 * (find_prepare), else through hostfxr's hdt_get_function_pointer; it hands back
 * HostEntry.Start for the main thread, so no method is looked up by name there. */
static void *start_runtime(void *arg)
{
    runtime_start_t *s = arg;
    struct timespec t0;
    void *delegate = NULL;
    void (*(*prepare)(const char *app))(void) = NULL;
    const char *v = getenv("MOTOR_NATIVE_ENTRY");
    clock_gettime(CLOCK_MONOTONIC, &t0);
    if (s->fx->set_error_writer) /* hostfxr's error writer is per thread */
        s->fx->set_error_writer(error_writer);
    s->rc = s->fx->get_delegate(s->h, hdt_get_function_pointer, &delegate);
    trace_mark("runtime started (%.2f ms, %s)", ms_since(&t0), s->thread);
    if (s->rc < 0 || !s->prepare)
        return NULL;
    /* MOTOR_NATIVE_ENTRY=0 takes hostfxr's way in, for measuring and testing it. */
    if (!(v && strcmp(v, "0") == 0))
        prepare = (void (*(*)(const char *))(void))find_prepare();
    if (prepare) {
        trace_mark("System.MP entry found (runtime's native loader)");
    } else if (delegate &&
               ((get_function_pointer_fn)delegate)("HostEntry, System.MP", "Prepare", UNMANAGEDCALLERSONLY_METHOD,
                                                   NULL, NULL, (void **)&prepare) == 0 && prepare) {
        trace_mark("System.MP entry found (hostfxr)");
    } else {
        prepare = NULL;
    }
    if (prepare)
        s->start = prepare(s->app);
    return NULL;
}

/* Says why MPI could not be loaded or initialized; the exit code for it. */
static int mpi_failed(const fxr_t *fx, hostfxr_handle h, int rc)
{
    char err[2048];
    g_core->last_error(NULL, err, (int)sizeof err);
    fprintf(stderr, "motor: %s: %s\n", rc == MP_ENOLIB ? "no usable MPI library" : "MPI initialization failed", err);
    fx->close(h);
    return EXIT_NO_MPI;
}

/* ---- main ---- */

int main(int argc, char **argv)
{
    options_t o;
    fxr_t fx;
    hostfxr_handle h = NULL;
    char text[PATH_CAP + 64];
    const char *app, *v;
    int want_version = 0, rc, level, provided = 0, gc_ext, mpi_rc, threaded, have_mp = 0;
    struct hostfxr_initialize_parameters ip;
    runtime_start_t rs;
    pthread_t runtime_thread;
    struct timespec t0;

    memset(&o, 0, sizeof o);
    memset(&fx, 0, sizeof fx);
    if (pal_exe_path(g_exe, (int)sizeof g_exe) != 0)
        snprintf(g_exe, sizeof g_exe, "%s", argv[0]);
    snprintf(g_bin, sizeof g_bin, "%s", g_exe);
    strip_components(g_bin, 1);
    g_core = mp_core_table();

    rc = parse(argc, argv, &o, &want_version);
    use_own_runtime(&o);
    if (want_version)
        return print_version(&o);
    if (rc == 1)
        return 0;
    if (rc >= 100)
        return rc - 100;

    app = argv[o.app];
    if (!file_exists(app)) {
        fprintf(stderr, "motor: application '%s' not found\n", app);
        return EXIT_APP;
    }
    trace_mark("main");
    if (load_hostfxr(&o, app, &fx) != 0)
        return EXIT_NO_RUNTIME;
    trace_mark("hostfxr loaded (%s)", fx.path);

    /* 1. Prepare the app; the runtime does not start yet. */
    memset(&ip, 0, sizeof ip);
    ip.size = sizeof ip;
    ip.host_path = g_exe;
    ip.dotnet_root = fx.root;
    rc = fx.init(argc - o.app, (const char_t **)(argv + o.app), &ip, &h);
    if (rc < 0 || !h) {
        fprintf(stderr, "motor: cannot prepare '%s' to run (hostfxr error 0x%x)\n", app, (unsigned)rc);
        return EXIT_APP;
    }

    trace_mark("app prepared (runtimeconfig, deps.json)");

    /* 2. The thread level MPI is asked for, and settings for System.MP and the runtime. */
    level = o.thread_level;
    if (level < 0 && (v = get_prop(&fx, h, "Motor.ThreadLevel")) != NULL && (level = parse_level(v)) < 0) {
        fprintf(stderr, "motor: the app's Motor.ThreadLevel '%s' is not single, funneled, serialized or multiple\n", v);
        fx.close(h);
        return EXIT_USAGE;
    }
    if (level < 0 && (v = getenv("MOTOR_THREAD_LEVEL")) != NULL && *v && (level = parse_level(v)) < 0) {
        fprintf(stderr, "motor: MOTOR_THREAD_LEVEL '%s' is not single, funneled, serialized or multiple\n", v);
        fx.close(h);
        return EXIT_USAGE;
    }
    if (level < 0)
        level = MP_THREAD_SINGLE;
    snprintf(text, sizeof text, "0x%llx", (unsigned long long)(uintptr_t)g_core);
    rc = set_prop(&fx, h, "Motor.CoreTable", text);
    rc |= set_prop(&fx, h, "Motor.Hosted", "true");
    rc |= set_prop(&fx, h, "Motor.Version", MOTOR_VERSION);
    rc |= set_prop(&fx, h, "Motor.HostPath", g_exe);
    rc |= set_prop(&fx, h, "Motor.ThreadLevel", k_levels[level]); /* System.MP corrects it to what MPI provides */

    gc_ext = o.gc_extension;
    if (gc_ext && (get_prop(&fx, h, "System.GC.Path") || get_prop(&fx, h, "System.GC.Name") ||
                   getenv("DOTNET_GCPath") || getenv("DOTNET_GCName"))) {
        fprintf(stderr, "motor: a standalone GC is already configured; running without the GC extension\n");
        gc_ext = 0;
    }
    for (int i = 0; i < o.nprops && gc_ext; i++)
        if (strcmp(o.prop_names[i], "System.GC.Path") == 0 || strcmp(o.prop_names[i], "System.GC.Name") == 0)
            gc_ext = 0;
    if (gc_ext) {
        snprintf(text, sizeof text, "%s/libmpgc.so", g_bin);
        if (!file_exists(text)) {
            fprintf(stderr, "motor: GC extension %s is missing; running with the stock GC\n", text);
            gc_ext = 0;
        } else {
            rc |= set_prop(&fx, h, "System.GC.Path", text);
            if (o.stock_gc)
                setenv("MOTOR_STOCK_GC", o.stock_gc, 1);
        }
    }
    rc |= set_prop(&fx, h, "Motor.GcExtension", gc_ext ? "true" : "false");
    if (g_trace) { /* System.MP's marks count from the same first mark (StartupTrace.cs) */
        snprintf(text, sizeof text, "%lld", (long long)g_t0.tv_sec * 1000000000LL + g_t0.tv_nsec);
        rc |= set_prop(&fx, h, "Motor.StartupTrace", text);
    }

    /* System.MP: the app's own copy, else the VM's. */
    {
        const char *tpa = get_prop(&fx, h, "TRUSTED_PLATFORM_ASSEMBLIES");
        int have = tpa && list_has_file(tpa, "System.MP.dll");
        snprintf(text, sizeof text, "%s/System.MP.dll", g_bin);
        if (!have && tpa && file_exists(text)) {
            size_t len = strlen(tpa) + strlen(text) + 2;
            char *joined = malloc(len);
            if (joined) {
                snprintf(joined, len, "%s:%s", tpa, text);
                have = set_prop(&fx, h, "TRUSTED_PLATFORM_ASSEMBLIES", joined) == 0;
                free(joined);
            }
        }
        have_mp = have;
    }
    /* Loops run optimized code from their first iteration: a rank's
     * ping-pong or solver loop in Main would otherwise run tier-0 code and on-stack
     * replacement until the background JIT, starved by busy-polling ranks, catches up.
     * The app's runtimeconfig.json, -p, or DOTNET_TC_QuickJitForLoops=1 opt out. */
    if (!get_prop(&fx, h, k_quick_jit_for_loops))
        rc |= set_prop(&fx, h, k_quick_jit_for_loops, "false");
    /* No background GC: its thread would compete with ranks that
     * busy-poll every core, and only without it can the GC extension start large arrays'
     * data on cache lines (gc-patches/src/mpgc.c).  Full GCs then block, as in server
     * batch jobs.  The app's runtimeconfig.json, -p System.GC.Concurrent=true or
     * DOTNET_gcConcurrent=1 turn it back on (and the alignment off). */
    if (!get_prop(&fx, h, k_gc_concurrent))
        rc |= set_prop(&fx, h, k_gc_concurrent, "false");
    for (int i = 0; i < o.nprops; i++)
        rc |= set_prop(&fx, h, o.prop_names[i], o.prop_values[i]);
    if (rc != 0) {
        fx.close(h);
        return EXIT_APP;
    }

    /* 3. MPI_Init here, on the thread that will run Main; the runtime's start on a host
     * thread meanwhile (see the top of this file).  Without a thread, one after the other. */
    trace_mark("runtime properties set");
    /* The MPI library is loaded first, alone: loading it sets variables the MPI stack reads
     * (pal_mpi_load), and a setenv must not race with the runtime's getenv. */
    if ((mpi_rc = g_core->library_version(NULL, 0)) < 0)
        return mpi_failed(&fx, h, mpi_rc);
    trace_mark("MPI library loaded; initializing MPI and starting the runtime");
    rs.fx = &fx;
    rs.h = h;
    rs.app = app;
    rs.prepare = have_mp;
    rs.rc = -1;
    rs.start = NULL;
    v = getenv("MOTOR_START_OVERLAP");
    rs.thread = "host thread";
    threaded = g_core->mpi_abi() != MP_MPI_ABI_OPENMPI && !(v && strcmp(v, "0") == 0) &&
               pthread_create(&runtime_thread, NULL, start_runtime, &rs) == 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    mpi_rc = g_core->init(level, &provided);
    trace_mark("MPI initialized (%.2f ms, main thread)", ms_since(&t0));
    if (threaded) {
        pthread_join(runtime_thread, NULL);
    } else {
        rs.thread = "main thread";
        start_runtime(&rs);
    }
    if (mpi_rc != 0)
        return mpi_failed(&fx, h, mpi_rc);
    atexit(finalize_if_ready); /* Environment.Exit leaves through exit() */
    if (rs.rc < 0) {
        fprintf(stderr, "motor: the .NET runtime could not start for '%s' (hostfxr error 0x%x)\n", app, (unsigned)rs.rc);
        fx.close(h);
        return EXIT_APP; /* MPI is finalized on the way out */
    }

    /* 4. System.MP's start, then Main, on the thread that initialized MPI.  Without a start (a
     * System.MP that could not be loaded on the host thread) the app's first MPI call reports
     * why.  MOTOR_STARTUP_HOOK=0 leaves the start out, for measuring its cost only
     * (perf/compare-startup.sh): an unhandled exception before the app's first MPI call then
     * no longer aborts the job. */
    trace_mark("MPI and runtime %s; running Main", threaded ? "joined" : "ready");
    v = getenv("MOTOR_STARTUP_HOOK");
    if (rs.start && !(v && strcmp(v, "0") == 0))
        rs.start();
    rc = fx.run(h);
    trace_mark("Main returned");
    fx.close(h);
    g_main_rc = rc;

    /* 5. MPI is finalized after Main returns (if the app did not shut it down). */
    finalize_if_ready();
    trace_mark("MPI finalized");
    return rc;
}
