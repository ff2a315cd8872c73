# New GPUs, new toolkits, on the real driver; sourced by tests/gpu/run.sh with
# its helpers (run_case, fresh, ok, fail, $J, $PRELOAD, $P, $C, $W, $G).
# (a) PyTorch with CUDA_FORCE_PTX_JIT=1: its libraries ship SASS and no PTX,
#     so the first op fails; the report's fix must be the variable (not a
#     rebuild), say what it revealed (no PTX at all), and name the wheel.
# (b) A PTX load whose .version is newer than the driver JITs: the report must
#     name CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222), the ISA, the toolkit and
#     the driver, and not count the load as JIT.
# (c) jitstall scan --arch sm_90,sm_100,sm_120 --fail-on no_compatible over
#     torch/lib: its per-architecture verdicts, and an exit code that matches
#     them (1 exactly when an architecture has a no_compatible image).
# Prints what it saw with "== toolkits: ".

tk_say() { sed 's/^/== toolkits: /'; }

# ---- (a) CUDA_FORCE_PTX_JIT=1 under PyTorch ----
if python3 -c "import torch" 2>/dev/null; then
  c=$(fresh "$C/tk_torch_forced")
  run_case tk_torch_forced "$c" CUDA_FORCE_PTX_JIT=1 -- python3 "$G/torch_smoke.py"
  d="$W/t/tk_torch_forced"
  tail -2 "$d/ref.err" | tk_say
  NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>&1
  grep -E '^ +(verdict|fix) ' "$d/report.txt" | sort | uniq -c | sort -rn | head -8 | tk_say
  fixes=$(grep -E '^ +fix ' "$d/report.txt" | grep -F 'CUDA_FORCE_PTX_JIT' || true)
  if [ -z "$fixes" ]; then
    fail "tk_torch_forced: no fix names CUDA_FORCE_PTX_JIT"
  else
    printf '%s\n' "$fixes" | grep -q 'unset CUDA_FORCE_PTX_JIT' &&
      ok "tk_torch_forced: the fix is the variable" || fail "tk_torch_forced: the fix is not 'unset CUDA_FORCE_PTX_JIT'"
    printf '%s\n' "$fixes" | grep -q 'ships no PTX at all, so on a GPU newer than its newest SASS' &&
      ok "tk_torch_forced: says what it revealed (no PTX)" ||
      fail "tk_torch_forced: does not say the library ships no PTX"
    # The version pip knows (the wheel's METADATA), not torch.__version__,
    # which may carry a local tag (2.11.0+cu130) that no pip line takes.
    tv=$(python3 -c 'import importlib.metadata as m; print(m.version("torch"))')
    printf '%s\n' "$fixes" | grep -qF "torch $tv" &&
      ok "tk_torch_forced: names the wheel (torch $tv)" || fail "tk_torch_forced: no 'torch $tv' in the fix"
  fi
  if grep -E '^ +fix ' "$d/report.txt" | grep -E 'rebuild .*libtorch' >/dev/null; then
    fail "tk_torch_forced: a fix still says to rebuild a torch library"
  else
    ok "tk_torch_forced: no fix says to rebuild a torch library"
  fi
else
  echo "skip: (a) python3 has no torch here"
fi

# ---- (b) PTX newer than the driver ----
# The driver's CUDA version decides the ISA: 13.N takes up to 9.N, so 9.(N+1)
# is too new; a 12.x driver already refuses 9.0.
drv=$(python3 -c '
import ctypes
v = ctypes.c_int()
ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(v))
print(v.value)' 2>/dev/null || echo 0)
if [ "${drv:-0}" -ge 12000 ] 2>/dev/null; then
  if [ "$drv" -lt 13000 ]; then isa=9.0; else isa=9.$(((drv % 1000) / 10 + 1)); fi
  cat >"$P/tk_add.cu" <<'CU'
extern "C" __global__ void tk_add(int *x) { x[threadIdx.x] += 1; }
CU
  if nvcc -ptx -arch=compute_75 "$P/tk_add.cu" -o "$P/tk_add.ptx"; then
    sed "s/^\.version .*/.version $isa/" "$P/tk_add.ptx" >"$P/tk_new.ptx"
    cat >"$P/tk_load.py" <<'PY'
