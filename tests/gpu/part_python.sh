# Python call sites on the real driver; sourced by
# tests/gpu/run.sh near its end, with its helpers (run_case, ok, fail, ...).
# - CuPy RawModule(path=) of a compute_75 PTX file: cuModuleLoad with the GIL
#   released; the report's call site must be tests/gpu/py_rawmodule.py at a
#   line marked "load: rawmodule".
# - PyTorch's first CUDA op: cuLibraryLoadData at the first launch (GIL
#   released); the first load's call site must be py_torch_first.py's marked
#   line.
# - The frame sampler leaves the descriptors alone (py_sampler.py).
# Prints each report's culprit lines and call sites with "== ".

# py_sites NAME: every load's call site in NAME's report, "call<TAB>site", in
# the order the loads were made (the report ranks modules by time lost).
py_sites() {
  "$J" report --json "$W/t/$1/trace" 2>"$W/t/$1/report.err" | python3 -c '
import json, sys
for p in json.load(sys.stdin)["processes"]:
    for m in sorted(p["modules"], key=lambda m: m["seq"]):
        print(m["call"] + "\t" + str(m["call_site"]))'
}

if python3 -c "import cupy" 2>/dev/null; then
  cat >"$P/py_add.cu" <<'CU'
extern "C" __global__ void add_one(int *x) { x[threadIdx.x] += 1; }
CU
  if nvcc -ptx -arch=compute_75 "$P/py_add.cu" -o "$P/py_add75.ptx"; then
    c=$(fresh "$C/py_cupy")
    run_case py_cupy_rawmodule "$c" -- python3 "$G/py_rawmodule.py" "$P/py_add75.ptx"
    grep -q '"call":"cuModuleLoad"' "$W/t/py_cupy_rawmodule/dump.jsonl" &&
      ok "py_cupy_rawmodule: cuModuleLoad traced" || fail "py_cupy_rawmodule: no cuModuleLoad in the trace"
    site=$(py_sites py_cupy_rawmodule | awk -F'\t' '$1 == "cuModuleLoad" {print $2; exit}')
    lines=$(grep -n 'load: rawmodule' "$G/py_rawmodule.py" | cut -d: -f1 | tr '\n' ' ')
    want=0
    for l in $lines; do
      [ "$site" = "load_kernels ($G/py_rawmodule.py:$l) in Python" ] && want=1
    done
    if [ $want = 1 ]; then ok "py_cupy_rawmodule: call site is the user's line: $site"
    else fail "py_cupy_rawmodule: call site '$site', expected load_kernels at line(s) $lines of $G/py_rawmodule.py"; fi
    grep '"type":"note"' "$W/t/py_cupy_rawmodule/dump.jsonl" | sed 's/^/== cupy trace note: /'
    NO_COLOR=1 "$J" report "$W/t/py_cupy_rawmodule/trace" >"$W/t/py_cupy_rawmodule/report.txt" 2>&1
    sed -n '/^Culprits/,/^Fixes/p' "$W/t/py_cupy_rawmodule/report.txt" | sed 's/^/== cupy report: /'
  else
    fail "py_cupy_rawmodule: nvcc -ptx failed"
  fi
else
  echo "skip: python3 has no cupy here"
fi

if python3 -c "import torch" 2>/dev/null; then
  c=$(fresh "$C/py_torch")
  run_case py_torch_first "$c" -- python3 "$G/py_torch_first.py"
  l=$(grep -n 'first op: torch' "$G/py_torch_first.py" | cut -d: -f1)
  py_sites py_torch_first >"$W/t/py_torch_first/sites.txt"
  first=$(awk -F'\t' '$1 == "cuLibraryLoadData" {print $2; exit}' "$W/t/py_torch_first/sites.txt")
  if [ "$first" = "first_op ($G/py_torch_first.py:$l) in Python" ]; then
    ok "py_torch_first: the first cuLibraryLoadData's call site is the user's line: $first"
  else
    fail "py_torch_first: first cuLibraryLoadData's call site '$first', expected first_op at line $l"
  fi
  grep '"type":"note"' "$W/t/py_torch_first/dump.jsonl" | sed 's/^/== torch trace note: /'
  n=$(grep -c '"py_frame"' "$W/t/py_torch_first/dump.jsonl")
  echo "== torch: $n stacks with Python frames; load call sites:"
  sort "$W/t/py_torch_first/sites.txt" | uniq -c | sed 's/^/== torch site: /'
  NO_COLOR=1 "$J" report "$W/t/py_torch_first/trace" >"$W/t/py_torch_first/report.txt" 2>&1
  sed -n '1,20p' "$W/t/py_torch_first/report.txt" | sed 's/^/== torch report: /'
  # What reading Python frames costs: the same program, warm, with and
  # without them (wall time of the whole process, 3 runs each, best).
  for pyo in 1 0; do
    best=
    for i in 1 2 3; do
      d="$W/t/py_torch_cost_$pyo$i"; mkdir -p "$d"
      s0=$(date +%s%N)
      CUDA_CACHE_PATH="$c" JITSTALL_DIR="$d" JITSTALL_PYTHON=$pyo LD_PRELOAD="$PRELOAD" \
        python3 "$G/py_torch_first.py" >/dev/null 2>&1
      ms=$((($(date +%s%N) - s0) / 1000000))
      [ -z "$best" ] || [ "$ms" -lt "$best" ] && best=$ms
    done
    echo "== torch first op under the preload, JITSTALL_PYTHON=$pyo: best of 3 runs $best ms"
  done
else
  echo "skip: python3 has no torch here"
fi

# The frame sampler on the real driver (tests/e2e/py_sampler.py): while it
# samples, open() returns the lowest free descriptor, close(3); dup2(data, 3);
# write(3) gets no error and the data stays the program's, and a process at
# its descriptor limit gets no EMFILE.
S="$top/tests/e2e/py_sampler.py"
c=$(fresh "$C/py_sampler")
for m in lowest dup2 limit; do
  run_case "py_sampler_$m" "$c" -- python3 "$S" "$m" 1.5 "$W/t/py_sampler_$m.data"
done
grep -q '^lowest: 0 other' "$W/t/py_sampler_lowest/pre.out" &&
  ok "py_sampler_lowest: open() gets the lowest number while sampled" ||
  fail "py_sampler_lowest: $(cat "$W/t/py_sampler_lowest/pre.out")"
grep -q '^dup2: errors \[\], data intact' "$W/t/py_sampler_dup2/pre.out" &&
  ok "py_sampler_dup2: no error, data intact" || fail "py_sampler_dup2: $(cat "$W/t/py_sampler_dup2/pre.out")"
grep -q '^limit: 0 EMFILE' "$W/t/py_sampler_limit/pre.out" &&
  ok "py_sampler_limit: no EMFILE at the limit" || fail "py_sampler_limit: $(cat "$W/t/py_sampler_limit/pre.out")"
