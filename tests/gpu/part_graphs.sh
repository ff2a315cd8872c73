# CUDA graph capture on the real driver (issue 31 item 6); sourced by
# tests/gpu/run.sh (JITSTALL_GPU_PARTS=graphs runs only this part), with its
# helpers (ok, fail, $J, $W, $G, $P, $PRELOAD, $cc).
#  - graphs_cudart.cu, PTX only, CUDA_MODULE_LOADING=EAGER: 64 graphs captured
#    with the runtime API (cudart reaches the driver by cuGetProcAddress)
#    between the JIT and the kernel's first launch. The report must count 64
#    graphs, blame graph_capture with 64 graphs in that first call, and show
#    the "CUDA graphs" line; the output is the same with and without jitstall.
#  - torch.cuda.graph, when torch is there: 64 graphs of a small MLP, one per
#    batch size, after a warm-up; the report must count at least 64.
# Prints the program's own capture time beside the report's.
GR="$W/graphs"
rm -rf "$GR"
mkdir -p "$GR/c" "$GR/torch"
nvcc -gencode arch=compute_75,code=compute_75 "$G/graphs_cudart.cu" -o "$P/graphs_cudart" ||
  fail "graphs: nvcc graphs_cudart.cu"
env CUDA_MODULE_LOADING=EAGER CUDA_CACHE_DISABLE=1 "$P/graphs_cudart" >"$GR/ref.out" 2>"$GR/ref.err"
rc_ref=$?
env CUDA_MODULE_LOADING=EAGER CUDA_CACHE_DISABLE=1 JITSTALL_DIR="$GR/c" LD_PRELOAD="$PRELOAD" \
  "$P/graphs_cudart" >"$GR/pre.out" 2>"$GR/pre.err"
rc_pre=$?
if [ $rc_ref -ne 0 ] || [ $rc_pre -ne 0 ] || ! cmp -s "$GR/ref.out" "$GR/pre.out"; then
  fail "graphs: the program differs under the preload (exit $rc_ref / $rc_pre)"
else
  ok "graphs: same output and exit code under the preload"
fi
echo "== graphs: program's own: $(cat "$GR/pre.err")"
NO_COLOR=1 "$J" report "$GR/c" >"$GR/c.txt" 2>&1
"$J" report --json "$GR/c" >"$GR/c.json" 2>&1
grep -i 'graph' "$GR/c.txt" | sed 's/^/== graphs report: /'
if python3 - "$GR/c.json" <<'PY'; then
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
g = p["graphs"]
print(f"== graphs: {g['count']} captured, capture {g['capture_ns']/1e6:.1f} ms, "
      f"instantiate {g['instantiate_ns']/1e6:.1f} ms")
assert g["count"] == 64 and g["instantiated"] == 64, g
fc = [f for f in p["first_calls"] if f["kernel"] and "graphs_fill" in f["kernel"]]
assert fc, f"a first call of graphs_fill: {[f['kernel'] for f in p['first_calls']]}"
blame = {b["cause"]: b for b in fc[0]["blame"]}
print("== graphs: first call", {k: round(v["dur_ns"] / 1e6, 1) for k, v in blame.items()})
assert "graph_capture" in blame and blame["graph_capture"]["graphs"] == 64, blame
PY
  ok "graphs: 64 graphs counted and blamed as graph_capture"
else
  fail "graphs: the report of graphs_cudart"
fi
grep -Eq '^  CUDA graphs +64 captured' "$GR/c.txt" && ok "graphs: the CUDA graphs line" ||
  fail "graphs: no 'CUDA graphs 64 captured' line"

if python3 -c "import torch; assert torch.cuda.is_available()" 2>/dev/null; then
  cat >"$GR/torch_graphs.py" <<'PY'
import time, torch
m = torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.GELU(), torch.nn.Linear(256, 256)).cuda()
graphs = []
with torch.no_grad():
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for b in range(1, 65):  # warm-up, as servers do before capture
            m(torch.randn(b, 256, device="cuda"))
    torch.cuda.current_stream().wait_stream(s)
    t0 = time.perf_counter()
    for b in range(1, 65):
        x = torch.randn(b, 256, device="cuda")
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            y = m(x)
        graphs.append((g, x, y))
    torch.cuda.synchronize()
    print(f"captured {len(graphs)} graphs in {(time.perf_counter() - t0) * 1e3:.1f} ms", flush=True)
PY
  env JITSTALL_DIR="$GR/torch" LD_PRELOAD="$PRELOAD" python3 "$GR/torch_graphs.py" >"$GR/torch.out" 2>&1 ||
    fail "graphs: torch program failed: $(tail -3 "$GR/torch.out")"
  echo "== graphs torch: program's own: $(grep captured "$GR/torch.out")"
  "$J" report --json "$GR/torch" >"$GR/torch.json" 2>&1
  NO_COLOR=1 "$J" report "$GR/torch" 2>&1 | grep -i 'graph' | sed 's/^/== graphs torch report: /'
  if python3 - "$GR/torch.json" <<'PY'; then
import json, sys
procs = json.load(open(sys.argv[1]))["processes"]
n = sum(p["graphs"]["count"] for p in procs)
print(f"== graphs torch: {n} graphs counted")
assert n >= 64, n
PY
    ok "graphs: torch.cuda.graph's 64 graphs counted"
  else
    fail "graphs: torch.cuda.graph's graphs not counted"
  fi
else
  echo "== graphs torch: skipped, no torch with CUDA"
fi
