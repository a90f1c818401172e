/* make_seeds: see seeds.h for what it writes where. */
#include "seeds.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void seeds_save_file(const char *dir, const char *name, const uint8_t *d, size_t n, const uint8_t *prefix)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || (prefix && fwrite(prefix, 1, 8, f) != 8) || (n && fwrite(d, 1, n, f) != n) || fclose(f) != 0) {
        fprintf(stderr, "make_seeds: cannot write %s\n", path);
        exit(1);
    }
}

void seeds_check(nt_writer *w, nt_status s, const char *what)
{
    if (s != NT_OK) {
        fprintf(stderr, "make_seeds: %s: %s\n", what, nt_writer_message(w));
        exit(1);
    }
}

static int usage(void)
{
    fprintf(stderr, "usage: make_seeds writer DIR\n"
                    "       make_seeds fuzz PARSER_DIR LIMITS_DIR IPC_DIR [RECORDED_CORPUS_DIR]\n");
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "writer") == 0)
        return seeds_writer(argv[2]);
    if (argc == 3 && strcmp(argv[1], "heap") == 0)
        return seeds_heap(argv[2]);
    if ((argc == 5 || argc == 6) && strcmp(argv[1], "fuzz") == 0) {
        fuzz_out_init(argv[2], argv[3], argv[4]);
        fuzz_ipc_replies();
        fuzz_streams();
        fuzz_writer_streams(argc == 6 ? argv[5] : NULL);
        printf("make_seeds: wrote %d files\n", fuzz_written());
        return 0;
    }
    return usage();
}
