/* nettrace convert FILE --to v4|v6 -o OUT: re-write a trace in another
 * NetTrace version, through the parser and the writer.
 *
 * What carries over: the trace header, every metadata record, every event's
 * header and raw payload (with its stack, thread ids, sequence number and
 * activity ids), and the sequence points.  Metadata and stack ids are
 * re-numbered (stacks are interned again).  V6 label-list overrides of an
 * event's version, opcode, level or keywords become metadata records of
 * their own (variants, found again through a hash of the override); a V6
 * output that would need more metadata records than a reader holds gets a
 * metadata-flushing sequence point and defines what it uses again.  V6-only
 * field types cannot be described in V4 metadata (nor arrays of arrays or
 * fixed-length arrays in either), so such records lose their field list (the
 * payload bytes are unchanged).  Anything left out (events without metadata,
 * field lists) is counted on standard error and makes the exit status
 * CLI_EXIT_INCOMPLETE. */
#include "cli/cli.h"
#include "cli/opts.h"
#include "nettrace_writer.h"
#include "common/hash.h"
#include "common/map.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One output metadata id for a source description: a base (as the source
 * defined it) or a variant (the base with a label list's overrides). */
typedef struct conv_meta {
    uint32_t src_id, dst_id;
    uint32_t base;          /* index of the base in metas (its own for a base) */
    uint32_t next;          /* index + 1 of the next variant with the same hash, 0 = none */
    uint32_t version, opcode, level;
    uint64_t keywords;
} conv_meta;

typedef struct conv {
    uint32_t format;
    bool uncompressed;
    FILE *out;
    cli_out_file file;      /* where out goes (a temporary file until complete) */
    const char *out_path;   /* as messages name it */
    int out_errno;          /* the sink's first failure */
    nt_writer *w;
    cm_mem mem;             /* the maps' and metas' allocations */
    cm_map base;            /* source metadata id -> index + 1 in metas of its base */
    cm_map variants;        /* variant_hash -> index + 1 in metas of the first variant with it */
    cm_hash_key hash_key;   /* per run: the source cannot aim variants at one hash */
    conv_meta *metas;
    size_t nmetas, cap;
    int64_t last_timestamp;
    uint64_t skipped;       /* events whose metadata was never defined */
    uint64_t fieldless;     /* metadata records written without their fields */
    uint64_t metadata_flushes; /* sequence points added to keep the V6 output's metadata readable */
    bool oom;
    char err[256];
} conv;

static int sink(void *user, const void *data, size_t len)
{
    conv *c = user;
    errno = 0;
    if (fwrite(data, 1, len, c->out) == len)
        return 0;
    c->out_errno = errno ? errno : EIO;
    return -1;
}

static int fail_writer(conv *c)
{
    if (c->out_errno)
        snprintf(c->err, sizeof c->err, "%s: %s", c->out_path, strerror(c->out_errno));
    else
        snprintf(c->err, sizeof c->err, "writer: %s", nt_writer_message(c->w));
    return 1;
}

static int on_trace(void *user, const nt_trace_info *t)
{
    conv *c = user;
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    o.format = c->format;
    o.uncompressed = c->uncompressed;
    o.pointer_size = t->pointer_size;
    o.sync_time_utc = t->sync_time_utc;
    o.sync_qpc = t->sync_qpc;
    o.qpc_frequency = t->qpc_frequency;
    o.process_id = t->process_id;
    o.processor_count = t->processor_count;
    o.sampling_interval_ns = t->sampling_interval_ns;
    c->w = nt_writer_new(&o, sink, c, NULL);
    if (!c->w) {
        snprintf(c->err, sizeof c->err, "cannot create the writer");
        return 1;
    }
    return 0;
}

static bool array_type(uint32_t t)
{
    return t == NT_TYPE_ARRAY || t == NT_TYPE_FIXED_ARRAY || t == NT_TYPE_RELLOC || t == NT_TYPE_DATALOC;
}

/* Field lists the output cannot describe: V6-only types in V4, arrays of
 * arrays (nt_field has no room for the inner element type) and fixed-length
 * arrays (nor for their element count). */
static bool lossy_fields(const nt_event_desc *d, uint32_t format)
{
    for (uint32_t i = 0; i < d->field_count; i++) {
        const nt_field *f = &d->fields[i];
        if (format != 6 && (f->type > NT_TYPE_ARRAY || f->element_type > NT_TYPE_ARRAY))
            return true;
        if (array_type(f->type) && array_type(f->element_type))
            return true;
        if (f->type == NT_TYPE_FIXED_ARRAY) /* nt_field carries no element count */
            return true;
    }
    return false;
}

/* After the output's metadata was flushed: every description is defined again on use. */
static void forget_metadata(conv *c)
{
    cm_map_free(&c->mem, &c->base);
    cm_map_free(&c->mem, &c->variants);
    c->nmetas = 0;
}

/* V6: a reader holds at most NT_DEFAULT_MAX_METADATA records at once, and so
 * does the writer.  Past that, a sequence point flushing the metadata lets the
 * output go on: what is used after it is defined again. */
static int make_room(conv *c)
{
    if (c->nmetas < NT_DEFAULT_MAX_METADATA)
        return 0;
    if (c->format != 6) {
        snprintf(c->err, sizeof c->err,
                 "the V4 output would need more than %u metadata records at once (label-list overrides each "
                 "make one), more than a reader holds; V6 can flush them: use --to v6",
                 NT_DEFAULT_MAX_METADATA);
        return 1;
    }
    if (nt_writer_sequence_point(c->w, c->last_timestamp, NT_SP_FLUSH_METADATA) != NT_OK)
        return fail_writer(c);
    forget_metadata(c);
    c->metadata_flushes++;
    return 0;
}

/* Define d (as given, under a new id) as metas[nmetas], a variant of
 * metas[base] (base == nmetas: a base of its own). */
static int define(conv *c, const nt_event_desc *d, size_t base, uint32_t *dst)
{
    nt_event_desc x = *d;
    x.metadata_id = 0;
    if (lossy_fields(d, c->format)) {
        x.field_count = 0;
        x.fields = NULL;
        c->fieldless++;
    }
    if (nt_writer_define(c->w, &x, dst) != NT_OK)
        return fail_writer(c);
    if (!cm_mem_reserve(&c->mem, (void **)&c->metas, &c->cap, c->nmetas + 1, sizeof *c->metas))
        return c->oom = true;
    c->metas[c->nmetas++] = (conv_meta){ d->metadata_id, *dst, (uint32_t)base, 0, d->version, d->opcode, d->level,
                                         d->keywords };
    return 0;
}

/* Make d the base of its source id: a redefinition (after a V6 metadata
 * flush) replaces the old one, and the old one's variants with it. */
static int define_base(conv *c, const nt_event_desc *d, uint32_t *dst)
{
    if (make_room(c) || define(c, d, c->nmetas, dst))
        return 1;
    uint64_t *v = cm_map_put(&c->mem, &c->base, d->metadata_id, NULL);
    if (!v)
        return c->oom = true;
    *v = c->nmetas;
    return 0;
}

static int on_metadata(void *user, const nt_event_desc *d)
{
    uint32_t dst;
    return define_base(user, d, &dst);
}

static bool same(const conv_meta *m, const nt_event_desc *d)
{
    return m->version == d->version && m->opcode == d->opcode && m->level == d->level && m->keywords == d->keywords;
}

/* What tells a base's variants apart, through the run's keyed hash. */
static uint64_t variant_hash(const conv *c, size_t base, const nt_event_desc *d)
{
    uint64_t h = cm_hash_u64(&c->hash_key, base);
    h = cm_hash_u64(&c->hash_key, h ^ d->version);
    h = cm_hash_u64(&c->hash_key, h ^ ((uint64_t)d->opcode << 32 | d->level));
    return cm_hash_u64(&c->hash_key, h ^ d->keywords);
}

/* The output metadata id of an event's (possibly overridden) description:
 * its base's, or a variant's, defined on first use. */
static int out_id(conv *c, const nt_event *ev, uint32_t *dst)
{
    uint64_t *v = cm_map_put(&c->mem, &c->base, ev->metadata_id, NULL);
    if (!v)
        return c->oom = true;
    if (!*v) /* defined before a metadata flush of the output's own */
        return define_base(c, ev->desc, dst);
    size_t base = (size_t)*v - 1;
    if (same(&c->metas[base], ev->desc)) {
        *dst = c->metas[base].dst_id;
        return 0;
    }
    uint64_t h = variant_hash(c, base, ev->desc);
    uint64_t *first = cm_map_put(&c->mem, &c->variants, h, NULL);
    if (!first)
        return c->oom = true;
    for (uint32_t i = (uint32_t)*first; i; i = c->metas[i - 1].next) {
        const conv_meta *m = &c->metas[i - 1];
        if (m->base == base && same(m, ev->desc)) {
            *dst = m->dst_id;
            return 0;
        }
    }
    size_t flushes = c->metadata_flushes;
    if (make_room(c))
        return 1;
    if (c->metadata_flushes != flushes) /* the base went with the flush */
        return define_base(c, ev->desc, dst);
    if (define(c, ev->desc, base, dst))
        return 1;
    first = cm_map_put(&c->mem, &c->variants, h, NULL); /* (the map may have moved) */
    if (!first)
        return c->oom = true;
    c->metas[c->nmetas - 1].next = (uint32_t)*first;
    *first = c->nmetas;
    return 0;
}

static int on_event(void *user, const nt_event *ev)
{
    conv *c = user;
    if (!ev->desc) {
        c->skipped++;
        return 0;
    }
    c->last_timestamp = ev->timestamp;
    nt_writer_event e;
    memset(&e, 0, sizeof e);
    if (out_id(c, ev, &e.metadata_id))
        return 1;
    e.thread_id = ev->thread_id;
    e.capture_thread_id = ev->capture_thread_id;
    e.processor_number = ev->processor_number;
    e.sequence_number = ev->sequence_number;
    e.timestamp = ev->timestamp;
    e.is_sorted = ev->is_sorted;
    e.payload = ev->payload;
    e.payload_size = ev->payload_size;
    /* The capture thread id 0 means "the event's own thread" to the writer. */
    if (e.capture_thread_id == 0)
        e.capture_thread_id = e.thread_id;
    if (ev->stack && nt_writer_stack(c->w, ev->stack->ips, ev->stack->count, &e.stack_id) != NT_OK)
        return fail_writer(c);
    memcpy(e.activity_id, ev->activity_id, 16);
    memcpy(e.related_activity_id, ev->related_activity_id, 16);
    if (nt_writer_write_event(c->w, &e) != NT_OK)
        return fail_writer(c);
    return 0;
}

static int on_sp(void *user, const nt_sequence_point *sp)
{
    conv *c = user;
    uint32_t flags = c->format == 6 ? sp->flags & (NT_SP_FLUSH_THREADS | NT_SP_FLUSH_METADATA) : 0;
    if (nt_writer_sequence_point_threads(c->w, sp->timestamp, flags, sp->threads, sp->thread_count) != NT_OK)
        return fail_writer(c);
    if (flags & NT_SP_FLUSH_METADATA) /* the output forgets its metadata too */
        forget_metadata(c);
    return 0;
}

static void usage(FILE *f)
{
    fputs("usage: nettrace convert FILE --to v4|v6 -o OUT [--uncompressed]\n"
          "\n"
          "Re-write a NetTrace trace (V4/V5 or V6) as V4/V5 or V6.  FILE may be '-'\n"
          "for standard input.  Metadata and stack ids are re-numbered; event\n"
          "headers, payloads, stacks and sequence points carry over.  Exits 3 when\n"
          "something could not be carried over (events without metadata, field\n"
          "descriptions the output cannot hold); standard error says what.\n"
          "\n"
          "  --to v4|v6      output version (v5 is the same as v4)\n"
          "  -o, --output    output file ('-' = standard output); never FILE itself,\n"
          "                    and replaced only when the conversion ends\n"
          "  --force         replace the output even when it holds a trace\n"
          "  --uncompressed  write uncompressed event headers\n",
          f);
}

/* Flush and close the output, kept when keep (a conversion that delivered
 * what it read); false (with the reason printed once) when a write failed. */
static bool close_output(conv *c, bool keep)
{
    errno = 0;
    bool ok = fflush(c->out) == 0 && !ferror(c->out);
    int e = errno;
    if (c->out != stdout && fclose(c->out) != 0 && ok) {
        ok = false;
        e = errno;
    }
    if (!ok && !c->out_errno) /* (a failed write was reported already) */
        fprintf(stderr, "nettrace convert: %s: %s\n", c->out_path, strerror(e ? e : EIO));
    return cli_out_file_close(&c->file, "convert", ok && keep) && ok;
}

int cmd_convert(int argc, char **argv)
{
    static const struct option opts[] = { { "to", required_argument, NULL, 't' },
                                          { "output", required_argument, NULL, 'o' },
                                          { "uncompressed", no_argument, NULL, 'u' },
                                          CLI_FORCE_LONGOPT,
                                          { "help", no_argument, NULL, 'h' },
                                          { NULL, 0, NULL, 0 } };
    conv c;
    memset(&c, 0, sizeof c);
    cli_out_rules rules = { .cmd = "convert", .input_count = 1 };
    cm_mem_init(&c.mem, NULL);
    int ch;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "t:o:h", opts, NULL)) != -1) {
        switch (ch) {
        case 't':
            if (strcmp(optarg, "v4") == 0 || strcmp(optarg, "v5") == 0 || strcmp(optarg, "4") == 0)
                c.format = 4;
            else if (strcmp(optarg, "v6") == 0 || strcmp(optarg, "6") == 0)
                c.format = 6;
            else {
                fprintf(stderr, "nettrace convert: --to must be v4 or v6, not '%s'\n", optarg);
                return CLI_EXIT_USAGE;
            }
            break;
        case 'o': c.out_path = optarg; break;
        case 'u': c.uncompressed = true; break;
        case CLI_OPT_FORCE: rules.force = true; break;
        case 'h': usage(stdout); return CLI_EXIT_OK;
        default: return cli_usage_hint(argv[0]);
        }
    }
    if (optind != argc - 1 || !c.format || !c.out_path) {
        fprintf(stderr, "nettrace convert: give FILE, --to v4|v6 and -o OUT; 'nettrace convert --help' lists the "
                        "options\n");
        return CLI_EXIT_USAGE;
    }
    const char *in_path = argv[optind];
    cm_hash_key_init(&c.hash_key, &c);
    rules.inputs = &in_path;
    if (!cli_out_file_open(&c.file, c.out_path, &rules))
        return CLI_EXIT_ERROR;
    c.out_path = c.file.path;
    c.out = cli_out_file_owned(&c.file) ? fdopen(c.file.fd, "wb") : stdout;
    if (!c.out) {
        fprintf(stderr, "nettrace convert: %s: %s\n", c.out_path, strerror(errno));
        cli_out_file_close(&c.file, "convert", false);
        return CLI_EXIT_ERROR;
    }
    if (cli_out_file_owned(&c.file))
        c.file.fd = -1; /* the stream owns it */
    nt_callbacks cb = { 0 };
    cb.trace = on_trace;
    cb.metadata = on_metadata;
    cb.event = on_event;
    cb.sequence_point = on_sp;
    nt_parser *p = nt_parser_new(&cb, &c, NULL, NULL);
    char err[256] = "out of memory";
    nt_status s = p ? cli_feed_path(p, in_path, err, sizeof err) : NT_ERR_NOMEM;
    int rc = CLI_EXIT_OK;
    if (s == NT_ERR_STOPPED) {
        fprintf(stderr, "nettrace convert: %s\n", c.oom ? "out of memory" : c.err);
        rc = CLI_EXIT_ERROR;
    } else if (s != NT_OK && s != NT_ERR_TRUNCATED) {
        fprintf(stderr, "nettrace convert: %s\n", err);
        rc = p ? cli_exit_code(s) : CLI_EXIT_ERROR;
    } else {
        /* A truncated input still gives a complete output of what was read. */
        if (s == NT_ERR_TRUNCATED) {
            fprintf(stderr, "nettrace convert: warning: %s (the output holds what was read)\n", err);
            rc = cli_exit_code(s);
        }
        if (c.w && nt_writer_finish(c.w) != NT_OK) {
            fail_writer(&c);
            fprintf(stderr, "nettrace convert: %s\n", c.err);
            rc = CLI_EXIT_ERROR;
        }
    }
    if (c.skipped)
        fprintf(stderr, "nettrace convert: %" PRIu64 " events without metadata were left out\n", c.skipped);
    if (c.fieldless)
        fprintf(stderr, "nettrace convert: %" PRIu64 " metadata records lost field descriptions the output cannot hold\n",
                c.fieldless);
    if ((c.skipped || c.fieldless) && rc == CLI_EXIT_OK)
        rc = CLI_EXIT_INCOMPLETE;
    nt_parser_free(p);
    nt_writer_free(c.w);
    cm_map_free(&c.mem, &c.base);
    cm_map_free(&c.mem, &c.variants);
    cm_mem_free(&c.mem, c.metas, c.cap * sizeof *c.metas);
    /* Kept: a complete output, or all of a truncated input's (rc says which). */
    bool delivered = rc == CLI_EXIT_OK || rc == CLI_EXIT_INCOMPLETE || (s == NT_ERR_TRUNCATED && rc != CLI_EXIT_ERROR);
    if (!close_output(&c, delivered))
        rc = CLI_EXIT_ERROR;
    return rc;
}
