/* Where a command's output goes, so that no command destroys a user's file:
 * standard output for "-" (or no path), else a temporary file beside the
 * target, renamed over it only when the output is complete (an existing
 * device or FIFO is written in place: a rename would replace the device
 * node itself).  An output that
 * is one of the command's inputs (same device and inode, whatever the
 * spelling or links) is refused before anything is opened, and an existing
 * trace is replaced only when the user said --force. */
#ifndef CLI_OUT_FILE_H
#define CLI_OUT_FILE_H

#include <stdbool.h>
#include <stddef.h>

typedef struct cli_out_file {
    const char *path; /* the target as given; "standard output" for "-" */
    char *tmp;        /* the temporary file while open (NULL: standard output or direct) */
    int fd;           /* -1 once a stdio stream over it owns it */
    bool direct;      /* an existing device or FIFO (/dev/full, /dev/stdout): written in place */
} cli_out_file;

/* What a command's output must not be: its inputs ("-" is standard input),
 * and an existing trace unless force (with keep_existing: any existing
 * regular file unless force).  cmd prefixes the messages. */
typedef struct cli_out_rules {
    const char *cmd;
    const char *const *inputs;
    size_t input_count;
    bool force;
    bool keep_existing;
} cli_out_rules;

/* --force, the same in every command that writes a file. */
enum { CLI_OPT_FORCE = 0x1100 };
#define CLI_FORCE_LONGOPT { "force", no_argument, NULL, CLI_OPT_FORCE }
#define CLI_FORCE_HELP "      --force        replace OUT even when it holds a trace\n"

/* Whether o is a file of its own (not standard output): its fd is o's. */
static inline bool cli_out_file_owned(const cli_out_file *o) { return o->tmp || o->direct; }

/* Check path against the rules and open it (the temporary file, or
 * standard output for NULL or "-").  false, with the reason on stderr, when
 * refused or it cannot be created. */
bool cli_out_file_open(cli_out_file *o, const char *path, const cli_out_rules *r);

/* End the output: keep renames the temporary file over the target (false,
 * with the reason on stderr, when that fails); !keep removes it, leaving any
 * earlier file of that name as it was.  Closes the descriptor (not standard
 * output) first; a failed close counts as a failed write. */
bool cli_out_file_close(cli_out_file *o, const char *cmd, bool keep);

/* Whether the file at path begins with a trace's magic ("Nettrace"). */
bool cli_out_is_trace(const char *path);

#endif
