/* Shared pieces of the nettrace tool. */
#ifndef CLI_H
#define CLI_H

#include "nettrace.h"
#include "nettrace_trace.h"
#include "cli/out_file.h"

#include <stdio.h>

/* Exit codes (documented in nettrace(1)). */
#define CLI_EXIT_OK 0
#define CLI_EXIT_ERROR 1      /* I/O error or another failure */
#define CLI_EXIT_USAGE 2
#define CLI_EXIT_INCOMPLETE 3 /* convert: the output lacks something the input had */
#define CLI_EXIT_STREAM_BASE 10 /* 10 + nt_status for a stream that did not read cleanly */

int cli_exit_code(nt_status s);

/* Feed a file ("-" = standard input) through p in fixed-size chunks, then
 * finish.  Returns the parser's final status, or NT_ERR_IO with errbuf set.
 * Shows a progress bar on a terminal when the read takes a while. */
nt_status cli_feed_path(nt_parser *p, const char *path, char *errbuf, size_t errsize);
/* The same over fd, already open on path (which names it in messages); fd stays open. */
nt_status cli_feed_fd(nt_parser *p, int fd, const char *path, char *errbuf, size_t errsize);
/* path ("-": standard input) opened for reading once, for every way it is read
 * then; -1 with errbuf set when it cannot be.  cli_close_input leaves standard input open. */
int cli_open_input(const char *path, char *errbuf, size_t errsize);
void cli_close_input(int fd);
/* The message of a read that ended with s after `done` bytes of input, as cli_feed_path words it. */
void cli_feed_message(const nt_parser *p, nt_status s, uint64_t done, char *errbuf, size_t errsize);

/* The same for a command with --from/--to (from, to: NULL or unset = no
 * bound): through the trace's sidecar (FILE.ntidx, `nettrace index`) only the
 * blocks the window needs are read (io_window.c); without one, or for
 * standard input, the whole file.  NETTRACE_NO_INDEX set: always the whole
 * file; NETTRACE_READ_REPORT set: the bytes read said on stderr. */
nt_status cli_feed_path_window(nt_parser *p, const char *path, const nt_time_bound *from, const nt_time_bound *to,
                               char *errbuf, size_t errsize);
/* The same over fd, open on path by cli_open_input (standard input: the whole stream). */
nt_status cli_feed_fd_window(nt_parser *p, int fd, const char *path, const nt_time_bound *from,
                             const nt_time_bound *to, char *errbuf, size_t errsize);

/* The output of an export: path ("-" or NULL: standard output) opened for
 * writing through cli_out_file_open's rules (false with the reason on
 * stderr), with the progress bar's "writing" phase; cli_write_file, an
 * nt_sink_fn over it (user: the cli_output); and the end, which flushes,
 * reports a failed write or status s, keeps the file (renamed over the
 * target) only when both succeeded, and returns rc or CLI_EXIT_ERROR. */
typedef struct cli_output {
    FILE *f;
    const char *path;
    uint64_t written;
    cli_out_file file;
    const char *cmd;
} cli_output;
bool cli_output_open(cli_output *o, const char *path, const cli_out_rules *r);
int cli_write_file(void *user, const void *data, size_t len);
int cli_output_close(cli_output *o, nt_status s, int rc);

int cmd_info(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_samples(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_stacks(int argc, char **argv);
int cmd_gc(int argc, char **argv);
int cmd_collect(int argc, char **argv);
int cmd_top_live(int argc, char **argv);
int cmd_ps(int argc, char **argv);
int cmd_profiles(int argc, char **argv);
int cmd_convert(int argc, char **argv);
int cmd_slice(int argc, char **argv);
int cmd_index(int argc, char **argv);
int cmd_heap(int argc, char **argv);
int cmd_gcdump(int argc, char **argv);
int cmd_stack(int argc, char **argv);

#endif
