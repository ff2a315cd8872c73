#!/usr/bin/env bash
# Benchmark (issue 29, item 12): a generated Python function of LINES lines
# (default 300000) loads, launches and unloads a cubin REPS times (default
# 200), from three of its lines (tests/e2e/py_lines.py). Prints the whole
# run's wall time, best of RUNS (default 3), plain, traced, and traced with
# JITSTALL_PYTHON=0, and the time of the loop alone.
#   bash tests/bench/bench_pylines.sh BUILD_DIR [PRELOAD] [LINES] [REPS] [RUNS]
set -euo pipefail
build=$(cd "$1" && pwd)
preload=${2:-$build/libjitstall.so}
lines=${3:-300000} reps=${4:-200} runs=${5:-3}
src=$(cd "$(dirname "$0")/../.." && pwd)
py=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LD_LIBRARY_PATH=$build/simdriver
run() { # run NAME ENV...: best wall time and loop time of RUNS runs
    local name=$1 best="" loop="" i t0 t1 w l
    shift
    for ((i = 0; i < runs; i++)); do
        t0=$(date +%s.%N)
        env "$@" "$py" "$src/tests/e2e/py_lines.py" "$lines" "$reps" "$src/tests/fixtures/sm90.cubin" \
            >/dev/null 2>"$work/err"
        t1=$(date +%s.%N)
        w=$(echo "$t1 - $t0" | bc)
        l=$(tail -n 1 "$work/err")
        if [ -z "$best" ] || (($(echo "$w < $best" | bc))); then best=$w; fi
        if [ -z "$loop" ] || (($(echo "$l < $loop" | bc))); then loop=$l; fi
    done
    printf '%-28s %7.3f s   (the loop: %6.3f s)\n' "$name" "$best" "$loop"
}
echo "py_lines.py: $lines lines, $reps rounds of load, launch, unload; best of $runs"
run plain X=1
run traced LD_PRELOAD="$preload" JITSTALL_DIR="$work"
run "traced, JITSTALL_PYTHON=0" LD_PRELOAD="$preload" JITSTALL_DIR="$work" JITSTALL_PYTHON=0
