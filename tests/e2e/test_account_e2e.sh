#!/usr/bin/env bash
# Where the PTX came from, on the simulated driver: the whole call chain of a JIT load
# (main -> load_catalog -> open_shard) in the text, JSON and Markdown reports,
# cut by --stack-depth; the fix that fits where the PTX came from (a .ptx
# file, a fatbin file, PTX read into memory, NVRTC output loaded and linked,
# PTX text in a program's data, a PTX-only library in a wheel under a fake
# site-packages tree, named by its dist-info RECORD); and four processes
# started together on one cold cache, reported once as a race.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$BIN/fakertc:$LD_LIBRARY_PATH"
ACC="$BIN/account"

# report NAME [OPTIONS...]: jitstall report of NAME's traces into $WORK/NAME.rep
report() {
    local n=$1
    shift
    NO_COLOR=1 "$JST_CLI" report "$@" "$WORK/$n.traces" >"$WORK/$n.rep" 2>"$WORK/$n.rep.err" ||
        { cat "$WORK/$n.rep.err" >&2; fail "$n: report $* failed"; }
}

# ---- 1. the whole backtrace ----
SRC="$JST_E2E_SRC/chain"
line_of() { grep -n 'chain-call' "$SRC/$1" | cut -d: -f1; }
run_traced chain "$BIN/chain/chain" "$FIX/k75.ptx"
expect_rc chain 0
report chain
for want in "call site  open_shard ($SRC/shard.c:$(line_of shard.c))" \
    "called by  load_catalog ($SRC/catalog.c:$(line_of catalog.c))" \
    "called by  main ($SRC/main.c:$(line_of main.c))"; do
    grep -qF "$want" "$WORK/chain.rep" || { cat "$WORK/chain.rep" >&2; fail "text report lacks: $want"; }
done
grep -q 'called by  __libc_start' "$WORK/chain.rep" && fail "the chain goes past main"
report chain --json
python3 - "$WORK/chain.rep" "$SRC" "$(line_of shard.c)" "$(line_of catalog.c)" "$(line_of main.c)" <<'PY' || fail "JSON stack"
import json, sys
rep = json.load(open(sys.argv[1]))
src, lines = sys.argv[2], [int(x) for x in sys.argv[3:]]
m = [m for m in rep["processes"][0]["modules"] if m["culprit"]][0]
st = m["stack"]
assert [f["func"] for f in st] == ["open_shard", "load_catalog", "main"], st
assert [f["line"] for f in st] == lines, st
assert [f["file"] for f in st] == [f"{src}/{n}" for n in ("shard.c", "catalog.c", "main.c")], st
assert all(set(f) == {"func", "file", "line", "object", "offset"} for f in st), st
assert all(f["object"].endswith("/chain") and f["offset"] > 0 for f in st), st
assert m["stack_more"] == 0 and m["call_site"].startswith("open_shard ("), m
PY
report chain --stack-depth 1
grep -q 'called by  ... 2 more' "$WORK/chain.rep" || fail "--stack-depth 1: no '... 2 more'"
grep -q 'called by  load_catalog' "$WORK/chain.rep" && fail "--stack-depth 1 still shows load_catalog"
report chain --json --stack-depth=2
python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["processes"][0]["modules"][0]
assert len(m["stack"]) == 2 and m["stack_more"] == 1, m["stack"]' "$WORK/chain.rep" ||
    fail "--stack-depth=2: JSON stack"
report chain --stack-depth all
grep -q 'called by  main' "$WORK/chain.rep" || fail "--stack-depth all: no main"
report chain --markdown
grep -q '<br>called by `load_catalog (catalog.c:[0-9]*) <- main (main.c:[0-9]*)`' "$WORK/chain.rep" ||
    { cat "$WORK/chain.rep" >&2; fail "Markdown: no compact chain"; }
for bad in -1 x ""; do
    rc=0
    "$JST_CLI" report --stack-depth "$bad" "$WORK/chain.traces" >/dev/null 2>"$WORK/bad.err" || rc=$?
    [ "$rc" = 2 ] && [ "$(wc -l <"$WORK/bad.err")" = 1 ] || fail "--stack-depth '$bad': exit $rc"
done

