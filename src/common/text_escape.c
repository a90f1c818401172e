/* The text formats' escaping of names (text_escape.h). */
#include "common/text_escape.h"
#include "common/utf8.h"

#include <stdint.h>
#include <string.h>

/* Where escaped text goes: a bounded buffer (dst set) or a stream (f set). */
typedef struct sink {
    char *dst;
    size_t size;
    FILE *f;
} sink;

static void emit(sink *s, size_t *len, const char *p, size_t n)
{
    if (s->f)
        fwrite(p, 1, n, s->f);
    else if (*len < s->size) {
        size_t k = s->size - *len < n ? s->size - *len : n;
        memcpy(s->dst + *len, p, k);
    }
    *len += n;
}

/* src escaped into the sink from *len on: bytes not plain as \xHH, and with
 * quoted '"' and '\\' as \" and \\\\ (inside a quoted cell). */
static void escape_into(sink *s, size_t *len, const char *src, const bool plain[128], bool quoted)
{
    static const char hex[] = "0123456789ABCDEF";
    const unsigned char *p = (const unsigned char *)src;
    while (*p) {
        const unsigned char *run = p;
        while (*p && *p < 0x80 && plain[*p])
            p++;
        if (p > run)
            emit(s, len, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        size_t n = 1;
        bool escape = true;
        if (*p >= 0x80) {
            const unsigned char *next = p;
            uint32_t cp = cm_utf8_next(&next, CM_UTF8_REJECT);
            escape = cp == CM_UTF8_INVALID || cp <= 0x9F;
            n = cp == CM_UTF8_INVALID ? 1 : (size_t)(next - p);
        }
        if (!escape) {
            emit(s, len, (const char *)p, n);
        } else if (quoted && (*p == '"' || *p == '\\')) {
            char e[2] = { '\\', (char)*p };
            emit(s, len, e, 2);
        } else {
            for (size_t i = 0; i < n; i++) {
                char e[4] = { '\\', 'x', hex[p[i] >> 4], hex[p[i] & 15] };
                emit(s, len, e, 4);
            }
        }
        p += n;
    }
}

/* Which ASCII bytes are written as they are: looked up, not searched, per byte. */
static void plain_table(bool plain[128], const char *seps)
{
    for (int c = 0; c < 128; c++)
        plain[c] = c >= 0x20 && c != 0x7F;
    for (const char *k = seps; *k; k++)
        plain[(unsigned char)*k & 0x7F] = false;
}

static size_t finish(char *dst, size_t size, size_t len)
{
    if (size)
        dst[len < size ? len : size - 1] = '\0';
    return len;
}

static size_t escape(sink *s, const char *src, const char *seps)
{
    bool plain[128];
    plain_table(plain, seps);
    size_t len = 0;
    escape_into(s, &len, src, plain, false);
    return len;
}

size_t cm_text_escape(char *dst, size_t size, const char *src, const char *seps)
{
    sink s = { dst, size, NULL };
    return finish(dst, size, escape(&s, src, seps));
}

size_t cm_text_escape_fputs(FILE *f, const char *src, const char *seps)
{
    sink s = { NULL, 0, f };
    return escape(&s, src, seps);
}

size_t cm_text_quote(char *dst, size_t size, const char *src)
{
    if (*src && !strpbrk(src, " \""))
        return cm_text_escape(dst, size, src, "");
    bool plain[128];
    plain_table(plain, "\"\\");
    sink s = { dst, size, NULL };
    size_t len = 0;
    emit(&s, &len, "\"", 1);
    escape_into(&s, &len, src, plain, true);
    emit(&s, &len, "\"", 1);
    return finish(dst, size, len);
}
