/* Reading a trace file into a parser, with a progress bar on terminals. */
#include "cli/cli.h"
#include "cli/progress.h"
#include "common/file_read.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_exit_code(nt_status s)
{
    if (s == NT_OK)
        return CLI_EXIT_OK;
    if (s == NT_ERR_IO)
        return CLI_EXIT_ERROR;
    return CLI_EXIT_STREAM_BASE + (int)s;
}

static void on_progress(void *user, uint64_t done, uint64_t total)
{
    *(uint64_t *)user = done;
    cli_progress_update(done, total, 1);
}

nt_status cli_feed_path(nt_parser *p, const char *path, char *errbuf, size_t errsize)
{
    int fd = cli_open_input(path, errbuf, errsize);
    nt_status s = fd < 0 ? NT_ERR_IO : cli_feed_fd(p, fd, path, errbuf, errsize);
    cli_close_input(fd);
    return s;
}

int cli_open_input(const char *path, char *errbuf, size_t errsize)
{
    if (strcmp(path, "-") == 0)
        return STDIN_FILENO;
    return cm_open_read(path, errbuf, errsize);
}

void cli_close_input(int fd)
{
    if (fd > STDIN_FILENO)
        close(fd);
}

nt_status cli_feed_fd(nt_parser *p, int fd, const char *path, char *errbuf, size_t errsize)
{
    cli_progress_start();
    cli_progress_phase("reading");
    uint64_t done = 0;
    nt_feed_options fo = { .progress = on_progress, .progress_user = &done };
    int os_error = 0;
    nt_status s = nt_parser_feed_fd(p, fd, &fo, &os_error);
    cli_progress_clear();
    if (s == NT_ERR_IO)
        snprintf(errbuf, errsize, "%s: %s", path, os_error ? strerror(os_error) : "read failed");
    else
        cli_feed_message(p, s, done, errbuf, errsize);
    return s;
}

void cli_feed_message(const nt_parser *p, nt_status s, uint64_t done, char *errbuf, size_t errsize)
{
    if (s == NT_ERR_TRUNCATED && done != nt_parser_error_offset(p))
        /* The parser names where the incomplete unit began; say where the input ended too. */
        snprintf(errbuf, errsize, "%s (the input ends at byte %llu)", nt_parser_message(p),
                 (unsigned long long)done);
    else
        snprintf(errbuf, errsize, "%s", nt_parser_message(p));
}

bool cli_output_open(cli_output *o, const char *path, const cli_out_rules *r)
{
    *o = (cli_output){ .f = stdout, .path = path, .cmd = r->cmd };
    if (!cli_out_file_open(&o->file, path, r))
        return false;
    o->path = o->file.path;
    if (cli_out_file_owned(&o->file)) {
        o->f = fdopen(o->file.fd, "wb");
        if (!o->f) {
            fprintf(stderr, "nettrace %s: %s: %s\n", r->cmd, o->path, strerror(errno));
            cli_out_file_close(&o->file, r->cmd, false);
            return false;
        }
        o->file.fd = -1; /* the stream owns it now */
    }
    cli_progress_phase("writing");
    return true;
}

int cli_write_file(void *user, const void *data, size_t len)
{
    cli_output *o = user;
    o->written += len;
    cli_progress_update(o->written, 0, 1);
    return fwrite(data, 1, len, o->f) == len ? 0 : -1;
}

int cli_output_close(cli_output *o, nt_status s, int rc)
{
    cli_progress_clear();
    if (fflush(o->f) != 0 || ferror(o->f))
        s = NT_ERR_IO;
    if (o->f != stdout && fclose(o->f) != 0)
        s = NT_ERR_IO;
    if (s != NT_OK)
        fprintf(stderr, "nettrace %s: writing %s failed: %s\n", o->cmd, o->path, nt_status_describe(s));
    if (!cli_out_file_close(&o->file, o->cmd, s == NT_OK))
        return CLI_EXIT_ERROR;
    return s == NT_OK ? rc : CLI_EXIT_ERROR;
}
