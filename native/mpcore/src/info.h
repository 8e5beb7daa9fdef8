/* info.h - info objects (info.c) for the units that take one (files). */
#ifndef MPCORE_INFO_H
#define MPCORE_INFO_H

#include "core.h"

#pragma GCC visibility push(hidden)

/* The MPI info behind a handle: MPI_INFO_NULL for MP_INFO_NULL, else 0 and
 * *out, or MP_EHANDLE. */
int mp_info_lookup(mp_info_t info, MPI_Info *out);
/* Takes ownership of an MPI info made by the library (freed on failure). */
int mp_info_adopt(MPI_Info mi, mp_info_t *info);

#pragma GCC visibility pop

#endif /* MPCORE_INFO_H */
