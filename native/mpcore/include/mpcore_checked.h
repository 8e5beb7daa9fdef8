/*
 * mpcore_checked.h - point-to-point for C programs linked with the core itself (its static
 * library, as the core's own tests are): each call checks every argument, with the specific
 * error the table's entries leave to their caller, then takes the table's path.
 *
 * The table's send, recv, isend, irecv, list_isend and list_irecv (mpcore_calls.def) trust
 * their caller: System.MP checks its arguments once, in C#, before it calls them.  These are the
 * same operations with the core's checks in front (checked.c): a communicator handle that is
 * open, a rank of it (or the special ranks), a tag in [0, MPI_TAG_UB] (or MP_ANY_TAG for a
 * receive), a byte count >= 0 with a buffer for it, a send mode, a request output; for a list,
 * a live list with room.  They return what the table's entries return, and a list post its
 * entry's index, MPI's refusal recorded as MP_EMPI.
 */
#ifndef MPCORE_CHECKED_H
#define MPCORE_CHECKED_H

#include "mpcore.h"

#ifdef __cplusplus
extern "C" {
#endif

int mp_checked_send(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode);
int mp_checked_recv(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, mp_status_t *status);
int mp_checked_isend(const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm, int mode, void *obj,
                     mp_req_t *req);
int mp_checked_irecv(void *buf, int64_t bytes, int source, int tag, mp_comm_t comm, void *obj, mp_req_t *req);
/* The entry's index in the list, or an error with nothing posted. */
int mp_checked_list_isend(mp_list_t list, const void *buf, int64_t bytes, int dest, int tag, mp_comm_t comm,
                          int mode, void *obj);
int mp_checked_list_irecv(mp_list_t list, void *buf, int64_t bytes, int source, int tag, mp_comm_t comm,
                          void *obj);

#ifdef __cplusplus
}
#endif
#endif /* MPCORE_CHECKED_H */
