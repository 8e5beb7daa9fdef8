/* pal_os_posix.c - dynamic loading, clocks and environment on POSIX systems. */
#define _GNU_SOURCE
#include "pal.h"

#include <dlfcn.h>
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

int pal_dl_path(void *lib, const char *any_symbol, char *buf, int cap)
{
    Dl_info info;
    void *sym = dlsym(lib, any_symbol);
    if (cap <= 0)
        return -1;
    buf[0] = '\0';
    if (!sym || !dladdr(sym, &info) || !info.dli_fname)
        return -1;
    snprintf(buf, (size_t)cap, "%s", info.dli_fname);
    return 0;
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
