/* The one rule for "the code at these addresses changed", for everything in
 * the trace layer that keeps loaded code or merges work by stack.
 *
 * A method record says one of three things about the code in its extent
 * [start, start + size):
 *  - code arrives: a load (MethodLoad, the JIT) puts it there now, and a
 *    DCStart rundown says it is there at the session's start.  Both stand for
 *    loaded code, which a later unload of the same (method id, start) closes
 *    (the builder's and the record store's live maps take exactly these:
 *    tr_code_arrives);
 *  - code leaves: an unload;
 *  - code is described: DCEnd rundown repeats what is loaded at the stream's
 *    end, and changes nothing.
 * What is merged by stack (the aggregator's counted entries, the event
 * profiles' records) resolves at its first sample's or event's time, so it
 * is kept apart wherever the same stack may resolve differently later: the
 * epoch, a number of such changes, is part of the merge key.  It moves at
 *  - an unload, whose addresses name nothing from then on, and
 *  - a load once some code was unloaded: until then no address has held
 *    other code, and a load names the samples in its code before it as well
 *    as after it (resolve.c), so a first load changes nothing;
 * and only when the extent may hold an address a stack has looked up so far
 * (the trace builder's line filter says "maybe": records.c), since a change
 * elsewhere cannot alter a stack merged before it.  One epoch per trace
 * builder: the event profile built beside it reads it (tr_builder_code_epoch),
 * and a live window tells its builder of each change as the stream delivers
 * it (window.c), with whether the stream had unloaded code before that
 * builder started (the record store counts unloads), since the window's
 * records reach its builder only at the window's end. */
#ifndef TR_CODE_EPOCH_H
#define TR_CODE_EPOCH_H

#include "nettrace.h"

#include <stdbool.h>

/* The key of loaded code in a live map (the builder's, the record store's):
 * its method id and start, which an unload names again to close it. */
static inline uint64_t tr_live_key(uint64_t method_id, uint64_t start)
{
    return method_id * 0x9E3779B97F4A7C15ull ^ start;
}

/* m stands for loaded code (a load or DCStart rundown): it enters a live map. */
static inline bool tr_code_arrives(const nt_method *m)
{
    return m->which == NT_RECORD_LOAD || m->which == NT_RECORD_DC_START;
}

/* The state of the rule for one builder: the epoch, and whether the stream
 * has unloaded code so far. */
typedef struct tr_code_epoch {
    uint32_t epoch;
    bool unloaded;
} tr_code_epoch;

/* Whether m moves the epoch if its extent may hold a looked-up address (the
 * caller checks that, then counts the change); an unload is noted. */
static inline bool tr_code_epoch_may_move(tr_code_epoch *e, const nt_method *m)
{
    if (m->which == NT_RECORD_UNLOAD) {
        e->unloaded = true;
        return true;
    }
    return m->which == NT_RECORD_LOAD && e->unloaded;
}

#endif
