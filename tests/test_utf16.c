/* UTF-16 names: the terminator walk (src/common/utf16.h) and the
 * conversion (utf16.c), SSE2 and portable paths against a plain reference,
 * over spans placed against unmapped pages so that a read past either end
 * faults; then method, module and assembly records whose strings end at
 * every position of a scan step, are cut anywhere, or hold zero bytes at odd
 * offsets, parsed with names eager, lazy and with no callback: the same
 * strings, the same verdict, the same message and error offset. */
#include "common/utf16.h"
#include "nettrace.h"
#include "parse/context.h"
#include "streams.h"
#include "utf16_portable.h"

#include "ltest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* ---- spans between unmapped pages -------------------------------------- */

typedef struct guarded {
    uint8_t *map;
    size_t page;
} guarded;

/* Two readable pages between two unmapped ones. */
static guarded guarded_new(void)
{
    guarded g;
    g.page = (size_t)sysconf(_SC_PAGESIZE);
    g.map = mmap(NULL, 4 * g.page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    cr_assert(g.map != MAP_FAILED);
    cr_assert_eq(mprotect(g.map, g.page, PROT_NONE), 0);
    cr_assert_eq(mprotect(g.map + 3 * g.page, g.page, PROT_NONE), 0);
    return g;
}

static void guarded_free(guarded *g) { munmap(g->map, 4 * g->page); }

/* Where a span of `bytes` goes: right after the first unmapped page
 * (at_end false) or right before the last one. */
static uint8_t *guarded_span(const guarded *g, size_t bytes, bool at_end)
{
    return at_end ? g->map + 3 * g->page - bytes : g->map + g->page;
}

static size_t ref_nuls(const uint8_t *p, size_t units, size_t *at, size_t max)
{
    size_t n = 0;
    for (size_t i = 0; i < units && n < max; i++)
        if (p[2 * i] == 0 && p[2 * i + 1] == 0)
            at[n++] = i;
    return n;
}

#define MAX_NULS 256

/* The walk, both builds, against the reference on the span at p. */
static void check_nuls(const uint8_t *p, size_t units, const char *what, size_t a, size_t b)
{
    size_t want[MAX_NULS], got[MAX_NULS], port[MAX_NULS];
    size_t nw = ref_nuls(p, units, want, MAX_NULS);
    size_t ng = ts_walk_nuls(p, units, got, MAX_NULS);
    size_t np = ts_portable_nuls(p, units, port, MAX_NULS);
    cr_assert_eq(ng, nw, "%s (%zu units, %zu, %zu): %zu zero units found, want %zu", what, units, a, b, ng, nw);
    cr_assert_eq(np, nw, "%s (%zu units, %zu, %zu): portable found %zu, want %zu", what, units, a, b, np, nw);
    for (size_t i = 0; i < nw; i++) {
        cr_assert_eq(got[i], want[i], "%s (%zu units, %zu, %zu): zero %zu at %zu, want %zu", what, units, a, b, i,
                     got[i], want[i]);
        cr_assert_eq(port[i], want[i], "%s (%zu units): portable zero %zu at %zu", what, units, i, port[i]);
    }
}

static void put_unit(uint8_t *p, size_t i, uint16_t u)
{
    p[2 * i] = (uint8_t)u;
    p[2 * i + 1] = (uint8_t)(u >> 8);
}

LTest(utf16, paths_compared)
{
    if (ts_portable_has_sse2())
        cr_log_warn("utf16_portable.c was built with SSE2: the comparison covers one path only");
    cr_expect(!ts_portable_has_sse2(), "tests.mk builds utf16_portable.c with -U__SSE2__");
}

/* One, two and three terminators at every position of spans up to 100
 * units (three 32-unit steps and a tail), against either unmapped page. */
LTest(utf16, terminators_at_every_position)
{
    guarded g = guarded_new();
    for (int at_end = 0; at_end < 2; at_end++)
        for (size_t units = 0; units <= 100; units++) {
            uint8_t *p = guarded_span(&g, 2 * units, at_end);
            for (size_t i = 0; i < units; i++)
                put_unit(p, i, 'a');
            check_nuls(p, units, "no zero", 0, 0);
            for (size_t k = 0; k < units; k++) {
                put_unit(p, k, 0);
                check_nuls(p, units, "one zero", k, 0);
                for (size_t j = k + 1; j < units; j += 3) {
                    put_unit(p, j, 0);
                    check_nuls(p, units, "two zeros", k, j);
                    size_t l = units - 1 - (j * 7 + k) % (units - j);
                    if (l > j) {
                        put_unit(p, l, 0);
                        check_nuls(p, units, "three zeros", k, j);
                        put_unit(p, l, 'c');
                    }
                    put_unit(p, j, 'b');
                }
                put_unit(p, k, 'a');
            }
        }
    guarded_free(&g);
}

/* Zero bytes in pairs at odd offsets ('A' as 41 00 then U+4200 as 00 42)
 * are no terminator; spans start at every alignment. */
LTest(utf16, zero_bytes_at_odd_offsets_are_not_terminators)
{
    static const uint16_t alphabet[] = { 0, 0x41, 0x4100, 0x4200, 0x0042, 0xFF00, 0x00FF, 0x0100, 0x0001 };
    guarded g = guarded_new();
    uint64_t x = 88172645463325252ull;
    for (int round = 0; round < 4000; round++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t units = (size_t)(x % 140);
        bool at_end = (x >> 12) & 1;
        size_t shift = at_end ? 0 : (size_t)((x >> 16) % 16); /* misaligned starts */
        uint8_t *p = guarded_span(&g, 2 * units, at_end) + shift;
        bool dense = (x >> 24) & 1;
        for (size_t i = 0; i < units; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            size_t pick = (size_t)(x % (sizeof alphabet / sizeof alphabet[0]));
            if (!dense && pick == 0 && (x >> 40) % 4)
                pick = 1; /* sparse: few terminators, long stretches */
            put_unit(p, i, alphabet[pick]);
        }
        check_nuls(p, units, "random", (size_t)round, shift);
    }
    guarded_free(&g);
}

/* ---- conversion --------------------------------------------------------- */

/* A plain reference: one code point at a time, written out here. */
static size_t ref_utf8(const uint8_t *s, size_t units, char *out)
{
    size_t o = 0;
    for (size_t i = 0; i < units; i++) {
        uint32_t u = (uint32_t)(s[2 * i] | (s[2 * i + 1] << 8));
        if (u >= 0xD800 && u <= 0xDBFF && i + 1 < units) {
            uint32_t lo = (uint32_t)(s[2 * i + 2] | (s[2 * i + 3] << 8));
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                i++;
            }
        }
        if (u >= 0xD800 && u <= 0xDFFF)
            u = 0xFFFD;
        if (u < 0x80) {
            out[o++] = (char)u;
        } else if (u < 0x800) {
            out[o++] = (char)(0xC0 | (u >> 6));
            out[o++] = (char)(0x80 | (u & 0x3F));
        } else if (u < 0x10000) {
            out[o++] = (char)(0xE0 | (u >> 12));
            out[o++] = (char)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (char)(0x80 | (u & 0x3F));
        } else {
            out[o++] = (char)(0xF0 | (u >> 18));
            out[o++] = (char)(0x80 | ((u >> 12) & 0x3F));
            out[o++] = (char)(0x80 | ((u >> 6) & 0x3F));
            out[o++] = (char)(0x80 | (u & 0x3F));
        }
    }
    out[o] = '\0';
    return o;
}

