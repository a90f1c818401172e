#!/bin/sh
# check-cycles.sh [ARCHIVE]: fail when the library's units call each other in
# a cycle.  A unit is one object file of libnettrace_core (default: the
# archive $top_builddir/.libs/libnettrace_core.a, or "." when unset); unit A
# uses unit B when A has an undefined symbol that B defines (nm).  Any group
# of units that reach one another, directly or around a loop, is a cycle: it
# is printed with one loop through it and the symbols on each edge, and the
# script exits 1.  Exit 0: no cycle; 1: a cycle; 2: no archive to read.
#   make -j2 && tools/check-cycles.sh
set -u
BLD="${top_builddir:-.}"
lib="${1:-$BLD/.libs/libnettrace_core.a}"
if [ ! -f "$lib" ]; then
    echo "check-cycles: $lib not found (build the library first)" >&2
    exit 2
fi
NM="${NM:-nm}"
"$NM" "$lib" | awk '
# nm on an archive: "member.o:" lines, then "addr type name" or "U name".
/^$/ { next }
/:$/ {
    unit = substr($0, 1, length($0) - 1)
    sub(/^libnettrace_core_la-/, "", unit); sub(/\.o$/, "", unit)
    if (!(unit in seen)) { seen[unit] = 1; units[++n] = unit }
    next
}
{
    if (NF == 2 && $1 == "U") { used[unit, $2] = 1; uses[unit] = uses[unit] " " $2; next }
    if (NF == 3 && $2 ~ /^[A-TV-Z]$/) def[$3] = unit
}
END {
    # edges and the symbols that make them
    for (i = 1; i <= n; i++) {
        a = units[i]
        m = split(uses[a], syms, " ")
        for (k = 1; k <= m; k++) {
            b = def[syms[k]]
            if (b == "" || b == a) continue
            if (!((a, b) in edge)) { edge[a, b] = syms[k]; succ[a] = succ[a] " " b }
            else if (index(" " edge[a, b] " ", " " syms[k] " ") == 0) edge[a, b] = edge[a, b] " " syms[k]
        }
    }
    # reachability (n is a few dozen units: the cube is cheap)
    for (i = 1; i <= n; i++) for (j = 1; j <= n; j++) reach[i, j] = ((units[i], units[j]) in edge)
    for (k = 1; k <= n; k++) for (i = 1; i <= n; i++) if (reach[i, k]) for (j = 1; j <= n; j++) if (reach[k, j]) reach[i, j] = 1
    bad = 0
    for (i = 1; i <= n; i++) {
        if (done[i] || !reach[i, i]) continue
        group = units[i]; done[i] = 1
        for (j = i + 1; j <= n; j++) if (reach[i, j] && reach[j, i]) { group = group " " units[j]; done[j] = 1 }
        bad++
        print "cycle among: " group
        # one loop: breadth-first from units[i] back to itself
        delete parent; delete q; head = 1; tail = 0
        q[++tail] = units[i]; parent[units[i]] = ""
        found = ""
        while (head <= tail && found == "") {
            x = q[head++]
            m = split(succ[x], nx, " ")
            for (k = 1; k <= m; k++) {
                y = nx[k]
                if (y == units[i]) { found = x; break }
                if (!(y in parent)) { parent[y] = x; q[++tail] = y }
            }
        }
        path = units[i]; y = found
        while (y != units[i]) { path = y " " path; y = parent[y] }
        path = units[i] " " path
        m = split(path, p, " ")
        for (k = 1; k < m; k++) print "    " p[k] " -> " p[k + 1] " (" edge[p[k], p[k + 1]] ")"
    }
    if (bad) { print "check-cycles: " bad " cycle(s) among " n " units"; exit 1 }
    print "check-cycles: no cycle among " n " units"
}'
