/* V6 metadata names are UTF-8 in the stream and reach the metadata callback
 * as valid UTF-8 whatever the stream holds: every invalid sequence becomes
 * U+FFFD (the library promises UTF-8); valid names are passed unchanged. */
#include "common/format.h"
#include "nettrace.h"
#include "streams.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

static void v6_str(tb *b, const char *s)
{
    tb_varu(b, strlen(s));
    tb_bytes(b, s, strlen(s));
}

/* Header, Trace block, one Metadata block with one row, EndOfStream. */
static void v6_with_metadata(tb *b, const char *provider, const char *name)
{
    tb_v6_header(b);
    tb row = { 0 };
    tb_varu(&row, 1);
    v6_str(&row, provider);
    tb_varu(&row, 7);
    v6_str(&row, name);
    tb_u16(&row, 0); /* no fields */
    tb_u16(&row, 0); /* no optional metadata */
    tb body = { 0 };
    tb_u16(&body, 0); /* header size */
    tb_u16(&body, (uint16_t)row.n);
    tb_bytes(&body, row.d, row.n);
    tb_v6_block(b, CM_V6_METADATA, &body);
    tb_free(&row);
    tb_free(&body);
    tb_u32(b, 0);
}

typedef struct seen {
    char provider[128], name[128];
    int count;
} seen;

static int on_metadata(void *u, const nt_event_desc *d)
{
    seen *s = u;
    snprintf(s->provider, sizeof s->provider, "%s", d->provider);
    snprintf(s->name, sizeof s->name, "%s", d->event_name);
    s->count++;
    return 0;
}

static seen parse(const char *provider, const char *name)
{
    tb b = { 0 };
    v6_with_metadata(&b, provider, name);
    nt_callbacks cb = { 0 };
    cb.metadata = on_metadata;
    seen s = { .count = 0 };
    char msg[256];
    nt_status st = nt_parse_buffer(b.d, b.n, &cb, &s, NULL, msg, sizeof msg);
    cr_expect_eq(st, NT_ERR_NO_EVENTS, "%s", msg);
    cr_expect_eq(s.count, 1);
    tb_free(&b);
    return s;
}

LTest(v6_utf8, invalid_sequences_become_replacement_characters)
{
    seen s = parse("Bad\xC0\x80Provider\xFF", "Ev\xE2\x82");
    cr_expect_str_eq(s.provider, "Bad\xEF\xBF\xBDProvider\xEF\xBF\xBD");
    cr_expect_str_eq(s.name, "Ev\xEF\xBF\xBD\xEF\xBF\xBD", "a cut sequence: one replacement per byte");
}

LTest(v6_utf8, valid_names_unchanged)
{
    seen s = parse("Caf\xC3\xA9-\xF0\x9F\x98\x80", "\xE2\x82\xAC");
    cr_expect_str_eq(s.provider, "Caf\xC3\xA9-\xF0\x9F\x98\x80");
    cr_expect_str_eq(s.name, "\xE2\x82\xAC");
}
