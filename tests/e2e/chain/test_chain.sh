#!/usr/bin/env bash
# Backtraces end to end, on the simulated driver: the chain program's JIT load
# carries a stack and the trace a module map (jitstall dump --json); the stack
# symbolizes to main -> load_catalog -> open_shard with the right files and
# lines (found with grep -n on the "chain-call" markers); stripped binaries
# give names from .dynsym or module+offset, never a crash; a rebuilt binary is
# said to have changed, and is symbolized again from the build-id debug
# directory; a dlopen'ed library shows up as DLOPEN/DLCLOSE map entries and
# its frames symbolize; a failing dlopen still reports through dlerror().
source "$JST_E2E_SRC/lib.sh"
SRC=$JST_CHAIN_SRC
SYM="$BIN/chain_symbolize"
PTX="$FIX/k75.ptx"

# marker_line FILE: the line number of the "chain-call" marker in FILE.
marker_line() {
    local n
    n=$(grep -n 'chain-call' "$SRC/$1" | cut -d: -f1)
    [ "$(printf '%s\n' "$n" | grep -c .)" = 1 ] || fail "$1: expected one chain-call marker"
    printf '%s\n' "$n"
}
L_MAIN=$(marker_line main.c)
L_CATALOG=$(marker_line catalog.c)
L_SHARD=$(marker_line shard.c)
L_PLUGIN=$(marker_line plugin.c)
L_PLUGIN_MAIN=$(marker_line plugin_main.c)

# frames TRACE OUT: every symbolized frame, which must not fail.
frames() {
    local rc=0
    "$SYM" "$1" >"$2" 2>"$2.err" || rc=$?
    [ "$rc" = 0 ] || {
        cat "$2.err" >&2
        fail "chain_symbolize $1 exited $rc"
    }
}

# check_frames TSV [NAME=VALUE...] <<'PY' ... PY: Python assertions over the
# frames of the load (framecheck.py defines the helpers).
check_frames() {
    python3 "$SRC/framecheck.py" "$@"
}

# ---- the -g program ----
run_traced chain "$BIN/chain" "$PTX"
expect_rc chain 0
T=$(the_trace chain)
dump_json "$T" "$WORK/chain.json"
check_json "$WORK/chain.json" exe="$(readlink -f "$BIN/chain")" size="$(stat -c %s "$BIN/chain")" \
    mtime="$(stat -c %Y "$BIN/chain")" <<'PY'