# ---- 3. the fix by where the PTX came from ----
# fix_kind NAME KIND TEXT: the culprit's fix (fixes[] of kind KIND) contains TEXT.
fix_kind() {
    report "$1" --json
    python3 - "$WORK/$1.rep" "$2" "$3" <<'PY' || { cat "$WORK/$1.rep" >&2; fail "$1: no $2 fix with '$3'"; }
import json, sys
rep, kind, text = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
fx = [f for f in rep["fixes"] if f["kind"] == kind]
assert len(fx) == 1 and text in fx[0]["text"], rep["fixes"]
m = [m for m in rep["processes"][0]["modules"] if m["jit"]][0]
assert m["fix"] == fx[0]["text"], (m["fix"], fx)
PY
}
run_traced ptxfile "$BIN/prog_direct" "$FIX" 0 module file:k75.ptx
fix_kind ptxfile ptx_file "compile $FIX/k75.ptx ahead of time for the GPU and load the result"
fix_kind ptxfile ptx_file "ptxas -arch=sm_90, or nvcc -fatbin -gencode arch=compute_90,code=[sm_90,compute_90]"
run_traced ptxmem "$BIN/prog_direct" "$FIX" 0 module k75.ptx
# PTX read into memory: named by the file with its bytes (here in $FIX, an argument)
fix_kind ptxmem ptx_file "compile $FIX/k75.ptx (which the program passes to cuModuleLoadData) ahead of time"
run_traced fatfile "$BIN/prog_direct" "$FIX" 0 module file:ptx75.fatbin
fix_kind fatfile fatbin_file "rebuild the fatbin file $FIX/ptx75.fatbin with -gencode arch=compute_90,code=sm_90"
run_traced fatmem "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin
fix_kind fatmem fatbin_file "rebuild $FIX/ptx75.fatbin (which the program passes to cuModuleLoadData) with -gencode"
run_traced nvrtc "$BIN/prog_rtc_direct" "$FIX" 0 module k75.ptx
fix_kind nvrtc nvrtc_ptx "the PTX passed to cuModuleLoadData was made by NVRTC at run time"
fix_kind nvrtc nvrtc_ptx "nvrtcCompileProgram with -arch=sm_90, then nvrtcGetCUBIN"
run_traced nvrtclink "$BIN/prog_rtc_direct" "$FIX" 0 link k75.ptx
fix_kind nvrtclink nvrtc_ptx "the PTX passed to cuLinkAddData"
# The preload records the hash of the PTX each compile made (fake NVRTC's
# getters serve $JST_FAKE_RTC_PTX): that PTX loaded is NVRTC's, by either
# route to NVRTC, loaded or linked...
for prog in direct dlsym; do
    run_plain "nvrtch-$prog.plain" JST_FAKE_RTC_PTX="$FIX/k75.ptx" "$BIN/prog_rtc_$prog" "$FIX" 0 module k75.ptx
    run_traced "nvrtch-$prog" JST_FAKE_RTC_PTX="$FIX/k75.ptx" "$BIN/prog_rtc_$prog" "$FIX" 0 module k75.ptx
    same_behaviour "nvrtch-$prog.plain" "nvrtch-$prog"
    fix_kind "nvrtch-$prog" nvrtc_ptx "the PTX passed to cuModuleLoadData was made by NVRTC"
    dump_json "$(the_trace "nvrtch-$prog")" "$WORK/nvrtch-$prog.json"
    check_json "$WORK/nvrtch-$prog.json" <<'PY'
rc, ld = one("nvrtcCompileProgram"), one("cuModuleLoadData")
expect(rc.get("rtc_ptx_hash") == ld.get("image_hash") and ld.get("image_hash"),
       f"rtc_ptx_hash {rc.get('rtc_ptx_hash')} is not the load's image_hash {ld.get('image_hash')}")
expect(rc.get("rtc_ptx_hash_t") not in (None, rc.get("rtc_ptx_hash")), "rtc_ptx_hash_t")
PY
done
run_traced nvrtch-link JST_FAKE_RTC_PTX="$FIX/k75.ptx" "$BIN/prog_rtc_direct" "$FIX" 0 link k75.ptx
fix_kind nvrtch-link nvrtc_ptx "the PTX passed to cuLinkAddData"
# ... and other PTX, loaded after NVRTC ran, is not.
{ cat "$FIX/k75.ptx"; echo "// another kernel file"; } >"$WORK/other.ptx"
run_traced nvrtc-other JST_FAKE_RTC_PTX="$WORK/other.ptx" "$BIN/prog_rtc_direct" "$FIX" 0 module k75.ptx
fix_kind nvrtc-other ptx_file "compile $FIX/k75.ptx (which the program passes to cuModuleLoadData) ahead of time"
run_traced ptxdata "$ACC/prog_ptxdata"
expect_rc ptxdata 0
fix_kind ptxdata ptx_data "compile the PTX text held in $ACC/prog_ptxdata ahead of time"

