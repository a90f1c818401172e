/* The HTML flame graph's data, between the page's two parts (flame_html.h). */
#include "export/flame_html.h"
#include "common/json.h"

static void put_lines(ex_out *o, const char *const *lines)
{
    for (; *lines; lines++)
        ex_out_str(o, *lines);
}

/* JSON text inside <script>: '<', '>' and '&' (only ever in strings) as \u escapes. */
static void put_html_safe(void *ctx, const char *p, size_t n)
{
    ex_out *o = ctx;
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        const char *e = p[i] == '<' ? "\\u003c" : p[i] == '>' ? "\\u003e" : p[i] == '&' ? "\\u0026" : NULL;
        if (!e)
            continue;
        ex_out_bytes(o, p + run, i - run);
        ex_out_str(o, e);
        run = i + 1;
    }
    ex_out_bytes(o, p + run, n - run);
}

static void json(ex_out *o, const char *s) { cm_json_string(put_html_safe, o, s); }

void ex_flame_open(ex_out *o, const char *title, const char *unit)
{
    put_lines(o, EX_FLAME_HEAD);
    ex_out_str(o, "{\"title\":");
    json(o, title);
    ex_out_str(o, ",\"unit\":");
    json(o, unit);
    ex_out_str(o, ",\n\"names\":[");
}

void ex_flame_name(ex_out *o, bool first, const char *name)
{
    if (!first)
        ex_out_bytes(o, ",\n", 2);
    json(o, name);
}

void ex_flame_groups(ex_out *o) { ex_out_str(o, "],\n\"groups\":["); }

void ex_flame_group(ex_out *o, bool first, const char *label, int64_t total)
{
    ex_out_str(o, first ? "\n[" : ",\n[");
    json(o, label);
    ex_out_bytes(o, ",", 1);
    ex_out_i64(o, total);
    ex_out_bytes(o, "]", 1);
}

void ex_flame_stacks(ex_out *o) { ex_out_str(o, "],\n\"stacks\":["); }

void ex_flame_stack_begin(ex_out *o, bool first, uint32_t group, int64_t weight)
{
    ex_out_str(o, first ? "\n[" : ",\n[");
    ex_out_u64(o, group);
    ex_out_bytes(o, ",", 1);
    ex_out_i64(o, weight);
}

void ex_flame_stack_frame(ex_out *o, uint32_t name)
{
    ex_out_bytes(o, ",", 1);
    ex_out_u64(o, name);
}

void ex_flame_stack_end(ex_out *o) { ex_out_bytes(o, "]", 1); }

void ex_flame_close(ex_out *o)
{
    ex_out_str(o, "]}\n");
    put_lines(o, EX_FLAME_TAIL);
}
