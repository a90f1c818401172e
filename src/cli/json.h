/* Minimal JSON output helpers. */
#ifndef NT_CLI_JSON_H
#define NT_CLI_JSON_H

#include <stdio.h>

/* Write s as a JSON string literal (quotes included); NULL writes null. */
void json_string(FILE *f, const char *s);

#endif
