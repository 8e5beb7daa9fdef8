/*
 * pal.h - platform adaptation for Motor: dynamic loading, clocks, CPU hints.
 * Only pal/ knows which OS it is on.  The MPI binding lives in pal_mpi.h.
 */
#ifndef PAL_H
#define PAL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Dynamic libraries.  global != 0 makes the library's symbols available to
 * libraries loaded later (needed by MPI libraries that load plugins). */
void *pal_dl_open(const char *path, int global);
void *pal_dl_sym(void *lib, const char *name);
const char *pal_dl_error(void);
/* Absolute path of the file a loaded library handle came from ("" if unknown). */
int pal_dl_path(void *lib, const char *any_symbol, char *buf, int cap);
/* Absolute path of the loaded file that contains addr. */
int pal_addr_path(const void *addr, char *buf, int cap);

/* Loaded modules.  pal_module_path finds the loaded library whose file name
 * is `file_name` (e.g. "libcoreclr.so") and copies its absolute path;
 * pal_module_text finds the executable range [*lo, *hi) of the module that
 * contains `addr`.  Both return 0 on success, -1 when not found. */
int pal_module_path(const char *file_name, char *buf, int cap);
int pal_module_text(const void *addr, uintptr_t *lo, uintptr_t *hi);
/* Absolute path of the running executable. */
int pal_exe_path(char *buf, int cap);

/* Files.  Why the file at path cannot be opened as the OS sees it (create: the open may make
 * it; write: it is opened for writing): a sentence in buf, such as 'the directory "/a/b" does
 * not exist', or "" when the OS sees nothing wrong.  Returns the sentence's length. */
int pal_path_problem(const char *path, int create, int write, char *buf, int cap);

/* Monotonic clock in nanoseconds. */
uint64_t pal_clock_ns(void);

/* Spin-wait hint and scheduler yield. */
static inline void pal_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#else
    __asm__ __volatile__("" ::: "memory");
#endif
}
void pal_yield(void);

/* Environment: set name=value unless the user already set it. */
void pal_env_default(const char *name, const char *value);

/* Waits, at most timeout_ms, until what this process wrote to standard output
 * and error has been read from their pipes or sockets (by the MPI launcher's
 * proxy, which stops reading once it learns of an abort).  Files and
 * terminals need no wait.  Returns 1 when drained, 0 on timeout. */
int pal_output_drain(int timeout_ms);

#ifdef __cplusplus
}
#endif
#endif /* PAL_H */
