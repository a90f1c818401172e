/* Reading a trace file into callbacks, sequentially or in parallel (stream_read.c). */
#ifndef CLI_STREAM_READ_H
#define CLI_STREAM_READ_H

#include "cli/cli.h"
#include "nettrace_parallel.h"

/* Files at least this large are parsed on several threads by default (32 MiB:
 * below it a whole parse takes a few tens of milliseconds). */
#define CLI_PARALLEL_MIN_BYTES (32ull << 20)

/* What read a stream: one parser, or the parallel parse over a map of the file. */
typedef struct cli_stream {
    nt_parser *p;
    nt_parallel *pp;
    void *map;
    size_t len;
} cli_stream;

/* --jobs N (1 to NT_DEFAULT_PARALLEL_MAX_JOBS; 1 = one parser, as for a pipe): false, said on stderr, otherwise. */
bool cli_parse_jobs(const char *arg, const char *cmd);
void cli_stream_set_jobs(uint32_t jobs);

/* Read path ("-" = standard input) into cb / user, only the window [from, to)
 * when one is set and a sidecar says where it is (NULL: no bound); err gets the message as
 * cli_feed_path words it.  The file is opened once (cli_open_input), and
 * that descriptor decides the parallel read, finds the sidecar and is read.
 * Returns the stream's status; the parser that holds the stream's state
 * (cli_stream_parser) is there unless memory was short.  consumer (NULL:
 * none) takes the parts of a parallel parse on its threads (nettrace_parallel.h). */
nt_status cli_stream_read(cli_stream *st, const char *path, const nt_time_bound *from, const nt_time_bound *to,
                          const nt_callbacks *cb, void *user, const nt_parallel_consumer *consumer, bool lazy_names,
                          char *err, size_t errsize);
const nt_parser *cli_stream_parser(const cli_stream *st);
void cli_stream_close(cli_stream *st);

#endif
