/* live_prepare: build the LiveTarget workload the session tests use (once
 * per build tree, tests/live_target.c) for the bindings' tests, and print
 * its .dll path.  Exit 0 when built; 77 with the reason when the tests must
 * skip (no dotnet); 1 when the build failed. */
#include "live_target.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
    const char *why = live_prepare();
    if (why) {
        printf("%s\n", why);
        return strncmp(why, "BUILD FAILED", 12) == 0 ? 1 : 77;
    }
    printf("%s/out/LiveTarget.dll\n", live_build_dir());
    return 0;
}
