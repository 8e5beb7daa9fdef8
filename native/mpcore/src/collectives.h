/* collectives.h - what collectives.c gives the other collective units (neighbor.c). */
#ifndef MPCORE_COLLECTIVES_H
#define MPCORE_COLLECTIVES_H

#include "core.h"

#pragma GCC visibility push(hidden)

/* The MPI type of a collective's elements (collectives.c), checked. */
int mp_coll_element_type(const mp_coll_t *c, MPI_Datatype *type);
/* MP_ENOTSUP naming the missing persistent collective and the library. */
int mp_fail_persistent_missing(const char *name);

#pragma GCC visibility pop

#endif /* MPCORE_COLLECTIVES_H */