/* Runs of ASCII broken at every position of the 16-, 8- and 4-unit blocks
 * by wide units, surrogate pairs across block edges, lone surrogates and
 * zero units; the output never passes cm_utf8_bound. */
LTest(utf16, conversion_fast_paths_match_the_reference)
{
    static const uint16_t wide[] = { 0xE9, 0x4E2D, 0xD83D, 0xDE00, 0xDC00, 0x7F, 0x80, 0x7FF, 0, 0xFFFF };
    guarded g = guarded_new();
    uint64_t x = 12345;
    for (int round = 0; round < 20000; round++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        size_t units = (size_t)(x % 90);
        unsigned ascii_share = (unsigned)((x >> 8) % 4); /* 0: all ASCII .. 3: mostly wide */
        uint8_t *s = guarded_span(&g, 2 * units, (x >> 20) & 1);
        for (size_t i = 0; i < units; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            uint16_t u = (x % 4) >= ascii_share ? (uint16_t)(' ' + x % 95)
                                                : wide[(x >> 8) % (sizeof wide / sizeof wide[0])];
            put_unit(s, i, u);
        }
        size_t bound = cm_utf8_bound(units);
        char want[3 * 90 + 1], got[3 * 90 + 1 + 8], port[3 * 90 + 1 + 8];
        memset(got, 0x5A, sizeof got);
        memset(port, 0x5A, sizeof port);
        size_t wn = ref_utf8(s, units, want);
        size_t gn = cm_utf16_to_utf8(s, units, got);
        size_t pn = ts_portable_to_utf8(s, units, port);
        cr_assert_eq(gn, wn, "round %d (%zu units): length %zu, want %zu", round, units, gn, wn);
        cr_assert_eq(pn, wn, "round %d: portable length %zu, want %zu", round, pn, wn);
        cr_assert(memcmp(got, want, wn + 1) == 0, "round %d: text differs", round);
        cr_assert(memcmp(port, want, wn + 1) == 0, "round %d: portable text differs", round);
        for (size_t i = bound; i < sizeof got; i++) {
            cr_assert_eq(got[i], 0x5A, "round %d: byte %zu past the bound written", round, i);
            cr_assert_eq(port[i], 0x5A, "round %d: portable wrote byte %zu past the bound", round, i);
        }
    }
    guarded_free(&g);
}

