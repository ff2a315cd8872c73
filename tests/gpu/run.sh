#!/usr/bin/env bash
# End-to-end tests on a machine with a real NVIDIA GPU (CI has none).
#
# Builds PTX-only test programs with nvcc, runs them with and without
# libjitstall.so, and checks the trace against what the real driver did:
# cold and warm JIT cache, CUDA_MODULE_LOADING=LAZY and EAGER, the cache
# matrix (disabled, read-only, too small, forced JIT, disabled JIT), CUPTI's
# own JIT records (JITSTALL_CUPTI=1), the same matrix on the simulated driver,
# the call site of the first launch, the report's fix applied and measured,
# and the ctest/check example.
#
# usage: tests/gpu/run.sh            (uses build/, building it if needed)
#   JITSTALL_BUILD=DIR    use a build made elsewhere
#   JITSTALL_GPU_LIBS=DIR extra shared libraries for that build (copied .so files)
#   JITSTALL_GPU_OUT=DIR  where to leave traces, reports and the figures (default: a temp dir)
#   JITSTALL_GPU_CORE=0   skip the core checks; JITSTALL_GPU_PARTS="a b": only these parts
#   JITSTALL_GPU_UNTIL=T  start no part after T (seconds since the epoch); the
#                         parts left are named, so a later call can run them
# Exit: 0 all passed, 1 a check failed, 77 no GPU here.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
B=${JITSTALL_BUILD:-$top/build}
export PATH="/usr/local/cuda/bin:$PATH"

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "tests/gpu/run.sh: no NVIDIA GPU here; skipped" >&2
  exit 77
fi
if [ ! -e "$B/libjitstall.so" ] || [ ! -e "$B/jitstall" ]; then
  cmake -S "$top" -B "$B" && cmake --build "$B" -j"$(nproc)" || exit 1
fi
if [ -n "${JITSTALL_GPU_LIBS:-}" ]; then
  export LD_LIBRARY_PATH="$JITSTALL_GPU_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
J="$B/jitstall"
PRELOAD="$B/libjitstall.so"
W=${JITSTALL_GPU_OUT:-$(mktemp -d /tmp/jitstall-gpu.XXXXXX)}
mkdir -p "$W"
ROWS="$W/rows.txt"
: >"$ROWS"
FAILS=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
ok() { echo "ok:   $*"; }
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
sm="sm_${cc}"
echo "== GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1), $sm"
echo "== work dir: $W"

# ---- build the test programs ----
G="$top/tests/gpu"
P="$W/prog"
mkdir -p "$P"
# A second call with the same JITSTALL_GPU_OUT reuses the programs the first built.
if [ -e "$P/.built" ]; then echo "== programs already built in $P"; else
set -e
nvcc -I"$G" -arch=compute_75 -ptx "$G/heavy_kernels.cu" -o "$P/heavy_ptx75.ptx"
nvcc -I"$G" -fatbin -gencode arch=compute_75,code=compute_75 "$G/heavy_kernels.cu" -o "$P/heavy_ptx75.fatbin"
nvcc -I"$G" -fatbin -gencode "arch=compute_${cc},code=sm_${cc}" "$G/heavy_kernels.cu" -o "$P/heavy_sass.fatbin"
nvcc -I"$G" -fatbin -gencode "arch=compute_${cc},code=[sm_${cc},compute_${cc}]" "$G/heavy_kernels.cu" -o "$P/heavy_both.fatbin"
nvcc "$G/gpu_driver.c" -o "$P/gpu_driver" -lcuda
nvcc -I"$G" -g -gencode arch=compute_75,code=compute_75 "$G/gpu_cudart.cu" -o "$P/gpu_cudart_ptx"
BIG=(-DHEAVY_MANY -DHEAVY_UNROLL=512)
nvcc -I"$G" -g "${BIG[@]}" -gencode arch=compute_75,code=compute_75 "$G/gpu_cudart.cu" -o "$P/gpu_cudart_big"
set +e
touch "$P/.built"
echo "== programs built"
fi

