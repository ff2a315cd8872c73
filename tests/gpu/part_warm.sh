# tests/gpu/part_warm.sh: `jitstall warm` and scan's speed on the real GPU.
# Sourced by tests/gpu/run.sh (set -uo pipefail, no -e): never exits, guards
# every step, calls ok/fail per check and prints its figures on "== " lines.
#  1. cudart PTX-only program and driver-API program: a cold start, then
#     `jitstall warm --cache DIR <binary or ptx>`, then starts with that cache:
#     the load must be a cache hit; time to first kernel cold / warmed / again,
#     warm's own time, and a second warm (everything already cached).
#  2. container-like: a fresh cache directory per start against a warmed one.
#  3. scan over torch's lib dir and libcublasLt: time and peak RSS, against
#     `cuobjdump --list-elf`.

# Time to first kernel (ms) of the trace(s) in a directory, or "?".
pw_ttfk() {
  "$J" report --json "$1" 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)["processes"][0]
print("%.1f" % (p["ttfk_ns"] / 1e6))' 2>/dev/null || echo "?"
}
# pw_warm NAME CACHEDIR PATH...: runs warm --json, leaves $W/warm_NAME.json;
# sets PW_RC and PW_S (wall seconds).
pw_warm() {
  local name=$1 cache=$2
  shift 2
  local t0 t1
  t0=$(date +%s.%N)
  "$J" warm --cache "$cache" --json "$@" >"$W/warm_$name.json" 2>"$W/warm_$name.err"
  PW_RC=$?
  t1=$(date +%s.%N)
  PW_S=$(python3 -c "print('%.2f' % ($t1 - $t0))")
}
# pw_field NAME EXPR: a python expression over the warm JSON as d, or "?".
pw_field() {
  python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print($2)" "$W/warm_$1.json" \
    2>/dev/null || echo "?"
}

pw_story() { # pw_story NAME CALL PROG [ARGS...]: cold, warm, warmed start, start again, warm again
  local name=$1 call=$2
  shift 2
  local c
  c=$(fresh "$C/warm_$name")
  run_case "warm_${name}_cold" "$c" -- "$@"
  check "warm_${name}_cold" --call "$call" --verdict ptx_jit --cache miss_stored --result 0
  c=$(fresh "$C/warm_${name}_w")
  local target=$1
  [ $# -ge 2 ] && target=$2 # the driver program loads its argument: warm that file
  pw_warm "$name" "$c" "$target"
  local warmed
  warmed=$(pw_field "$name" 'd["summary"]["warmed"]')
  if [ "$PW_RC" -eq 0 ] && [ "$warmed" = "1" ]; then
    ok "warm $name: exit 0, 1 image warmed in $PW_S s"
  else
    fail "warm $name: exit $PW_RC, warmed=$warmed: $(head -3 "$W/warm_$name.err")"
  fi
  local label
  label=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['warmed_for'][0]['cc'])" \
    "$c/jitstall-warm.json" 2>/dev/null)
  [ "$label" = "$cc" ] && ok "warm $name: the cache is labelled for sm_$label" ||
    fail "warm $name: label cc '$label', want $cc"
  cp -a "$c" "$c.ref" # run_case's reference run uses DIR.ref: warm it the same way
  run_case "warm_${name}_after" "$c" -- "$@"
  check "warm_${name}_after" --call "$call" --verdict ptx_jit --cache hit --result 0
  run_case "warm_${name}_again" "$c" -- "$@"
  check "warm_${name}_again" --call "$call" --verdict ptx_jit --cache hit --result 0
  pw_warm "${name}_2" "$c" "$target"
  local cached
  cached=$(pw_field "${name}_2" 'd["summary"]["cached"]')
  [ "$PW_RC" -eq 0 ] && [ "$cached" = "1" ] && ok "warm $name again: already cached ($PW_S s)" ||
    fail "warm $name again: exit $PW_RC, cached=$cached"
  echo "== warm $name: time to first kernel cold $(pw_ttfk "$W/t/warm_${name}_cold/trace") ms," \
    "after warm $(pw_ttfk "$W/t/warm_${name}_after/trace") ms," \
    "again $(pw_ttfk "$W/t/warm_${name}_again/trace") ms;" \
    "warm took $(pw_field "$name" '"%.2f s" % d["summary"]["seconds"]') of loads" \
    "($(pw_field "$name" 'd["cache"]["bytes_after"]') bytes in the cache)," \
    "warm again $(pw_field "${name}_2" '"%.2f s" % d["summary"]["seconds"]')"
}

pw_story cudart cuLibraryLoadData "$P/gpu_cudart_ptx"
pw_story driver cuModuleLoadData "$P/gpu_driver" "$P/heavy_ptx75.ptx"

# The driver build: recorded by the preload on the device record, and by warm
# in the cache's label; both must be nvidia-smi's driver version.
pw_smi=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 | tr -d ' ')
pw_rel=$(grep -o '"driver_release": *"[^"]*"' "$W/t/warm_driver_cold/dump.jsonl" 2>/dev/null |
  head -1 | sed 's/.*"\([^"]*\)"$/\1/')
pw_lab=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['warmed_for'][0]['driver'])" \
  "$C/warm_driver_w/jitstall-warm.json" 2>/dev/null)
[ -n "$pw_smi" ] && [ "$pw_rel" = "$pw_smi" ] && [ "$pw_lab" = "$pw_smi" ] &&
  ok "driver release $pw_smi in the trace and in the cache label" ||
  fail "driver release: nvidia-smi '$pw_smi', trace '$pw_rel', label '$pw_lab'"