import ctypes, sys
cu = ctypes.CDLL("libcuda.so.1")
image = open(sys.argv[1], "rb").read() + b"\0"
dev, ctx, mod = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_void_p()
assert cu.cuInit(0) == 0
assert cu.cuDeviceGet(ctypes.byref(dev), 0) == 0
assert cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
assert cu.cuCtxSetCurrent(ctx) == 0
print("cuModuleLoadData", cu.cuModuleLoadData(ctypes.byref(mod), image))
PY
    c=$(fresh "$C/tk_ptx_new")
    run_case tk_ptx_new "$c" -- python3 "$P/tk_load.py" "$P/tk_new.ptx"
    d="$W/t/tk_ptx_new"
    cat "$d/pre.out" | tk_say
    grep -q "cuModuleLoadData 222" "$d/pre.out" &&
      ok "tk_ptx_new: the driver (CUDA $drv) refused PTX ISA $isa with 222" ||
      fail "tk_ptx_new: the driver did not refuse PTX ISA $isa with 222: $(cat "$d/pre.out")"
    NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>&1
    grep -E '^ +(verdict|fix) ' "$d/report.txt" | tk_say
    for want in "ptx_too_new" "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)" "PTX ISA $isa" "supports up to" \
      "upgrade the driver" "build with the driver's toolkit" "ship SASS for sm_"; do
      grep -qF "$want" "$d/report.txt" && ok "tk_ptx_new: report says '$want'" ||
        fail "tk_ptx_new: report lacks '$want'"
    done
    if [ -r /proc/driver/nvidia/version ]; then
      # "NVIDIA UNIX x86_64 Kernel Module  580.95.05 ..." or "... Open Kernel
      # Module for x86_64  580.95.05 ...": the first dotted number's branch.
      branch=$(head -1 /proc/driver/nvidia/version | grep -oE '[[:space:]][0-9]{3,}\.[0-9]+(\.[0-9]+)?[[:space:]]' |
        head -1 | tr -d '[:space:]' | cut -d. -f1)
      grep -qF "this driver ($branch, CUDA" "$d/report.txt" && ok "tk_ptx_new: names driver $branch" ||
        fail "tk_ptx_new: report does not name driver $branch"
    fi
    "$J" report --json "$d/trace" 2>/dev/null | python3 -c '
import json, sys
m = [m for p in json.load(sys.stdin)["processes"] for m in p["modules"] if m["verdict"] == "ptx_too_new"]
assert m and m[0]["result_name"] == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION" and not m[0]["jit"], m' &&
      ok "tk_ptx_new: JSON has result_name and jit false" || fail "tk_ptx_new: JSON module"
  else
    fail "tk_ptx_new: nvcc -ptx failed"
  fi
else
  fail "tk_ptx_new: cannot read the driver's version (cuDriverGetVersion: '$drv')"
fi

# ---- (c) scan for a fleet over torch/lib ----
tl=$(python3 -c 'import torch, os; print(os.path.join(os.path.dirname(torch.__file__), "lib"))' 2>/dev/null)
if [ -n "$tl" ] && [ -d "$tl" ]; then
  d="$W/t/tk_scan"
  mkdir -p "$d"
  rc=0
  "$J" scan --arch sm_90,sm_100,sm_120 --fail-on no_compatible "$tl" >"$d/scan.txt" 2>"$d/scan.err" || rc=$?
  grep -E '^summary for|^per architecture|^  sm_[0-9]+: ' "$d/scan.txt" | tk_say
  echo "exit $rc" | tk_say
  "$J" scan --arch sm_90,sm_100,sm_120 --json "$tl" >"$d/scan.jsonl" 2>>"$d/scan.err"
  want=$(python3 -c '
import json, sys
n = 0
for line in open(sys.argv[1]):
    if line.strip():
        s = json.loads(line)
        print("== toolkits: %s: %d sass, %d ptx_jit, %d no_compatible, %d other_gpus, %d kernels would JIT" % (
            s["arch"], s["summary"]["sass"], s["summary"]["ptx_jit"], s["summary"]["no_compatible"],
            s["summary"]["other_gpus"], s["summary"]["kernels_jit"]), file=sys.stderr)
        n += s["summary"]["no_compatible"]
print(1 if n else 0)' "$d/scan.jsonl")
  [ "$rc" = "$want" ] && ok "tk_scan: exit $rc, as the verdicts imply" ||
    fail "tk_scan: exit $rc, but the verdicts imply $want"
  grep -q '^per architecture:' "$d/scan.txt" && ok "tk_scan: one line per architecture" ||
    fail "tk_scan: no per-architecture block"
else
  echo "skip: (c) python3 has no torch here"
fi
