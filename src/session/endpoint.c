/* Finding a process's diagnostics socket.
 *
 * The runtime listens on <TMPDIR>/dotnet-diagnostic-<pid>-<key>-socket, where
 * TMPDIR and pid are the target's own (its environment, its PID namespace) and
 * key is its start time in clock ticks since boot (field 22 of /proc/<pid>/stat,
 * the same number in every namespace).  A socket whose key is not the live
 * process's belongs to an earlier process that had the same pid. */
#include "nettrace_session.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/alloc.h"
#include "session/procfs.h"

ssize_t procfs_read(const char *path, char *buf, size_t cap)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = 0;
    while (len + 1 < cap) {
        ssize_t n = read(fd, buf + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (n == 0)
            break;
        len += (size_t)n;
    }
    close(fd);
    buf[len] = 0;
    return (ssize_t)len;
}

/* Field 22 (starttime) of /proc/<pid>/stat; comm (field 2) may hold spaces
 * and parentheses, so count from after the last ')'. */
static bool read_start_key(int32_t pid, uint64_t *key)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%" PRId32 "/stat", pid);
    if (procfs_read(path, buf, sizeof buf) < 0)
        return false;
    char *p = strrchr(buf, ')');
    if (!p)
        return false;
    p++;
    for (int field = 3; field < 22; field++) {
        while (*p == ' ')
            p++;
        while (*p && *p != ' ')
            p++;
    }
    while (*p == ' ')
        p++;
    if (!isdigit((unsigned char)*p))
        return false;
    *key = strtoull(p, NULL, 10);
    return true;
}

/* The innermost NSpid value and how many namespaces the pid is in. */
static int read_ns_pid(int32_t pid, int32_t *ns_pid)
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%" PRId32 "/status", pid);
    *ns_pid = pid;
    if (procfs_read(path, buf, sizeof buf) < 0)
        return 0;
    char *line = strstr(buf, "\nNSpid:");
    if (!line)
        return 1;
    char *p = line + 7;
    int levels = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (!isdigit((unsigned char)*p))
            break;
        long v = strtol(p, &p, 10);
        *ns_pid = (int32_t)v;
        levels++;
    }
    return levels;
}

/* The process's user ids (real, effective, saved, filesystem) from the
 * Uid: line of /proc/<pid>/status; false when unreadable. */
static bool read_uids(int32_t pid, uid_t uids[4])
{
    char path[64], buf[4096];
    snprintf(path, sizeof path, "/proc/%" PRId32 "/status", pid);
    if (procfs_read(path, buf, sizeof buf) < 0)
        return false;
    char *line = strstr(buf, "\nUid:");
    if (!line)
        return false;
    char *p = line + 5;
    for (int i = 0; i < 4; i++) {
        char *end;
        unsigned long v = strtoul(p, &end, 10);
        if (end == p)
            return false;
        uids[i] = (uid_t)v;
        p = end;
    }
    return true;
}

/* Whether a socket file's owner is one of the process's users: the runtime
 * binds its socket as itself, so a socket of another user under its name was
 * planted (by a user who can write in its TMPDIR, /tmp for most). */
static bool owned_by_process(const struct stat *st, const uid_t *uids)
{
    if (!uids)
        return true; /* the process's ids are not readable: the peer check at connect still holds */
    for (int i = 0; i < 4; i++)
        if (st->st_uid == uids[i])
            return true;
    return false;
}

/* The target's TMPDIR from its environment; false when unreadable. */
static bool read_target_tmpdir(int32_t pid, char *out, size_t cap, bool *readable)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%" PRId32 "/environ", pid);
    *readable = false;
    out[0] = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    /* Environments can be large; scan them in pieces, keeping a partial entry. */
    char buf[8192];
    size_t have = 0;
    bool found = false, skipping = false;
    for (;;) {
        ssize_t n = read(fd, buf + have, sizeof buf - have);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            close(fd);
            return false;
        }
        *readable = true;
        size_t len = have + (size_t)n;
        size_t start = 0;
        for (size_t i = 0; i < len; i++) {
            if (buf[i] != 0)
                continue;
            if (!skipping && strncmp(buf + start, "TMPDIR=", 7) == 0) {
                snprintf(out, cap, "%s", buf + start + 7);
                found = true;
            }
            skipping = false;
            start = i + 1;
        }
        have = len - start;
        if (have == sizeof buf) {
            /* One entry longer than the buffer: skip it (a TMPDIR that long
             * could not hold a socket path anyway). */
            skipping = true;
            have = 0;
        } else {
            memmove(buf, buf + start, have);
        }
        if (n == 0)
            break;
    }
    close(fd);
    return found;
}