# run_case NAME CACHEDIR [ENV=VAL...] -- CMD...
# Runs CMD without and with the preload (each against CACHEDIR as given),
# compares stdout and exit code, and leaves $W/t/NAME/dump.jsonl.
run_case() {
  local name=$1 cache=$2
  shift 2
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  local d="$W/t/$name"
  mkdir -p "$d/trace"
  env "${envs[@]}" CUDA_CACHE_PATH="$cache.ref" "$@" >"$d/ref.out" 2>"$d/ref.err"
  local rc_ref=$?
  env "${envs[@]}" CUDA_CACHE_PATH="$cache" JITSTALL_DIR="$d/trace" LD_PRELOAD="$PRELOAD" \
    "$@" >"$d/pre.out" 2>"$d/pre.err"
  local rc_pre=$?
  if [ $rc_ref -ne $rc_pre ]; then
    fail "$name: exit code $rc_pre under the preload, $rc_ref without"
  elif ! cmp -s "$d/ref.out" "$d/pre.out"; then
    fail "$name: stdout differs under the preload"; diff "$d/ref.out" "$d/pre.out" | head -5
  else
    ok "$name: same stdout and exit code ($rc_pre) with and without the preload"
  fi
  "$J" dump --json "$d"/trace/*.jst >"$d/dump.jsonl" 2>"$d/dump.err" || fail "$name: dump failed: $(cat "$d/dump.err")"
}
check() { # check NAME [check.py args]
  local name=$1; shift
  if python3 "$G/check.py" "$W/t/$name/dump.jsonl" "$name" --row "$ROWS" "$@"; then
    ok "$name: trace agrees ($*)"
  else
    fail "$name: trace disagrees"
  fi
}
fresh() { rm -rf "$1" "$1.ref"; echo "$1"; }

C="$W/cache"
mkdir -p "$C"
# JITSTALL_GPU_CORE=0 skips the core checks below (to run the parts alone, in
# a second call when one call's time is limited).
if [ "${JITSTALL_GPU_CORE:-1}" = 1 ]; then
# ---- driver API: cold, warm, LAZY and EAGER ----
for mode in LAZY EAGER; do
  c=$(fresh "$C/drv_$mode")
  run_case "driver_${mode}_cold" "$c" CUDA_MODULE_LOADING=$mode -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
  check "driver_${mode}_cold" --call cuModuleLoadData --verdict ptx_jit --cache miss_stored --min-ms 200 --result 0
  run_case "driver_${mode}_warm" "$c" CUDA_MODULE_LOADING=$mode -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
  check "driver_${mode}_warm" --call cuModuleLoadData --verdict ptx_jit --cache hit --result 0
done
# ---- cudart: cold, warm, LAZY and EAGER ----
for mode in LAZY EAGER; do
  c=$(fresh "$C/rt_$mode")
  run_case "cudart_${mode}_cold" "$c" CUDA_MODULE_LOADING=$mode -- "$P/gpu_cudart_ptx"
  check "cudart_${mode}_cold" --call cuLibraryLoadData --verdict ptx_jit --cache miss_stored --min-ms 200 --result 0
  run_case "cudart_${mode}_warm" "$c" CUDA_MODULE_LOADING=$mode -- "$P/gpu_cudart_ptx"
  check "cudart_${mode}_warm" --call cuLibraryLoadData --verdict ptx_jit --cache hit --result 0
done

# ---- the cache matrix, with CUPTI's own JIT records as ground truth ----
CU="JITSTALL_CUPTI=1"
c=$(fresh "$C/m_cold")
run_case m_cold "$c" $CU -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
check m_cold --verdict ptx_jit --cache miss_stored --cupti compile,cache_store
run_case m_warm "$c" $CU -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
check m_warm --verdict ptx_jit --cache hit --cupti cache_load,!compile
# Seen on the H200: an entry already cached is loaded even when
# CUDA_CACHE_MAXSIZE is now too small to store it.
run_case m_warm_tiny "$c" $CU CUDA_CACHE_MAXSIZE=4096 -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
check m_warm_tiny --verdict ptx_jit --cache hit --cupti cache_load,!compile
c=$(fresh "$C/m_disabled")
run_case m_disabled "$c" $CU CUDA_CACHE_DISABLE=1 -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
check m_disabled --verdict ptx_jit --cache miss_not_stored --cache-reason disabled --cupti compile,!cache_store
ro="$C/m_ro"
mkdir -p "$ro" "$ro.ref"
mount -t tmpfs -o ro,size=1m tmpfs "$ro" && mount -t tmpfs -o ro,size=1m tmpfs "$ro.ref"
run_case m_readonly "$ro" $CU -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
# CUPTI reports a CACHE_STORE here although nothing can land on a read-only
# file system: its record is the attempt, the directory is the evidence.
check m_readonly --verdict ptx_jit --cache miss_not_stored --cache-reason read_only --cupti compile
umount "$ro" "$ro.ref" 2>/dev/null
c=$(fresh "$C/m_tiny")
run_case m_tiny "$c" $CU CUDA_CACHE_MAXSIZE=4096 -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
check m_tiny --verdict ptx_jit --cache miss_not_stored --cache-reason too_small --cupti compile
# The report's CUDA_CACHE_MAXSIZE, applied: the next run stores, the one after hits.
max=$("$J" report --json "$W/t/m_tiny/trace" | grep -o 'raise CUDA_CACHE_MAXSIZE to [0-9]*' | head -1 | grep -o '[0-9]*$')
if [ -n "$max" ]; then
  c=$(fresh "$C/m_tiny_fixed")
  run_case tinyfix_1 "$c" CUDA_CACHE_MAXSIZE=$max -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
  check tinyfix_1 --verdict ptx_jit --cache miss_stored
  run_case tinyfix_2 "$c" CUDA_CACHE_MAXSIZE=$max -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
  check tinyfix_2 --verdict ptx_jit --cache hit
  echo "== the report's CUDA_CACHE_MAXSIZE=$max: run 1 $(grep '^tinyfix_1|' "$ROWS" | cut -d'|' -f4), run 2 $(grep '^tinyfix_2|' "$ROWS" | cut -d'|' -f4)"
else
  fail "the report for a too-small cache suggests no CUDA_CACHE_MAXSIZE"
fi
c=$(fresh "$C/m_forced")
run_case m_forced "$c" $CU CUDA_FORCE_PTX_JIT=1 -- "$P/gpu_driver" "$P/heavy_both.fatbin"
check m_forced --verdict forced_jit --cache miss_stored --result 0 --cupti compile
c=$(fresh "$C/m_forced_sass")
run_case m_forced_sass_only "$c" CUDA_FORCE_PTX_JIT=1 -- "$P/gpu_driver" "$P/heavy_sass.fatbin"
check m_forced_sass_only --verdict no_compatible --result 209
c=$(fresh "$C/m_nojit")
run_case m_jit_disabled "$c" CUDA_DISABLE_PTX_JIT=1 -- "$P/gpu_driver" "$P/heavy_ptx75.ptx"
check m_jit_disabled --verdict jit_disabled --result 223
c=$(fresh "$C/m_sass")
run_case m_sass "$c" -- "$P/gpu_driver" "$P/heavy_sass.fatbin"
check m_sass --verdict sass --max-ms 200 --result 0

# ---- the same matrix on the simulated driver: the verdicts must agree ----
SIM="$B/simdriver"
if [ -e "$SIM/libcuda.so.1" ]; then
  SROWS="$W/sim_rows.txt"; : >"$SROWS"
  sim_case() { # NAME CACHE ENV... -- IMAGE
    local name=$1 cache=$2; shift 2
    local envs=(); while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
    local d="$W/sim/$name"; mkdir -p "$d"
    env "${envs[@]}" LD_LIBRARY_PATH="$SIM${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" JITSTALL_SIM_CC="$cc" \
      CUDA_CACHE_PATH="$cache" JITSTALL_DIR="$d" LD_PRELOAD="$PRELOAD" "$P/gpu_driver" "$1" >"$d/out" 2>&1
    "$J" dump --json "$d"/*.jst >"$d/dump.jsonl" 2>/dev/null
    python3 "$G/check.py" "$d/dump.jsonl" "$name" --row "$SROWS" >/dev/null
  }
  c=$(fresh "$C/s_cold"); sim_case m_cold "$c" -- "$P/heavy_ptx75.ptx"; sim_case m_warm "$c" -- "$P/heavy_ptx75.ptx"
  sim_case m_warm_tiny "$c" CUDA_CACHE_MAXSIZE=4096 -- "$P/heavy_ptx75.ptx"
  c=$(fresh "$C/s_dis"); sim_case m_disabled "$c" CUDA_CACHE_DISABLE=1 -- "$P/heavy_ptx75.ptx"
  mkdir -p "$C/s_ro" && mount -t tmpfs -o ro,size=1m tmpfs "$C/s_ro" && sim_case m_readonly "$C/s_ro" -- "$P/heavy_ptx75.ptx"; umount "$C/s_ro" 2>/dev/null
  c=$(fresh "$C/s_tiny"); sim_case m_tiny "$c" CUDA_CACHE_MAXSIZE=4096 -- "$P/heavy_ptx75.ptx"
  c=$(fresh "$C/s_forced"); sim_case m_forced "$c" CUDA_FORCE_PTX_JIT=1 -- "$P/heavy_both.fatbin"
  c=$(fresh "$C/s_fso"); sim_case m_forced_sass_only "$c" CUDA_FORCE_PTX_JIT=1 -- "$P/heavy_sass.fatbin"
  c=$(fresh "$C/s_nojit"); sim_case m_jit_disabled "$c" CUDA_DISABLE_PTX_JIT=1 -- "$P/heavy_ptx75.ptx"
  c=$(fresh "$C/s_sass"); sim_case m_sass "$c" -- "$P/heavy_sass.fatbin"
  echo "== agreement: real driver (with CUPTI) vs simulated driver"
  printf "%-19s %-13s %-15s %-9s %-6s | %-13s %-15s %-9s %-6s | %s\n" case "real verdict" "real cache" reason result "sim verdict" "sim cache" reason result agree
  while IFS='|' read -r name call v cache reason ms cupti res; do
    s=$(grep "^$name|" "$SROWS" | head -1)
    [ -n "$s" ] || { fail "no simulated-driver row for $name"; continue; }
    IFS='|' read -r _ _ sv scache sreason _ _ sres <<<"$s"
    a=yes; [ "$v/$cache/$reason/$res" = "$sv/$scache/$sreason/$sres" ] || { a=NO; fail "sim disagrees with the real driver on $name"; }
    printf "%-19s %-13s %-15s %-9s %-6s | %-13s %-15s %-9s %-6s | %s  (cupti: %s)\n" "$name" "$v" "$cache" "$reason" "$res" "$sv" "$scache" "$sreason" "$sres" "$a" "$cupti"
  done < <(grep '^m_' "$ROWS")
fi

# ---- call site of the stall and the report, on the big program ----
c=$(fresh "$C/rt_big")
run_case cudart_big_cold "$c" -- "$P/gpu_cudart_big"
check cudart_big_cold --call cuLibraryLoadData --verdict ptx_jit --cache miss_stored --min-ms 1000 --result 0
d="$W/t/cudart_big_cold"
"$J" report --json "$d/trace" >"$d/report.json" 2>"$d/report.err"; rc=$?
[ $rc -eq 0 ] || fail "report exited $rc: $(head -3 "$d/report.err")"
NO_COLOR=1 "$J" report "$d/trace" >"$d/report.txt" 2>&1
python3 - "$d/report.json" "$G/gpu_cudart.cu" >"$d/attrib.txt" <<'PY'
import json, sys
rep = json.load(open(sys.argv[1]))
p = rep["processes"][0]
mods = sorted(p["modules"], key=lambda m: -m.get("dur_ns", 0))
top = mods[0]
share = top["dur_ns"] / p["ttfk_ns"] if p["ttfk_ns"] else 0
print(f"ttfk_ms={p['ttfk_ns']/1e6:.1f} jit_ms={p['jit_ns']/1e6:.1f} top_module_ms={top['dur_ns']/1e6:.1f} share={share*100:.1f}%")
print(f"verdict={top['verdict']} jit_from={top.get('jit_from')} call_site={top.get('call_site')}")
fixes = rep.get("fixes", [])
print("fix=" + (fixes[0]["text"] if fixes else ""))
ok = share >= 0.95 and top["verdict"] == "ptx_jit" and "gpu_cudart.cu" in str(top.get("call_site"))
sys.exit(0 if ok else 1)
PY
if [ $? -eq 0 ]; then ok "report attributes the time to first kernel: $(head -2 "$d/attrib.txt" | tr '\n' ' ')"
else fail "report attribution: $(cat "$d/attrib.txt")"; fi
gencode=$(grep -o 'arch=compute_[0-9a-z]*,code=sm_[0-9a-z]*' "$d/attrib.txt" | head -1)
if [ -z "$gencode" ]; then
  fail "the report's first fix names no -gencode: $(grep '^fix=' "$d/attrib.txt")"
else
  nvcc -I"$G" -g "${BIG[@]}" -gencode arch=compute_75,code=compute_75 -gencode "$gencode" "$G/gpu_cudart.cu" -o "$P/gpu_cudart_fixed"
  c=$(fresh "$C/rt_fixed")
  run_case cudart_fixed "$c" -- "$P/gpu_cudart_fixed"
  check cudart_fixed --call cuLibraryLoadData --verdict sass --result 0
  "$J" report --json "$W/t/cudart_fixed/trace" >"$W/t/cudart_fixed/report.json"
  python3 - "$d/report.json" "$W/t/cudart_fixed/report.json" "$gencode" <<'PY'
import json, sys
a = json.load(open(sys.argv[1]))["processes"][0]
b = json.load(open(sys.argv[2]))["processes"][0]
print(f"== fix applied (-gencode {sys.argv[3]}): time to first kernel {a['ttfk_ns']/1e6:.1f} ms -> {b['ttfk_ns']/1e6:.1f} ms; JIT {a['jit_ns']/1e6:.1f} ms -> {b['jit_ns']/1e6:.1f} ms")
sys.exit(0 if b["jit_ns"] == 0 and b["ttfk_ns"] < a["ttfk_ns"] / 4 else 1)
PY
  [ $? -eq 0 ] && ok "the report's fix removes the stall" || fail "the report's fix did not remove the stall"
fi

# ---- the ctest + check example ----
if [ -d "$top/examples/ctest-check" ]; then
  for ptx in ON OFF; do
    e="$W/ctest-$ptx"
    rm -rf "$e"
    cmake -S "$top/examples/ctest-check" -B "$e" -DKERNEL_PTX_ONLY=$ptx -DJITSTALL_EXECUTABLE="$J" \
      -DGPU_ARCH="$cc" >"$e.log" 2>&1 && cmake --build "$e" >>"$e.log" 2>&1
    (cd "$e" && CUDA_CACHE_PATH="$e/cache" ctest --output-on-failure >>"$e.log" 2>&1); rc=$?
    if [ $ptx = ON ] && [ $rc -ne 0 ]; then ok "ctest example fails with a PTX-only kernel ($(grep -m1 -o 'jitstall check:.*\|::error.*\|ptx_jit.*' "$e.log"))"
    elif [ $ptx = OFF ] && [ $rc -eq 0 ]; then ok "ctest example passes with SASS added back"
    else fail "ctest example with KERNEL_PTX_ONLY=$ptx: ctest exit $rc (log $e.log)"; tail -20 "$e.log"; fi
  done
fi

# ---- real frameworks under the preload: same output, same exit code ----
for fw in torch cupy; do
  if python3 -c "import $fw" 2>/dev/null; then
    c=$(fresh "$C/fw_$fw")
    # CuPy keeps compiled kernels in memory only: every run compiles with NVRTC.
    run_case "fw_$fw" "$c" CUPY_CACHE_IN_MEMORY=1 -- python3 "$G/${fw}_smoke.py"
    n=$(grep -c '"type":"call"' "$W/t/fw_$fw/dump.jsonl")
    loads=$(grep -c '"call":"cu\(Module\|Library\)Load' "$W/t/fw_$fw/dump.jsonl")
    routes=$(grep -o '"route":"[a-z]*"' "$W/t/fw_$fw/dump.jsonl" | sort | uniq -c | tr -s ' \n' ' ')
    if [ "$loads" -gt 0 ]; then ok "fw_$fw: $n calls traced, $loads loads, routes:$routes"
    else fail "fw_$fw: no module or library load in the trace ($n calls)"; fi
    NO_COLOR=1 "$J" report "$W/t/fw_$fw/trace" >"$W/t/fw_$fw/report.txt" 2>&1 || fail "fw_$fw: report failed"
    if [ "$fw" = cupy ]; then
      # The RawKernel is compiled by NVRTC: the runtime compiler must be timed.
      rtc=$(grep '"call":"nvrtcCompileProgram"' "$W/t/fw_$fw/dump.jsonl" | head -1)
      if [ -n "$rtc" ]; then
        ok "fw_cupy: nvrtcCompileProgram traced: $(grep -o '"route":"[a-z]*"\|"dur_ns":[0-9]*\|"result":[0-9]*' <<<"$rtc" | tr '\n' ' ')"
      else
        fail "fw_cupy: no nvrtcCompileProgram in the trace"
      fi
    fi
    sed -n '1,25p' "$W/t/fw_$fw/report.txt"
  else
    echo "skip: python3 has no $fw here"
  fi
done

# ---- scan: the driver's own answer, and a whole framework in one go ----
"$J" scan --device "$P/gpu_cudart_ptx" >"$W/scan_device.txt" 2>&1 && grep -q ptx_jit "$W/scan_device.txt" &&
  ok "scan --device on the PTX-only program: $(grep -m1 -o 'sm_[0-9]*' "$W/scan_device.txt") ptx_jit" ||
  { fail "scan --device"; cat "$W/scan_device.txt"; }
tl=$(python3 -c "import torch, os; print(os.path.dirname(torch.__file__) + '/lib')" 2>/dev/null)
if [ -n "$tl" ] && [ -d "$tl" ]; then
  s0=$(date +%s.%N)
  "$J" scan --arch "$sm" --json "$tl" >"$W/scan_torch.json" 2>"$W/scan_torch.err"
  s1=$(date +%s.%N)
  python3 - "$W/scan_torch.json" "$s0" "$s1" "$tl" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
from collections import Counter
c = Counter(i["verdict"] for f in r["files"] for i in f["images"])
print(f"== scan of {sys.argv[4]} for {r['arch']}: {len(r['files'])} files, {sum(c.values())} images {dict(c)} in {float(sys.argv[3]) - float(sys.argv[2]):.2f} s")
PY
fi

# ---- the container story: a fresh JIT cache per start vs a cache volume ----
X="$W/container"; mkdir -p "$X"
cc -I/usr/local/cuda/include "$top/examples/driver-ptx-only/query.c" -o "$P/query" -lcuda
for i in 1 2 3; do
  CUDA_CACHE_PATH="$X/fresh$i" "$J" run -o "$X/novol$i" -- "$P/query" "$top/examples/driver-ptx-only/kernels.ptx" >/dev/null 2>&1
  CUDA_CACHE_PATH="$X/volume" "$J" run -o "$X/vol$i" -- "$P/query" "$top/examples/driver-ptx-only/kernels.ptx" >/dev/null 2>&1
done
for kind in novol vol; do
  line="$kind:"
  for i in 1 2 3; do
    v=$("$J" report --json "$X/$kind$i" | python3 -c 'import json,sys; p=json.load(sys.stdin)["processes"][0]; print("%.1f/%.1f" % (p["ttfk_ns"]/1e6, p["jit_ns"]/1e6))')
    line="$line start$i ttfk/jit ms=$v"
  done
  echo "== container $line"
done

fi # JITSTALL_GPU_CORE

# ---- more parts, one file each: tests/gpu/part_*.sh, sourced in name order.
# Each uses run_case, check, fresh, ok, fail, $J, $PRELOAD, $P, $C, $W, $G, $cc, $sm.
# JITSTALL_GPU_PARTS="account warm" runs only those (default: all; "none": none).
# The parts run in the order JITSTALL_GPU_PARTS names them (else name order).
LEFT=""
parts=()
if [ -n "${JITSTALL_GPU_PARTS:-}" ]; then
  for pname in $JITSTALL_GPU_PARTS; do [ -e "$G/part_$pname.sh" ] && parts+=("$G/part_$pname.sh"); done
else
  parts=("$G"/part_*.sh)
fi
for part in "${parts[@]}"; do
  [ -e "$part" ] || continue
  pname=$(basename "$part" .sh); pname=${pname#part_}
  if [ -n "${JITSTALL_GPU_UNTIL:-}" ] && [ "$(date +%s)" -ge "$JITSTALL_GPU_UNTIL" ]; then
    LEFT="$LEFT $pname"
    continue
  fi
  echo "== part: $pname"
  t0=$SECONDS
  . "$part"
  echo "== part $pname took $((SECONDS - t0)) s"
done

echo "== figures (real driver): case|call|verdict|cache|reason|ms|cupti|result"
cat "$ROWS"
[ -z "$LEFT" ] || echo "== parts not run (JITSTALL_GPU_UNTIL passed):$LEFT"
echo "== $FAILS failure(s)"
[ $FAILS -eq 0 ]
