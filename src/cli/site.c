/* The runtime's dispatch and wait machinery, skipped when naming a site (see site.h). */
#include "cli/site.h"

#include <string.h>

/* Declaring types (with their nested types, "Type+Nested") of CoreLib whose
 * methods only carry a throw or a wait out for their caller.  method NULL:
 * every method of the type. */
static const struct machinery {
    const char *type;
    const char *method;
} MACHINERY[] = {
    /* exceptions: .NET 9+ managed dispatch, its entry points and throw helpers */
    { "System.Runtime.EH", NULL },
    { "System.Runtime.ExceptionServices.InternalCalls", NULL },
    { "System.Runtime.ExceptionServices.ExceptionDispatchInfo", "Throw" },
    { "System.ThrowHelper", NULL },
    { "System.ArgumentNullException", "Throw" },
    { "System.ArgumentNullException", "ThrowIfNull" },
    { "System.ArgumentException", "ThrowNullOrEmptyException" },
    { "System.ArgumentException", "ThrowIfNullOrEmpty" },
    { "System.ArgumentOutOfRangeException", "ThrowIfNegative" },
    { "System.ObjectDisposedException", "ThrowIf" },
    /* allocations through the GC's array API: the caller asked for them */
    { "System.GC", "AllocateArray" },
    { "System.GC", "AllocateUninitializedArray" },
    /* lock waits: Monitor (lock statement), System.Threading.Lock and the waits under them */
    { "System.Threading.Monitor", NULL },
    { "System.Threading.Lock", NULL },
    { "System.Threading.ObjectHeader", NULL },
    { "System.Threading.SyncTable", NULL },
    { "System.Threading.SpinWait", NULL },
    { "System.Threading.LowLevelLock", NULL },
    { "System.Threading.LowLevelMonitor", NULL },
    { "System.Threading.LowLevelSpinWaiter", NULL },
    { "System.Threading.WaitSubsystem", NULL },
};

static bool type_is(const char *type, const char *want)
{
    size_t n = strlen(want);
    return strncmp(type, want, n) == 0 && (type[n] == '\0' || type[n] == '+');
}

bool cli_frame_is_machinery(const nt_frame *f)
{
    if (f->method_index == NT_TRACE_NO_METHOD)
        return true; /* native runtime code, unnamed: never the user's site */
    const char *type = f->method->declaring_type, *name = f->method->name;
    for (size_t i = 0; i < sizeof MACHINERY / sizeof MACHINERY[0]; i++)
        if (type_is(type, MACHINERY[i].type) && (!MACHINERY[i].method || strcmp(name, MACHINERY[i].method) == 0))
            return true;
    return false;
}

uint32_t cli_site_index(const nt_trace *t, nt_trace_stack st, bool raw_leaf)
{
    if (raw_leaf)
        return 0;
    for (uint32_t i = 0; i < st.frame_count; i++)
        if (!cli_frame_is_machinery(nt_trace_frame_at(t, st.frame_ids[i])))
            return i;
    return 0;
}
