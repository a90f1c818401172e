/* A gzip stream over a tr_out: deflate through zlib when configured with it,
 * otherwise stored (uncompressed) deflate blocks, which every gzip reader
 * accepts. */
#ifndef EX_GZIP_H
#define EX_GZIP_H

#include "trace/trace_internal.h"

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

typedef struct tr_gzip {
    tr_out *out;
    uint32_t crc;
    uint32_t size;        /* ISIZE: length mod 2^32 */
    bool failed;
#ifdef HAVE_ZLIB
    z_stream z;
    bool z_open;
#else
    unsigned char block[65535];
    size_t n;
#endif
} tr_gzip;

nt_status tr_gzip_begin(tr_gzip *g, tr_out *out);
void tr_gzip_write(tr_gzip *g, const void *data, size_t len);
/* Ends the stream (trailer included) and releases it. */
nt_status tr_gzip_end(tr_gzip *g);
/* The tail of a gzipped export: ends g, flushes its tr_out and says how the
 * export went: st (the writer's own failure) first, then the sink's, then
 * the compressor's. */
nt_status tr_gzip_close(tr_gzip *g, nt_status st);

#endif
