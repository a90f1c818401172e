/* The HTML flame graph's writer (src/export/flame_html.c): a name from a
 * trace cannot end the page's data element or inject markup, whatever it
 * holds, and the page refers to nothing outside itself. */
#include "export/flame_html.h"
#include "nettrace_writer.h"

#include <criterion/criterion.h>
#include <string.h>

static size_t count(const char *hay, size_t n, const char *needle)
{
    size_t c = 0, k = strlen(needle);
    for (size_t i = 0; i + k <= n; i++)
        c += memcmp(hay + i, needle, k) == 0;
    return c;
}

static nt_membuf page_with(const char *name, const char *group)
{
    nt_membuf out = { 0 };
    ex_out o;
    ex_out_init(&o, nt_membuf_write, &out);
    ex_flame_open(&o, name, "samples");
    ex_flame_name(&o, true, name);
    ex_flame_name(&o, false, "plain");
    ex_flame_groups(&o);
    ex_flame_group(&o, true, group, 7);
    ex_flame_stacks(&o);
    ex_flame_stack_begin(&o, true, 0, 7);
    ex_flame_stack_frame(&o, 1);
    ex_flame_stack_frame(&o, 0);
    ex_flame_stack_end(&o);
    ex_flame_close(&o);
    cr_assert_eq(ex_out_flush(&o), NT_OK);
    return out;
}

Test(flame_html, names_cannot_leave_the_data)
{
    nt_membuf plain = page_with("a", "thread 1");
    size_t scripts = count((const char *)plain.data, plain.len, "</script");
    nt_membuf hostile = page_with("</script><script>alert(1)</script><!--&amp;", "</SCRIPT>\"\\\n\x01");
    const char *h = (const char *)hostile.data;
    /* the page's own two script elements end, nothing else */
    cr_assert_eq(count(h, hostile.len, "</script"), scripts);
    cr_assert_eq(count(h, hostile.len, "</SCRIPT"), 0);
    cr_assert_eq(count(h, hostile.len, "<!--"), 0);
    cr_assert(count(h, hostile.len, "\\u003c/script\\u003e\\u003cscript\\u003ealert(1)") >= 1);
    cr_assert(count(h, hostile.len, "\\u0026amp;") >= 1);
    cr_assert(count(h, hostile.len, "\\u0001") >= 1);
    nt_membuf_free(&plain);
    nt_membuf_free(&hostile);
}

Test(flame_html, refers_to_nothing_outside)
{
    nt_membuf p = page_with("a", "b");
    const char *s = (const char *)p.data;
    cr_assert_eq(count(s, p.len, "http:"), 0);
    cr_assert_eq(count(s, p.len, "https:"), 0);
    cr_assert_eq(count(s, p.len, " src="), 0);
    cr_assert_eq(count(s, p.len, " href="), 0);
    cr_assert_eq(count(s, p.len, "<!DOCTYPE html>"), 1);
    cr_assert(count(s, p.len, "</html>") == 1);
    nt_membuf_free(&p);
}