load = one("cuModuleLoadData")
expect(load.get("verdict") == "ptx_jit", "the PTX-only image was not JIT-compiled: %r" % load.get("verdict"))
sid = load.get("stack_id")
expect(sid, "the load has no stack_id")
stacks = [r for r in of_type("stack") if r.get("stack_id") == sid]
expect(len(stacks) == 1, "expected one stack record with id %r" % sid)
expect(recs.index(stacks[0]) < recs.index(load), "the stack record comes after the event")
ips = stacks[0].get("ips") or []
expect(3 <= len(ips) <= 64, "implausible stack depth %d" % len(ips))
ids = [r.get("stack_id") for r in of_type("stack")]
expect(len(ids) == len(set(ids)), "a stack id was written twice")
mods = of_type("modmap")
expect(all(m.get("mod_event") == "initial" for m in mods), "the chain program dlopens nothing")
exe = [m for m in mods if m.get("mod_path") == arg["exe"]]
expect(len(exe) == 1, "the program is not in the module map")
exe = exe[0]
expect(len(exe.get("build_id", "")) >= 16, "no build-id recorded for the program")
expect(exe.get("file_size") == int(arg["size"]), "file size differs")
expect(exe.get("mtime_ns", 0) // 10**9 == int(arg["mtime"]), "mtime differs")
lo, hi = int(exe["mod_start"], 16), int(exe["mod_end"], 16)
inside = [int(ip, 16) for ip in ips if lo <= int(ip, 16) < hi]
expect(len(inside) >= 3, "fewer than three frames inside the program")
names = [m.get("mod_path", "").rsplit("/", 1)[-1] for m in mods]
expect("libcuda.so.1" in names, "the (simulated) driver is not in the module map")
expect(any(n.startswith("libjitstall") for n in names), "libjitstall.so is not in the module map")
expect(any(n.startswith("libc.so") for n in names), "libc is not in the module map")
PY

frames "$T" "$WORK/chain.tsv"
check_frames "$WORK/chain.tsv" shard="$L_SHARD" catalog="$L_CATALOG" main="$L_MAIN" \
    exe="$(readlink -f "$BIN/chain")" <<'PY'
i = fr.index(site)
want = [("open_shard", "/shard.c", arg["shard"]), ("load_catalog", "/catalog.c", arg["catalog"]),
        ("main", "/main.c", arg["main"])]
expect(len(fr) >= i + 3, "the chain is cut short")
for (func, f, line), r in zip(want, fr[i:i + 3]):
    expect(r["func"] == func, "expected %s, got %s" % (func, r["func"]))
    expect(r["file"].endswith("tests/e2e/chain" + f), "%s: file %s" % (func, r["file"]))
    expect(r["line"] == line, "%s: line %s, expected %s" % (func, r["line"], line))
    expect(r["module"] == arg["exe"], "%s: module %s" % (func, r["module"]))
    expect(r["internal"] == "0" and r["note"] == "-", "%s: internal or noted" % func)
PY

# The report names the same call site.
"$JST_CLI" report "$T" >"$WORK/chain.report" 2>"$WORK/chain.report.err" ||
    fail "jitstall report exited non-zero: $(cat "$WORK/chain.report.err")"
grep -qF "open_shard (" "$WORK/chain.report" && grep -qF "shard.c:$L_SHARD)" "$WORK/chain.report" ||
    fail "the report does not show open_shard at shard.c:$L_SHARD: $(cat "$WORK/chain.report")"

# ---- JITSTALL_STACK_DEPTH limits the frames kept ----
run_traced depth JITSTALL_STACK_DEPTH=2 "$BIN/chain" "$PTX"
expect_rc depth 0
frames "$(the_trace depth)" "$WORK/depth.tsv"
check_frames "$WORK/depth.tsv" <<'PY'
expect([r["func"] for r in fr] == ["open_shard", "load_catalog"], "depth 2 kept other frames")
PY

# ---- a forked child's trace has every stack it refers to ----
run_traced fork "$BIN/chain" "$PTX" --fork
expect_rc fork 0
n=0
for t in $(traces_of fork); do
    n=$((n + 1))
    dump_json "$t" "$WORK/fork$n.json"
    check_json "$WORK/fork$n.json" <<'PY'
ids = {r.get("stack_id") for r in of_type("stack")}
for c in calls():
    expect(not c.get("stack_id") or c["stack_id"] in ids,
           "call %s refers to stack %s, not in this trace" % (c.get("call"), c.get("stack_id")))
expect(any(m.get("mod_event") == "initial" for m in of_type("modmap")), "no module map")
expect(calls("cuModuleLoadData"), "no load in this trace")
PY
    frames "$t" "$WORK/fork$n.tsv"
    check_frames "$WORK/fork$n.tsv" main="$L_MAIN" <<'PY'
i = fr.index(site)
expect([r["func"] for r in fr[i:i + 3]] == ["open_shard", "load_catalog", "main"], "fork chain")
expect(fr[i + 2]["line"] == arg["main"], "main's line in a forked trace")
PY
done
[ "$n" = 2 ] || fail "expected two traces (parent and child), found $n"

# ---- stripped: module+offset, never a crash ----
run_traced stripped "$BIN/chain_stripped" "$PTX"
expect_rc stripped 0
T=$(the_trace stripped)
frames "$T" "$WORK/stripped.tsv"
check_frames "$WORK/stripped.tsv" exe="$(readlink -f "$BIN/chain_stripped")" <<'PY'
i = fr.index(site)
own = [r for r in fr[i:] if r["module"] == arg["exe"]]
expect(len(own) >= 3, "fewer than three frames in the stripped program")
for r in own[:3]:
    expect(r["func"] == "-" and r["file"] == "-", "a stripped frame has a name: %r" % r)
    expect(r["note"] == "no symbols", "stripped frame note: %s" % r["note"])
PY
"$JST_CLI" report "$T" >"$WORK/stripped.report" 2>&1 || fail "report on the stripped trace failed"
grep -qF "chain_stripped+0x" "$WORK/stripped.report" ||
    fail "the report does not show module+offset: $(cat "$WORK/stripped.report")"

# ---- stripped but exporting its functions: names from .dynsym, no lines ----
run_traced dynsym "$BIN/chain_dynsym_stripped" "$PTX"
expect_rc dynsym 0
frames "$(the_trace dynsym)" "$WORK/dynsym.tsv"
check_frames "$WORK/dynsym.tsv" <<'PY'
i = fr.index(site)
got = [r["func"] for r in fr[i:i + 3]]
expect(got == ["open_shard", "load_catalog", "main"], "dynsym names: %r" % got)
expect(all(r["file"] == "-" for r in fr[i:i + 3]), "a stripped frame has a source line")
PY

# ---- the binary was rebuilt after the trace: said so; the debug dir helps ----
cp "$BIN/chain" "$WORK/prog"
run_traced moved "$WORK/prog" "$PTX"
expect_rc moved 0
T=$(the_trace moved)
cp "$BIN/chain_dynsym" "$WORK/prog" # another build-id at the same path
frames "$T" "$WORK/changed.tsv"
check_frames "$WORK/changed.tsv" <<'PY'
expect(site["note"] == "module changed since the trace", "note: %s" % site["note"])
expect(site["func"] == "-", "a changed module was trusted")
PY
id=$(python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    if r.get("type") == "modmap" and r.get("mod_path") == sys.argv[2]:
        print(r["build_id"]); break' <("$JST_CLI" dump --json "$T") "$WORK/prog")
[ -n "$id" ] || fail "no build-id for $WORK/prog"
mkdir -p "$WORK/debug/.build-id/${id:0:2}"
cp "$BIN/chain" "$WORK/debug/.build-id/${id:0:2}/${id:2}.debug"
JITSTALL_DEBUG_DIR="$WORK/debug" "$SYM" "$T" >"$WORK/debugdir.tsv" || fail "chain_symbolize failed"
check_frames "$WORK/debugdir.tsv" shard="$L_SHARD" <<'PY'
expect(site["func"] == "open_shard" and site["line"] == arg["shard"],
       "not symbolized from the debug directory: %r" % site)
PY

# ---- a dlopen'ed library: DLOPEN and DLCLOSE entries, frames inside it ----
# By bare name: the loader must still search the program's RUNPATH under the preload.
PLUGIN=$(basename "$JST_CHAIN_PLUGIN")
run_plain plugin_plain "$BIN/chain_plugin" "$PTX" "$PLUGIN"
expect_rc plugin_plain 0
run_traced plugin "$BIN/chain_plugin" "$PTX" "$PLUGIN"
expect_rc plugin 0
same_behaviour plugin_plain plugin
grep -qx "failing dlopen: NULL, dlerror names the file" "$WORK/plugin.out" ||
    fail "dlerror lost under the preload: $(cat "$WORK/plugin.out")"
T=$(the_trace plugin)
dump_json "$T" "$WORK/plugin.json"
check_json "$WORK/plugin.json" lib="$(readlink -f "$JST_CHAIN_PLUGIN")" <<'PY'
mods = of_type("modmap")
ev = [(m.get("mod_event"), recs.index(m)) for m in mods if m.get("mod_path") == arg["lib"]]
kinds = [e for e, _ in ev]
expect(kinds == ["dlopen", "dlclose"], "plugin map entries: %r" % kinds)
l1, l2 = [recs.index(c) for c in calls("cuModuleLoadData")]
stk = {r.get("stack_id"): recs.index(r) for r in of_type("stack")}
s1 = stk[recs[l1]["stack_id"]]
expect(ev[0][1] < s1 < l1 < ev[1][1] < l2, "dlopen, stack, load, dlclose, load: out of order")
expect(all(m.get("mod_event") == "initial" for m in mods if recs.index(m) < ev[0][1]),
       "entries before the dlopen are not initial")
PY
frames "$T" "$WORK/plugin.tsv"
check_frames "$WORK/plugin.tsv" plugin="$L_PLUGIN" main="$L_PLUGIN_MAIN" \
    lib="$(readlink -f "$JST_CHAIN_PLUGIN")" <<'PY'
i = fr.index(site)
expect(site["func"] == "plugin_open_shard" and site["file"].endswith("/plugin.c") and
       site["line"] == arg["plugin"] and site["module"] == arg["lib"], "plugin frame: %r" % site)
nxt = fr[i + 1]
expect(nxt["func"] == "main" and nxt["file"].endswith("/plugin_main.c") and
       nxt["line"] == arg["main"], "caller of the plugin: %r" % nxt)
PY
echo "chain: OK"
