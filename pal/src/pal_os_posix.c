/* pal_os_posix.c - dynamic loading, clocks and environment on POSIX systems. */
#define _GNU_SOURCE
#include "pal.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <link.h>
#include <unistd.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void *pal_dl_open(const char *path, int global)
{
    return dlopen(path, RTLD_NOW | (global ? RTLD_GLOBAL : RTLD_LOCAL));
}

void *pal_dl_sym(void *lib, const char *name)
{
    return dlsym(lib, name);
}

const char *pal_dl_error(void)
{
    const char *e = dlerror();
    return e ? e : "unknown dynamic loader error";
}

int pal_addr_path(const void *addr, char *buf, int cap)
{
    Dl_info info;
    if (cap <= 0)
        return -1;
    buf[0] = '\0';
    if (!addr || !dladdr(addr, &info) || !info.dli_fname)
        return -1;
    snprintf(buf, (size_t)cap, "%s", info.dli_fname);
    return 0;
}

int pal_dl_path(void *lib, const char *any_symbol, char *buf, int cap)
{
    return pal_addr_path(dlsym(lib, any_symbol), buf, cap);
}

int pal_path_problem(const char *path, int create, int write, char *buf, int cap)
{
    char dir[4096];
    struct stat st;
    const char *slash = strrchr(path, '/');
    int n = 0;
    if (cap <= 0)
        return 0;
    buf[0] = '\0';
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else
        snprintf(dir, sizeof dir, "%.*s", slash == path ? 1 : (int)(slash - path), path);
    if (stat(dir, &st) != 0) {
        int e = errno;
        if (e == ENOENT)
            n = snprintf(buf, (size_t)cap, "the directory \"%s\" does not exist", dir);
        else if (e == ENOTDIR)
            n = snprintf(buf, (size_t)cap, "a part of \"%s\" is not a directory", dir);
        else
            n = snprintf(buf, (size_t)cap, "the directory \"%s\" cannot be reached: %s", dir, strerror(e));
    } else if (!S_ISDIR(st.st_mode)) {
        n = snprintf(buf, (size_t)cap, "\"%s\" is not a directory", dir);
    } else if (stat(path, &st) != 0) {
        int e = errno;
        if (e != ENOENT)
            n = snprintf(buf, (size_t)cap, "the file cannot be reached: %s", strerror(e));
        else if (!create)
            n = snprintf(buf, (size_t)cap, "the file does not exist, and the mode has no Create");
        else if (access(dir, W_OK | X_OK) != 0)
            n = snprintf(buf, (size_t)cap, "no permission to create a file in \"%s\"", dir);
    } else if (S_ISDIR(st.st_mode)) {
        n = snprintf(buf, (size_t)cap, "it is a directory");
    } else if (access(path, write ? W_OK : R_OK) != 0) {
        n = snprintf(buf, (size_t)cap, "no permission to %s it", write ? "write" : "read");
    }
    return n < 0 ? 0 : n >= cap ? cap - 1 : n;
}

uint64_t pal_clock_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void pal_yield(void)
{
    sched_yield();
}

void pal_env_default(const char *name, const char *value)
{
    setenv(name, value, 0);
}

/* ---- loaded modules (dl_iterate_phdr) ---- */

struct module_query {
    const char *file_name;   /* by name, or */
    uintptr_t addr;          /* by an address inside it */
    char *buf;
    int cap;
    uintptr_t lo, hi;
    int found;
};

static int module_visit(struct dl_phdr_info *info, size_t size, void *data)
{
    struct module_query *q = data;
    (void)size;
    if (q->file_name) {
        const char *slash = strrchr(info->dlpi_name, '/');
        const char *base = slash ? slash + 1 : info->dlpi_name;
        if (strcmp(base, q->file_name) != 0)
            return 0;
        q->found = snprintf(q->buf, (size_t)q->cap, "%s", info->dlpi_name) < q->cap;
        return 1;
    }
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) && q->addr >= lo && q->addr < hi) {
            q->lo = lo;
            q->hi = hi;
            q->found = 1;
            return 1;
        }
    }
    return 0;
}

int pal_module_path(const char *file_name, char *buf, int cap)
{
    struct module_query q = { .file_name = file_name, .buf = buf, .cap = cap };
    dl_iterate_phdr(module_visit, &q);
    return q.found ? 0 : -1;
}

int pal_module_text(const void *addr, uintptr_t *lo, uintptr_t *hi)
{
    struct module_query q = { .addr = (uintptr_t)addr };
    dl_iterate_phdr(module_visit, &q);
    if (!q.found)
        return -1;
    *lo = q.lo;
    *hi = q.hi;
    return 0;
}

int pal_exe_path(char *buf, int cap)
{
    ssize_t n = readlink("/proc/self/exe", buf, (size_t)cap - 1);
    if (n <= 0 || n >= cap - 1)
        return -1;
    buf[n] = '\0';
    return 0;
}

/* Bytes written to fd that its reader has not taken yet (0 when fd is no pipe
 * or socket, or the count is unknown). */
static int unread_output(int fd)
{
    struct stat st;
    int n = 0;
    if (fstat(fd, &st) != 0)
        return 0;
    if (S_ISFIFO(st.st_mode) && ioctl(fd, FIONREAD, &n) == 0) /* a pipe counts from either end */
        return n;
    if (S_ISSOCK(st.st_mode) && ioctl(fd, SIOCOUTQ, &n) == 0)
        return n;
    return 0;
}

int pal_output_drain(int timeout_ms)
{
    uint64_t end = pal_clock_ns() + (uint64_t)timeout_ms * 1000000u;
    while (unread_output(1) > 0 || unread_output(2) > 0) {
        if (pal_clock_ns() >= end)
            return 0;
        struct timespec ms = { 0, 1000000 };
        nanosleep(&ms, NULL);
    }
    return 1;
}
