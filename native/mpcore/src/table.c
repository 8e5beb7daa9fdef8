/* table.c - this core's call table (mpcore_calls.def), which every caller uses. */
#include "core.h"

static const char k_manifest[] =
#define MP_CALL MP_MANIFEST_LINE
#include "mpcore_calls.def"
#undef MP_CALL
    ;

static const mp_table_t k_table = {
    .abi_version = MP_ABI_VERSION,
    .size = sizeof(mp_table_t),
    .manifest = k_manifest,
#define MP_CALL(kind, ret, name, params) .name = mp_##name,
#include "mpcore_calls.def"
#undef MP_CALL
};

const mp_table_t *mp_core_own_table(void)
{
    return &k_table;
}

#ifndef MP_CORE_SELECTOR
/* A core built for one ABI only (libmpcore-ompi.so): its own table. */
const mp_table_t *mp_core_table(void)
{
    return &k_table;
}
#endif
