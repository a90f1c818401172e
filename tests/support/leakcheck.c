/* ts_leak_check: LeakSanitizer as a Criterion assertion. */
#include "support.h"

#include <criterion/criterion.h>

#if defined(__SANITIZE_ADDRESS__)
#define TS_HAVE_LSAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TS_HAVE_LSAN 1
#endif
#endif
#ifdef TS_HAVE_LSAN
#include <sanitizer/lsan_interface.h>
#endif

void ts_leak_check(void)
{
#ifdef TS_HAVE_LSAN
    if (__lsan_do_recoverable_leak_check())
        cr_assert_fail("LeakSanitizer found a leak (report above)");
#endif
}

