/* The site of an event (a throw, a lock wait, an allocation): the frame that
 * names the user's code.  On .NET 9 and later every throw's leaf frame is the
 * runtime's managed exception dispatch (System.Runtime.EH.DispatchEx) and
 * every lock wait's is Monitor.Enter_Slowpath (and a pinned array's
 * allocation GC.AllocateArray), so the leaf tells no site from
 * another; the site is the innermost frame that is resolved and outside the
 * runtime's dispatch and wait machinery (the table in site.c, documented in
 * nettrace(1)), and the leaf itself when every frame is either. */
#ifndef CLI_SITE_H
#define CLI_SITE_H

#include "nettrace_trace.h"

#include <stdbool.h>

/* Whether f is an unresolved frame or one of the runtime's dispatch and wait
 * methods. */
bool cli_frame_is_machinery(const nt_frame *f);

/* The index in st.frame_ids (innermost first) of the stack's site; 0 (the
 * leaf) when raw_leaf or the stack is all machinery.  st has frames. */
uint32_t cli_site_index(const nt_trace *t, nt_trace_stack st, bool raw_leaf);

#endif