/* An ASCII span with one wide unit (or a surrogate pair, or a zero unit)
 * at every position, for every length to five 32-unit blocks: the ASCII
 * blocks stop at every place, and the block of the last sixteen units,
 * converted over ones already written, is tried with the wide unit just
 * inside it, just outside it and in the units it overlaps. */
LTest(utf16, one_wide_unit_at_every_position_of_an_ascii_span)
{
    static const uint16_t wide[][2] = { { 0xE9, 0 }, { 0x4E2D, 0 }, { 0xD83D, 0xDE00 }, { 0xD83D, 0 },
                                        { 0x80, 0 }, { 0, 0 } };
    enum { MAXU = 160 };
    guarded g = guarded_new();
    char want[3 * MAXU + 1], got[3 * MAXU + 1 + 8], port[3 * MAXU + 1 + 8];
    for (int at_end = 0; at_end < 2; at_end++)
        for (size_t units = 1; units <= MAXU; units++) {
            uint8_t *s = guarded_span(&g, 2 * units, at_end);
            for (size_t k = 0; k < units; k++)
                for (size_t w = 0; w < sizeof wide / sizeof wide[0]; w++) {
                    for (size_t i = 0; i < units; i++)
                        put_unit(s, i, (uint16_t)('A' + i % 26));
                    put_unit(s, k, wide[w][0]);
                    if (wide[w][1] && k + 1 < units)
                        put_unit(s, k + 1, wide[w][1]);
                    memset(got, 0x5A, sizeof got);
                    memset(port, 0x5A, sizeof port);
                    size_t wn = ref_utf8(s, units, want);
                    size_t gn = cm_utf16_to_utf8(s, units, got);
                    size_t pn = ts_portable_to_utf8(s, units, port);
                    cr_assert_eq(gn, wn, "%zu units, unit %04x at %zu: length %zu, want %zu", units, wide[w][0], k,
                                 gn, wn);
                    cr_assert_eq(pn, wn, "%zu units, unit %04x at %zu: portable length %zu", units, wide[w][0], k,
                                 pn);
                    cr_assert(memcmp(got, want, wn + 1) == 0, "%zu units, unit %04x at %zu: text differs", units,
                              wide[w][0], k);
                    cr_assert(memcmp(port, want, wn + 1) == 0, "%zu units, unit %04x at %zu: portable differs",
                              units, wide[w][0], k);
                    for (size_t i = cm_utf8_bound(units); i < sizeof got; i++)
                        cr_assert_eq(got[i], 0x5A, "%zu units, unit %04x at %zu: byte %zu past the bound written",
                                     units, wide[w][0], k, i);
                }
        }
    guarded_free(&g);
}

