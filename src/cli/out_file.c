/* Outputs written through a temporary file and renamed (see out_file.h). */
#include "cli/out_file.h"
#include "common/format.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool is_stdout(const char *path)
{
    return !path || strcmp(path, "-") == 0;
}

bool cli_out_is_trace(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0)
        return false;
    /* NetTrace begins with its magic; a NetPerf file (the format before it)
     * with its serializer's name after a 4-byte length. */
    char head[4 + 18];
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    if (n >= CM_FMT_MAGIC_LEN && memcmp(head, CM_FMT_MAGIC, CM_FMT_MAGIC_LEN) == 0)
        return true;
    return n == (ssize_t)sizeof head && memcmp(head + 4, "!FastSerialization", 18) == 0;
}

/* Whether out (existing, stat'ed) is the file an input names. */
static bool same_as_input(const struct stat *out, const char *input)
{
    struct stat in;
    if (strcmp(input, "-") == 0) {
        if (fstat(0, &in) != 0)
            return false;
    } else if (stat(input, &in) != 0) {
        return false;
    }
    return in.st_dev == out->st_dev && in.st_ino == out->st_ino;
}

/* The refusals, before anything is created; true when path may be written.
 * *in_place: path is no regular file (a device such as /dev/full or
 * /dev/stdout, a FIFO): written as it is, never renamed over. */
static bool allowed(const char *path, const cli_out_rules *r, bool *in_place)
{
    struct stat st;
    *in_place = false;
    if (stat(path, &st) != 0)
        return true; /* nothing there yet; open reports a bad directory */
    *in_place = !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode);
    for (size_t i = 0; i < r->input_count; i++) {
        if (same_as_input(&st, r->inputs[i])) {
            fprintf(stderr, "nettrace %s: the output %s is the input %s: refusing to overwrite what is being read\n",
                    r->cmd, path, strcmp(r->inputs[i], "-") == 0 ? "on standard input" : r->inputs[i]);
            return false;
        }
    }
    if (S_ISDIR(st.st_mode)) {
        fprintf(stderr, "nettrace %s: the output %s is a directory\n", r->cmd, path);
        return false;
    }
    if (!r->force && r->keep_existing && S_ISREG(st.st_mode)) {
        fprintf(stderr, "nettrace %s: %s exists: not overwritten (--force replaces it, or choose another name)\n",
                r->cmd, path);
        return false;
    }
    if (!r->force && S_ISREG(st.st_mode) && cli_out_is_trace(path)) {
        fprintf(stderr, "nettrace %s: %s is a trace already: refusing to overwrite it (--force replaces it)\n",
                r->cmd, path);
        return false;
    }
    return true;
}

bool cli_out_file_open(cli_out_file *o, const char *path, const cli_out_rules *r)
{
    *o = (cli_out_file){ .path = "standard output", .tmp = NULL, .fd = 1, .direct = false };
    if (is_stdout(path))
        return true;
    o->path = path;
    bool in_place;
    if (!allowed(path, r, &in_place))
        return false;
    if (in_place) {
        o->fd = open(path, O_WRONLY | O_CLOEXEC);
        if (o->fd < 0) {
            fprintf(stderr, "nettrace %s: cannot write %s: %s\n", r->cmd, path, strerror(errno));
            return false;
        }
        o->tmp = NULL;
        o->direct = true;
        return true;
    }
    /* Beside the target, so the rename stays on one file system; visible, so
     * one left behind by a killed run is found and named for what it is. */
    size_t n = strlen(path) + sizeof ".tmp-XXXXXX";
    o->tmp = malloc(n);
    if (!o->tmp) {
        fprintf(stderr, "nettrace %s: out of memory\n", r->cmd);
        return false;
    }
    snprintf(o->tmp, n, "%s.tmp-XXXXXX", path);
    o->fd = mkostemp(o->tmp, O_CLOEXEC);
    if (o->fd < 0) {
        fprintf(stderr, "nettrace %s: cannot create %s: %s\n", r->cmd, path, strerror(errno));
        free(o->tmp);
        o->tmp = NULL;
        return false;
    }
    /* mkostemp makes it 0600; an output gets the permissions a new file gets. */
    mode_t mask = umask(0);
    umask(mask);
    if (fchmod(o->fd, 0666 & ~mask) != 0) {
        /* (the file stays private; nothing is lost) */
    }
    return true;
}

bool cli_out_file_close(cli_out_file *o, const char *cmd, bool keep)
{
    if (o->direct) {
        bool ok = o->fd < 0 || close(o->fd) == 0;
        if (!ok && keep)
            fprintf(stderr, "nettrace %s: writing %s failed: %s\n", cmd, o->path, strerror(errno));
        o->fd = -1;
        o->direct = false;
        return ok;
    }
    if (!o->tmp)
        return true;
    bool ok = true;
    if (o->fd >= 0 && close(o->fd) != 0) {
        if (keep)
            fprintf(stderr, "nettrace %s: writing %s failed: %s\n", cmd, o->path, strerror(errno));
        ok = keep = false;
    }
    if (keep && rename(o->tmp, o->path) != 0) {
        fprintf(stderr, "nettrace %s: cannot replace %s: %s (the output is left in %s)\n", cmd, o->path,
                strerror(errno), o->tmp);
        ok = false;
    } else if (!keep) {
        unlink(o->tmp);
    }
    free(o->tmp);
    o->tmp = NULL;
    o->fd = -1;
    return ok;
}
