# Build trees on the GPU (issue 31, item 1); sourced by tests/gpu/run.sh
# (JITSTALL_GPU_PARTS=build runs only this part), with its helpers (ok, fail,
# $J, $W, $G, $P, $PRELOAD).
#  - a CUDA op built by torch.utils.cpp_extension.load_inline (ninja, nvcc,
#    cicc, ptxas, g++) with TORCH_CUDA_ARCH_LIST=9.0 and a cold
#    TORCH_EXTENSIONS_DIR: prints the program's own first-call time beside the
#    report's blame, and checks that `build` is the largest cause, unexplained
#    is at most 5% of the first call, the tree names nvcc and the fix is
#    extension_cache naming that directory;
#  - a second process on the same directory (warm): no extension_cache fix.
BD="$W/build"
rm -rf "$BD"
mkdir -p "$BD/ext" "$BD/cold" "$BD/warm"
if ! python3 -c "import torch, torch.utils.cpp_extension" 2>/dev/null || ! command -v ninja >/dev/null 2>&1; then
  echo "== build: skipped, no torch or no ninja"
else
  for run in cold warm; do
    env TORCH_EXTENSIONS_DIR="$BD/ext" TORCH_CUDA_ARCH_LIST=9.0 JITSTALL_DIR="$BD/$run" \
      LD_PRELOAD="$PRELOAD" python3 "$G/build_ext.py" >"$BD/$run.out" 2>&1 ||
      fail "build: the $run program failed: $(tail -5 "$BD/$run.out")"
    "$J" report --json "$BD/$run" >"$BD/$run.json" 2>"$BD/$run.err" || fail "build: report --json $run"
    NO_COLOR=1 "$J" report "$BD/$run" >"$BD/$run.txt" 2>&1
  done
  grep -A12 'Build tree' "$BD/cold.txt" | sed 's/^/== build tree: /'
  if python3 - "$BD" <<'PY'; then ok "build: cold load_inline blamed on the build, warm has no extension_cache fix"; else fail "build: see above"; fi
import json, sys
bd = sys.argv[1]
own = float([l.split()[1] for l in open(bd + "/cold.out") if l.startswith("first_call_ms")][0])
rep = json.load(open(bd + "/cold.json"))
fcs = [(p["pid"], f) for p in rep["processes"] for f in p["first_calls"]]
pid, fc = max(fcs, key=lambda x: x[1]["dur_ns"])
blame = {b["cause"]: b["dur_ns"] for b in fc["blame"]}
print(f"== build: program's first call {own:.0f} ms; report's first call {fc['dur_ns'] / 1e6:.0f} ms")
for c, ns in sorted(blame.items(), key=lambda x: -x[1]):
    print(f"== build:   {c:<18} {ns / 1e6:9.1f} ms {100 * ns / fc['dur_ns']:5.1f}%")
bad = []
if max(blame, key=blame.get) != "build":
    bad.append("build is not the largest cause")
if blame.get("unexplained", 0) > 0.05 * fc["dur_ns"]:
    bad.append("unexplained above 5%")
names = {c["compiler"] for p in rep["processes"] for c in p["compiles"] if c.get("parent_pid")}
if "nvcc" not in names:
    bad.append(f"no nvcc under the build: {names}")
fx = [f for f in rep["fixes"] if f["kind"] == "extension_cache"]
if not fx or bd + "/ext" not in fx[0]["text"]:
    bad.append(f"no extension_cache fix naming {bd}/ext: {rep['fixes'][:2]}")
elif fx[0]["saves_ns"] > fc["dur_ns"]:
    bad.append("the fix claims more than the first call")
warm = json.load(open(bd + "/warm.json"))
if any(f["kind"] == "extension_cache" for f in warm["fixes"]):
    bad.append("the warm process has an extension_cache fix")
for b in bad:
    print("== build: FAIL", b)
sys.exit(1 if bad else 0)
PY
fi