# ---- container-like: a fresh cache per start vs one warmed before the first ----
PX="$W/warm_container"
mkdir -p "$PX"
pw_q="$P/query"
pw_k="$top/examples/driver-ptx-only/kernels.ptx"
[ -x "$pw_q" ] || cc -I/usr/local/cuda/include "$top/examples/driver-ptx-only/query.c" -o "$pw_q" -lcuda
pw_warm container "$PX/warmed" "$pw_k"
[ "$PW_RC" -eq 0 ] && ok "warm of the container example's PTX ($PW_S s)" || fail "warm container: exit $PW_RC"
pw_line_f="" pw_line_w=""
for i in 1 2 3; do
  CUDA_CACHE_PATH="$PX/fresh$i" "$J" run -o "$PX/f$i" -- "$pw_q" "$pw_k" >/dev/null 2>&1
  CUDA_CACHE_PATH="$PX/warmed" "$J" run -o "$PX/w$i" -- "$pw_q" "$pw_k" >/dev/null 2>&1
  pw_line_f="$pw_line_f $(pw_ttfk "$PX/f$i")"
  pw_line_w="$pw_line_w $(pw_ttfk "$PX/w$i")"
done
if "$J" check --require-cache hit "$PX/w1" >/dev/null 2>&1; then
  ok "container-like: the first start with the warmed cache is a hit"
else
  fail "container-like: the first start with the warmed cache is not a hit"
fi
echo "== container-like, time to first kernel (ms) of 3 starts: fresh cache each start:$pw_line_f;" \
  "warmed cache:$pw_line_w; warm took $PW_S s"

# A label for another driver build: the report of a miss names both.
pw_c=$(fresh "$C/warm_relabel")
cp -a "$C/warm_driver_w/jitstall-warm.json" "$W/label.json" 2>/dev/null
mkdir -p "$pw_c" && python3 - "$W/label.json" "$pw_c/jitstall-warm.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["warmed_for"][0]["driver"] = "1.0.0"
json.dump(d, open(sys.argv[2], "w"))
PY
run_case warm_relabel "$pw_c" -- "$pw_q" "$pw_k"
if NO_COLOR=1 "$J" report "$W/t/warm_relabel/trace" 2>&1 | grep "was warmed for driver 1.0.0 .*this run is driver $pw_smi" >/dev/null; then
  ok "report: a miss in a cache labelled for another driver build says so"
else
  fail "report: no re-warm message for a cache labelled for driver 1.0.0"
fi


# ---- scan: time and peak RSS, against cuobjdump ----
# pw_measure OUT CMD...: runs CMD, prints "S s, R MB" (wall time, max RSS).
pw_measure() {
  local out=$1
  shift
  python3 - "$out" "$@" <<'PY'
import resource, subprocess, sys, time
t0 = time.monotonic()
with open(sys.argv[1], "w") as f:
    try:
        rc = subprocess.call(sys.argv[2:], stdout=f, stderr=subprocess.STDOUT)
    except OSError as e:
        sys.exit(print(f"could not run {sys.argv[2]}: {e.strerror}"))
dt = time.monotonic() - t0
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"{dt:.2f} s, {rss:.0f} MB RSS, exit {rc}")
PY
}
pw_lt=""
for f in $(python3 -c 'import nvidia.cublas, os; d = os.path.join(list(nvidia.cublas.__path__)[0], "lib"); print(" ".join(os.path.join(d, x) for x in sorted(os.listdir(d))))' 2>/dev/null) \
  /usr/local/cuda/lib64/libcublasLt.so.*; do
  case $f in *libcublasLt.so*) [ -f "$f" ] && [ ! -L "$f" ] && pw_lt=$f && break ;; esac
done
if [ -n "$pw_lt" ]; then
  pw_sz=$(( $(stat -c %s "$pw_lt") / 1048576 ))
  pw_a=$(pw_measure "$W/scan_lt.txt" "$J" scan --arch "$sm" "$pw_lt")
  pw_b=$(pw_measure "$W/scan_lt_warmcache.txt" "$J" scan --arch "$sm" "$pw_lt")
  pw_c=$(pw_measure "$W/cuobjdump_lt.txt" cuobjdump --list-elf "$pw_lt")
  grep -q '^summary for ' "$W/scan_lt.txt" && ok "scan of $(basename "$pw_lt") ($pw_sz MB)" ||
    fail "scan of $pw_lt: $(tail -2 "$W/scan_lt.txt")"
  echo "== scan --arch $sm $pw_lt ($pw_sz MB): $pw_a (again: $pw_b); cuobjdump --list-elf: $pw_c"
  echo "== scan summary: $(grep '^summary for ' "$W/scan_lt.txt")"
else
  echo "skip: no libcublasLt here"
fi
pw_tl=$(python3 -c "import torch, os; print(os.path.dirname(torch.__file__) + '/lib')" 2>/dev/null)
if [ -n "$pw_tl" ] && [ -d "$pw_tl" ]; then
  pw_a=$(pw_measure "$W/scan_torchlib.txt" "$J" scan --arch "$sm" "$pw_tl")
  grep -q '^summary for ' "$W/scan_torchlib.txt" && ok "scan of torch's lib dir" ||
    fail "scan of $pw_tl: $(tail -2 "$W/scan_torchlib.txt")"
  echo "== scan --arch $sm $pw_tl: $pw_a; $(grep '^summary for ' "$W/scan_torchlib.txt")"
else
  echo "skip: no torch here"
fi
