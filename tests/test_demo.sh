#!/usr/bin/env bash
# The README's second Quick start command must keep working: runs
# examples/demo.sh against this build and checks that it shows the stall,
# names the module's kernels and the fix for its PTX file (ptxas, or nvcc
# -fatbin), that the warm run is a cache hit, and that the module built ahead
# of time needs no JIT. usage: tests/test_demo.sh BUILD_DIR
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
# The demo's folder is this test's own, removed at the end.
tmp=$(mktemp -d /tmp/jst-test-demo.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
W=$tmp/demo
out=$(JITSTALL_BUILD="$1" JITSTALL_DEMO_DIR="$W" NO_COLOR=1 "$top/examples/demo.sh" 2>&1)
rc=$?
fails=0
need() {
  grep -qE -- "$1" <<<"$out" || { echo "FAIL: demo output lacks: $1"; fails=$((fails + 1)); }
}
# It keeps what it says it keeps: the report and the comparisons, as shown.
need "^Traces and reports are in $W:"
for f in cold warm report.txt diff-warm.txt; do
  [ -e "$W/$f" ] || { echo "FAIL: $W/$f is not there"; fails=$((fails + 1)); }
  grep -qx "  $f" <<<"$out" || { echo "FAIL: the demo does not list $f"; fails=$((fails + 1)); }
done
grep -q "verdict *ptx_jit" "$W/report.txt" 2>/dev/null || { echo "FAIL: report.txt"; fails=$((fails + 1)); }
grep -q "cache miss_stored -> hit" "$W/diff-warm.txt" 2>/dev/null || { echo "FAIL: diff-warm.txt"; fails=$((fails + 1)); }
# Building, it says so before the wait (here a cmake that fails at once
# stands in for the build, so nothing is built), and a failed build shows
# the end of its log.
mkdir -p "$tmp/fake"
printf '#!/bin/sh\necho "fake cmake: no build here" >&2\nexit 1\n' >"$tmp/fake/cmake"
chmod +x "$tmp/fake/cmake"
bout=$(PATH="$tmp/fake:$PATH" JITSTALL_DEMO_DIR="$tmp/b" "$top/examples/demo.sh" 2>&1)
brc=$?
[ $brc -eq 1 ] || { echo "FAIL: a failed build: demo.sh exited $brc"; fails=$((fails + 1)); }
grep -qE "^== (Building jitstall in .*: about 20 s|Updating the build of jitstall in )" <<<"$bout" ||
  { echo "FAIL: the build is silent: $bout"; fails=$((fails + 1)); }
grep -q "^== The build failed; the end of $tmp/b/build.log:" <<<"$bout" &&
  grep -q "fake cmake: no build here" <<<"$bout" ||
  { echo "FAIL: a failed build does not show its log: $bout"; fails=$((fails + 1)); }
[ $rc -eq 0 ] || { echo "FAIL: demo.sh exited $rc"; fails=$((fails + 1)); }
need '^== (Real NVIDIA driver|No NVIDIA GPU here: using the SIMULATED driver)'
need 'verdict +ptx_jit: PTX compute_75 only'
need 'kernels +3: scan_rows, hash_join, void db::aggregate<float>\(float\*, int\)'
need 'call site +load_engine \(.*query\.c:[0-9]+\)'
need 'load the result .*: ptxas -arch=sm_[0-9]+, or nvcc -fatbin -gencode arch=compute_[0-9]+,code=\[sm_[0-9]+,compute_[0-9]+\]'
need 'cache miss_stored -> hit'
# Fix 1 applied: the module rebuilt with SASS, no JIT left at all.
need '^== 4\. Fix 1 applied: the PTX compiled ahead of time: nvcc -fatbin -gencode arch=compute_[0-9]+,code=\[sm_[0-9]+,compute_[0-9]+\]'
need 'JIT time +[0-9.]+ ms -> 0\.0 ms \(-[0-9.]+ ms, -100%\)'
# The rebuilt module is the same module, changed: not appeared + disappeared.
need '^  changed .*\[.*\]: ptx_jit -> sass'
if grep -qE '^  (appeared|disappeared) ' <<<"$out"; then
  echo "FAIL: the rebuilt module shows as appeared/disappeared, not changed"
  fails=$((fails + 1))
fi
need '^== With fix 1, time to first kernel [0-9.]+ [mu]?s -> [0-9.]+ [mu]?s, and no cache is needed'
if [ $fails -ne 0 ]; then
  echo "$out"
  exit 1
fi
echo "demo: all checks passed"
