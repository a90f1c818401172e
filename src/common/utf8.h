/* UTF-8 to code points: the library's one decoder.  Callers name what
 * happens to invalid input (an overlong form, a surrogate, a value above
 * U+10FFFF, a stray or missing continuation byte): the IPC client refuses to
 * send such a string, the writer stores U+FFFD in its place. */
#ifndef CM_UTF8_H
#define CM_UTF8_H

#include <stdint.h>

typedef enum cm_utf8_policy {
    CM_UTF8_REJECT,  /* invalid input: CM_UTF8_INVALID, *s unchanged */
    CM_UTF8_REPLACE  /* invalid input: U+FFFD; a complete sequence of a bad value is consumed whole,
                        a bad lead or continuation byte alone */
} cm_utf8_policy;

#define CM_UTF8_INVALID UINT32_MAX
#define CM_UTF8_REPLACEMENT 0xFFFDu

/* The code point at *s, a NUL-terminated string (never read past its NUL;
 * *s must not point at it), and *s advanced past it. */
uint32_t cm_utf8_next(const unsigned char **s, cm_utf8_policy policy);

/* A code point (at most U+10FFFF, not a surrogate) as UTF-8 into o; returns
 * how many bytes (1 to 4). */
static inline unsigned cm_utf8_encode(uint32_t cp, char o[4])
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

/* A code point (at most U+10FFFF, not a surrogate) as UTF-16 units into u;
 * returns how many (1 or 2). */
static inline unsigned cm_utf16_encode(uint32_t cp, uint16_t u[2])
{
    if (cp < 0x10000) {
        u[0] = (uint16_t)cp;
        return 1;
    }
    cp -= 0x10000;
    u[0] = (uint16_t)(0xD800 | (cp >> 10));
    u[1] = (uint16_t)(0xDC00 | (cp & 0x3FF));
    return 2;
}

#endif
