# tests/gpu/part_bundle.sh: `jitstall warm --run --bundle` and `--check` on the
# real GPU. Sourced by tests/gpu/run.sh (set -uo pipefail, no -e): never
# exits, guards every step, calls ok/fail per check and prints its figures on
# "== " lines.
#  1. warm --run over tests/gpu/bundle_prog.py: a Triton kernel, torch.compile,
#     jax.jit and a CuPy RawKernel (each skipped when absent), then the
#     PTX-only cudart program as a child: exit 0 (the second run hit), the
#     manifest's device, and entries in each cache that was used;
#  2. warm --check on the bundle: exit 0;
#  3. the same program cold (every cache empty) and in a third fresh process
#     on the bundle, under the preload: the driver's JIT loads of the third are
#     hits, no runtime compiler ran again; a table of first-call times.
# About 2-3 minutes on an H200 with all four frameworks.

pb_env() { # pb_env DIR: the variables that point every cache into DIR
  echo "CUDA_CACHE_PATH=$1/cuda" "CUDA_CACHE_MAXSIZE=4294967296" "TRITON_CACHE_DIR=$1/triton" \
    "TORCHINDUCTOR_CACHE_DIR=$1/inductor" "JAX_COMPILATION_CACHE_DIR=$1/jax" \
    "CUPY_CACHE_DIR=$1/cupy" "NUMBA_CACHE_DIR=$1/numba" "TORCH_EXTENSIONS_DIR=$1/torch_extensions"
}
# pb_first FILE NAME: the FIRST time (ms) of NAME in a program output, or "-".
pb_first() { awk -v n="$2" '$1 == "FIRST" && $2 == n { print $3; f = 1 } END { if (!f) print "-" }' "$1"; }

PB="$W/bundle"
rm -rf "$PB" "$W/bundle_cold"
# The cache variables of the environment would win over the bundle: not here.
pb_clean=(env -u CUDA_CACHE_PATH -u TRITON_CACHE_DIR -u TORCHINDUCTOR_CACHE_DIR
  -u JAX_COMPILATION_CACHE_DIR -u CUPY_CACHE_DIR -u NUMBA_CACHE_DIR -u TORCH_EXTENSIONS_DIR
  -u CUDA_CACHE_MAXSIZE -u JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS
  -u JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES)
t0=$SECONDS
"${pb_clean[@]}" "$J" warm --run --bundle "$PB" -- python3 "$G/bundle_prog.py" "$P/gpu_cudart_ptx" \
  >"$W/bundle_run.out" 2>"$W/bundle_run.err"
pb_rc=$?
echo "== bundle: warm --run took $((SECONDS - t0)) s, exit $pb_rc"
grep -E "^  [a-z_]+ |^result:|^SKIP|is your own setting" "$W/bundle_run.out" | sed 's/^/   /'
if [ $pb_rc -eq 0 ]; then
  ok "bundle: warm --run exit 0, the second run hit every cache"
else
  fail "bundle: warm --run exit $pb_rc: $(grep -E '^  (miss|compiled)' "$W/bundle_run.out" | head -5; tail -2 "$W/bundle_run.err")"
fi
python3 - "$PB/jitstall-bundle.json" "$cc" "$W/bundle_run.out" <<'PY' && ok "bundle: the manifest names this GPU and driver, and the used caches hold entries" || fail "bundle: manifest (see above)"
import json, sys
m = json.load(open(sys.argv[1]))
d = m["device"]
assert d and d["cc"] == int(sys.argv[2]) and d["driver_version"] >= 12000, d
out = open(sys.argv[3]).read()
caches = {c["name"]: c for c in m["caches"]}
used = {"cuda": True}
for fw, cache in (("triton", "triton"), ("torch.compile", "inductor"), ("jax.jit", "jax"),
                  ("cupy", "cupy")):
    used[cache] = f"SKIP {fw}" not in out
print("   frameworks:", ", ".join(f"{f['name']} {f['version']}" for f in m["frameworks"]))
for name, u in used.items():
    print(f"   {name}: {caches[name]['entries']} entries, {caches[name]['bytes']} bytes")
    assert not u or caches[name]["entries"] > 0, name
PY

"${pb_clean[@]}" "$J" warm --check "$PB" >"$W/bundle_check0.out" 2>&1 && fail "bundle: warm --check passed without the variables set" ||
  ok "bundle: warm --check names the unset variables: $(grep -c '^  miss:' "$W/bundle_check0.out") miss line(s)"
env $(pb_env "$PB") "$J" warm --check "$PB" >"$W/bundle_check.out" 2>&1 &&
  ok "bundle: warm --check passes with the variables set" ||
  fail "bundle: warm --check: $(cat "$W/bundle_check.out")"

# Cold: every cache empty. Third process: fresh, on the bundle, under the preload.
mkdir -p "$W/bundle_cold"
env $(pb_env "$W/bundle_cold") python3 "$G/bundle_prog.py" "$P/gpu_cudart_ptx" >"$W/bundle_cold.out" 2>"$W/bundle_cold.err"
rm -rf "$W/t/bundle_third"
env $(pb_env "$PB") "$J" run -o "$W/t/bundle_third" -- python3 "$G/bundle_prog.py" "$P/gpu_cudart_ptx" \
  >"$W/bundle_third.out" 2>"$W/bundle_third.err"
pb3=$?
[ $pb3 -eq 0 ] && ok "bundle: the third process ran" || fail "bundle: third process exit $pb3: $(tail -3 "$W/bundle_third.err")"
"$J" report --json "$W/t/bundle_third" 2>/dev/null | python3 -c '
import json, sys
doc = json.load(sys.stdin)
miss, hits, rtc = [], 0, []
for p in doc["processes"]:
    for m in p.get("modules", []):
        if m.get("verdict") in ("ptx_jit", "forced_jit"):
            if m.get("cache") == "hit":
                hits += 1
            else:
                miss.append((p.get("exe"), m.get("cache")))
    for k in p.get("compiles", []):
        if k.get("compiler") in ("nvrtc", "nvjitlink", "ptxas", "nvcc", "host_cc"):
            rtc.append((p.get("exe"), k.get("compiler"), k.get("what")))
print(f"   third process: {hits} driver JIT hit(s), misses {miss}, compilers run {rtc[:6]}")
sys.exit(1 if miss or rtc else 0)' && ok "bundle: the third process hit every cache" ||
  fail "bundle: the third process compiled (see the line above)"

echo "== bundle first calls (ms): framework | cold (empty caches) | third process on the bundle"
for n in triton torch.compile jax.jit cupy cudart_ptx; do
  echo "   $n | $(pb_first "$W/bundle_cold.out" "$n") | $(pb_first "$W/bundle_third.out" "$n")"
done
echo "   (cudart_ptx: the whole child process)"
