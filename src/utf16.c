#include "utf16.h"

bool nt_utf16z_scan(nt_cursor *c, const uint8_t **start, size_t *units)
{
    const uint8_t *p = c->p;
    size_t n = nt_cur_left(c) / 2;
    for (size_t i = 0; i < n; i++) {
        if ((p[2 * i] | p[2 * i + 1]) == 0) {
            *start = p;
            *units = i;
            c->p = p + 2 * i + 2;
            return true;
        }
    }
    return false;
}

size_t nt_utf16_to_utf8(const uint8_t *src, size_t units, char *dst)
{
    char *o = dst;
    size_t i = 0;
    while (i < units) {
        uint32_t u = (uint32_t)src[2 * i] | ((uint32_t)src[2 * i + 1] << 8);
        i++;
        if (u < 0x80) {
            *o++ = (char)u;
            continue;
        }
        if (u >= 0xD800 && u <= 0xDBFF && i < units) {
            uint32_t lo = (uint32_t)src[2 * i] | ((uint32_t)src[2 * i + 1] << 8);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                i++;
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            }
        }
        if (u >= 0xD800 && u <= 0xDFFF)
            u = 0xFFFD; /* unpaired surrogate */
        if (u < 0x800) {
            *o++ = (char)(0xC0 | (u >> 6));
            *o++ = (char)(0x80 | (u & 0x3F));
        } else if (u < 0x10000) {
            *o++ = (char)(0xE0 | (u >> 12));
            *o++ = (char)(0x80 | ((u >> 6) & 0x3F));
            *o++ = (char)(0x80 | (u & 0x3F));
        } else {
            *o++ = (char)(0xF0 | (u >> 18));
            *o++ = (char)(0x80 | ((u >> 12) & 0x3F));
            *o++ = (char)(0x80 | ((u >> 6) & 0x3F));
            *o++ = (char)(0x80 | (u & 0x3F));
        }
    }
    *o = '\0';
    return (size_t)(o - dst);
}
