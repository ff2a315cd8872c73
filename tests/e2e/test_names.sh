#!/usr/bin/env bash
# Names, not hashes: a program that reads its kernels from a file and passes
# the bytes to cuModuleLoadData leaves only their hash in the trace. The
# report finds the file by content among those the trace points at (here the
# program's arguments, relative to its working directory) and calls the load
# by it, in text and in the fix; JSON keeps the hash and says where the bytes
# came from. A file whose bytes changed since is not named: the hash stays.
. "$(dirname "$0")/lib.sh"
img="$WORK/img"
mkdir -p "$img"
cp "$FIX/k75.ptx" "$FIX/ptx75.fatbin" "$img/"
mkdir -p "$WORK/named.traces"
(cd "$img" && env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/named.traces" \
    "$BIN/prog_direct" . 0 module k75.ptx ptx75.fatbin >"$WORK/named.out" 2>&1) ||
    fail "prog_direct failed: $(cat "$WORK/named.out")"
trace=$(the_trace named)
"$JST_CLI" report "$trace" >"$WORK/named.txt" 2>&1 || fail "report failed"
grep -q '^  [0-9]\. .*  k75.ptx (via cuModuleLoadData)$' "$WORK/named.txt" ||
    fail "the PTX file is not named: $(cat "$WORK/named.txt")"
grep -q '^  [0-9]\. .*  ptx75.fatbin (via cuModuleLoadData)$' "$WORK/named.txt" ||
    fail "the fatbin file is not named: $(cat "$WORK/named.txt")"
grep -q 'fix        compile k75.ptx (which the program passes to cuModuleLoadData) ahead of time' \
    "$WORK/named.txt" || fail "the fix does not name the file: $(cat "$WORK/named.txt")"
if grep -q 'image in memory' "$WORK/named.txt"; then
    fail "a hash is shown where the file is known: $(cat "$WORK/named.txt")"
fi
"$JST_CLI" report --json "$trace" 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["processes"][0]
m = {x["read_from"]: x for x in p["modules"] if x["culprit"]}
assert set(m) == {"k75.ptx", "ptx75.fatbin"}, m.keys()
assert all(x["image_hash"].startswith("0x") and len(x["image_hash"]) == 18 for x in m.values())
assert all(x["source"] is None for x in m.values())' || fail "JSON: read_from and image_hash"
# The file changed after the run: its bytes are not the image's, no name.
echo "// changed" >>"$img/k75.ptx"
"$JST_CLI" report "$trace" >"$WORK/changed.txt" 2>&1 || fail "report failed"
grep -q '^  [0-9]\. .*  (image in memory 0x[0-9a-f]*, via cuModuleLoadData)$' "$WORK/changed.txt" ||
    fail "a changed file is still named: $(cat "$WORK/changed.txt")"
echo "ok: names, not hashes"
