/* nt_convert and nt_convert_bytes: the options read, the input fed to a
 * parser whose callbacks drive the writer (convert.c), and the outcome: a
 * damaged or cut input still ends the output (what was read before the
 * damage is a complete trace), a failed output is said as the output's. */
#include "convert/convert_internal.h"
#include "common/abi.h"

#include <stdio.h>
#include <string.h>

/* Refused before anything is read: a format the writer does not write, or a
 * window whose ends, given alike, are out of order. */
static bool options_valid(const nt_convert_options *o)
{
    if ((o->format != 0 && o->format != 4 && o->format != 6) || o->records > NT_CONVERT_RECORDS_ALL)
        return false;
    return !(o->from.set && o->to.set && o->from.absolute == o->to.absolute && o->to.ns < o->from.ns);
}

static void conv_init(cv_conv *c, const nt_convert_options *o, nt_sink_fn out, void *user)
{
    memset(c, 0, sizeof *c);
    c->format = o->format;
    c->uncompressed = o->uncompressed;
    c->out = out;
    c->out_user = user;
    c->alloc = o->alloc;
    c->window = o->from.set || o->to.set;
    c->from = o->from;
    c->to = o->to;
    cm_mem_init(&c->mem, o->alloc);
    cm_hash_key_init(&c->hash_key, c);
}

/* The input's failure described: the parser's message, and where the input
 * ended when a truncated unit began before that. */
static void input_message(cv_conv *c, const nt_parser *p, nt_status s, int os_error)
{
    if (s == NT_ERR_IO && os_error)
        snprintf(c->st.message, sizeof c->st.message, "reading the input: %s", strerror(os_error));
    else if (s == NT_ERR_TRUNCATED && c->st.input_bytes != nt_parser_error_offset(p))
        snprintf(c->st.message, sizeof c->st.message, "%s (the input ends at byte %llu)", nt_parser_message(p),
                 (unsigned long long)c->st.input_bytes);
    else
        snprintf(c->st.message, sizeof c->st.message, "%s", nt_parser_message(p));
}

/* After the read: the output ended, unless the output itself failed. */
static nt_status outcome(cv_conv *c, const nt_parser *p, nt_status s, int os_error)
{
    c->st.input_bytes = nt_parser_offset(p);
    if (s == NT_ERR_STOPPED && c->fail != NT_OK) {
        c->st.output_failed = true;
        snprintf(c->st.message, sizeof c->st.message, "%s", c->err);
        return c->fail;
    }
    c->st.error_offset = s == NT_OK ? 0 : nt_parser_error_offset(p);
    c->st.os_error = os_error;
    if (c->w && nt_writer_finish(c->w) != NT_OK) {
        cv_fail_writer(c);
        c->st.output_failed = true;
        snprintf(c->st.message, sizeof c->st.message, "%s", c->err);
        return c->fail;
    }
    if (s != NT_OK)
        input_message(c, p, s, os_error);
    return s;
}

/* One conversion: data NULL reads fd, else the len bytes at data. */
static nt_status convert(int fd, const void *data, size_t len, const nt_convert_options *opt, nt_sink_fn out,
                         void *user, nt_convert_stats *stats)
{
    nt_convert_options o;
    cv_conv c;
    nt_status s = NT_ERR_INVALID_ARG;
    nt_parser *p = NULL;
    int os_error = 0;
    bool valid = ABI_IN(nt_convert_options, &o, opt) && out && options_valid(&o) && (data || fd >= 0);
    conv_init(&c, &o, out, user);
    nt_callbacks cb;
    cv_callbacks(&cb);
    if (!valid)
        snprintf(c.st.message, sizeof c.st.message, "invalid argument: a format other than 0, 4 or 6, a window "
                                                    "that ends before it starts, or no input or output");
    else if (!(p = nt_parser_new(&cb, &c, o.limits, o.alloc))) {
        s = NT_ERR_NOMEM;
        snprintf(c.st.message, sizeof c.st.message, "out of memory");
    } else {
        c.parser = p;
        nt_parser_set_lazy_names(p, true); /* the records' strings are copied as the payload holds them */
        if (c.window && o.records != NT_CONVERT_RECORDS_ALL)
            cv_frames_collect(&c, fd, data, len, &o);
        if (data) {
            s = nt_parser_feed(p, data, len);
            if (s == NT_OK)
                s = nt_parser_finish(p);
        } else {
            s = nt_parser_feed_fd(p, fd, o.feed, &os_error);
        }
        s = outcome(&c, p, s, os_error);
    }
    c.st.status = s;
    c.st.output_bytes = c.w ? nt_writer_offset(c.w) : 0;
    if (stats)
        ABI_OUT(nt_convert_stats, stats, &c.st);
    nt_parser_free(p);
    nt_writer_free(c.w);
    cv_frames_free(&c);
    cv_meta_free(&c);
    return s;
}

nt_status nt_convert(int fd, const nt_convert_options *opt, nt_sink_fn out, void *user, nt_convert_stats *stats)
{
    return convert(fd, NULL, 0, opt, out, user, stats);
}

nt_status nt_convert_bytes(const void *data, size_t len, const nt_convert_options *opt, nt_sink_fn out,
                           void *user, nt_convert_stats *stats)
{
    return convert(-1, data ? data : "", len, opt, out, user, stats);
}
