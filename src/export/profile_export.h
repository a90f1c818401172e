/* What the event profiles' exporters share (profile_export.c: folded and
 * speedscope; profile_pprof.c). */
#ifndef NT_PROFILE_EXPORT_H
#define NT_PROFILE_EXPORT_H

#include "export/export_names.h"
#include "trace/profile_internal.h"

#include <stdio.h>

/* Checks the arguments (NT_ERR_INVALID_ARG), then the allocator m (the
 * trace's) and the frame names; on another failure nm holds nothing. */
nt_status tr_prof_open(const nt_profile *p, const nt_profile_export_options *o, nt_sink_fn w, nt_mem *m,
                       tr_names *nm);
/* Whether record i is of the export's kind (and thread). */
bool tr_prof_selected(const nt_profile *p, const nt_profile_export_options *o, size_t i);
/* Record i's weight: its value, or its event count with by_count. */
int64_t tr_prof_weight(const nt_profile *p, const nt_profile_export_options *o, size_t i);
/* Record i's label as shown: "Type (soh)", "Type", "managed lock (open)". */
size_t tr_prof_label(const nt_profile *p, size_t i, char *buf, size_t size);

#endif
