#!/usr/bin/env bash
# The man pages build to roff, render with man(1) without groff errors, and
# `cmake --install` puts them where `man` finds them.
# usage: test_man.sh BUILD_DIR
set -u
B=$1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
pages=("$B"/man/man1/*.1)
[ -e "${pages[0]}" ] || { echo "FAIL: no man pages built in $B/man/man1"; exit 1; }
[ ${#pages[@]} -ge 9 ] || fail "only ${#pages[@]} man pages built"
for p in "${pages[@]}"; do
  name=$(basename "$p" .1)
  out=$(MANWIDTH=80 man --warnings -l "$p" 2>"$p.warn")
  # A table wider than 80 columns is cosmetic; anything else groff says is a defect.
  other=$(grep -v 'around line\|table wider than line width' "$p.warn")
  rm -f "$p.warn"
  [ -z "$other" ] || fail "$name: groff warnings: $other"
  grep -q "^NAME" <<<"$out" || fail "$name: no NAME section"
  grep -Eq "^ +$name +- " <<<"$out" || fail "$name: NAME does not start with '$name - '"
  head -1 <<<"$out" | grep -qi "^$name(1)" || fail "$name: title line is '$(head -1 <<<"$out")'"
  grep -q '```\|^## ' <<<"$out" && fail "$name: Markdown left in the rendered page"
done
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$B" --prefix "$prefix" >/dev/null || fail "cmake --install failed"
[ -e "$prefix/share/man/man1/jitstall.1" ] || fail "install did not put jitstall.1 in share/man/man1"
MANWIDTH=80 man -M "$prefix/share/man" jitstall-report 2>/dev/null | grep -Eq "jitstall-report +- " ||
  fail "man -M PREFIX/share/man jitstall-report finds nothing after install"
[ $fails -eq 0 ] && echo "ok: ${#pages[@]} man pages render and install"
exit $((fails > 0))
