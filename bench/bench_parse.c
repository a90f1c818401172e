/* make bench: parser throughput and memory.
 *
 * For each trace: a baseline loop that reads the same bytes in the same
 * chunks and sums them, then the parser with every callback set (each
 * callback touches its arguments), then the parser with no callbacks.  Times
 * are the best of several runs; the figure that matters is the ratio to the
 * read loop measured in the same run.  Then a synthetic stream many times
 * longer than any corpus trace shows that peak memory does not grow with
 * the stream's length. */
#include "touch_callbacks.h"
#include "streams.h"
#include "support.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define CHUNK (1u << 20)

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double read_loop(const uint8_t *d, size_t n)
{
    double t0 = now();
    uint64_t sum = 0;
    for (size_t off = 0; off < n; off += CHUNK) {
        size_t k = n - off < CHUNK ? n - off : CHUNK;
        const uint8_t *p = d + off;
        size_t i = 0;
        for (; i + 8 <= k; i += 8) {
            uint64_t v;
            memcpy(&v, p + i, 8);
            sum += v;
        }
        for (; i < k; i++)
            sum += p[i];
    }
    bench_sink += sum;
    return now() - t0;
}

static double parse_once(const uint8_t *d, size_t n, const nt_callbacks *cb, nt_parser_stats *st, nt_status *s)
{
    double t0 = now();
    nt_parser *p = nt_parser_new(cb, NULL, NULL, NULL);
    nt_status r = NT_OK;
    for (size_t off = 0; off < n && r == NT_OK; off += CHUNK)
        r = nt_parser_feed(p, d + off, n - off < CHUNK ? n - off : CHUNK);
    if (r == NT_OK)
        r = nt_parser_finish(p);
    double t = now() - t0;
    nt_parser_stats_get(p, st);
    *s = r;
    nt_parser_free(p);
    return t;
}

static int reps_for(size_t n) { return n > (8u << 20) ? 5 : n > (1u << 20) ? 15 : 40; }

static void bench_file(const char *path, const char *label)
{
    uint8_t *d;
    size_t n;
    if (!ts_read_file(path, &d, &n)) {
        printf("%-62s cannot read\n", label);
        return;
    }
    int reps = reps_for(n);
    double tr = 1e9, ta = 1e9, tn = 1e9;
    nt_parser_stats st = { 0 };
    nt_status s = NT_OK;
    for (int i = 0; i < reps; i++) {
        double t = read_loop(d, n);
        tr = t < tr ? t : tr;
        t = parse_once(d, n, &bench_touch_all, &st, &s);
        ta = t < ta ? t : ta;
        t = parse_once(d, n, NULL, &st, &s);
        tn = t < tn ? t : tn;
    }
    double mb = (double)n / 1e6;
    printf("%-62s %7.2f MB %-9s read %7.0f MB/s | parse+cb %6.0f MB/s %6.1f Mev/s = %4.2fx mem-sum | no-cb %6.0f MB/s | peak %6.2f MB\n",
           label, mb, nt_status_name(s), mb / tr, mb / ta, (double)st.events / ta / 1e6, tr / ta, mb / tn,
           (double)st.memory_peak / 1e6);
    free(d);
}

/* A stream of `intervals` sequence-point intervals, each with a stack block,
 * an event block of samples and a sequence point: as long as we like, made
 * and parsed chunk by chunk so the benchmark itself stays small. */
static void synthetic_memory(unsigned intervals)
{
    nt_parser *p = nt_parser_new(&bench_touch_all, NULL, NULL, NULL);
    tb b = { 0 };
    tb_header(&b, 8, 1000000000);
    tb_metadata_block(&b, 1, NT_PROVIDER_SAMPLE_PROFILER, 0, 0);
    uint64_t total = 0;
    uint8_t managed[4] = { 2, 0, 0, 0 };
    uint64_t frames[32];
    for (int i = 0; i < 32; i++)
        frames[i] = 0x7f0000001000ull + 0x40u * (uint64_t)i;
    int64_t ts = 1;
    for (unsigned k = 0; k < intervals; k++) {
        const uint64_t *ips[64];
        uint32_t depth[64];
        for (int i = 0; i < 64; i++) {
            ips[i] = frames;
            depth[i] = 8 + (uint32_t)(i % 24);
        }
        tb_stack_block(&b, 1, 64, ips, depth, 8);
        size_t pos = tb_block_begin(&b, "EventBlock");
        tb_event_header(&b, 1);
        tb_event prev = { 0 };
        for (uint32_t e = 0; e < 2000; e++) {
            tb_event ev = { 1, k * 2000 + e + 1, 1 + e % 64, 0, 100 + e % 8, 7, ts++, managed, 4 };
            tb_compressed_event(&b, &ev, &prev);
        }
        tb_block_end(&b, pos);
        uint64_t tid = 7;
        uint32_t seq = (k + 1) * 2000;
        tb_sp_block(&b, ts, 1, &tid, &seq);
        /* Feed what we have, keeping the unaligned tail so offsets stay right. */
        nt_parser_feed(p, b.d, b.n);
        total += b.n;
        b.base += b.n;
        b.n = 0;
    }
    tb_end(&b);
    nt_parser_feed(p, b.d, b.n);
    total += b.n;
    nt_status s = nt_parser_finish(p);
    nt_parser_stats st = { 0 };
    nt_parser_stats_get(p, &st);
    printf("synthetic stream %8.1f MB: %-6s events %10" PRIu64 "  peak memory %.3f MB\n", (double)total / 1e6,
           nt_status_name(s), st.events, (double)st.memory_peak / 1e6);
    nt_parser_free(p);
    tb_free(&b);
}