/* ---- records: eager, lazy and no callback agree ------------------------- */

typedef struct got_method {
    int calls;
    char text[3][128]; /* UTF-8, from the parser (eager) or the span (lazy) */
    uint32_t count[3];
    uint16_t clr;
} got_method;

static void take(char *dst, const char *utf8, nt_str16 s)
{
    if (utf8)
        snprintf(dst, 128, "%s", utf8);
    else
        nt_str16_utf8(s, dst, 128);
}

static int on_method(void *u, const nt_method *m)
{
    got_method *g = u;
    g->calls++;
    take(g->text[0], m->declaring_type, m->declaring_type16);
    take(g->text[1], m->name, m->name16);
    take(g->text[2], m->signature, m->signature16);
    g->count[0] = m->declaring_type16.count;
    g->count[1] = m->name16.count;
    g->count[2] = m->signature16.count;
    g->clr = m->clr_instance_id;
    return 0;
}

static int on_module(void *u, const nt_module *m)
{
    got_method *g = u;
    g->calls++;
    take(g->text[0], m->il_path, m->il_path16);
    take(g->text[1], m->native_path, m->native_path16);
    g->count[0] = m->il_path16.count;
    g->count[1] = m->native_path16.count;
    g->clr = m->clr_instance_id;
    return 0;
}

static int on_assembly(void *u, const nt_assembly *a)
{
    got_method *g = u;
    g->calls++;
    take(g->text[0], a->name, a->name16);
    g->count[0] = a->name16.count;
    g->clr = a->clr_instance_id;
    return 0;
}

typedef struct outcome {
    nt_status status;
    uint64_t error_offset;
    char message[256];
    got_method got;
} outcome;

enum { EAGER, LAZY, BARE };

/* One event of (provider, id, version) with `payload`, parsed in `mode`;
 * *event_at is the event's offset in the stream. */
static outcome parse_one(uint32_t event_id, uint32_t version, const uint8_t *payload, size_t size, int mode,
                         uint64_t *event_at)
{
    tb b = { 0 };
    tb_header(&b, 8, 1000);
    tb_metadata_block(&b, 1, NT_PROVIDER_RUNDOWN, event_id, version);
    size_t pos = tb_block_begin(&b, "EventBlock");
    tb_event_header(&b, 1);
    *event_at = b.base + b.n;
    tb_event prev = { 0 }, e = { 1, 1, 0, 0, 5, 5, 100, payload, (uint32_t)size };
    tb_compressed_event(&b, &e, &prev);
    tb_block_end(&b, pos);
    tb_end(&b);
    outcome o;
    memset(&o, 0, sizeof o);
    nt_callbacks cb = { 0 };
    cb.method = on_method;
    cb.module = on_module;
    cb.assembly = on_assembly;
    nt_parser *p = nt_parser_new(mode == BARE ? NULL : &cb, &o.got, NULL, NULL);
    cr_assert_not_null(p);
    nt_parser_set_lazy_names(p, mode == LAZY);
    o.status = nt_parser_feed(p, b.d, b.n);
    if (o.status == NT_OK)
        o.status = nt_parser_finish(p);
    o.error_offset = nt_parser_error_offset(p);
    snprintf(o.message, sizeof o.message, "%s", nt_parser_message(p));
    nt_parser_free(p);
    tb_free(&b);
    return o;
}

/* Parses in the three modes; checks they agree and returns the eager one. */
static outcome parse_three(uint32_t event_id, uint32_t version, const uint8_t *payload, size_t size,
                           uint64_t *event_at)
{
    outcome e = parse_one(event_id, version, payload, size, EAGER, event_at);
    outcome l = parse_one(event_id, version, payload, size, LAZY, event_at);
    outcome n = parse_one(event_id, version, payload, size, BARE, event_at);
    cr_assert_eq(l.status, e.status, "lazy %d, eager %d (%zu bytes)", l.status, e.status, size);
    cr_assert_eq(n.status, e.status, "no callback %d, eager %d (%zu bytes)", n.status, e.status, size);
    cr_assert_str_eq(l.message, e.message);
    cr_assert_str_eq(n.message, e.message);
    cr_assert_eq(l.error_offset, e.error_offset);
    cr_assert_eq(n.error_offset, e.error_offset);
    cr_assert_eq(l.got.calls, e.got.calls);
    for (int i = 0; i < 3; i++) {
        cr_assert_str_eq(l.got.text[i], e.got.text[i], "string %d", i);
        cr_assert_eq(l.got.count[i], e.got.count[i], "string %d", i);
    }
    return e;
}

