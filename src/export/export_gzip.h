/* A gzip stream over a ex_out: deflate through zlib when configured with it,
 * otherwise stored (uncompressed) deflate blocks, which every gzip reader
 * accepts. */
#ifndef EX_GZIP_H
#define EX_GZIP_H

#include "export/export_internal.h"

#ifdef HAVE_CONFIG_H
#include "config.h"
#endif
#ifdef HAVE_ZLIB
#include <zlib.h>
#endif

typedef struct ex_gzip {
    ex_out *out;
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
} ex_gzip;

nt_status ex_gzip_begin(ex_gzip *g, ex_out *out);
void ex_gzip_write(ex_gzip *g, const void *data, size_t len);
/* Ends the stream (trailer included) and releases it. */
nt_status ex_gzip_end(ex_gzip *g);
/* The tail of a gzipped export: ends g, flushes its ex_out and says how the
 * export went: st (the writer's own failure) first, then the sink's, then
 * the compressor's. */
nt_status ex_gzip_close(ex_gzip *g, nt_status st);

#endif
