#!/bin/sh
# The built-in flame graph (issue 25, item 11): `stacks -f html` writes one
# self-contained page (nothing loaded from the network) for every profile;
# rendered in a real headless browser (Debian's chromium) the page's tree,
# written back as folded stacks by its #selftest mode, equals the folded
# export line for line, it draws frames, offers every thread, and a
# screenshot is kept as tests/flame-html/*.png.  The browser part skips,
# saying so, without chromium.
set -u
CHECKS_STOP=1
. "${top_srcdir:-.}/tests/support/cli_checks.sh"
need python3
spin="$top_srcdir/corpus/spin-threads.nettrace"
tree="$top_srcdir/corpus/call-tree.nettrace"
alloc="$top_srcdir/corpus/profile-alloc.nettrace"
exc="$top_srcdir/corpus/profile-exceptions.nettrace"
need_files "$spin" "$tree" "$alloc" "$exc"

# name TRACE ARGS...: the page and the folded export of one profile
make_page() {
    name=$1 trace=$2
    shift 2
    "$nt" stacks -f html "$@" -o "$tmp/$name.html" "$trace" || fail "stacks -f html $* $trace failed"
    "$nt" stacks -f folded "$@" "$trace" | LC_ALL=C sort > "$tmp/$name.folded" || fail "stacks -f folded $* failed"
    # offline: no address the page could load from, no external script or style
    if grep -Eiq 'https?://|<(script|link|img|iframe)[^>]* (src|href)=' "$tmp/$name.html"; then
        fail "$name.html refers to something outside itself: $(grep -Eio '.{20}https?://.{20}' "$tmp/$name.html" | head -3)"
    fi
}
make_page spin "$spin"
make_page tree "$tree"
make_page wall "$spin" --profile wall
make_page managed "$spin" --profile managed-cpu
make_page alloc "$alloc" --profile alloc
make_page exceptions "$exc" --profile exceptions
make_page alloc-label "$alloc" --profile alloc --by-label
echo "ok: stacks -f html wrote 7 self-contained pages (no network reference)"

browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
    echo "SKIP: chromium is not installed (.ci/deps installs it): the pages were not rendered"
    exit 77
fi
art="$top_builddir/tests/flame-html"
mkdir -p "$art"
run_browser() { # URL ARGS...: headless, offline, a fresh profile each time
    url=$1
    shift
    rm -rf "$tmp/profile"
    timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync --disable-extensions \
        --user-data-dir="$tmp/profile" "$@" "$url" 2>>"$tmp/browser.log"
}
for name in spin tree wall managed alloc exceptions alloc-label; do
    run_browser "file://$tmp/$name.html#selftest" --dump-dom > "$tmp/$name.dom" ||
        fail "chromium could not render $name.html: $(tail -5 "$tmp/browser.log")"
    python3 - "$tmp/$name.dom" "$tmp/$name.folded" "$name" <<'PY' || exit 1
import html, re, sys
dom = open(sys.argv[1], encoding="utf-8").read()
m = re.search(r'<pre id="selftest">(.*?)</pre>', dom, re.S)
assert m, f"{sys.argv[3]}: the page did not run its self-test (no <pre id=selftest>): {dom[:300]!r}"
page = html.unescape(m.group(1)).split("\n") if m.group(1) else []
folded = [l for l in open(sys.argv[2], encoding="utf-8").read().split("\n") if l]
assert sorted(page) == sorted(folded), (f"{sys.argv[3]}: the page holds {len(page)} stacks, the folded export"
                                        f" {len(folded)}; first difference: "
                                        f"{sorted(set(page) ^ set(folded))[:2]}")
frames = int(re.search(r'data-frames="(\d+)"', dom).group(1))
assert frames > 3, f"{sys.argv[3]}: only {frames} frames drawn"
options = re.findall(r"<option>([^<]*)</option>", dom)
assert options and options[0].startswith("every thread"), options[:3]
total = int(re.search(r'data-total="(\d+)"', dom).group(1))
assert total == sum(int(l.rsplit(" ", 1)[1]) for l in folded), (total, sys.argv[3])
print(f"ok: {sys.argv[3]}: {len(page)} stacks, total {total}, as the folded export; {frames} frames drawn,"
      f" {len(options) - 1} threads to choose")
PY
done
# the thread selector lists every sampled thread of the trace
threads=$("$nt" info --json "$spin" | python3 -c 'import json,sys; print(json.load(sys.stdin)["sampled_threads"])')
n=$(grep -o '<option>thread [0-9]*' "$tmp/spin.dom" | wc -l)
[ "$n" -eq "$threads" ] || fail "the page offers $n threads, the trace has $threads"
for name in spin alloc; do
    run_browser "file://$tmp/$name.html" --screenshot="$art/$name.png" --window-size=1280,800 >/dev/null ||
        fail "no screenshot of $name.html"
    [ -s "$art/$name.png" ] || fail "the screenshot $art/$name.png is empty"
done
echo "ok: screenshots kept in $art (spin.png, alloc.png)"
