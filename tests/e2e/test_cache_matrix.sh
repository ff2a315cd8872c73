#!/usr/bin/env bash
# The verdict and cache outcome of a JIT load in every cache situation of
# the cache matrix: cold then warm, CUDA_CACHE_DISABLE, a read-only cache, a cache
# directory that cannot be created, a tiny CUDA_CACHE_MAXSIZE, forced JIT and
# disabled JIT. Each case runs prog_direct under the preload, checks that the
# output matches a run without it, and asserts the load's record.
. "$(dirname "$0")/lib.sh"
skip_emulated "a simulated cache hit is slower than the hit bound"

# case NAME EXPECTED_RC [VAR=value...] -- IMAGE...: runs one case both ways.
case_run() {
    local name=$1 want=$2
    shift 2
    local envs=()
    while [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    run_plain "$name.plain" "${envs[@]}" CUDA_CACHE_PATH="$WORK/plain-cache-$name" \
        "$BIN/prog_direct" "$FIX" 0 module "$@"
    run_traced "$name" "${envs[@]}" "$BIN/prog_direct" "$FIX" 0 module "$@"
    same_behaviour "$name.plain" "$name"
    expect_rc "$name" "$want"
    dump_json "$(the_trace "$name")" "$WORK/$name.json"
}

# check NAME CALL_RESULT VERDICT CACHE CACHE_REASON: the first load's fields.
check_load() {
    check_json "$WORK/$1.json" result="$2" verdict="$3" cache="$4" reason="$5" <<'PY'
l = loads()[0]
expect(l["result"] == int(arg["result"]), f"result {l['result']}, expected {arg['result']}")
expect(l["verdict"] == arg["verdict"], f"verdict {l['verdict']}, expected {arg['verdict']}")
expect(l.get("cache", "none") == arg["cache"], f"cache {l.get('cache')}, expected {arg['cache']}")
expect(l.get("cache_reason", "none") == arg["reason"],
       f"cache_reason {l.get('cache_reason')}, expected {arg['reason']}")
PY
}

# 1. cold, then warm: the same cache directory.
cache="$WORK/cc"
case_run cold 0 CUDA_CACHE_PATH="$cache" -- ptx75.fatbin
check_load cold 0 ptx_jit miss_stored none
check_json "$WORK/cold.json" path="$cache" <<'PY'
st = of_type("cache_state")
start = [s for s in st if s["phase"] in (0, "start")]
end = [s for s in st if s["phase"] in (1, "exit")]
expect(len(start) == 1 and len(end) == 1, "cache state at start and at exit")
expect(start[0]["cache_path"] == arg["path"] and start[0]["exists"] == 0, "cold: no cache dir yet")
expect(start[0]["writable"] == 1, "cold: the dir can be created")
expect(end[0]["exists"] == 1 and end[0]["entries"] == 1, "one entry stored by exit")
expect(end[0]["max_bytes"] == 1 << 30, "default CUDA_CACHE_MAXSIZE 1 GiB")
expect(loads()[0].get("cache_new_entries", 1) == 1, "one new entry during the load")
PY
case_run warm 0 CUDA_CACHE_PATH="$cache" -- ptx75.fatbin
check_load warm 0 ptx_jit hit none
check_json "$WORK/warm.json" cold="$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "call" and "verdict" in r: print(r["dur_ns"]); break' "$WORK/cold.json")" <<'PY'
expect(loads()[0]["dur_ns"] < int(arg["cold"]), "a hit is faster than the cold JIT")
PY

# 2. CUDA_CACHE_DISABLE=1: JIT every time, nothing stored.
case_run disabled 0 CUDA_CACHE_DISABLE=1 CUDA_CACHE_PATH="$WORK/cd" -- ptx75.fatbin
check_load disabled 0 ptx_jit miss_not_stored disabled
[ ! -e "$WORK/cd" ] || [ -z "$(find "$WORK/cd" -type f ! -name index)" ] || fail "disabled cache got entries"

# 3. a read-only cache. An ordinary user gets one from chmod 0555; root writes
# through modes (and so does the real driver as root), so root needs a
# read-only bind mount in a private mount namespace.
ro="$WORK/ro"
mkdir -p "$ro"
if [ "$(id -u)" != 0 ]; then
    chmod 0555 "$ro"
    case_run readonly 0 CUDA_CACHE_PATH="$ro" -- ptx75.fatbin
    check_load readonly 0 ptx_jit miss_not_stored read_only
elif unshare -m sh -c 'mount --make-rprivate / && mount --bind "$1" "$1" &&
        mount -o remount,ro,bind "$1" "$1"' _ "$ro" 2>/dev/null; then
    # Inside a private mount namespace, $ro becomes a read-only bind mount.
    JST_E2E_WORK="$WORK" unshare -m bash -c '
        set -e
        mount --make-rprivate / && mount --bind "$1" "$1" && mount -o remount,ro,bind "$1" "$1"
        . "$JST_E2E_SRC/lib.sh"
        . "$JST_E2E_SRC/matrix_ro.sh"' _ "$ro" || fail "read-only cache case failed"
else
    echo "note: running as root without a private mount namespace; read-only case skipped" >&2
fi

# 4. the directory cannot be created (its parent is a file).
: >"$WORK/afile"
case_run nodir 0 CUDA_CACHE_PATH="$WORK/afile/cache" -- ptx75.fatbin
check_load nodir 0 ptx_jit miss_not_stored no_dir

# 5. CUDA_CACHE_MAXSIZE too small for the entry.
case_run tiny 0 CUDA_CACHE_MAXSIZE=4096 CUDA_CACHE_PATH="$WORK/tiny" -- ptx75.fatbin
check_load tiny 0 ptx_jit miss_not_stored too_small
check_json "$WORK/tiny.json" <<'PY'
expect(all(s["max_bytes"] == 4096 for s in of_type("cache_state")), "max_bytes recorded")
PY

# 6. forced JIT: an image with sm_90a SASS and compute_90a PTX is compiled
# anyway; a SASS-only image fails with CUDA_ERROR_NO_BINARY_FOR_GPU (209).
case_run forced 0 CUDA_FORCE_PTX_JIT=1 CUDA_CACHE_PATH="$WORK/fc" -- sm90a.fatbin sm90.fatbin
check_load forced 0 forced_jit miss_stored none
check_json "$WORK/forced.json" <<'PY'
ld = loads()
expect(len(ld) == 2 and ld[1]["result"] == 209, "SASS-only image under CUDA_FORCE_PTX_JIT fails with 209")
expect(ld[0]["jit_from"] == "compute_90a", "forced JIT from compute_90a")
PY
grep -q '^cuModuleLoadData sm90.fatbin: CUDA_ERROR_NO_BINARY_FOR_GPU$' "$WORK/forced.out" ||
    fail "forced JIT of a SASS-only image did not fail"

# 7. disabled JIT: the PTX-only image fails with CUDA_ERROR_JIT_COMPILATION_DISABLED
# (223), the SASS image still loads.
case_run nojit 0 CUDA_DISABLE_PTX_JIT=1 CUDA_CACHE_PATH="$WORK/nj" -- ptx75.fatbin sm90.fatbin
check_load nojit 223 jit_disabled none none
check_json "$WORK/nojit.json" <<'PY'
ld = loads()
expect(len(ld) == 2 and ld[1]["verdict"] == "sass" and ld[1]["result"] == 0, "SASS still loads")
PY
echo "ok: verdict and cache matrix"
