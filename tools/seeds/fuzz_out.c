/* Where the fuzz corpora go: every parser seed, its limit settings, and the
 * diagnostics IPC replies (a few of them carrying a parser seed as the stream). */
#include "seeds.h"

#include <stdio.h>
#include <string.h>

static const char *out_dir, *limits_dir, *ipc_dir;
static int written;

void fuzz_out_init(const char *parser_dir, const char *limits, const char *ipc)
{
    out_dir = parser_dir;
    limits_dir = limits;
    ipc_dir = ipc;
}

int fuzz_written(void) { return written; }

static void save_to(const char *dir, const char *name, const uint8_t *d, size_t n, const uint8_t *prefix)
{
    seeds_save_file(dir, name, d, n, prefix);
    written++;
}

/* A diagnostics IPC reply header: magic, total size, command set and id, reserved. */
static void ipc_header(tb *r, uint16_t size, uint8_t set, uint8_t id)
{
    tb_bytes(r, "DOTNET_IPC_V1", 14);
    tb_u16(r, size);
    tb_u8(r, set);
    tb_u8(r, id);
    tb_u16(r, 0);
}

/* The CollectTracing OK reply (session id) followed by the stream. */
static void save_ipc_ok(const char *name, const uint8_t *d, size_t n)
{
    tb r = { 0 };
    ipc_header(&r, 28, 0xFF, 0x00);
    tb_u64(&r, 0x1122334455667788ull);
    tb_bytes(&r, d, n);
    char n2[512];
    snprintf(n2, sizeof n2, "ok-%s", name);
    save_to(ipc_dir, n2, r.d, r.n, NULL);
    tb_free(&r);
}

/* Replies that are not a plain OK. */
void fuzz_ipc_replies(void)
{
    tb r = { 0 };
    ipc_header(&r, 24, 0xFF, 0xFF);
    tb_u32(&r, 0x80131384u); /* refused with an HRESULT */
    save_to(ipc_dir, "error-hresult", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 20, 0xFF, 0xFF); /* refused, no HRESULT */
    save_to(ipc_dir, "error-empty", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 120, 0xFF, 0xFF); /* long error payload, more than is kept */
    for (int i = 0; i < 100; i++)
        tb_u8(&r, (uint8_t)i);
    save_to(ipc_dir, "error-long", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 32, 0xFF, 0x00); /* OK with the wrong payload size */
    tb_u64(&r, 1);
    tb_u32(&r, 2);
    save_to(ipc_dir, "ok-wrong-size", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 28, 0x02, 0x00); /* not a server response */
    tb_u64(&r, 1);
    save_to(ipc_dir, "wrong-command-set", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 28, 0xFF, 0x00); /* cut inside the session id */
    tb_u32(&r, 7);
    save_to(ipc_dir, "ok-cut", r.d, r.n, NULL);
    tb_free(&r);
    tb_bytes(&r, "DOTNET_IPC_V2\0\x1c\0\xff\0\0\0", 20); /* wrong magic */
    save_to(ipc_dir, "bad-magic", r.d, r.n, NULL);
    tb_free(&r);
    ipc_header(&r, 28, 0xFF, 0x00); /* OK, then no stream at all */
    tb_u64(&r, 42);
    save_to(ipc_dir, "ok-no-stream", r.d, r.n, NULL);
    tb_free(&r);
}

/* Every seed goes to the parser corpus; a few limit settings of it to the
 * limits corpus (8 setting bytes + the stream). */
void fuzz_save(const char *name, tb *b)
{
    save_to(out_dir, name, b->d, b->n, NULL);
    static const char *const ipc_streams[] = { "minimal", "samples-ptr8", "writer-v4", "writer-v6",
                                               "truncated-block", "typed-methods" };
    for (size_t i = 0; i < sizeof ipc_streams / sizeof *ipc_streams; i++)
        if (strcmp(name, ipc_streams[i]) == 0)
            save_ipc_ok(name, b->d, b->n);
    static const uint8_t settings[][8] = {
        { 11, 63, 13, 31, 255, 255, 63, 0 },  /* roomy */
        { 5, 1, 4, 2, 1, 1, 1, 7 },           /* tight, chunked */
        { 0, 0, 0, 0, 0, 0, 0, 1 },           /* tightest, byte at a time */
    };
    for (size_t i = 0; i < sizeof settings / sizeof *settings; i++) {
        char n2[512];
        snprintf(n2, sizeof n2, "%s.lim%zu", name, i);
        save_to(limits_dir, n2, b->d, b->n, settings[i]);
    }
    tb_free(b);
}
