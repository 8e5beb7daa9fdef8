/*
 * forged_core.c - libmpcore-forged.so: a core that is not the one System.MP was generated
 * from, for the stale-core guard (CoreInterfaceTests).  It hands out a copy of the real core's
 * table (libmpcore.so, MP_REAL_CORE) with one thing changed, as a core built from another
 * mpcore_calls.def or another mpcore.h would have it; MOTOR_FORGED_CORE says which:
 *
 *   kind  the first FAST entry of the manifest is BLOCKING (an edited list, same size)
 *   abi   abi_version + 1
 *   size  a table one entry shorter
 *
 * Library mode loads it through MOTOR_CORE_LIBRARY; under motor it is preloaded
 * (LD_PRELOAD), so that the host's own mp_core_table() call lands here.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "mpcore.h"

static char *edit_first_fast(const char *manifest)
{
    const char *at = manifest;
    while (at && strncmp(at, "FAST ", 5) != 0) {
        at = strchr(at, '\n');
        if (at)
            at++;
    }
    if (!at)
        return NULL;
    size_t before = (size_t)(at - manifest), n = strlen(manifest);
    char *text = malloc(n + 5);
    if (!text)
        return NULL;
    memcpy(text, manifest, before);
    memcpy(text + before, "BLOCKING", 8);
    memcpy(text + before + 8, at + 4, n - before - 4 + 1);
    return text;
}

MP_API const mp_table_t *mp_core_table(void)
{
    static mp_table_t *forged;
    if (forged)
        return forged;
    void *core = dlopen(MP_REAL_CORE, RTLD_NOW | RTLD_LOCAL); /* under motor: the one already loaded */
    const mp_table_t *(*real_table)(void) = core ? (const mp_table_t *(*)(void))dlsym(core, "mp_core_table") : NULL;
    const mp_table_t *real = real_table ? real_table() : NULL;
    if (!real)
        return NULL;
    mp_table_t *copy = malloc(real->size);
    if (!copy)
        return NULL;
    memcpy(copy, real, real->size);
    const char *what = getenv("MOTOR_FORGED_CORE");
    if (what && strcmp(what, "abi") == 0)
        copy->abi_version++;
    else if (what && strcmp(what, "size") == 0)
        copy->size -= (uint32_t)sizeof(void *);
    else if ((copy->manifest = edit_first_fast(real->manifest)) == NULL)
        return NULL;
    forged = copy;
    return forged;
}
