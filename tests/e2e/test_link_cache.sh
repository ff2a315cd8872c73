#!/usr/bin/env bash
# Link steps and the JIT cache. The driver compiles PTX given
# to cuLinkAddData and caches it like a load's: the simulated driver stores it
# cold and hits warm, under the same rules (disabled, too small, no
# directory, read-only). The trace gives the link step the cache outcome a load
# would get, and `jitstall report` shows it (not "-") and counts a warm link
# step as cache load, not compile.
. "$(dirname "$0")/lib.sh"

# link_case NAME [VAR=value...]: prog_link of k75.ptx with and without the
# preload (same output), then the link step's record in $WORK/NAME.json.
link_case() {
    local name=$1
    shift
    run_plain "$name.plain" "$@" CUDA_CACHE_PATH="$WORK/plain-$name" "$BIN/prog_link" "$FIX" 0 k75.ptx
    run_traced "$name" "$@" "$BIN/prog_link" "$FIX" 0 k75.ptx
    same_behaviour "$name.plain" "$name"
    expect_rc "$name" 0
    dump_json "$(the_trace "$name")" "$WORK/$name.json"
}

# check_link NAME CACHE REASON: the cuLinkAddData record's cache outcome.
check_link() {
    check_json "$WORK/$1.json" cache="$2" reason="$3" <<'PY'
l = one("cuLinkAddData")
expect(l["result"] == 0 and l["verdict"] == "ptx_jit", "the PTX link step JIT-compiles")
expect(l.get("cache", "none") == arg["cache"], f"cache {l.get('cache')}, expected {arg['cache']}")
expect(l.get("cache_reason", "none") == arg["reason"],
       f"cache_reason {l.get('cache_reason')}, expected {arg['reason']}")
PY
}

# report_link NAME CACHE_TEXT PART: the text report's cache line for the link
# step, and the JIT time counted as PART ("compile" or "cache_load").
report_link() {
    local trace
    trace=$(the_trace "$1")
    "$JST_CLI" report "$trace" >"$WORK/$1.txt" 2>&1 || fail "$1: report failed"
    grep -q "^     cache      $2" "$WORK/$1.txt" ||
        fail "$1: the link step's cache is not '$2': $(grep -A8 Culprits "$WORK/$1.txt")"
    "$JST_CLI" report --json "$trace" 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["processes"][0]
part = sys.argv[1]
assert p["jit_ns"] > 0 and p["jit_" + part + "_ns"] == p["jit_ns"], (part, p["jit_ns"],
    p["jit_compile_ns"], p["jit_cache_load_ns"])' "$3" || fail "$1: JIT time not counted as $3"
}

cache="$WORK/cache-link"
link_case cold CUDA_CACHE_PATH="$cache"
check_link cold miss_stored none
check_json "$WORK/cold.json" <<'PY'
expect(one("cuLinkAddData").get("cache_new_entries") == 1, "one entry stored by the link step")
PY
report_link cold miss_stored compile
[ "$(find "$cache" -type f ! -name index | wc -l)" = 1 ] || fail "the simulated driver stored no entry"

link_case warm CUDA_CACHE_PATH="$cache"
check_link warm hit none
report_link warm hit cache_load

link_case disabled CUDA_CACHE_DISABLE=1 CUDA_CACHE_PATH="$WORK/cd"
check_link disabled miss_not_stored disabled
report_link disabled "miss_not_stored (disabled)" compile

link_case tiny CUDA_CACHE_MAXSIZE=4096 CUDA_CACHE_PATH="$WORK/tiny"
check_link tiny miss_not_stored too_small

: >"$WORK/afile"
link_case nodir CUDA_CACHE_PATH="$WORK/afile/cache"
check_link nodir miss_not_stored no_dir

# Read-only: chmod for a user; a read-only bind mount in a private mount
# namespace for root (root writes through modes).
ro="$WORK/ro"
mkdir -p "$ro"
if [ "$(id -u)" != 0 ]; then
    chmod 0555 "$ro"
    link_case readonly CUDA_CACHE_PATH="$ro"
    check_link readonly miss_not_stored read_only
elif unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" "$1" &&
        mount -o remount,ro,bind "$1" "$1"' _ "$ro" 2>/dev/null; then
    mkdir -p "$WORK/readonly.traces"
    unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" "$1" &&
        mount -o remount,ro,bind "$1" "$1" && shift && exec env "$@"' _ "$ro" \
        LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/readonly.traces" CUDA_CACHE_PATH="$ro" \
        "$BIN/prog_link" "$FIX" 0 k75.ptx >/dev/null 2>&1 || fail "read-only link run failed"
    dump_json "$(the_trace readonly)" "$WORK/readonly.json"
    check_link readonly miss_not_stored read_only
    [ -z "$(find "$ro" -type f)" ] || fail "the read-only cache got files"
else
    echo "note: root without a private mount namespace; read-only case skipped" >&2
fi
echo "ok: link steps and the JIT cache"
