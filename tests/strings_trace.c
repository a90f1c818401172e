/* Writes a small trace whose names and payload strings are hostile to a JSON
 * writer: quotes, backslashes, control characters, unpaired UTF-16
 * surrogates, and a V6 provider name that is not valid UTF-8.  Used by
 * tests/cli_events.sh.  Usage: strings_trace OUT.nettrace {4|6} */
#include "nettrace_writer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    nt_membuf out = { 0 };
    nt_writer_options o = { 0 };
    nt_writer_options_default(&o);
    o.format = (uint32_t)atoi(argv[2]);
    nt_writer *w = nt_writer_new(&o, nt_membuf_write, &out, NULL);
    const nt_field f[] = { { "Text \"q\"\n", NT_TYPE_STRING, 0, 0 }, { "N", NT_TYPE_INT32, 0, 0 } };
    /* V4 names are UTF-16 in the stream, so only V6 can carry bytes that are not UTF-8 */
    nt_event_desc d = { .provider = o.format == 6 ? "Bad\xff\xfe-Provider\x01" : "Odd\"Provider\\",
                        .event_id = 1, .event_name = "Ev\t1", .field_count = 2, .fields = f };
    uint32_t id;
    if (!w || nt_writer_define(w, &d, &id) != NT_OK)
        return 1;
    /* "a\"b\\c<TAB><0x01><lone high surrogate>z" as UTF-16LE, NUL-terminated, then N = 7 */
    const uint16_t units[] = { 'a', '"', 'b', '\\', 'c', '\t', 0x01, 0xD800, 'z', 0 };
    uint8_t payload[sizeof units + 4];
    for (size_t i = 0; i < sizeof units / 2; i++) {
        payload[2 * i] = (uint8_t)units[i];
        payload[2 * i + 1] = (uint8_t)(units[i] >> 8);
    }
    memcpy(payload + sizeof units, "\x07\0\0\0", 4);
    for (int i = 0; i < 3; i++) {
        nt_writer_event e = { .metadata_id = id, .thread_id = 5, .timestamp = 100 - i, .payload = payload,
                              .payload_size = sizeof payload };
        if (nt_writer_write_event(w, &e) != NT_OK)
            return 1;
    }
    if (nt_writer_finish(w) != NT_OK)
        return 1;
    nt_writer_free(w);
    FILE *fp = fopen(argv[1], "wb");
    if (!fp || fwrite(out.data, 1, out.len, fp) != out.len || fclose(fp) != 0)
        return 1;
    nt_membuf_free(&out);
    return 0;
}
