/* LTest: a Criterion Test whose body is followed by a LeakSanitizer check.
 *
 * Criterion runs each test in a child process whose leaks would only be
 * printed (a failure in a .fini hook does not fail the test, and the
 * runner's own exit-time check is turned off because Criterion itself leaks
 * there).  LTest runs the body, then asks LeakSanitizer for leaks and fails
 * the test if any.  Without ASan it is a plain Test. */
#ifndef TEST_LTEST_H
#define TEST_LTEST_H

#include <criterion/criterion.h>

/* Returns non-zero when LeakSanitizer reports a leak (0 without ASan). */
int ts_leaks_found(void);

#define LTest(suite, name, ...)                                                                  \
    static void ltest_##suite##_##name(void);                                                    \
    Test(suite, name, ##__VA_ARGS__)                                                             \
    {                                                                                            \
        ltest_##suite##_##name();                                                                \
        cr_assert(!ts_leaks_found(), "LeakSanitizer found a leak in this test (report above)"); \
    }                                                                                            \
    static void ltest_##suite##_##name(void)

#endif