static bool same_mount_ns(int32_t pid)
{
    char a[64], b[64], path[64];
    ssize_t na = readlink("/proc/self/ns/mnt", a, sizeof a - 1);
    snprintf(path, sizeof path, "/proc/%" PRId32 "/ns/mnt", pid);
    ssize_t nb = readlink(path, b, sizeof b - 1);
    if (na < 0 || nb < 0)
        return true; /* cannot tell: assume shared (the common case) */
    return na == nb && memcmp(a, b, (size_t)na) == 0;
}

/* Scan dir for the pid's sockets.  Exact key wins; key 0 (runtime could not
 * tell its start time) is accepted next; with no key of our own the newest
 * socket is taken.  Returns the reason. */
static nt_endpoint_reason scan_dir(const char *dir, int32_t ns_pid, bool have_key, uint64_t key, const uid_t *uids,
                                   char *out, size_t cap)
{
    DIR *d = opendir(dir);
    if (!d)
        return errno == EACCES ? NT_ENDPOINT_NO_ACCESS : NT_ENDPOINT_NO_SOCKET;
    char prefix[64];
    int plen = snprintf(prefix, sizeof prefix, "dotnet-diagnostic-%" PRId32 "-", ns_pid);
    int best_rank = 0; /* 3 exact, 2 key 0, 1 newest without a key */
    struct timespec best_mtime = { 0, 0 };
    bool saw_stale = false, saw_foreign = false;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
            continue;
        const char *k = e->d_name + plen;
        char *end;
        if (!isdigit((unsigned char)*k))
            continue;
        errno = 0;
        uint64_t sk = strtoull(k, &end, 10);
        if (errno || strcmp(end, "-socket") != 0)
            continue;
        char full[1024];
        if ((size_t)snprintf(full, sizeof full, "%s/%s", dir, e->d_name) >= sizeof full)
            continue;
        struct stat st;
        if (lstat(full, &st) != 0 || !S_ISSOCK(st.st_mode))
            continue;
        if (!owned_by_process(&st, uids)) {
            saw_foreign = true;
            continue;
        }
        int rank;
        if (have_key)
            rank = sk == key ? 3 : sk == 0 ? 2 : 0;
        else
            rank = 1;
        if (rank == 0) {
            saw_stale = true;
            continue;
        }
        bool newer = st.st_mtim.tv_sec > best_mtime.tv_sec ||
                     (st.st_mtim.tv_sec == best_mtime.tv_sec && st.st_mtim.tv_nsec > best_mtime.tv_nsec);
        if (rank > best_rank || (rank == best_rank && newer)) {
            best_rank = rank;
            best_mtime = st.st_mtim;
            snprintf(out, cap, "%s", full);
        }
    }
    closedir(d);
    if (best_rank > 0)
        return NT_ENDPOINT_FOUND;
    return saw_foreign ? NT_ENDPOINT_FOREIGN : saw_stale ? NT_ENDPOINT_STALE : NT_ENDPOINT_NO_SOCKET;
}

static void strip_trailing_slashes(char *s)
{
    size_t n = strlen(s);
    while (n > 1 && s[n - 1] == '/')
        s[--n] = 0;
}

