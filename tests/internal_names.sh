#!/bin/sh
# nt_ / NT_ belong to the public API alone (doc/design.md, "Names"): every name in src/ that carries the
# prefix must be declared in include/.  An internal name takes its layer's prefix instead (cm_ ps_ wr_ tr_
# hp_ ex_ ss_ cli_).  A token that ends in '_' (a prefix pasted with ## or named in a comment as NT_X_*)
# passes when a public name begins with it.
top=${top_srcdir:-$(cd "$(dirname "$0")/.." && pwd)}
public=$(mktemp) used=$(mktemp)
trap 'rm -f "$public" "$used"' EXIT
grep -rhoE '\b(nt|NT)_[A-Za-z0-9_]+' "$top"/include | sort -u >"$public"
find "$top"/src -name '*.[ch]' -exec grep -HnoE '\b(nt|NT)_[A-Za-z0-9_]+' {} + >"$used"
bad=0
while IFS= read -r hit; do
    name=${hit##*:}
    grep -qx -- "$name" "$public" && continue
    case $name in
        *_) grep -q -- "^$name" "$public" && continue ;;
    esac
    echo "internal_names: ${hit#"$top"/} carries the public prefix but no header in include/ declares it" >&2
    bad=1
done <"$used"
if [ $bad -eq 0 ]; then
    echo "internal_names: every nt_/NT_ name in src/ is declared in include/ ($(sort -u -t: -k3 "$used" | wc -l) distinct)"
fi
exit $bad
