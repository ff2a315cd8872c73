# NVTX ranges on the real GPU (sourced by tests/gpu/run.sh).
# PyTorch's torch.cuda.nvtx.range("warmup") / range("query1"), where query1's
# first op is a PTX-only load (compute_75) the driver JIT-compiles; CuPy's
# cupyx.profiler.time_range around an NVRTC compile. Each runs with and
# without the preload (same stdout and exit code); the report must show the
# Queries part and name query1 as the first query with JIT. Prints the
# report's Queries lines as "== " lines.

nvtx_queries() { # nvtx_queries NAME: print the Queries part of NAME's report
  sed -n '/First query with JIT\|Queries (top-level/,/^$/p' "$W/t/$1/report.txt" | sed 's/^/== /'
}

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  c=$(fresh "$C/nvtx_torch")
  run_case nvtx_torch "$c" -- python3 "$G/nvtx_torch.py" "$G/../../examples/driver-ptx-only/kernels.ptx"
  if grep -q '^cuModuleLoadData 0$' "$W/t/nvtx_torch/pre.out"; then
    ok "nvtx_torch: the PTX module loaded inside query1"
  else
    fail "nvtx_torch: the PTX load failed: $(head -3 "$W/t/nvtx_torch/pre.out" "$W/t/nvtx_torch/pre.err" | tr '\n' ' ')"
  fi
  NO_COLOR=1 "$J" report "$W/t/nvtx_torch/trace" >"$W/t/nvtx_torch/report.txt" 2>&1 ||
    fail "nvtx_torch: report failed"
  "$J" report --json "$W/t/nvtx_torch/trace" >"$W/t/nvtx_torch/report.json" 2>/dev/null ||
    fail "nvtx_torch: report --json failed"
  if python3 - "$W/t/nvtx_torch/report.json" <<'PY'
import json, sys
procs = [p for p in json.load(open(sys.argv[1]))["processes"] if p.get("queries")]
assert procs, "no process with queries"
p = procs[0]
q = {x["name"]: x for x in p["queries"]}
assert "warmup" in q and "query1" in q and "query1#2" in q, list(q)
assert q["query1"]["jit_ns"] > 0, f"no JIT inside query1: {q['query1']}"
# torch's own kernels are SASS for the GPU: warmup should have no JIT, and
# then query1 is the first query with JIT.
if q["warmup"]["jit_ns"] == 0:
    assert p["first_jit_query"] == "query1", p["first_jit_query"]
else:
    print(f"== nvtx_torch: note: warmup had {q['warmup']['jit_ns']/1e6:.1f} ms of JIT")
print(f"== nvtx_torch: warmup {q['warmup']['dur_ns']/1e6:.1f} ms; query1 "
      f"{q['query1']['dur_ns']/1e6:.1f} ms, JIT {q['query1']['jit_ns']/1e6:.1f} ms; "
      f"{p['query_headline']}")
PY
  then ok "nvtx_torch: Queries part with query1's JIT, and the headline names query1"
  else fail "nvtx_torch: the report's queries are wrong (see above)"; fi
  if grep -q "First query with JIT  '" "$W/t/nvtx_torch/report.txt" &&
    grep -q "Queries (top-level NVTX ranges)" "$W/t/nvtx_torch/report.txt"; then
    ok "nvtx_torch: the text report has the headline and the Queries part"
  else
    fail "nvtx_torch: no headline or Queries part in the text report"
  fi
  nvtx_queries nvtx_torch
else
  echo "skip: python3 has no torch with CUDA here"
fi

if python3 -c "import cupyx.profiler" 2>/dev/null; then
  c=$(fresh "$C/nvtx_cupy")
  run_case nvtx_cupy "$c" CUPY_CACHE_IN_MEMORY=1 -- python3 "$G/nvtx_cupy.py"
  NO_COLOR=1 "$J" report "$W/t/nvtx_cupy/trace" >"$W/t/nvtx_cupy/report.txt" 2>&1 ||
    fail "nvtx_cupy: report failed"
  "$J" report --json "$W/t/nvtx_cupy/trace" >"$W/t/nvtx_cupy/report.json" 2>/dev/null ||
    fail "nvtx_cupy: report --json failed"
  if python3 - "$W/t/nvtx_cupy/report.json" <<'PY'
import json, sys
procs = [p for p in json.load(open(sys.argv[1]))["processes"] if p.get("queries")]
assert procs, "no process with queries"
q = [x for x in procs[0]["queries"] if x["name"] == "cupy_query"]
assert q, [x["name"] for x in procs[0]["queries"]]
print(f"== nvtx_cupy: queries {[(x['name'], x['domain']) for x in procs[0]['queries']]}; "
      f"cupy_query {q[0]['dur_ns']/1e6:.1f} ms, runtime compile {q[0]['rtc_ns']/1e6:.1f} ms")
assert q[0]["rtc_ns"] > 0, f"no NVRTC time inside cupy_query: {q[0]}"
PY
  then ok "nvtx_cupy: time_range is a query with its NVRTC compile inside"
  else fail "nvtx_cupy: the report's queries are wrong (see above)"; fi
  nvtx_queries nvtx_cupy
else
  echo "skip: python3 has no cupy here"
fi