nt_status nt_endpoint_find(int32_t pid, nt_endpoint *ep)
{
    if (!ep)
        return NT_ERR_INVALID_ARG;
    memset(ep, 0, sizeof *ep);
    ep->pid = pid;
    ep->ns_pid = pid;
    if (pid <= 0) {
        ep->reason = NT_ENDPOINT_NO_PROCESS;
        return NT_ERR_INVALID_ARG;
    }
    char procdir[64];
    snprintf(procdir, sizeof procdir, "/proc/%" PRId32, pid);
    struct stat st;
    if (stat(procdir, &st) != 0) {
        ep->reason = NT_ENDPOINT_NO_PROCESS;
        return NT_ERR_NO_ENDPOINT;
    }
    bool have_key = read_start_key(pid, &ep->start_key);
    int levels = read_ns_pid(pid, &ep->ns_pid);
    bool other_ns = levels > 1 || !same_mount_ns(pid);
    uid_t uids[4];
    const uid_t *owner = read_uids(pid, uids) ? uids : NULL;

    char tmpdir[512];
    bool env_readable;
    if (!read_target_tmpdir(pid, tmpdir, sizeof tmpdir, &env_readable) || tmpdir[0] == 0) {
        /* Unset or unreadable: the runtime's own fallback, or (unreadable) ours. */
        const char *own = env_readable ? NULL : getenv("TMPDIR");
        snprintf(tmpdir, sizeof tmpdir, "%s", own && *own ? own : "/tmp");
    }
    strip_trailing_slashes(tmpdir);

    char dir[1024];
    if (other_ns) {
        const char *rel = tmpdir;
        while (*rel == '/')
            rel++;
        snprintf(dir, sizeof dir, "/proc/%" PRId32 "/root/%s", pid, rel);
    } else {
        snprintf(dir, sizeof dir, "%s", tmpdir);
    }
    ep->reason = scan_dir(dir, ep->ns_pid, have_key, ep->start_key, owner, ep->path, sizeof ep->path);
    if (ep->reason == NT_ENDPOINT_NO_SOCKET && !env_readable && strcmp(dir, "/tmp") != 0 && !other_ns)
        ep->reason = scan_dir("/tmp", ep->ns_pid, have_key, ep->start_key, owner, ep->path, sizeof ep->path);
    if (ep->reason == NT_ENDPOINT_NO_SOCKET && !env_readable)
        ep->reason = NT_ENDPOINT_NO_ACCESS;
    /* A process that exited while we looked has no endpoint either. */
    if (ep->reason != NT_ENDPOINT_FOUND && stat(procdir, &st) != 0)
        ep->reason = NT_ENDPOINT_NO_PROCESS;
    return ep->reason == NT_ENDPOINT_FOUND ? NT_OK : NT_ERR_NO_ENDPOINT;
}

const char *nt_endpoint_reason_name(nt_endpoint_reason r)
{
    switch (r) {
    case NT_ENDPOINT_FOUND: return "found";
    case NT_ENDPOINT_NO_PROCESS: return "no_process";
    case NT_ENDPOINT_NO_SOCKET: return "no_socket";
    case NT_ENDPOINT_STALE: return "stale";
    case NT_ENDPOINT_NO_ACCESS: return "no_access";
    case NT_ENDPOINT_FOREIGN: return "foreign";
    }
    return "unknown";
}

static int cmp_entry(const void *a, const void *b)
{
    int32_t x = ((const nt_process_entry *)a)->pid, y = ((const nt_process_entry *)b)->pid;
    return (x > y) - (x < y);
}

nt_status nt_process_list(nt_process_entry **out, size_t *count, const nt_allocator *alloc)
{
    if (!out || !count)
        return NT_ERR_INVALID_ARG;
    *out = NULL;
    *count = 0;
    cm_mem mem;
    cm_mem_init(&mem, alloc);
    DIR *d = opendir("/proc");
    if (!d)
        return NT_ERR_IO;
    nt_process_entry *list = NULL;
    size_t n = 0, cap = 0;
    nt_status status = NT_OK;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        if (*end || pid <= 0 || pid > INT32_MAX)
            continue;
        nt_endpoint ep;
        if (nt_endpoint_find((int32_t)pid, &ep) != NT_OK)
            continue;
        if (n == cap) {
            size_t ncap = cap ? cap * 2 : 16;
            void *p = list;
            if (!cm_mem_resize(&mem, &p, cap * sizeof *list, ncap * sizeof *list)) {
                status = NT_ERR_NOMEM;
                break;
            }
            list = p;
            cap = ncap;
        }
        nt_process_entry *pe = &list[n++];
        memset(pe, 0, sizeof *pe);
        pe->pid = (int32_t)pid;
        pe->endpoint = ep;
        char path[64];
        snprintf(path, sizeof path, "/proc/%ld/comm", pid);
        if (procfs_read(path, pe->command, sizeof pe->command) > 0)
            pe->command[strcspn(pe->command, "\n")] = 0;
    }
    closedir(d);
    if (status != NT_OK) {
        cm_mem_free(&mem, list, cap * sizeof *list);
        return status;
    }
    if (n)
        qsort(list, n, sizeof *list, cmp_entry);
    *out = list;
    *count = n;
    return NT_OK;
}

void nt_process_list_free(nt_process_entry *list, const nt_allocator *alloc)
{
    cm_mem mem;
    cm_mem_init(&mem, alloc);
    cm_mem_free(&mem, list, 0);
}
