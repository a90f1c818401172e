/* A --from/--to read through the trace's sidecar (FILE.ntidx, written by
 * `nettrace index FILE`): only the blocks the window needs are read
 * (nt_parser_feed_window).  Without a sidecar the whole file is read, as
 * before: which blocks hold the method records a window's frames need is
 * known only once every event header was walked, which costs a full read;
 * the index command does that walk once and saves it.  A sidecar that does
 * not describe the trace as it is now is said so once and the whole file is
 * read. */
#include "cli/cli.h"
#include "cli/progress.h"
#include "common/file_read.h"
#include "nettrace_index.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A sidecar holds 128 bytes, 56 a block and at most 64 MiB of kept records: below this for any index the
 * library builds. */
#define SIDECAR_MAX_BYTES ((size_t)256 << 20)

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    (void)user;
    cli_progress_update(done, total, 1);
}

static bool report_wanted(void) { return getenv("NETTRACE_READ_REPORT") != NULL; }

/* The sidecar of path, checked against the trace on fd; NULL when there is
 * none or it is not used (said on stderr, once: this is the only place that
 * reads it). */
static nt_index *sidecar_for(const char *path, int fd, uint64_t *sidecar_bytes)
{
    size_t n = strlen(path);
    char *name = malloc(n + sizeof NT_INDEX_SIDECAR_SUFFIX);
    if (!name)
        return NULL;
    memcpy(name, path, n);
    memcpy(name + n, NT_INDEX_SIDECAR_SUFFIX, sizeof NT_INDEX_SIDECAR_SUFFIX);
    nt_index *ix = NULL;
    int sfd = open(name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (sfd < 0) {
        if (errno == ELOOP)
            fprintf(stderr, "nettrace: %s: not used (a symbolic link: a sidecar is a file of its own beside the "
                            "trace); reading the whole trace\n", name);
        else if (errno != ENOENT)
            fprintf(stderr, "nettrace: %s: not used (%s); reading the whole trace\n", name, strerror(errno));
        else if (report_wanted())
            fprintf(stderr, "nettrace: no sidecar %s; reading the whole trace\n", name);
        free(name);
        return NULL;
    }
    char msg[256] = "";
    cm_mem mem;
    cm_mem_init(&mem, NULL);
    cm_file_read how = { .max_bytes = SIDECAR_MAX_BYTES };
    cm_file_bytes file;
    if (cm_read_file(sfd, 0, &how, &mem, &file, msg, sizeof msg) == NT_OK) {
        nt_index_load(file.data, file.len, fd, NULL, &ix, msg, sizeof msg);
        *sidecar_bytes = file.len;
        cm_file_bytes_free(&mem, &file);
    }
    if (!ix)
        fprintf(stderr, "nettrace: %s: not used (%s); reading the whole trace\n", name, msg);
    close(sfd);
    free(name);
    return ix;
}

/* What a windowed read touched (NETTRACE_READ_REPORT): of the trace, the
 * sidecar's checks (the head and tail hashed, a spread of block headers framed:
 * checked_bytes) and the blocks fed, each byte once; and the sidecar itself. */
static void report_read(const nt_window_stats *ws, uint64_t checked_bytes, uint64_t sidecar_bytes)
{
    uint64_t touched = ws->bytes_read - ws->frame_read_bytes + checked_bytes; /* the read-ahead reads its bytes twice */
    fprintf(stderr,
            "nettrace: read %" PRIu64 " of %" PRIu64 " bytes (%.1f %%) through the sidecar: %" PRIu64
            " checking it against the trace, %" PRIu64 " in %" PRIu64 " blocks: %" PRIu64
            " event blocks in the window, %" PRIu64 " for method records, %" PRIu64 " for next samples, %" PRIu64
            " stack blocks of %u intervals; %" PRIu64 " method, module and assembly events taken from the sidecar (%"
            PRIu64 " bytes) in place of %" PRIu64 " blocks, %" PRIu64 " method events left there (their code holds"
            " no address of the window's stacks, %" PRIu64 " stack bytes read ahead to know)\n",
            touched, ws->file_bytes, ws->file_bytes ? 100.0 * (double)touched / (double)ws->file_bytes : 0.0,
            checked_bytes, ws->bytes_read, ws->blocks_read, ws->window_event_blocks, ws->record_event_blocks,
            ws->next_sample_blocks, ws->stack_blocks, ws->intervals, ws->kept_records, sidecar_bytes, ws->kept_record_blocks,
            ws->kept_records_cut, ws->frame_read_bytes);
}

/* The parser's message after a read, as cli_feed_path words it. */
static void parser_message(nt_parser *p, nt_status s, int os_error, const char *path, char *errbuf, size_t errsize)
{
    if (s == NT_ERR_IO)
        snprintf(errbuf, errsize, "%s: %s", path, os_error ? strerror(os_error) : "read failed");
    else
        snprintf(errbuf, errsize, "%s", nt_parser_message(p));
}

nt_status cli_feed_path_window(nt_parser *p, const char *path, const nt_time_bound *from, const nt_time_bound *to,
                               char *errbuf, size_t errsize)
{
    int fd = cli_open_input(path, errbuf, errsize);
    nt_status s = fd < 0 ? NT_ERR_IO : cli_feed_fd_window(p, fd, path, from, to, errbuf, errsize);
    cli_close_input(fd);
    return s;
}

nt_status cli_feed_fd_window(nt_parser *p, int fd, const char *path, const nt_time_bound *from,
                             const nt_time_bound *to, char *errbuf, size_t errsize)
{
    bool window = (from && from->set) || (to && to->set);
    bool whole = !window || strcmp(path, "-") == 0 || getenv("NETTRACE_NO_INDEX") != NULL;
    if (whole && window && report_wanted())
        fprintf(stderr, "nettrace: reading the whole trace (%s)\n",
                strcmp(path, "-") == 0 ? "standard input has no sidecar" : "NETTRACE_NO_INDEX is set");
    uint64_t sidecar_bytes = 0;
    nt_index *ix = whole ? NULL : sidecar_for(path, fd, &sidecar_bytes);
    if (!ix)
        return cli_feed_fd(p, fd, path, errbuf, errsize);
    nt_index_summary sum = { .struct_size = sizeof sum };
    nt_index_summarize(ix, &sum);
    nt_trace_info clock = { .sync_qpc = sum.sync_qpc, .qpc_frequency = sum.qpc_frequency };
    /* The commands resolve the window's frames and count nothing outside it: only the method records that name them. */
    nt_window_options wo = { .struct_size = sizeof wo, .flags = NT_WINDOW_FRAME_RECORDS, .from_ns = INT64_MIN };
    if (from && from->set)
        wo.from_ns = nt_time_bound_resolve(from, &clock);
    if (to && to->set) {
        wo.to_ns = nt_time_bound_resolve(to, &clock);
        if (wo.to_ns == 0) /* 0 is "no end": a window ending at the clock's zero holds nothing after it */
            wo.to_ns = 1;
    }
    nt_feed_options fo = { .struct_size = sizeof fo, .progress = on_progress };
    wo.feed = &fo;
    nt_window_stats ws = { .struct_size = sizeof ws };
    int os_error = 0;
    cli_progress_start();
    cli_progress_phase("reading the window");
    nt_status s = nt_parser_feed_window(p, fd, ix, &wo, &ws, &os_error);
    cli_progress_clear();
    nt_index_free(ix);
    /* The index cannot choose: nothing was fed, and fd is still at 0 (the window read by pread). */
    if (s == NT_ERR_STATE && nt_parser_offset(p) == 0)
        return cli_feed_fd(p, fd, path, errbuf, errsize);
    if (report_wanted())
        report_read(&ws, sum.bytes_read, sidecar_bytes);
    parser_message(p, s, os_error, path, errbuf, errsize);
    return s;
}