/* A real recording made many times longer: the blocks of one of our own
 * traces (corpus/spin-threads.nettrace) after its metadata, replayed `loops`
 * times with padding recomputed for each position, streamed into the parser
 * chunk by chunk.  Shows peak memory on real block mixes at any length. */
typedef struct span {
    const uint8_t *type; /* the object's type header (BeginPrivateObject .. EndObject) */
    size_t type_len;
    const uint8_t *content;
    uint32_t size;
    bool metadata;
} span;

static size_t list_blocks(const uint8_t *d, size_t n, span *out, size_t max, size_t *first_block)
{
    size_t off = 32 + 21 + 49; /* magic, serialization header, Trace object */
    size_t k = 0;
    *first_block = off;
    while (off + 15 < n && d[off] == 0x05 && k < max) {
        uint32_t name_len = (uint32_t)d[off + 11] | ((uint32_t)d[off + 12] << 8);
        size_t type_len = 15 + name_len + 1; /* 05 | 05 01 ver minr len | name | 06 */
        size_t p = off + type_len;
        uint32_t size = (uint32_t)d[p] | ((uint32_t)d[p + 1] << 8) | ((uint32_t)d[p + 2] << 16) | ((uint32_t)d[p + 3] << 24);
        p += 4;
        while (p % 4)
            p++;
        if (p + size + 1 > n)
            break;
        out[k].type = d + off;
        out[k].type_len = type_len;
        out[k].content = d + p;
        out[k].size = size;
        out[k].metadata = name_len == 13 && memcmp(d + off + 15, "MetadataBlock", 13) == 0;
        k++;
        off = p + size + 1;
    }
    return k;
}

static void looped_recording(const char *path, unsigned loops)
{
    uint8_t *d;
    size_t n;
    if (!ts_read_file(path, &d, &n)) {
        printf("looped recording: cannot read %s\n", path);
        return;
    }
    static span blocks[4096];
    size_t first, nb = list_blocks(d, n, blocks, 4096, &first);
    nt_parser *p = nt_parser_new(&bench_touch_all, NULL, NULL, NULL);
    nt_parser_feed(p, d, first); /* header and Trace object */
    uint64_t total = first;
    tb b = { 0 };
    b.base = first;
    for (unsigned l = 0; l < loops; l++) {
        for (size_t i = 0; i < nb; i++) {
            if (blocks[i].metadata && l > 0)
                continue; /* metadata ids are defined once per stream */
            tb_bytes(&b, blocks[i].type, blocks[i].type_len);
            tb_u32(&b, blocks[i].size);
            while ((b.base + b.n) % 4)
                tb_u8(&b, 0);
            tb_bytes(&b, blocks[i].content, blocks[i].size);
            tb_u8(&b, 6);
        }
        nt_parser_feed(p, b.d, b.n);
        total += b.n;
        b.base += b.n;
        b.n = 0;
    }
    tb_end(&b);
    nt_parser_feed(p, b.d, b.n);
    total += b.n;
    nt_status s = nt_parser_finish(p);
    nt_parser_stats st = { 0 };
    nt_parser_stats_get(p, &st);
    printf("spin-threads x %4u %8.1f MB: %-6s events %10" PRIu64 "  peak memory %.3f MB\n", loops,
           (double)total / 1e6, nt_status_name(s), st.events, (double)st.memory_peak / 1e6);
    nt_parser_free(p);
    tb_free(&b);
    free(d);
}

int main(int argc, char **argv)
{
    printf("libnettrace %s parser benchmark (chunks of %u KiB, best of several runs)\n", nt_version(), CHUNK >> 10);
    const char *dirs[2] = { ts_shared_corpus(), ts_own_corpus() };
    if (argc > 1) {
        for (int i = 1; i < argc; i++)
            bench_file(argv[i], argv[i]);
    } else {
        if (!dirs[0])
            printf("(../shared/corpus is absent: only the project's own corpus is measured)\n");
        for (int k = 0; k < 2; k++) {
            if (!dirs[k])
                continue;
            DIR *dir = opendir(dirs[k]);
            if (!dir)
                continue;
            struct dirent *e;
            while ((e = readdir(dir))) {
                const char *ext = strrchr(e->d_name, '.');
                if (!ext || strcmp(ext, ".nettrace") != 0)
                    continue;
                char path[4096];
                snprintf(path, sizeof path, "%s/%s", dirs[k], e->d_name);
                bench_file(path, e->d_name);
            }
            closedir(dir);
        }
        /* The large recording of bench/record-large.sh (make bench-traceevent makes it). */
        const char *work = getenv("BENCH_WORK");
        char big[4096];
        snprintf(big, sizeof big, "%s/bench-100mb.nettrace", work ? work : "bench/work");
        FILE *f = fopen(big, "rb");
        if (f) {
            fclose(f);
            bench_file(big, "bench-100mb.nettrace (recorded)");
        }
    }
    printf("\npeak memory against stream length (parser only):\n");
    synthetic_memory(50);
    synthetic_memory(500);
    synthetic_memory(5000);
    const char *own = ts_path(ts_own_corpus(), "spin-threads.nettrace");
    char own_path[4096];
    snprintf(own_path, sizeof own_path, "%s", own);
    looped_recording(own_path, 1);
    looped_recording(own_path, 50);
    looped_recording(own_path, 500);
    return 0;
}
