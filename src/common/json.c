/* The JSON string writer (json.h). */
#include "common/json.h"
#include "common/utf8.h"

#include <stdint.h>

void cm_json_string(cm_json_put put, void *ctx, const char *s)
{
    static const char hex[] = "0123456789abcdef";
    if (!s) {
        put(ctx, "null", 4);
        return;
    }
    put(ctx, "\"", 1);
    const unsigned char *p = (const unsigned char *)s, *run = p;
    while (*p) {
        unsigned char c = *p;
        if (c >= 0x20 && c < 0x7F && c != '"' && c != '\\') {
            p++;
            continue;
        }
        const unsigned char *next = p;
        uint32_t cp = c < 0x80 ? (next++, c) : cm_utf8_next(&next, CM_UTF8_REJECT);
        size_t n = cp == CM_UTF8_INVALID ? 0 : (size_t)(next - p);
        if (n > 1 && cp > 0x9F) { /* printable beyond ASCII: kept as is */
            p = next;
            continue;
        }
        put(ctx, (const char *)run, (size_t)(p - run));
        if (n == 0) {
            put(ctx, "\\ufffd", 6);
            p++;
        } else {
            uint32_t v = n == 1 ? c : cp;
            const char *e = v == '"' ? "\\\"" : v == '\\' ? "\\\\" : v == '\n' ? "\\n" : v == '\r' ? "\\r"
                          : v == '\t' ? "\\t" : v == '\b' ? "\\b" : v == '\f' ? "\\f" : NULL;
            if (e) {
                put(ctx, e, 2);
            } else {
                char u[6] = { '\\', 'u', '0', '0', hex[(v >> 4) & 15], hex[v & 15] };
                put(ctx, u, 6);
            }
            p += n;
        }
        run = p;
    }
    put(ctx, (const char *)run, (size_t)(p - run));
    put(ctx, "\"", 1);
}

static void put_file(void *ctx, const char *p, size_t n) { fwrite(p, 1, n, (FILE *)ctx); }

void cm_json_fputs(FILE *f, const char *s) { cm_json_string(put_file, f, s); }
