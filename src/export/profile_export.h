/* What the event profiles' exporters share (profile_export.c: folded and
 * speedscope; profile_pprof.c). */
#ifndef EX_PROFILE_EXPORT_H
#define EX_PROFILE_EXPORT_H

#include "export/export_internal.h"
#include "nettrace_profile.h"

#include <stdio.h>

/* One exporter's writing: p's records of opt->kind through w, with the frame
 * names nm allocated from m (the trace's allocator).  st is NT_OK, or the
 * failure to build the names (nm then holds nothing), which the body returns. */
typedef nt_status (*ex_prof_body)(const nt_profile *p, const nt_profile_export_options *opt, cm_mem *m,
                                  const ex_names *nm, nt_status st, nt_sink_fn w, void *user);

/* Checks the arguments (NT_ERR_INVALID_ARG), builds the frame names, runs
 * body and frees the names: the frame of every profile exporter. */
nt_status ex_prof_export(const nt_profile *p, const nt_profile_export_options *o, nt_sink_fn w, void *user,
                         ex_prof_body body);
/* Whether record i (r: nt_profile_record_at) is of the export's kind (and thread). */
bool ex_prof_selected(const nt_profile_record *r, const nt_profile_export_options *o);
/* A record's weight: its value, or its event count with by_count. */
int64_t ex_prof_weight(const nt_profile_record *r, const nt_profile_export_options *o);
/* A record's label as shown: "soh:Type" (the heap first, as top and samples
 * spell it), "Type", "Type: message", "managed lock (open)". */
size_t ex_prof_label(const nt_profile_record *r, char *buf, size_t size);

#endif