static void put_ascii16(tb *m, const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        tb_u16(m, (uint16_t)s[i]);
}

static void method_prefix(tb *m)
{
    tb_u64(m, 0x1111);
    tb_u64(m, 0x2222);
    tb_u64(m, 0x7f0000001000ull);
    tb_u32(m, 0x80);
    tb_u32(m, 0x06000001);
    tb_u32(m, 0);
}

/* Strings of every length from 0 to 40 units around a 16-unit name: the
 * three terminators land at every position of the 32-unit scan steps and of
 * the tail window. */
LTest(utf16, method_strings_of_every_length)
{
    static const char text[] = "Abcdefghijklmnopqrstuvwxyz.0123456789_ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    static const size_t names[] = { 0, 1, 15, 16, 17, 31, 32, 33 };
    for (size_t l0 = 0; l0 <= 40; l0++)
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            for (size_t l2 = 0; l2 <= 40; l2 += 1 + (l0 % 3)) {
                uint32_t version = (uint32_t)((l0 + l2) % 3);
                tb m = { 0 };
                method_prefix(&m);
                put_ascii16(&m, text, l0);
                tb_u16(&m, 0);
                put_ascii16(&m, text + 3, names[k]);
                tb_u16(&m, 0);
                put_ascii16(&m, text + 7, l2);
                tb_u16(&m, 0);
                if (version >= 1)
                    tb_u16(&m, 9);
                if (version >= 2)
                    tb_u64(&m, 0);
                uint64_t at;
                outcome o = parse_three(143, version, m.d, m.n, &at);
                cr_assert_eq(o.status, NT_OK, "%zu/%zu/%zu v%u: %s", l0, names[k], l2, version, o.message);
                cr_assert_eq(o.got.calls, 1);
                cr_assert_eq(o.got.count[0], l0);
                cr_assert_eq(o.got.count[1], names[k]);
                cr_assert_eq(o.got.count[2], l2);
                cr_assert(strlen(o.got.text[0]) == l0 && memcmp(o.got.text[0], text, l0) == 0);
                cr_assert(strlen(o.got.text[1]) == names[k] && memcmp(o.got.text[1], text + 3, names[k]) == 0);
                cr_assert(strlen(o.got.text[2]) == l2 && memcmp(o.got.text[2], text + 7, l2) == 0);
                cr_assert_eq(o.got.clr, version >= 1 ? 9 : 0);
                tb_free(&m);
            }
}

/* A method record cut at every byte: malformed until the whole of its
 * version's layout is there, with the same message and the event's offset
 * in every mode; a cut inside a terminator (odd length) is no terminator. */
LTest(utf16, method_record_cut_anywhere)
{
    for (uint32_t version = 0; version <= 2; version++) {
        tb m = { 0 };
        method_prefix(&m);
        tb_utf16z(&m, "System.Collections.Generic.Dictionary`2[System.__Canon,System.__Canon]");
        tb_utf16z(&m, "TryGetValue");
        tb_utf16z(&m, "instance bool  (!0,!1&)");
        if (version >= 1)
            tb_u16(&m, 9);
        if (version >= 2)
            tb_u64(&m, 0);
        for (size_t cut = 0; cut <= m.n; cut++) {
            uint64_t at;
            outcome o = parse_three(144, version, m.d, cut, &at);
            if (cut == m.n) {
                cr_assert_eq(o.status, NT_OK, "v%u whole: %s", version, o.message);
                continue;
            }
            cr_assert_eq(o.status, NT_ERR_MALFORMED, "v%u cut at %zu of %zu: %d", version, cut, m.n, o.status);
            cr_assert_eq(o.error_offset, at, "v%u cut at %zu: offset %llu, the event is at %llu", version, cut,
                         (unsigned long long)o.error_offset, (unsigned long long)at);
            char want[96];
            snprintf(want, sizeof want, "method payload (version %u, %zu bytes) is truncated", version, cut);
            cr_assert(strstr(o.message, want), "v%u cut at %zu: \"%s\"", version, cut, o.message);
            char where[48];
            snprintf(where, sizeof where, "%llu", (unsigned long long)at);
            cr_assert(strstr(o.message, where), "the message names offset %s: \"%s\"", where, o.message);
        }
        tb_free(&m);
    }
}

