#include "cli/event_format.h"
#include "cli/opts.h"
#include "common/json.h"
#include "common/sat.h"
#include "common/text_escape.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

/* "GCStart" matches "GCStart_V2": the version is in the event's own field.
 * Names match in any case, as the runtime's provider and event names do
 * on Windows (EventPipe keeps the case they were registered with). */
static bool name_matches(const char *want, const char *name)
{
    size_t n = strlen(want);
    if (strncasecmp(want, name, n) != 0)
        return false;
    if (!name[n])
        return true;
    if (name[n] != '_' || name[n + 1] != 'V' || !name[n + 2])
        return false;
    for (const char *p = name + n + 2; *p; p++)
        if (*p < '0' || *p > '9')
            return false;
    return true;
}

bool ev_filter_match(const ev_filter *f, const nt_event *ev, int64_t time_ns)
{
    if (f->has_thread && ev->thread_id != f->thread)
        return false;
    if (f->has_from && time_ns < f->from_ns)
        return false;
    if (f->has_to && time_ns >= f->to_ns)
        return false;
    const nt_event_desc *d = ev->desc;
    if (f->provider && (!d || strcasecmp(d->provider, f->provider) != 0))
        return false;
    if (f->event) {
        if (!d)
            return false;
        uint64_t id;
        if (cli_parse_u64(f->event, UINT64_MAX, &id))
            return d->event_id == id;
        return name_matches(f->event, nt_event_name(ev));
    }
    return true;
}

