/* check.h - the native tests' CHECK: counts passes, reports failures with the
 * test's own detail (check_detail, defined by each test program). */
#ifndef MOTOR_TEST_CHECK_H
#define MOTOR_TEST_CHECK_H

#include <stdio.h>

/* Defined by each test program. */
extern int g_failed, g_passed;

/* Fills buf with what the test knows about the failure (e.g. the last error). */
void check_detail(char *buf, int cap);

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (cond) {                                                                  \
            g_passed++;                                                              \
        } else {                                                                     \
            char m_[512];                                                            \
            check_detail(m_, (int)sizeof m_);                                        \
            fprintf(stderr, "FAIL %s:%d: %s (%s)\n", __FILE__, __LINE__, #cond, m_); \
            g_failed++;                                                              \
        }                                                                            \
    } while (0)

#endif