/* A version 0 record has nothing after its strings: a trailing odd byte is
 * ignored, a signature whose terminator lacks its second byte is cut. */
LTest(utf16, odd_lengths_and_a_terminator_straddling_the_end)
{
    tb m = { 0 };
    method_prefix(&m);
    tb_utf16z(&m, "T");
    tb_utf16z(&m, "M");
    tb_utf16z(&m, "S");
    tb_u8(&m, 0x41);
    uint64_t at;
    outcome o = parse_three(143, 0, m.d, m.n, &at);
    cr_assert_eq(o.status, NT_OK, "%s", o.message);
    cr_assert_str_eq(o.got.text[2], "S");
    o = parse_three(143, 0, m.d, m.n - 2, &at); /* "S", then a single zero byte */
    cr_assert_eq(o.status, NT_ERR_MALFORMED);
    cr_assert_eq(o.error_offset, at);
    tb_free(&m);
}

/* 'A' (41 00) then U+4200 (00 42): two zero bytes at an odd offset inside a
 * name do not end it; module and assembly strings go the same way. */
LTest(utf16, zero_byte_pairs_at_odd_offsets_inside_names)
{
    tb m = { 0 };
    method_prefix(&m);
    tb_u16(&m, 0x41);
    tb_u16(&m, 0x4200);
    tb_u16(&m, 0);
    tb_utf16z(&m, "N");
    tb_u16(&m, 0x100);
    tb_u16(&m, 0);
    tb_u16(&m, 9);
    uint64_t at;
    outcome o = parse_three(143, 1, m.d, m.n, &at);
    cr_assert_eq(o.status, NT_OK, "%s", o.message);
    cr_assert_eq(o.got.count[0], 2);
    cr_assert_str_eq(o.got.text[0], "A\xe4\x88\x80");
    cr_assert_str_eq(o.got.text[1], "N");
    cr_assert_str_eq(o.got.text[2], "\xc4\x80");
    cr_assert_eq(o.got.clr, 9);
    tb_free(&m);

    tb d = { 0 }; /* ModuleDCEnd V1 */
    tb_u64(&d, 0x300);
    tb_u64(&d, 0xA5);
    tb_u32(&d, 0);
    tb_u32(&d, 0);
    tb_u16(&d, 0x2F);
    tb_u16(&d, 0x6100);
    tb_u16(&d, 0);
    tb_utf16z(&d, "/native.so");
    tb_u16(&d, 9);
    o = parse_three(154, 1, d.d, d.n, &at);
    cr_assert_eq(o.status, NT_OK, "%s", o.message);
    cr_assert_str_eq(o.got.text[0], "/\xe6\x84\x80");
    cr_assert_str_eq(o.got.text[1], "/native.so");
    o = parse_three(154, 1, d.d, d.n - 3, &at);
    cr_assert_eq(o.status, NT_ERR_MALFORMED);
    cr_assert(strstr(o.message, "module payload"), "%s", o.message);
    tb_free(&d);

    tb a = { 0 }; /* AssemblyDCEnd V0 */
    tb_u64(&a, 0xA5);
    tb_u64(&a, 0xD0);
    tb_u32(&a, 1);
    put_ascii16(&a, "Lib, Version=1.0.0.0, Culture=neutral", 37);
    o = parse_three(156, 0, a.d, a.n, &at);
    cr_assert_eq(o.status, NT_ERR_MALFORMED, "no terminator");
    cr_assert(strstr(o.message, "assembly payload"), "%s", o.message);
    tb_u16(&a, 0);
    o = parse_three(156, 0, a.d, a.n, &at);
    cr_assert_eq(o.status, NT_OK, "%s", o.message);
    cr_assert_str_eq(o.got.text[0], "Lib, Version=1.0.0.0, Culture=neutral");
    tb_free(&a);
}
