/* The HTML flame graph's data, between the page's two parts (flame_html.h). */
#include "export/flame_html.h"
#include "common/json.h"

static void put_lines(tr_out *o, const char *const *lines)
{
    for (; *lines; lines++)
        tr_out_str(o, *lines);
}

/* JSON text inside <script>: '<', '>' and '&' (only ever in strings) as \u escapes. */
static void put_html_safe(void *ctx, const char *p, size_t n)
{
    tr_out *o = ctx;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = p[i] == '<' ? "\\u003c" : p[i] == '>' ? "\\u003e" : p[i] == '&' ? "\\u0026" : NULL;
        if (!e)
            continue;
        tr_out_bytes(o, p + run, i - run);
        tr_out_str(o, e);
        run = i + 1;
    }
    tr_out_bytes(o, p + run, n - run);
}

static void json(tr_out *o, const char *s) { cm_json_string(put_html_safe, o, s); }

void tr_flame_open(tr_out *o, const char *title, const char *unit)
{
    put_lines(o, TR_FLAME_HEAD);
    tr_out_str(o, "{\"title\":");
    json(o, title);
    tr_out_str(o, ",\"unit\":");
    json(o, unit);
    tr_out_str(o, ",\n\"names\":[");
}

void tr_flame_name(tr_out *o, bool first, const char *name)
{
    if (!first)
        tr_out_bytes(o, ",\n", 2);
    json(o, name);
}

void tr_flame_groups(tr_out *o) { tr_out_str(o, "],\n\"groups\":["); }

void tr_flame_group(tr_out *o, bool first, const char *label, int64_t total)
{
    tr_out_str(o, first ? "\n[" : ",\n[");
    json(o, label);
    tr_out_bytes(o, ",", 1);
    tr_out_i64(o, total);
    tr_out_bytes(o, "]", 1);
}

void tr_flame_stacks(tr_out *o) { tr_out_str(o, "],\n\"stacks\":["); }

void tr_flame_stack_begin(tr_out *o, bool first, uint32_t group, int64_t weight)
{
    tr_out_str(o, first ? "\n[" : ",\n[");
    tr_out_u64(o, group);
    tr_out_bytes(o, ",", 1);
    tr_out_i64(o, weight);
}

void tr_flame_stack_frame(tr_out *o, uint32_t name)
{
    tr_out_bytes(o, ",", 1);
    tr_out_u64(o, name);
}

void tr_flame_stack_end(tr_out *o) { tr_out_bytes(o, "]", 1); }

void tr_flame_close(tr_out *o)
{
    tr_out_str(o, "]}\n");
    put_lines(o, TR_FLAME_TAIL);
}
