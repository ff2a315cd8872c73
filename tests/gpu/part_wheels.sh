# The CI gate of `jitstall scan` on the GPU libraries people install, as on
# NVIDIA's own (issue 33): `scan --arch sm_90,sm_100 --fail-on no_compatible`
# over torch's and JAX's wheels (and the nvidia-* wheels beside them) must
# pass: a library's variants for other GPUs, PTX or not, are no failure. A
# no_compatible left is printed with its file, so a real gap shows as one.
# Sourced by tests/gpu/run.sh with its helpers (ok, fail, $J, $W).
# Prints what it saw with "== wheels: ".

wh_say() { sed 's/^/== wheels: /'; }

wh_scan() { # NAME DIR...
  local name=$1; shift
  local d="$W/t/wh_$name" rc=0 t0=$SECONDS
  mkdir -p "$d"
  "$J" scan --arch sm_90,sm_100 --fail-on no_compatible "$@" >"$d/scan.txt" 2>"$d/scan.err" || rc=$?
  local took=$((SECONDS - t0))
  grep -E '^summary for|^  sm_[0-9]+: ' "$d/scan.txt" | wh_say
  echo "$name: exit $rc in ${took} s over $*" | wh_say
  if [ $rc -eq 0 ]; then
    ok "wh_$name: scan --arch sm_90,sm_100 --fail-on no_compatible passes"
  else
    fail "wh_$name: scan --fail-on no_compatible exit $rc ($(head -c 300 "$d/scan.err"))"
    "$J" scan --arch sm_90,sm_100 --json "$@" 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    if not line.strip():
        continue
    doc = json.loads(line)
    for f in doc["files"]:
        for i in f["images"]:
            if i["verdict"] == "no_compatible":
                print("%s %s @%d [%s]: %s" % (doc["arch"], f["path"], i["offset"],
                      " ".join(e["arch"] for e in i["entries"]), i["reason"]))
' | sort | uniq | head -20 | wh_say
  fi
  # The listing of the GPU present stays readable: names cut to the width.
  local long
  long=$(COLUMNS=100 "$J" scan --device "$@" 2>/dev/null | awk 'length($0) > 100 && /^      /' | wc -l)
  [ "$long" -eq 0 ] && ok "wh_$name: kernel names cut to 100 columns" ||
    fail "wh_$name: $long kernel lines over 100 columns"
}

tdir=$(python3 -c 'import torch, os; print(os.path.dirname(torch.__file__))' 2>/dev/null || true)
if [ -n "$tdir" ] && [ -d "$tdir" ]; then
  extra=()
  [ -d "$(dirname "$tdir")/nvidia" ] && extra+=("$(dirname "$tdir")/nvidia")
  wh_scan torch "$tdir" "${extra[@]}"
else
  echo "skip: wheels: python3 has no torch here"
fi
jdirs=()
for m in jaxlib jax_plugins jax_cuda13_plugin jax_cuda12_plugin jax_cuda13_pjrt jax_cuda12_pjrt; do
  p=$(python3 -c "import importlib.util as u, os; s = u.find_spec('$m'); print(os.path.dirname(s.origin) if s and s.origin else (list(s.submodule_search_locations)[0] if s and s.submodule_search_locations else ''))" 2>/dev/null || true)
  [ -n "$p" ] && [ -d "$p" ] && jdirs+=("$p")
done
if [ ${#jdirs[@]} -gt 0 ]; then
  wh_scan jax "${jdirs[@]}"
else
  echo "skip: wheels: python3 has no jax/jaxlib here"
fi

# The preload's side of the rule: torch's first matmul (cuBLAS) under the
# preload, with CUDA_MODULE_LOADING=EAGER so that cudart hands the driver
# every fatbin of its libraries, the variants for other GPUs included. No
# module may come out as no_compatible from a library that also ran here:
# those loads are other_gpus, with no culprit and no fix.
if [ -n "$tdir" ] && [ -d "$tdir" ]; then
  for mode in LAZY EAGER; do
    n=wh_torch_$mode
    c=$(fresh "$C/$n")
    run_case "$n" "$c" CUDA_MODULE_LOADING=$mode -- python3 "$G/torch_smoke.py"
    d="$W/t/$n"
    "$J" report --json "$d/trace" >"$d/report.json" 2>"$d/report.err"
    python3 - "$d/report.json" >"$d/variants.txt" <<'PY'
import collections, json, sys
doc = json.load(open(sys.argv[1]))
by = collections.Counter()
bad = []
for p in doc["processes"]:
    ran = {m.get("source") for m in p.get("modules", []) if m.get("verdict") in ("sass", "ptx_jit")}
    for m in p.get("modules", []):
        by[m.get("verdict")] += 1
        if m.get("verdict") == "no_compatible" and m.get("source") in ran:
            bad.append("%s: %s" % (m.get("source"), m.get("reason")))
print("verdicts: " + ", ".join("%s %d" % kv for kv in sorted(by.items())))
for b in bad[:5]:
    print("no_compatible from a library that ran: " + b)
print("BAD %d" % len(bad))
PY
    sed "s/^/$n: /" "$d/variants.txt" | wh_say
    if grep -qx "BAD 0" "$d/variants.txt"; then
      ok "$n: no no_compatible load from a library whose code ran"
    else
      fail "$n: a library's variant for other GPUs is reported as no_compatible"
    fi
  done
fi
