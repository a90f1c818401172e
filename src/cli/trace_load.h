/* Loading a trace for the samples/top/stacks commands. */
#ifndef CLI_TRACE_LOAD_H
#define CLI_TRACE_LOAD_H

#include "cli/cli.h"
#include "nettrace_profile.h"

/* Read path ("-" = standard input) into a trace, with the progress bar.
 * Prints what went wrong to stderr (a truncated or damaged stream is said so,
 * with the byte offset and how many samples were kept).  Returns the exit code
 * the command should end with; *out is the trace (NULL when there is none).
 * count: the command needs counts per stack only (top, folded, pprof), so
 * samples are counted as they are read instead of kept. */
int cli_trace_load(const char *path, bool count, nt_trace **out);
/* The same for the samples f's window selects (f NULL: all): through the
 * trace's sidecar only the blocks the window needs are read
 * (cli_feed_path_window); the trace holds the samples of those blocks, of
 * which f's window selects the same as from a full read. */
int cli_trace_load_window(const char *path, bool count, const nt_sample_filter *f, nt_trace **out);

/* The same for a profile (allocation, exception, contention and GC events;
 * no thread samples) built with po (keep_events, the window, exception
 * messages; NULL: the defaults). */
int cli_profile_load(const char *path, const nt_profile_options *po, nt_profile **out);

/* Say on stderr when the trace holds no thread samples (and how to record
 * them), or warn when it has samples but no JIT or rundown method
 * events (nothing can be named) or no rundown (older code stays unnamed). */
void cli_warn_unnamed(const nt_trace *t);

/* What a samples line escapes in names besides controls (text_escape.h):
 * the frame separator and the field separator. */
#define CLI_SAMPLES_SEPARATORS "; "

/* The --signatures option's help line (samples, top, stacks). */
#define CLI_SIGNATURES_HELP "      --signatures   method names with their parameter lists (overloads apart)\n"

/* A frame's nt_frame_name_ex (flags: NT_NAME_SIGNATURE) with text_escape.h's escaping (seps: the format's
 * separators).  Heap string, NULL when memory is short. */
char *cli_frame_text(const nt_frame *f, unsigned flags, const char *seps);

/* The frames of t's resolved stack stack_index root first, joined by ';', each as cli_frame_text;
 * "-" for an empty stack.  Heap string, NULL when memory is short. */
char *cli_stack_line(const nt_trace *t, uint32_t stack_index, unsigned flags);

#endif
