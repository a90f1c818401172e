/* The few payload fields the profiles read, decoded in one pass per event
 * through the parser's field API (below profile.c and profile_gc.c, which
 * both use it). */
#include "trace/profile_internal.h"

#include <string.h>

void pr_fields(const nt_event *ev, pr_want *want, size_t n)
{
    for (size_t i = 0; i < n; i++)
        want[i].have = false;
    nt_field_iter it;
    nt_field_value v;
    if (nt_event_fields_begin(ev, &it) != NT_OK)
        return;
    while (nt_field_next(&it, &v)) {
        if (v.depth != 0)
            continue;
        for (size_t i = 0; i < n; i++)
            if (!want[i].have && strcmp(v.name, want[i].name) == 0) {
                want[i].have = true;
                want[i].v = v;
                break;
            }
    }
}

int64_t pr_int(const pr_want *w)
{
    if (!w->have)
        return 0;
    switch (w->v.kind) {
    case NT_VALUE_INT: return w->v.v.i;
    case NT_VALUE_UINT:
    case NT_VALUE_BOOL: return w->v.v.u > INT64_MAX ? INT64_MAX : (int64_t)w->v.v.u;
    case NT_VALUE_FLOAT: return w->v.v.f >= 9.2e18 ? INT64_MAX : w->v.v.f <= -9.2e18 ? INT64_MIN : (int64_t)w->v.v.f;
    default: return 0;
    }
}
