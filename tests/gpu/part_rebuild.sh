# A module rebuilt from PTX to SASS, on the real GPU. Sourced by
# tests/gpu/run.sh (bash, set -uo pipefail, no -e): uses run_case, fresh, ok,
# fail, $J, $P, $C, $W. Never exits; every step is guarded.
#
# gpu_driver loads heavy_ptx75.fatbin (PTX only: JIT), then, as a rebuild,
# heavy_sass.fatbin (nvcc's own output, compressed or not): the SASS load's
# trace must name its kernels (the cubin's symbol table), and `jitstall diff`
# must show the one module as `changed` (ptx_jit -> sass), not as one
# module appearing and another disappearing.
c=$(fresh "$C/rebuild")
run_case rebuild_ptx "$c" -- "$P/gpu_driver" "$P/heavy_ptx75.fatbin"
run_case rebuild_sass "$c" -- "$P/gpu_driver" "$P/heavy_sass.fatbin"
a="$W/t/rebuild_ptx/trace"
b="$W/t/rebuild_sass/trace"
if python3 - "$W/t/rebuild_sass/dump.jsonl" <<'PY'; then
import json, sys
loads = [r for r in map(json.loads, open(sys.argv[1])) if r.get("verdict") == "sass"]
ok = loads and all(r.get("kernels") for r in loads)
print("SASS load kernels:", [r.get("kernels", [])[:3] for r in loads], "entries:",
      [r.get("entries") for r in loads])
sys.exit(0 if ok else 1)
PY
  ok "rebuild: the SASS load names its kernels"
else
  fail "rebuild: the SASS load names no kernels"
fi
out=$("$J" diff "$a" "$b" 2>&1)
echo "$out" | sed 's/^/    /'
if grep -qE '^  changed .*: ptx_jit -> sass' <<<"$out" && ! grep -qE '^  (appeared|disappeared) ' <<<"$out"; then
  ok "rebuild: diff shows the module as changed"
else
  fail "rebuild: diff does not show the module as changed"
fi
