/* The runtime providers' keywords by name, as dotnet-trace's --clrevents
 * spells them (gc, loader, jit, exception, contention, ...), for
 * --providers Microsoft-Windows-DotNETRuntime:gc+exception:5 and for the
 * table of enabled providers collect prints.  The values are those of the
 * runtime's event manifest (ClrEtwAll.man), documented in nettrace(1). */
#ifndef CLI_KEYWORDS_H
#define CLI_KEYWORDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* s: a number (hex with 0x, or decimal), or keyword names joined by '+'
 * (any case) -- names only for the runtime and rundown providers.  false
 * with the reason in err otherwise. */
bool cli_keywords_parse(const char *provider, const char *s, uint64_t *out, char *err, size_t errsize);

/* The names of the known keywords in mask, joined by '+' ("loader+jit"),
 * with "+0x..." for bits no name covers; "" for other providers or 0. */
void cli_keywords_names(const char *provider, uint64_t mask, char *buf, size_t size);

#endif
