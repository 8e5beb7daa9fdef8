/* lists.h - what lists.c gives the checked calls (checked.c): the checks of a list's own state
 * before a C caller's post. */
#ifndef MPCORE_LISTS_H
#define MPCORE_LISTS_H

#include "core.h"

#pragma GCC visibility push(hidden)

/* 0 for a live list, else MP_EHANDLE. */
int mp_list_check_live(mp_list_t l);
/* 0 when the list's next entry is counted against the request pool budget (or is counted now),
 * else MP_EINVAL for a full list or MP_ENOMEM when the budget has no room. */
int mp_list_check_room(mp_list_t l);
/* 1 while entry i of l is posted and its completion not yet processed (wildcard.c). */
int mp_list_entry_open(mp_list_t l, int i);
/* The open entries of every live list (stats.c): operations posted whose completion the
 * core has not processed yet.  A query, off the per-operation path. */
uint64_t mp_lists_open(void);

#pragma GCC visibility pop

#endif /* MPCORE_LISTS_H */
