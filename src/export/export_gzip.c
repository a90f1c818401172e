#include "export/export_gzip.h"
#include "common/le_store.h"

#include <string.h>

#ifndef HAVE_ZLIB
/* CRC-32 (IEEE, reflected), table-free: the output is written once. */
static uint32_t crc32_update(uint32_t crc, const unsigned char *p, size_t n)
{
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void stored_block(ex_gzip *g, bool final)
{
    uint8_t h[5] = { final ? 1 : 0 }; /* BFINAL, BTYPE 00 (stored), then LEN and its complement */
    cm_store_le16(h + 1, (uint16_t)g->n);
    cm_store_le16(h + 3, (uint16_t)~g->n);
    ex_out_bytes(g->out, h, 5);
    ex_out_bytes(g->out, g->block, g->n);
    g->n = 0;
}
#endif

nt_status ex_gzip_begin(ex_gzip *g, ex_out *out)
{
    memset(g, 0, sizeof *g);
    g->out = out;
#ifdef HAVE_ZLIB
    /* windowBits 15 + 16: zlib writes the gzip header and trailer itself. */
    if (deflateInit2(&g->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        return NT_ERR_NOMEM;
    g->z_open = true;
#else
    static const unsigned char header[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff };
    ex_out_bytes(out, header, sizeof header);
#endif
    return NT_OK;
}

#ifdef HAVE_ZLIB
static void z_run(ex_gzip *g, int flush)
{
    unsigned char buf[16384];
    do {
        g->z.next_out = buf;
        g->z.avail_out = sizeof buf;
        int r = deflate(&g->z, flush);
        if (r == Z_STREAM_ERROR) {
            g->failed = true;
            return;
        }
        ex_out_bytes(g->out, buf, sizeof buf - g->z.avail_out);
    } while (g->z.avail_out == 0 || (flush == Z_FINISH && g->z.avail_in) );
}
#endif

void ex_gzip_write(ex_gzip *g, const void *data, size_t len)
{
    const unsigned char *p = data;
#ifdef HAVE_ZLIB
    while (len && !g->failed) {
        uInt k = len > (1u << 30) ? (1u << 30) : (uInt)len;
        g->z.next_in = (unsigned char *)(uintptr_t)p;
        g->z.avail_in = k;
        z_run(g, Z_NO_FLUSH);
        p += k;
        len -= k;
    }
#else
    g->crc = crc32_update(g->crc, p, len);
    g->size += (uint32_t)len;
    while (len) {
        if (g->n == sizeof g->block)
            stored_block(g, false);
        size_t k = sizeof g->block - g->n < len ? sizeof g->block - g->n : len;
        memcpy(g->block + g->n, p, k);
        g->n += k;
        p += k;
        len -= k;
    }
#endif
}

nt_status ex_gzip_end(ex_gzip *g)
{
#ifdef HAVE_ZLIB
    g->z.next_in = NULL;
    g->z.avail_in = 0;
    if (!g->failed) {
        unsigned char buf[16384];
        int r;
        do {
            g->z.next_out = buf;
            g->z.avail_out = sizeof buf;
            r = deflate(&g->z, Z_FINISH);
            if (r == Z_STREAM_ERROR) {
                g->failed = true;
                break;
            }
            ex_out_bytes(g->out, buf, sizeof buf - g->z.avail_out);
        } while (r != Z_STREAM_END);
    }
    deflateEnd(&g->z);
    g->z_open = false;
#else
    stored_block(g, true);
    uint8_t t[8]; /* CRC-32, then ISIZE */
    cm_store_le32(t, g->crc);
    cm_store_le32(t + 4, g->size);
    ex_out_bytes(g->out, t, 8);
#endif
    return g->failed ? NT_ERR_IO : NT_OK;
}

nt_status ex_gzip_close(ex_gzip *g, nt_status st)
{
    nt_status gs = ex_gzip_end(g);
    nt_status fs = ex_out_flush(g->out);
    if (st != NT_OK)
        return st;
    return fs != NT_OK ? fs : gs;
}
