# tests/gpu/part_account.sh: call chains, where the PTX came from and races, on
# the real GPU
# (sourced by tests/gpu/run.sh near its end; uses run_case, check, fresh, ok,
# fail, $J, $PRELOAD, $P, $C, $W, $G, $cc, $sm). Never exits; every step is
# guarded. Prints its figures on lines starting "== account".
#  (a) the call chain of a cudart PTX-only program's JIT load, reached through
#      main -> load_catalog -> open_shard, in the text and JSON reports;
#  (b) the fix lines by where the PTX came from: a .ptx file loaded with
#      cuModuleLoad (and the suggested nvcc -fatbin applied: no JIT after),
#      PTX made by NVRTC for compute_90 then cuModuleLoadData, and JAX's
#      compute_50 PTX in libcudnn_graph.so.9 of the nvidia-cudnn wheel;
#  (c) four copies of gpu_cudart_big started at once on one cold cache.

acct_fix() { # acct_fix REPORT.json KIND: the first fixes[] text of KIND ("" if none)
  python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))
print(next((f["text"] for f in r["fixes"] if f["kind"]==sys.argv[2]), ""))' "$1" "$2" 2>/dev/null
}

acct_part_chain() {
  local d="$W/t/acct_chain" src="$G/account_chain.cu"
  if ! nvcc -g -Xcompiler -O0 -gencode arch=compute_75,code=compute_75 "$src" -o "$P/account_chain"; then
    fail "account: cannot build account_chain"; return
  fi
  run_case acct_chain "$(fresh "$C/acct_chain")" -- "$P/account_chain"
  NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>&1
  "$J" report --json "$d/trace" >"$d/report.json" 2>/dev/null
  grep -A3 'call site' "$d/report.txt" | sed 's/^/== account chain: /' | head -4
  local lines
  lines=$(grep -n 'account-call' "$src" | cut -d: -f1 | tr '\n' ' ')
  if python3 - "$d/report.json" $lines <<'PY'; then
import json, sys
rep = json.load(open(sys.argv[1]))
want = [int(x) for x in sys.argv[2:]]          # open_shard, load_catalog, main lines
m = [m for m in rep["processes"][0]["modules"] if m["jit"]][0]
st = m["stack"]
got = [(f["func"] or "").split("(")[0] for f in st]
assert got[:3] == ["open_shard", "load_catalog", "main"], got
assert [f["line"] for f in st[:3]] == want, ([f["line"] for f in st], want)
assert all(f["file"].endswith("account_chain.cu") for f in st[:3]), st
assert m["call"] == "cuLibraryLoadData" and m["verdict"] == "ptx_jit", m["call"]
PY
    ok "account (a): JSON stack is open_shard <- load_catalog <- main at lines $lines"
  else
    fail "account (a): JSON stack is not main -> load_catalog -> open_shard"
  fi
  if grep -q 'call site  open_shard' "$d/report.txt" && grep -q 'called by  load_catalog' "$d/report.txt" \
    && grep -q 'called by  main' "$d/report.txt"; then
    ok "account (a): the text report shows all three frames"
  else
    fail "account (a): the text report lacks a frame of the chain"
  fi
}

