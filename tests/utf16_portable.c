/* The UTF-16 helpers as a build without SSE2 has them: this file is
 * compiled with -U__SSE2__ (tests/tests.mk), so that test_utf16 runs the
 * portable paths beside the SSE2 ones, on the same inputs, on any host.  The
 * conversion's source is compiled here a second time under other names. */
#define cm_utf16_to_utf8 ts_portable_utf16_to_utf8
#define nt_str16_utf8 ts_portable_str16_utf8
#include "../src/common/utf16.c"
#include "utf16_portable.h"

bool ts_portable_has_sse2(void)
{
#if defined(__SSE2__)
    return true;
#else
    return false;
#endif
}

size_t ts_portable_nuls(const uint8_t *p, size_t units, size_t *at, size_t max)
{
    return ts_walk_nuls(p, units, at, max);
}

size_t ts_portable_to_utf8(const uint8_t *src, size_t units, char *dst)
{
    return ts_portable_utf16_to_utf8(src, units, dst);
}
