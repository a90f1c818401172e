/* The thread table and drop accounting, one for both versions: keyed by the
 * capture thread id in V4/V5 (entries made on first sight) and by the thread
 * index in V6 (entries made by Thread blocks, removed by RemoveThread, all
 * dropped by a thread flush).  Each entry carries the sequence-number state
 * that detects lost events.
 *
 * Keys come from the input, so the table hashes them with a per-parser
 * secret key (common/hash.h) and caps the live entries at max_threads: no
 * key set can make lookups slow, none can grow it without bound. */
#ifndef PS_THREADS_H
#define PS_THREADS_H

#include "common/alloc.h"
#include "common/hash.h"

typedef struct ps_thread_entry {
    uint64_t key;       /* V4/V5: capture thread id; V6: thread index */
    uint64_t os_tid;    /* the OS thread id (V4/V5: the key; V6: from the Thread block) */
    uint64_t os_pid;    /* V6 */
    uint32_t last_seq;  /* 0: nothing seen yet */
    uint32_t dropped;   /* since the last sequence point */
    uint8_t state;      /* PS_THREAD_EMPTY, _LIVE, _REMOVED */
} ps_thread_entry;

enum { PS_THREAD_EMPTY = 0, PS_THREAD_LIVE = 1, PS_THREAD_REMOVED = 2 /* a tombstone */ };

/* Entries found lately, in a direct-mapped array by the key's low bits: an
 * event block alternating between a few threads looks each up again at
 * every switch, and a hit costs no keyed hash.  V6 indexes below 64 each
 * have their slot. */
#define PS_THREAD_RECENT 64
#define PS_THREAD_SLOT(key) ((size_t)(key) & (PS_THREAD_RECENT - 1))

typedef struct ps_thread_table {
    ps_thread_entry *e;       /* open addressing, power-of-two capacity */
    ps_thread_entry *recent[PS_THREAD_RECENT]; /* live entries only (NULL: none) */
    size_t cap, fill, live;   /* fill counts tombstones */
    ps_thread_entry *last;    /* V4/V5: the capture thread found last (runs of events share it) */
    cm_hash_key key;
    uint64_t probes;          /* slots visited past the first (tests bound it) */
} ps_thread_table;

void ps_threads_init(ps_thread_table *t, const void *owner);
void ps_threads_free(ps_thread_table *t, cm_mem *mem);
void ps_threads_clear(ps_thread_table *t); /* V6 thread flush */
/* Blocks were skipped (a windowed read): the next event or sequence point of
 * each thread starts its count again rather than counting the skipped as lost. */
void ps_threads_forget_sequence(ps_thread_table *t);

/* The live entry of key, or NULL. */
ps_thread_entry *ps_threads_find_hashed(ps_thread_table *t, uint64_t key);
static inline ps_thread_entry *ps_threads_find(ps_thread_table *t, uint64_t key)
{
    ps_thread_entry *e = t->recent[PS_THREAD_SLOT(key)];
    return e && e->key == key ? e : ps_threads_find_hashed(t, key);
}

/* A new live entry for key (which must not be live): NT_ERR_LIMIT past
 * max_threads live entries, NT_ERR_NOMEM; the error is recorded at off. */
nt_status ps_threads_add(nt_parser *p, uint64_t key, uint64_t off, ps_thread_entry **out);

/* The entry of key, made on first sight (V4/V5 capture threads). */
nt_status ps_threads_get(nt_parser *p, uint64_t key, uint64_t off, ps_thread_entry **out);

static inline void ps_threads_remove(ps_thread_table *t, ps_thread_entry *e)
{
    e->state = PS_THREAD_REMOVED;
    t->live--;
    if (t->recent[PS_THREAD_SLOT(e->key)] == e)
        t->recent[PS_THREAD_SLOT(e->key)] = NULL;
    if (t->last == e)
        t->last = NULL;
}

/* Sequence numbers count attempted writes per capture thread, so a gap
 * between consecutive events is a drop.  V4/V5 thread ids are recycled: a
 * restart at 1 is a new thread, not a drop (restart_ok); V6 indexes are not.
 * Returns the events lost before seq (0: none), added to the thread's drops;
 * the caller reports a gap (ps_gap_report). */
static inline uint32_t ps_seq_event(ps_thread_entry *t, uint32_t seq, bool restart_ok)
{
    uint32_t lost = 0;
    if (t->last_seq != 0 && seq != t->last_seq + 1 && !(restart_ok && seq == 1)) {
        uint32_t gap = seq - t->last_seq - 1;
        if (gap < 0x80000000u) {
            t->dropped += gap;
            lost = gap;
        }
    }
    t->last_seq = seq;
    return lost;
}

/* A sequence point's (or RemoveThread's) number for the thread: higher than
 * its last event's means events were lost.  Returns how many. */
static inline uint32_t ps_seq_point(ps_thread_entry *t, uint32_t seq)
{
    uint32_t d = 0;
    if (t->last_seq != 0 && seq != t->last_seq && seq - t->last_seq < 0x80000000u)
        d = seq - t->last_seq;
    t->last_seq = seq;
    return d;
}

#endif