SP="$WORK/env/lib/python3.12/site-packages"
mkdir -p "$SP/acctpkg" "$SP/acctpkg-1.0.dist-info"
cp "$ACC/libacct_ptxonly.so" "$SP/acctpkg/"
printf 'acctpkg/__init__.py,,\nacctpkg/libacct_ptxonly.so,sha256=AAAA,1234\n' >"$SP/acctpkg-1.0.dist-info/RECORD"
run_plain wheel.plain "$ACC/prog_dlload" "$SP/acctpkg/libacct_ptxonly.so"
run_traced wheel "$ACC/prog_dlload" "$SP/acctpkg/libacct_ptxonly.so"
expect_rc wheel.plain 0
same_behaviour wheel.plain wheel
fix_kind wheel third_party "$SP/acctpkg/libacct_ptxonly.so is third-party (acctpkg 1.0, a Python package): upgrade to a build with SASS for sm_90"
fix_kind wheel third_party "until then keep the JIT cache $CUDA_CACHE_PATH across runs"
# Without the RECORD entry: still third-party, no package named.
printf 'acctpkg/__init__.py,,\n' >"$SP/acctpkg-1.0.dist-info/RECORD"
fix_kind wheel third_party "libacct_ptxonly.so is third-party (a Python package)"

# ---- 5. four processes racing on one cold cache ----
# 1 s per KiB of PTX: each ~2 KiB compile takes about 2 s, so the four overlap
# even on a loaded machine.
mkdir -p "$WORK/race.traces"
rm -rf "$WORK/racecache"
for i in 1 2 3 4; do
    env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/race.traces" JITSTALL_SIM_JIT_US_PER_KB=1000000 \
        CUDA_CACHE_PATH="$WORK/racecache" "$BIN/prog_direct" "$FIX" 0 module file:k75.ptx \
        >"$WORK/race.$i.out" 2>&1 &
done
wait
report race
grep -q 'compiled 4 times at once in 4 processes' "$WORK/race.rep" ||
    { cat "$WORK/race.rep" >&2; fail "no race of 4 processes"; }
[ "$(grep -c 'compiled 4 times at once' "$WORK/race.rep")" = 2 ] || fail "the race is not said once (and its fix once)"
grep -q "warm the cache before starting them (jitstall warm --cache $WORK/racecache $FIX/k75.ptx)" \
    "$WORK/race.rep" || fail "race fix without jitstall warm"
report race --json
python3 - "$WORK/race.rep" <<'PY' || fail "JSON races"
import json, sys
rep = json.load(open(sys.argv[1]))
r = rep["races"]
assert len(r) == 1 and r[0]["compiles"] == 4 and r[0]["processes"] == 4, r
assert len(r[0]["pids"]) == 4 and r[0]["jit_ns"] > 4 * 1500 * 10**6, r
assert [f["kind"] for f in rep["fixes"]].count("race") == 1, rep["fixes"]
PY
report race --markdown
grep -q '^### Compiled at once in several processes (one cold cache)' "$WORK/race.rep" ||
    fail "Markdown: no race section"
grep -q '^1\. \*\*.*\*\*: .*compiled 4 times at once in 4 processes' "$WORK/race.rep" ||
    { cat "$WORK/race.rep" >&2; fail "Markdown: no race line"; }
# The same four, one after the other on a cold cache each: no race.
mkdir -p "$WORK/seq.traces"
for i in 1 2 3 4; do
    env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/seq.traces" CUDA_CACHE_PATH="$WORK/seqcache$i" \
        "$BIN/prog_direct" "$FIX" 0 module file:k75.ptx >/dev/null 2>&1
done
report seq
grep -q 'at once' "$WORK/seq.rep" && fail "sequential compiles reported as a race"
echo "ok: account (chain, fix by source, race)"
