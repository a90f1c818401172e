/* Plain driver for the fuzz harnesses: feeds each file named on the command
 * line (directories are walked, one level of subdirectories included) to
 * LLVMFuzzerTestOneInput as an exact-size heap copy, so AddressSanitizer sees
 * any over-read.  Built with the normal compiler (and --enable-sanitizers),
 * it replays the seed and regression corpora in make check. */
#include "fuzz.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static unsigned long files;

static int replay_file(const char *path)
{
    uint8_t *data;
    size_t len;
    if (!ts_read_file(path, &data, &len)) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        return 1;
    }
    /* Exact-size copy: ts_read_file allocates len bytes, but an empty file gets 1. */
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy) {
        free(data);
        return 1;
    }
    memcpy(copy, data, len);
    free(data);
    LLVMFuzzerTestOneInput(len ? copy : NULL, len);
    free(copy);
    files++;
    return 0;
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int replay_path(const char *path, int depth)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: no such file or directory: %s\n", path);
        return 1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path);
    if (depth > 1)
        return 0;
    DIR *dir = opendir(path);
    if (!dir)
        return 1;
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        if (e->d_name[0] == '.')
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 64;
            char **nn = realloc(names, cap * sizeof *names);
            if (!nn)
                abort();
            names = nn;
        }
        size_t l = strlen(path) + strlen(e->d_name) + 2;
        names[n] = malloc(l);
        if (!names[n])
            abort();
        snprintf(names[n], l, "%s/%s", path, e->d_name);
        n++;
    }
    closedir(dir);
    if (n)
        qsort(names, n, sizeof *names, compare_names); /* a stable order makes failures reproducible */
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        rc |= replay_path(names[i], depth + 1);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    int rc = 0;
    for (int i = 1; i < argc; i++)
        rc |= replay_path(argv[i], 0);
    printf("%s: replayed %lu inputs\n", argc > 0 ? argv[0] : "replay", files);
    return rc;
}
