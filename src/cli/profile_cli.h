/* The event profiles in the file commands (cmd_profile.c) and the GC
 * timeline (cmd_gc.c). */
#ifndef CLI_PROFILE_CLI_H
#define CLI_PROFILE_CLI_H

#include "cli/select.h"
#include "cli/trace_load.h"

/* Parse a --profile argument for command cmd (error on stderr): thread-time
 * (NT_PROFILE_CPU; "cpu", its old name, with a note), managed-cpu (the same
 * with *managed_only set), or a kind nt_profile_kind_parse knows. */
bool cli_profile_parse(const char *cmd, const char *arg, nt_profile_kind *k, bool *managed_only);
/* A profile kind as the tool names it (thread-time for NT_PROFILE_CPU). */
const char *cli_profile_name(nt_profile_kind k);
/* What samples / top / stacks --profile cover of a profile. */
typedef struct cli_profile_select {
    nt_profile_kind kind;
    unsigned name_flags;   /* nt_frame_name_ex's (--signatures) */
    bool relative;         /* samples: times since the trace's start */
    bool has_thread;       /* only thread_id */
    uint64_t thread_id;
    cli_time from, to;     /* only events in [from, to) (the builder applies it per event) */
    bool messages;         /* exceptions: the message is part of the label (--messages) */
    bool raw_leaf;         /* top: the site is the leaf frame, machinery or not (--raw-leaf) */
    bool inclusive;        /* top: a row per method anywhere on the stack (--inclusive) */
} cli_profile_select;
/* The sample filter f for an event profile: its thread and time window into
 * ps (usage error on stderr, false, for --managed-only, which selects samples only). */
bool cli_profile_filter(const cli_filter *f, const char *cmd, cli_profile_select *ps);

/* Whether --messages (given or not) fits profile k (usage error on stderr, false, when not). */
bool cli_profile_messages_fit(const char *cmd, nt_profile_kind k, bool messages);
/* The help line of --messages (samples, top, stacks). */
#define CLI_MESSAGES_HELP                                                                 \
    "      --messages     --profile exceptions: label each throw with its message\n"   \
    "                       too (ExceptionMessage), so throws merge by type and\n"     \
    "                       message (default: by type)\n"

/* samples --profile K: one line per event in time order (see cmd_profile.c). */
int cli_profile_samples(const char *path, const cli_profile_select *ps);
/* top --profile K: weight by label and leaf frame (and thread), largest first. */
int cli_profile_top(const char *path, const cli_profile_select *ps, size_t top, bool by_thread);
/* The same table for a profile (file or live window) into o; false when memory is short. */
bool cli_profile_top_print(FILE *o, const nt_profile *p, const cli_profile_select *ps, size_t top, bool by_thread);
/* stacks --profile K: folded, speedscope or pprof of the kind's records. */
int cli_profile_stacks(const char *path, const char *format, const char *output, const cli_out_rules *rules,
                       const cli_profile_select *ps, nt_profile_export_options *eo);

#endif