acct_part_fixes() {
  local d fx
  # a .ptx file, loaded by path
  nvcc -arch=compute_75 -ptx "$G/account_chain.cu" -o "$P/account_small.ptx" &&
    nvcc "$G/account_modload.c" -o "$P/account_modload" -lcuda ||
    { fail "account: cannot build account_modload"; return; }
  run_case acct_ptxfile "$(fresh "$C/acct_ptxfile")" -- "$P/account_modload" "$P/account_small.ptx"
  d="$W/t/acct_ptxfile"
  "$J" report --json "$d/trace" >"$d/report.json" 2>/dev/null
  fx=$(acct_fix "$d/report.json" ptx_file)
  echo "== account fix (.ptx file): $fx"
  if [[ "$fx" == *"compile $P/account_small.ptx ahead of time"*"ptxas -arch=$sm"* ]]; then
    ok "account (b): .ptx file gets the ptx_file fix"
  else
    fail "account (b): no ptx_file fix for the .ptx file"
  fi
  # the fix, applied as the line says: nvcc -fatbin with code=[sm,compute]
  if nvcc -fatbin -gencode "arch=compute_${cc},code=[sm_${cc},compute_${cc}]" "$P/account_small.ptx" \
    -o "$P/account_small.fatbin" && ptxas -arch="$sm" "$P/account_small.ptx" -o "$P/account_small.cubin"; then
    run_case acct_ptxfixed "$(fresh "$C/acct_ptxfixed")" -- "$P/account_modload" "$P/account_small.fatbin"
    check acct_ptxfixed --call cuModuleLoad --verdict sass --result 0
  else
    fail "account (b): the suggested ptxas / nvcc -fatbin commands failed"
  fi
  # PTX made by NVRTC for compute_90, then cuModuleLoadData
  local lib
  lib=$(dirname "$(command -v nvcc)")/../lib64
  if nvcc "$G/account_nvrtc.c" -o "$P/account_nvrtc" -lnvrtc -lcuda -Xlinker -rpath="$lib"; then
    run_case acct_nvrtc "$(fresh "$C/acct_nvrtc")" -- "$P/account_nvrtc"
    d="$W/t/acct_nvrtc"
    "$J" report --json "$d/trace" >"$d/report.json" 2>/dev/null
    fx=$(acct_fix "$d/report.json" nvrtc_ptx)
    echo "== account fix (NVRTC): $fx"
    if [[ "$fx" == *"made by NVRTC at run time"*"nvrtcGetCUBIN"* ]]; then
      ok "account (b): NVRTC PTX gets the nvrtc_ptx fix"
    else
      fail "account (b): no nvrtc_ptx fix for the NVRTC program"
    fi
  else
    fail "account: cannot build account_nvrtc"
  fi
  # JAX's first jit: compute_50 PTX in libcudnn_graph.so.9 of the nvidia-cudnn wheel
  if ! python3 -c 'import jax' >/dev/null 2>&1; then
    ok "account (b): jax is not installed here; the site-packages check is skipped"
    return
  fi
  run_case acct_jax "$(fresh "$C/acct_jax")" -- python3 -c \
    'import jax, jax.numpy as jnp; print(jax.jit(lambda x: x*2)(jnp.ones(4)))'
  d="$W/t/acct_jax"
  "$J" report --json "$d/trace" >"$d/report.json" 2>/dev/null
  fx=$(acct_fix "$d/report.json" third_party)
  echo "== account fix (JAX, site-packages): $fx"
  if [[ "$fx" == *"libcudnn_graph"*"is third-party ("*"cudnn"*"a Python package): upgrade"* ]]; then
    ok "account (b): libcudnn_graph is third-party, with its wheel named"
  elif [[ "$fx" == *"is third-party"* ]]; then
    fail "account (b): third-party fix without libcudnn_graph or its wheel: $fx"
  else
    fail "account (b): no third_party fix for JAX's JIT load"
    python3 - "$d/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
for p in r["processes"]:
    print(f"== jax pid {p['pid']}: jit_ns {p['jit_ns']}, {len(p['modules'])} modules")
    for m in p["modules"]:
        if m.get("jit") or m["verdict"] not in ("sass",):
            print(f"== jax module: {m['call']} {m['verdict']} from {m.get('jit_from')} cache {m.get('cache')} source {m.get('source')} fix {m.get('fix')}")
for f in r.get("fixes", []):
    print(f"== jax fix [{f['kind']}]: {f['text']}")
PY
  fi
}

acct_part_race() {
  local d="$W/t/acct_race" c
  c=$(fresh "$C/acct_race")
  rm -rf "$d"; mkdir -p "$d/trace"
  local pids=() i rc=0
  for i in 1 2 3 4; do
    env CUDA_CACHE_PATH="$c" JITSTALL_DIR="$d/trace" LD_PRELOAD="$PRELOAD" "$P/gpu_cudart_big" \
      >"$d/run$i.out" 2>&1 &
    pids+=($!)
  done
  for i in "${pids[@]}"; do wait "$i" || rc=1; done
  [ $rc -eq 0 ] || fail "account (c): a racing gpu_cudart_big failed"
  NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>&1
  "$J" report --json "$d/trace" >"$d/report.json" 2>/dev/null
  local line
  line=$(python3 -c 'import json,sys
r=json.load(open(sys.argv[1]))["races"]
print(r[0]["compiles"], r[0]["processes"], r[0]["jit_ns"], r[0]["fix"]) if r else print("none")' "$d/report.json" 2>/dev/null)
  echo "== account race: $line"
  echo "== account race: cache entries at the end: $(find "$c" -type f ! -name index | wc -l)"
  if [[ "$line" == "4 4 "*"compiled 4 times at once in 4 processes"*"warm the cache before starting them"* ]]; then
    ok "account (c): four processes racing on one cold cache, said once"
  elif [[ "$line" == [23]" "* ]]; then
    fail "account (c): only $(echo "$line" | cut -d' ' -f1) of 4 compiles overlapped: $line"
  else
    fail "account (c): no race finding: $line"
  fi
}

acct_part_chain
acct_part_fixes
acct_part_race
