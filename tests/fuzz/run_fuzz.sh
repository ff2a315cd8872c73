#!/usr/bin/env bash
# Builds every fuzz target with clang and libFuzzer (all of common/
# instrumented, ASan and UBSan on) in build-fuzz/, then runs each for a
# bounded time over its corpus in tests/fuzz/corpus/<name>/. New inputs go to
# a scratch directory, not into the repository. A crash, leak or sanitizer
# report fails the run; its input is kept in build-fuzz/crashes/.
# Usage: tests/fuzz/run_fuzz.sh [SECONDS_PER_TARGET (default 20)] [TARGET...]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
secs=${1:-20}
shift || true
cc=${JITSTALL_FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null; then
  echo "run_fuzz.sh: $cc not found (apt-get install clang)" >&2
  exit 2
fi
b="$top/build-fuzz"
CC=$cc CXX=${cc/clang/clang++} cmake -S "$top" -B "$b" -DJITSTALL_LIBFUZZER=ON \
  -DJITSTALL_WERROR=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || exit 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$top"/tests/fuzz/fuzz_*.c; do
    n=$(basename "$f" .c)
    targets+=("${n#fuzz_}")
  done
fi
cmake --build "$b" -j"$(nproc 2>/dev/null || echo 2)" \
  --target "${targets[@]/#/fuzz_}" >/dev/null || { echo "run_fuzz.sh: build failed" >&2; exit 2; }
mkdir -p "$b/crashes"
status=0
for t in "${targets[@]}"; do
  scratch=$(mktemp -d)
  mkdir -p "$scratch/new" "$scratch/tmp"
  log="$b/fuzz_$t.log"
  (cd "$b/crashes" && TMPDIR="$scratch/tmp" ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$b/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
     -max_len=65536 -print_final_stats=1 -artifact_prefix="$b/crashes/$t-" \
     "$scratch/new" "$top/tests/fuzz/corpus/$t") >"$log" 2>&1
  rc=$?
  # The last status line carries coverage; the final stats the executions.
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -1)
  runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$')
  speed=$(grep -oE 'exec/s: [0-9]+' "$log" | tail -1)
  echo "fuzz_$t: ${runs:-?} executions in ${secs}s, ${cov:-cov: ?}, ${speed:-exec/s: ?}, exit $rc"
  if [ "$rc" -ne 0 ]; then
    status=1
    echo "fuzz_$t FAILED; log: $log" >&2
    grep -E 'ERROR|SUMMARY|Test unit written' "$log" | head -5 >&2
  fi
  rm -rf "$scratch"
done
exit $status
