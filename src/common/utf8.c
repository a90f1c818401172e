/* The UTF-8 decoder (utf8.h). */
#include "common/utf8.h"

#include <stddef.h>

uint32_t cm_utf8_next(const unsigned char **ps, cm_utf8_policy policy)
{
    const unsigned char *s = *ps;
    uint32_t c = s[0];
    size_t n;
    uint32_t min;
    if (c < 0x80) {
        *ps = s + 1;
        return c;
    }
    if ((c & 0xE0) == 0xC0) {
        n = 1, c &= 0x1F, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
        n = 2, c &= 0x0F, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
        n = 3, c &= 0x07, min = 0x10000;
    } else {
        goto bad_byte; /* a continuation byte or 0xF8..0xFF where a sequence starts */
    }
    for (size_t i = 1; i <= n; i++) {
        if ((s[i] & 0xC0) != 0x80) /* the terminating NUL stops here too */
            goto bad_byte;
        c = (c << 6) | (s[i] & 0x3F);
    }
    if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
        if (policy == CM_UTF8_REJECT)
            return CM_UTF8_INVALID;
        *ps = s + 1 + n;
        return CM_UTF8_REPLACEMENT;
    }
    *ps = s + 1 + n;
    return c;
bad_byte:
    if (policy == CM_UTF8_REJECT)
        return CM_UTF8_INVALID;
    *ps = s + 1;
    return CM_UTF8_REPLACEMENT;
}
