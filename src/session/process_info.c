/* ProcessInfo / ProcessInfo2 over the diagnostics IPC, with /proc as the
 * fallback for the command line when the runtime does not answer. */
#include "common/utf16.h"
#include "session/ipc.h"
#include "session/procfs.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A length-prefixed UTF-16 string of the reply into out (cut to fit). */
static bool take_string(const uint8_t *p, size_t len, size_t *pos, char *out, size_t size)
{
    out[0] = 0;
    if (len - *pos < 4)
        return false;
    uint32_t units = (uint32_t)p[*pos] | (uint32_t)p[*pos + 1] << 8 | (uint32_t)p[*pos + 2] << 16 |
                     (uint32_t)p[*pos + 3] << 24;
    *pos += 4;
    if (units > (len - *pos) / 2)
        return false;
    const uint8_t *s = p + *pos;
    *pos += (size_t)units * 2;
    if (units && s[units * 2 - 2] == 0 && s[units * 2 - 1] == 0)
        units--; /* the terminator */
    /* Convert at most what fits: 3 bytes per unit at worst, plus the NUL. */
    size_t fit = (size - 1) / 3;
    nt_utf16_to_utf8(s, units < fit ? units : fit, out);
    return true;
}

static void from_proc(int32_t pid, nt_process_info *out)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
    ssize_t n = procfs_read(path, out->command_line, sizeof out->command_line);
    if (n <= 0)
        return;
    /* NUL-separated arguments (a trailing NUL ends the last one) */
    while (n > 0 && out->command_line[n - 1] == 0)
        n--;
    for (ssize_t i = 0; i < n; i++)
        if (out->command_line[i] == 0)
            out->command_line[i] = ' ';
    out->from_proc = true;
}

/* One ProcessInfo command; NT_OK with out filled, NT_ERR_REFUSED with *hr. */
static nt_status ask(const nt_endpoint *ep, uint8_t command, nt_process_info *out, uint32_t *hr,
                     int64_t deadline_ns)
{
    *hr = 0;
    int fd;
    nt_status st = ipc_connect(ep->path, deadline_ns, -1, &fd);
    if (st != NT_OK)
        return st;
    /* The reply may be a whole message long: from the heap, not the caller's stack. */
    ipc_buf *req = malloc(sizeof *req);
    uint8_t *reply = malloc(IPC_MAX_MESSAGE);
    size_t len = 0;
    if (!req || !reply) {
        st = NT_ERR_NOMEM;
    } else {
        ipc_begin(req, IPC_SET_PROCESS, command);
        ipc_end(req);
        st = ipc_exchange(fd, req, reply, IPC_MAX_MESSAGE, &len, hr, deadline_ns, -1);
    }
    close(fd);
    if (st == NT_OK && len < 24)
        st = NT_ERR_PROTOCOL;
    if (st == NT_OK) {
        for (int i = 7; i >= 0; i--)
            out->pid = out->pid << 8 | reply[i];
        memcpy(out->runtime_cookie, reply + 8, 16);
        size_t pos = 24;
        bool ok = take_string(reply, len, &pos, out->command_line, sizeof out->command_line) &&
                  take_string(reply, len, &pos, out->os, sizeof out->os) &&
                  take_string(reply, len, &pos, out->arch, sizeof out->arch);
        if (ok && command == IPC_PROCESS_INFO2)
            ok = take_string(reply, len, &pos, out->entrypoint_assembly, sizeof out->entrypoint_assembly) &&
                 take_string(reply, len, &pos, out->runtime_version, sizeof out->runtime_version);
        st = ok ? NT_OK : NT_ERR_PROTOCOL;
    }
    free(req);
    free(reply);
    return st;
}

nt_status nt_process_info_get(const nt_endpoint *ep, nt_process_info *out, int64_t deadline_ns)
{
    deadline_ns = ipc_deadline(deadline_ns);
    if (!ep || !out)
        return NT_ERR_INVALID_ARG;
    memset(out, 0, sizeof *out);
    uint32_t hr;
    nt_status st = ask(ep, IPC_PROCESS_INFO2, out, &hr, deadline_ns);
    if (st == NT_ERR_REFUSED && hr == NT_HR_UNKNOWN_COMMAND) { /* before .NET 7 */
        memset(out, 0, sizeof *out);
        st = ask(ep, IPC_PROCESS_INFO, out, &hr, deadline_ns);
    }
    if (st != NT_OK) {
        memset(out, 0, sizeof *out);
        from_proc(ep->pid, out);
    }
    return st;
}
