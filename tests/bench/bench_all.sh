#!/usr/bin/env bash
# Every figure of what tracing costs in one run (CMake target `bench`; docs/PERFORMANCE.md
# has the table and the command behind each line):
#   idle cost (/bin/true 400 runs, the two empty-.so floors, sh -c, python),
#   start-up and exit cost (a driver program on the simulated driver),
#   per-load inspection cost (small images, a 32-kernel PTX image),
#   unwind cost, analyzer throughput (1 M events), scan throughput.
# usage: tests/bench/bench_all.sh BUILD_DIR     Exit: 0, or 1 if a goal was missed.
set -uo pipefail
B=$(cd "${1:?usage: bench_all.sh BUILD_DIR}" && pwd)
top=$(cd "$(dirname "$0")/../.." && pwd)
X="$B/tests/bench"
missed=0
section() { printf '\n== %s\n' "$*"; }

section "idle cost: a process that never calls the driver"
echo "  /bin/true (the worst case: 0.5 ms of CPU, most of it the loader's):"
"$X/bench_cost" idle "$B/libjitstall.so" 400 /bin/true || missed=1
echo "  the floors: an empty shared object as the toolchain builds it, preloaded into /bin/true:"
"$X/bench_cost" idle "$X/libjst_bench_empty.so" 400 /bin/true | tail -1
echo "  and the barest object the loader takes (no code, two mappings, no RELRO):"
"$X/bench_cost" idle "$X/libjst_bench_bare.so" 400 /bin/true | tail -1
echo "  a shell running one command (sh -c 'true; true'):"
"$X/bench_cost" idle "$B/libjitstall.so" 200 /bin/sh -c 'true; true' | tail -1
# The interpreter itself, not a wrapper script in front of it (pyenv's shim
# is a shell script that starts dozens of processes).
py=$(python3 -c 'import sys; print(sys.executable)' 2>/dev/null || true)
if [ -n "$py" ]; then
    echo "  $py -c pass:"
    "$X/bench_cost" idle "$B/libjitstall.so" 60 "$py" -c pass | tail -1
fi
[ -e "$B/libjitstall.so" ] && if env LD_PRELOAD="$B/libjitstall.so" cat /proc/self/maps |
    grep -qE 'lib(zstd|lz4|unwind|lzma)'; then
    echo "  an idle preloaded process maps a heavy library"; missed=1
else
    echo "  maps of an idle preloaded process: libjitstall.so only (no zstd, lz4, unwind, lzma)"
fi

section "start-up and exit cost: prog_direct, one SASS load and launch, simulated driver"
cache=$(mktemp -d /tmp/bench_all.XXXXXX)
export LD_LIBRARY_PATH="$B/simdriver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
CUDA_CACHE_PATH="$cache" "$X/bench_cost" start "$B/libjitstall.so" 30 \
    "$B/tests/e2e/prog_direct" "$top/tests/fixtures" 0 module sm90.fatbin || missed=1
echo "  where a traced start's own time goes (JITSTALL_DEBUG=1, one run):"
CUDA_CACHE_PATH="$cache" JITSTALL_DEBUG=1 JITSTALL_DIR="$cache" LD_PRELOAD="$B/libjitstall.so" \
    "$B/tests/e2e/prog_direct" "$top/tests/fixtures" 0 module sm90.fatbin 2>&1 >/dev/null |
    sed -n 's/^jitstall\[[0-9]*\]: cost: /    /p'
rm -rf "$cache"

section "per-load inspection cost"
big="$B/tests/bench/heavy32_ptx75.fatbin"
if [ ! -e "$big" ] && command -v nvcc >/dev/null; then
    nvcc -I"$top/tests/gpu" -DHEAVY_MANY -DHEAVY_UNROLL=512 -fatbin \
        -gencode arch=compute_75,code=compute_75 "$top/tests/gpu/gpu_cudart.cu" -o "$big" ||
        rm -f "$big"
fi
imgs=("$top/tests/fixtures/sm90.fatbin" "$top/tests/fixtures/ptx75.fatbin"
    "$top/examples/driver-ptx-only/kernels.ptx")
[ -e "$big" ] && imgs+=("$big") || echo "  (no nvcc: no 32-kernel image)"
"$X/bench_inspect" "${imgs[@]}"

section "unwind cost"
"$X/bench_unwind" 24 20000

section "cuGetProcAddress: what the preload adds to each call (cudart makes hundreds at start)"
echo "  plain:     $("$X/bench_procaddr")"
echo "  preloaded: $(LD_PRELOAD="$B/libjitstall.so" JITSTALL_DIR="$(mktemp -d)" "$X/bench_procaddr")"

section "analyzer throughput"
"$X/bench_analyzer" "$B/jitstall" 1000000 || missed=1

section "hostile traces: growth with the input (linear is about x2 for x2)"
python3 "$top/tests/bench/bench_hostile.py" "$B" || missed=1

section "scan throughput"
"$X/bench_scan" --jitstall "$B/jitstall"

section "goals: $([ $missed = 0 ] && echo 'all met' || echo 'at least one MISSED (see above)')"
exit $missed
