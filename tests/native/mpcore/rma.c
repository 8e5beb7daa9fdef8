/* rma.c - mpcore tests: one-sided communication: mp_win_accumulate. */
#include "mpcore_tests.h"

/* mp_win_accumulate, the C callers' accumulate (System.MP calls win_accumulate_held): Accumulate,
 * GetAccumulate and NoOp's atomic read on a window of 4 ints over MP_COMM_SELF, and the refusals
 * before MPI, the window untouched by them.  A window made leaves the last error as it was.  Open
 * MPI 4.1 makes no window in a singleton. */
void test_win_accumulate(void)
{
    static int32_t exposed[4] = { 1, 2, 3, 4 };
    const int32_t add[4] = { 10, 20, 30, 40 };
    int32_t result[4] = { 0 };
    int32_t win = -1;
    char before[512];
    CHECK(mp_win_free(-7) < 0);
    mp_last_error(NULL, before, (int)sizeof before);
    if (mp_win_create(MP_COMM_SELF, exposed, sizeof exposed, 4, MP_INFO_NULL, &win) != 0) {
        CHECK(PAL_MPI_BUILD_ABI == PAL_ABI_OPENMPI);
        return;
    }
    CHECK(before[0] != '\0' && last_error_is(before));
    CHECK(mp_win_sync(win, MP_WIN_LOCK_EXCLUSIVE, 0, 0) == 0);
    CHECK(mp_win_accumulate(win, add, NULL, 4, MP_DT_INT32, 4, MP_OP_SUM, 0, 0) == 0);
    CHECK(mp_win_sync(win, MP_WIN_FLUSH, 0, 0) == 0);
    CHECK(exposed[0] == 11 && exposed[1] == 22 && exposed[2] == 33 && exposed[3] == 44);
    /* GetAccumulate: the values before, the sum after. */
    CHECK(mp_win_accumulate(win, add, result, 4, MP_DT_INT32, 4, MP_OP_SUM, 0, 0) == 0);
    CHECK(mp_win_sync(win, MP_WIN_FLUSH, 0, 0) == 0);
    CHECK(result[0] == 11 && result[3] == 44 && exposed[0] == 21 && exposed[3] == 84);
    /* NoOp with a result: an atomic read, the window unchanged; one element at an offset. */
    memset(result, 0, sizeof result);
    CHECK(mp_win_accumulate(win, add, result, 1, MP_DT_INT32, 4, MP_OP_NO_OP, 0, 2) == 0);
    CHECK(mp_win_sync(win, MP_WIN_FLUSH, 0, 0) == 0);
    CHECK(result[0] == 63 && result[1] == 0 && exposed[2] == 63);
    /* Refused before MPI, each named, nothing written. */
    CHECK(mp_win_accumulate(win, add, NULL, 4, MP_DT_INT32, 4, MP_OP_NONE, 0, 0) == MP_EINVAL &&
          last_error_mentions("needs an operation"));
    CHECK(mp_win_accumulate(win, add, NULL, 4, MP_DT_INT32, 4, MP_OP_NO_OP, 0, 0) == MP_EINVAL &&
          last_error_mentions("NoOp"));
    CHECK(mp_win_accumulate(win, add, NULL, -1, MP_DT_INT32, 4, MP_OP_SUM, 0, 0) < 0);
    CHECK(mp_win_accumulate(win, add, NULL, 4, MP_DT_INT32, 4, MP_OP_SUM, 1, 0) < 0);   /* no rank 1 */
    CHECK(mp_win_accumulate(win, add, NULL, 4, MP_DT_INT32, 4, MP_OP_SUM, 0, 1) < 0);   /* past the end */
    CHECK(mp_win_accumulate(win, add, NULL, 4, 999, 4, MP_OP_SUM, 0, 0) < 0);           /* no such type */
    CHECK(mp_win_accumulate(win + 1000, add, NULL, 4, MP_DT_INT32, 4, MP_OP_SUM, 0, 0) < 0);
    CHECK(mp_win_sync(win, MP_WIN_FLUSH, 0, 0) == 0);
    CHECK(exposed[0] == 21 && exposed[1] == 42 && exposed[2] == 63 && exposed[3] == 84);
    CHECK(mp_win_sync(win, MP_WIN_UNLOCK, 0, 0) == 0 && mp_win_free(win) == 0);
}
