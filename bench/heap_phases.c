/* heap_phases FILE: where `nettrace heap`'s time and memory go, phase by
 * phase, on one snapshot: read (parse + graph build: decoding, the address
 * sort, references resolved), dominators (and retained sizes), type table.
 * CPU time of this process per phase (the shared machine's wall time is no
 * fair figure), the library's own byte counts (nt_heap_stats memory and
 * memory_peak) and the process's peak resident set after each phase; then
 * the heap's storage in bytes per object and per reference.  A measurement,
 * never a pass/fail limit. */
#include "nettrace_heap.h"

#include <stdio.h>
#include <sys/resource.h>
#include <time.h>

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static long peak_kib(void)
{
    struct rusage r;
    getrusage(RUSAGE_SELF, &r);
    return r.ru_maxrss;
}

static double mib(size_t bytes) { return (double)bytes / (1024.0 * 1024.0); }

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: heap_phases FILE\n");
        return 2;
    }
    char msg[256];
    nt_heap *h = NULL;
    double t0 = cpu_s();
    nt_status s = nt_heap_from_file(argv[1], NULL, &h, msg, sizeof msg);
    double t1 = cpu_s();
    long rss_read = peak_kib();
    if (!h) {
        fprintf(stderr, "heap_phases: %s: %s (%s)\n", argv[1], msg, nt_status_name(s));
        return 1;
    }
    nt_heap_stats read = { 0 }, dom = { 0 };
    nt_heap_stats_get(h, &read);
    if (nt_heap_dominators(h) != NT_OK) {
        fprintf(stderr, "heap_phases: out of memory in the dominators\n");
        nt_heap_free(h);
        return 1;
    }
    double t2 = cpu_s();
    long rss_dom = peak_kib();
    nt_heap_stats_get(h, &dom);
    nt_heap_table *t = NULL;
    if (nt_heap_type_table(h, NT_HEAP_BY_SHALLOW, &t) != NT_OK) {
        fprintf(stderr, "heap_phases: out of memory in the type table\n");
        nt_heap_free(h);
        return 1;
    }
    double t3 = cpu_s();
    long rss_table = peak_kib();
    double n = read.objects ? (double)read.objects : 1, e = (double)read.edges;
    /* The reference array is 4 bytes a reference; everything else (objects,
     * types, names, roots) is charged to the objects. */
    double per_obj = ((double)read.memory - 4 * e) / n;
    printf("heap_phases: %llu objects, %llu references, %llu types\n", (unsigned long long)read.objects,
           (unsigned long long)read.edges, (unsigned long long)read.types);
    printf("  read        %6.3f s CPU  heap %7.1f MiB  library peak %7.1f MiB  process peak %7.1f MiB\n", t1 - t0,
           mib(read.memory), mib(read.memory_peak), rss_read / 1024.0);
    printf("  dominators  %6.3f s CPU  heap %7.1f MiB  library peak %7.1f MiB  process peak %7.1f MiB\n", t2 - t1,
           mib(dom.memory), mib(dom.memory_peak > dom.memory ? dom.memory_peak : dom.memory), rss_dom / 1024.0);
    printf("  type table  %6.3f s CPU  (%zu rows)                                process peak %7.1f MiB\n", t3 - t2,
           t->count, rss_table / 1024.0);
    printf("  total       %6.3f s CPU\n", t3 - t0);
    printf("  storage: %.1f bytes per object + 4 per reference after reading; the dominators add %.1f per object\n",
           per_obj, ((double)dom.memory - (double)read.memory) / n);
    nt_heap_table_free(t);
    nt_heap_free(h);
    return 0;
}
