/* ts_leaks_found: LeakSanitizer on demand, for LTest. */
#include "ltest.h"

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

int ts_leaks_found(void)
{
#ifdef TS_HAVE_LSAN
    return __lsan_do_recoverable_leak_check();
#else
    return 0;
#endif
}
