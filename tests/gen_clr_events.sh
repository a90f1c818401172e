#!/bin/sh
# The committed runtime event table is what tools/gen_clr_events.py makes of
# the manifests it names.  The manifests are not in the repository: set
# CLR_MANIFESTS to their paths (in order), or keep them as ClrEtwAll.man and
# ClrEtwAll-additions.man in a notes/ folder beside the checkout.
set -u
if [ -z "${CLR_MANIFESTS:-}" ]; then
    for d in "$top_srcdir/../notes" "$top_srcdir/../../notes"; do
        if [ -f "$d/ClrEtwAll.man" ] && [ -f "$d/ClrEtwAll-additions.man" ]; then
            CLR_MANIFESTS="$d/ClrEtwAll.man $d/ClrEtwAll-additions.man"
            break
        fi
    done
fi
if [ -z "${CLR_MANIFESTS:-}" ]; then
    echo "SKIP: no copy of the runtime's event manifest (set CLR_MANIFESTS; see tools/gen_clr_events.py)"
    exit 77
fi
command -v python3 >/dev/null || { echo "SKIP: python3 not found"; exit 77; }
# shellcheck disable=SC2086
python3 "$top_srcdir/tools/gen_clr_events.py" --check -o "$top_srcdir/src/parse/clr_event_table.c" $CLR_MANIFESTS
