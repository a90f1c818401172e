/* make_seeds: the one program that writes the project's generated traces.
 *
 *   make_seeds writer DIR
 *       corpus/seeds: small writer-made V4 and V6 traces, one corner of the
 *       format each, for conversion tests and as fuzz seeds ('make seeds').
 *   make_seeds heap DIR
 *       corpus/fuzz/heap: small heap snapshots for the heap fuzzer.
 *   make_seeds fuzz PARSER_DIR LIMITS_DIR IPC_DIR [RECORDED_CORPUS_DIR]
 *       corpus/fuzz: the parser seed corpus (hand-made streams from the test
 *       stream builder, writer-made streams, seeds cut from the project's
 *       recorded traces), its limit settings and the IPC replies
 *       ('make fuzz-seeds').
 *
 * Output is deterministic: running it again gives the same bytes.  Nothing
 * here is copied from any recorded trace. */
#ifndef NT_TOOLS_SEEDS_H
#define NT_TOOLS_SEEDS_H

#include "nettrace_writer.h"
#include "streams.h"

/* heap_seeds.c: corpus/fuzz/heap, small heap snapshots; the number of failures. */
int seeds_heap(const char *dir);

/* Write d[0..n) (after an 8-byte prefix when given) to DIR/NAME; exits on failure. */
void seeds_save_file(const char *dir, const char *name, const uint8_t *d, size_t n, const uint8_t *prefix);
/* Exit with a message when a writer call failed. */
void seeds_check(nt_writer *w, nt_status s, const char *what);

/* writer_seeds.c: corpus/seeds into dir; the number of failures. */
int seeds_writer(const char *dir);

/* fuzz_out.c: where the fuzz corpora go, and saving a parser seed: to the
 * parser corpus, with limit settings to the limits corpus, and (a few) as an
 * IPC reply stream.  Frees b. */
void fuzz_out_init(const char *parser_dir, const char *limits_dir, const char *ipc_dir);
void fuzz_save(const char *name, tb *b);
void fuzz_ipc_replies(void);
int fuzz_written(void);

/* fuzz_streams.c: the hand-made streams (test stream builder). */
void fuzz_streams(void);
/* fuzz_writer.c: writer-made streams, and seeds cut from recorded traces in dir (may be NULL). */
void fuzz_writer_streams(const char *recorded_dir);

#endif