/* Decimal without printf's format parsing (a quarter of nettrace events --json). */
static void put_u64(FILE *f, uint64_t v)
{
    char b[24];
    char *p = b + sizeof b;
    do {
        *--p = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    fwrite(p, 1, (size_t)(b + sizeof b - p), f);
}

static void put_i64(FILE *f, int64_t v)
{
    if (v < 0) {
        fputc('-', f);
        put_u64(f, 0 - (uint64_t)v);
    } else {
        put_u64(f, (uint64_t)v);
    }
}

static void put_guid(FILE *f, const uint8_t *g)
{
    fprintf(f, "\"%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x\"", g[3], g[2], g[1], g[0],
            g[5], g[4], g[7], g[6], g[8], g[9], g[10], g[11], g[12], g[13], g[14], g[15]);
}

/* FILETIME as ISO 8601 UTC with its 100 ns digits; out of gmtime's range, the number. */
static void put_datetime(FILE *f, int64_t ft)
{
    const int64_t epoch_diff = 11644473600; /* seconds from 1601-01-01 to 1970-01-01 */
    int64_t secs = ft / 10000000, frac = ft % 10000000;
    if (ft >= 0) {
        time_t t = (time_t)(secs - epoch_diff);
        struct tm tm;
        if (gmtime_r(&t, &tm) && tm.tm_year + 1900 <= 9999) {
            fprintf(f, "\"%04d-%02d-%02dT%02d:%02d:%02d.%07" PRId64 "Z\"", tm.tm_year + 1900, tm.tm_mon + 1,
                    tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, frac);
            return;
        }
    }
    fprintf(f, "%" PRId64, ft);
}

/* An HRESULT: a 32-bit field whose name says so (ExceptionHRESULT,
 * HResult, ...), which people read as 0x80131509, never as 2148734217. */
static bool is_hresult(const nt_field_value *v)
{
    if (v->type != NT_TYPE_UINT32 && v->type != NT_TYPE_INT32)
        return false;
    size_t n = strlen(v->name);
    return n >= 7 && strcasecmp(v->name + n - 7, "HRESULT") == 0;
}

/* hex: the text line's spelling of pointers and HRESULTs (JSON keeps numbers). */
static void put_value(FILE *f, const nt_field_value *v, bool hex)
{
    if (hex && v->kind == NT_VALUE_UINT && v->type == NT_TYPE_POINTER) {
        fprintf(f, "0x%" PRIx64, v->v.u);
        return;
    }
    if (hex && (v->kind == NT_VALUE_UINT || v->kind == NT_VALUE_INT) && is_hresult(v)) {
        fprintf(f, "0x%08" PRIx32, (uint32_t)v->v.u);
        return;
    }
    switch (v->kind) {
    case NT_VALUE_INT: put_i64(f, v->v.i); break;
    case NT_VALUE_UINT: put_u64(f, v->v.u); break;
    case NT_VALUE_BOOL: fputs(v->v.u ? "true" : "false", f); break;
    case NT_VALUE_FLOAT:
        if (isfinite(v->v.f))
            fprintf(f, "%.17g", v->v.f);
        else
            fputs("null", f); /* JSON has no NaN or infinities */
        break;
    case NT_VALUE_GUID: put_guid(f, v->v.guid); break;
    case NT_VALUE_DATETIME: put_datetime(f, v->v.i); break;
    case NT_VALUE_STRING: cm_json_fputs(f, v->v.str.ptr); break;
    case NT_VALUE_BINARY:
        fputs("\"0x", f);
        for (size_t i = 0; i < v->v.bin.len; i++)
            fprintf(f, "%02x", v->v.bin.ptr[i]);
        fputc('"', f);
        break;
    case NT_VALUE_STRUCT_BEGIN: fputc('{', f); break;
    case NT_VALUE_STRUCT_END: fputc('}', f); break;
    case NT_VALUE_ARRAY_BEGIN: fputc('[', f); break;
    case NT_VALUE_ARRAY_END: fputc(']', f); break;
    }
}

/* In a text line, a struct at the top that carries no name of its own is
 * see-through: its members are the line's fields.  EventCounters' payload is
 * such a struct holding one struct, "Payload", which is see-through too, so
 * its Name=, Mean=, ... are named fields rather than one unnamed ?={...}. */
static bool see_through(const nt_field_value *v, uint32_t depth, uint32_t hidden, uint32_t parent_count)
{
    if (v->kind != NT_VALUE_STRUCT_BEGIN || v->in_array || depth != 0)
        return false;
    return !v->name[0] || (hidden > 0 && parent_count == 1 && strcmp(v->name, "Payload") == 0);
}

/* The fields as JSON members (json) or k=v words; top-level separators
 * differ, nested values are JSON either way.  Leaves the iterator at its end;
 * false when the output passed the stream position limit first (checked
 * per value: one array of a payload can print gigabytes). */
static bool put_fields(FILE *f, const nt_event *ev, bool json, nt_field_iter *it, long limit)
{
    nt_field_value v;
    bool first[NT_FIELD_ITER_MAX_DEPTH + 2] = { true };
    bool hid[NT_FIELD_ITER_MAX_DEPTH + 2] = { false }; /* by the iterator's depth: a see-through struct */
    uint32_t hidden = 0, hidden_count = 0;              /* see-through structs open; the innermost's fields */
    nt_event_fields_begin(ev, it);
    while (nt_field_next(it, &v)) {
        if (ftell(f) > limit)
            return false;
        bool end = v.kind == NT_VALUE_STRUCT_END || v.kind == NT_VALUE_ARRAY_END;
        uint32_t d = v.depth - hidden; /* the depth the line shows */
        if (!json && v.kind == NT_VALUE_STRUCT_END && hid[v.depth]) {
            hid[v.depth] = false;
            hidden--;
            continue;
        }
        if (!json && see_through(&v, d, hidden, hidden_count)) {
            hid[v.depth] = true;
            hidden++;
            hidden_count = v.count;
            continue;
        }
        if (!end) {
            if (!first[d])
                fputs(d == 0 && !json ? " " : ",", f);
            first[d] = false;
            if (!v.in_array) {
                if (d == 0 && !json) {
                    cm_text_escape_fputs(f, v.name[0] ? v.name : "?", EV_TEXT_SEPARATORS);
                    fputc('=', f);
                } else {
                    cm_json_fputs(f, v.name);
                    fputc(':', f);
                }
            }
        }
        put_value(f, &v, !json);
        if (v.kind == NT_VALUE_STRUCT_BEGIN || v.kind == NT_VALUE_ARRAY_BEGIN)
            first[d + 1] = true;
    }
    return ftell(f) <= limit;
}

bool ev_format_json(FILE *f, const nt_event *ev, int64_t time_ns, long limit)
{
    const nt_event_desc *d = ev->desc;
    fputs("{\"time_ns\":", f);
    put_i64(f, time_ns);
    fputs(",\"thread\":", f);
    put_u64(f, ev->thread_id);
    fputs(",\"provider\":", f);
    cm_json_fputs(f, d ? d->provider : "");
    fputs(",\"event_id\":", f);
    put_u64(f, d ? d->event_id : 0);
    fputs(",\"version\":", f);
    put_u64(f, d ? d->version : 0);
    fputs(",\"name\":", f);
    cm_json_fputs(f, nt_event_name(ev));
    fputs(",\"fields\":{", f);
    nt_field_iter it;
    if (!put_fields(f, ev, true, &it, limit))
        return false;
    fputc('}', f);
    if (it.status) {
        fputs(",\"error\":", f);
        cm_json_fputs(f, it.message);
        fprintf(f, ",\"error_offset\":%u", it.error_offset);
    } else if (it.leftover) {
        fprintf(f, ",\"leftover\":%u", it.leftover);
    }
    fputc('}', f);
    return true;
}

/* ns since the origin as s with every ns digit: exact, unlike a double */
static void put_seconds(FILE *f, int64_t ns)
{
    uint64_t v = ns < 0 ? 0 - (uint64_t)ns : (uint64_t)ns;
    if (ns < 0)
        fputc('-', f);
    put_u64(f, v / 1000000000u);
    char frac[11];
    snprintf(frac, sizeof frac, ".%09u", (unsigned)(v % 1000000000u));
    fputs(frac, f);
}

bool ev_format_text(FILE *f, const nt_event *ev, int64_t time_ns, int64_t origin_ns, bool absolute, long limit)
{
    const nt_event_desc *d = ev->desc;
    const char *name = nt_event_name(ev);
    if (absolute)
        put_i64(f, time_ns);
    else
        put_seconds(f, cm_sat_sub(time_ns, origin_ns)); /* a hostile clock saturates, as every formatter does */
    fputc(' ', f);
    put_u64(f, ev->thread_id);
    fputc(' ', f);
    cm_text_escape_fputs(f, d ? d->provider : "?", EV_TEXT_SEPARATORS);
    fputc(' ', f);
    if (name[0])
        cm_text_escape_fputs(f, name, EV_TEXT_SEPARATORS);
    else
        fprintf(f, "Event%u", d ? d->event_id : 0);
    nt_field_iter it;
    fputc(' ', f);
    if (!put_fields(f, ev, false, &it, limit))
        return false;
    if (it.status) {
        fputs(" !error=", f);
        cm_json_fputs(f, it.message);
        fprintf(f, " !error_offset=%u", it.error_offset);
    } else if (it.leftover) {
        fprintf(f, " !leftover=%u", it.leftover);
    }
    return true;
}
