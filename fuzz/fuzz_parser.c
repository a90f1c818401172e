/* The parser on a whole input, fed in one call.
 *
 * Besides "no crash, no leak, no sanitizer report" it checks that validation
 * does not depend on which callbacks are set (a parse without callbacks ends
 * with the same status at the same offset) and that a callback stopping the
 * parse at call k ends it with NT_ERR_STOPPED after exactly k calls. */
#include "fuzz.h"

#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ts_digest d;
    nt_parser_stats st = { 0 };
    uint64_t err;
    nt_limits lim = { 0 };
    fz_harness_limits(&lim);
    nt_status s = fz_parse(data, size, NULL, NULL, &lim, NULL, 0, &d, &st, &err);

    /* No callbacks at all (the one-call entry point): same verdict, same message. */
    char msg[256], msg_cb[256];
    nt_status s2 = nt_parse_buffer(data, size, NULL, NULL, &lim, msg, sizeof msg);
    ts_digest d3;
    nt_parser_stats st3 = { 0 };
    uint64_t err3;
    fz_parse(data, size, NULL, NULL, &lim, NULL, 0, &d3, &st3, &err3);
    (void)err3;
    nt_callbacks cb = { 0 };
    ts_digest_callbacks(&cb);
    ts_digest_init(&d3);
    nt_status s3 = nt_parse_buffer(data, size, &cb, &d3, &lim, msg_cb, sizeof msg_cb);
    if (s2 != s || s3 != s || strcmp(msg, msg_cb) != 0)
        fz_fail("without callbacks the parse ends \"%s\", with them \"%s\" (%s)", msg, msg_cb, nt_status_name(s));
    if (err > size)
        fz_fail("error offset beyond the input");

    /* Misuse of the API is an error, never a crash. */
    if (nt_parser_feed(NULL, data, size) != NT_ERR_INVALID_ARG || nt_parser_finish(NULL) != NT_ERR_INVALID_ARG ||
        nt_parser_status(NULL) != NT_ERR_INVALID_ARG || nt_parser_offset(NULL) != 0 ||
        nt_parser_error_offset(NULL) != 0 || nt_parser_trace_info(NULL) != NULL || *nt_parser_message(NULL))
        fz_fail("NULL parser not rejected");
    nt_parser_free(NULL);
    nt_parser *p = nt_parser_new(NULL, NULL, &lim, NULL);
    if (!p)
        fz_fail("nt_parser_new failed");
    size_t half = size / 2;
    if (nt_parser_feed(p, data, half) == NT_OK && nt_parser_feed(p, NULL, 1) != NT_ERR_INVALID_ARG)
        fz_fail("NULL data with a length accepted");
    nt_parser_free(p);

    /* Stop at a callback chosen from the input. */
    if (d.calls) {
        uint64_t k = 1 + fz_hash(data, size) % d.calls;
        ts_digest ds;
        nt_parser_stats sts = { 0 };
        uint64_t errs;
        nt_status ss = fz_parse(data, size, NULL, NULL, &lim, NULL, k, &ds, &sts, &errs);
        if (ss != NT_ERR_STOPPED || ds.calls != k)
            fz_fail("stop at callback %llu of %llu: status %s after %llu calls", (unsigned long long)k,
                    (unsigned long long)d.calls, nt_status_name(ss), (unsigned long long)ds.calls);
    }
    return 0;
}
