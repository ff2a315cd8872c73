#!/usr/bin/env bash
# Installs what the build needs (as root), configures, builds and runs every
# test through ctest. Usage: tests/run.sh [extra cmake -D options]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
. tests/deps.sh
jst_deps || exit $?

werror=OFF
[ "${CI:-}" = true ] && werror=ON
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DJITSTALL_WERROR="$werror" "$@"
cmake --build build -j"$jobs"
# Runs ctest in build dir $1 (more ctest options after it), adding its
# counts to the closing line.
passed=0 failed=0 skipped=0 status=0
# The temp logs go with the script, however it ends.
logs=()
trap 'rm -f "${logs[@]}"' EXIT
run_ctest() {
  local dir=$1 log rc=0
  shift
  log=$(mktemp)
  logs+=("$log")
  # A failing ctest must not end the script (set -e): the closing line below
  # always prints.
  { (cd "$dir" && ctest --output-on-failure -j"$jobs" --timeout 600 "$@") 2>&1 | tee "$log"; } || rc=$?
  local line
  line=$(grep -E '[0-9]+% tests passed, [0-9]+ tests? failed out of [0-9]+' "$log" | tail -1) || true
  if [ -n "$line" ]; then
    local f n
    f=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\1/' <<<"$line")
    n=$(sed -E 's/.* ([0-9]+) tests? failed out of ([0-9]+).*/\2/' <<<"$line")
    # A skipped test (exit 77) is not a pass: it is counted apart.
    local s
    s=$(grep -c '\*\*\*Skipped' "$log" || true)
    passed=$((passed + n - f - s))
    failed=$((failed + f))
    skipped=$((skipped + s))
  elif [ "$rc" -ne 0 ]; then
    # ctest ended before its summary (crashed, or killed): one failure.
    failed=$((failed + 1))
  fi
  rm -f "$log"
  [ "$rc" -eq 0 ] || status=1
}

run_ctest build

# In CI (or with JITSTALL_SANITIZE=1): the parsers, the analyzer and the
# simulated driver again under ASan and UBSan. Tests that preload
# libjitstall.so into another program cannot host the ASan runtime, so they
# run only in the build above, and so do the tests that preload a shim of
# their own into the CLI (a file cut while it is read) or run the installed
# CLI under the preload (and examples, whose README commands do); so does
# unit.stack_frames, whose frame-size limits
# are for the preload as built, not with ASan's redzones.
if [ "${CI:-}" = true ] || [ "${JITSTALL_SANITIZE:-0}" = 1 ]; then
  cmake -S . -B build-asan -DJITSTALL_SANITIZE=ON -DJITSTALL_WERROR="$werror"
  if cmake --build build-asan -j"$jobs"; then
    run_ctest build-asan -E '^e2e\.|preload|pytest|run_e2e|^demo$|^cli\.run_|^fleet\.|^unit\.stack_frames$|_shrinks_while_read$|^cli\.install$|^examples$'
  else
    failed=$((failed + 1))
    status=1
  fi
fi
# In CI (or with JITSTALL_FUZZ=1): every fuzz target under libFuzzer with
# ASan and UBSan, a bounded time each (JITSTALL_FUZZ_SECONDS, default 20).
if [ "${CI:-}" = true ] || [ "${JITSTALL_FUZZ:-0}" = 1 ]; then
  if tests/fuzz/run_fuzz.sh "${JITSTALL_FUZZ_SECONDS:-20}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    status=1
  fi
fi
if [ "$skipped" -gt 0 ]; then
  echo "tests/run.sh: $passed passed, $failed failed, $skipped skipped"
else
  echo "tests/run.sh: $passed passed, $failed failed"
fi
exit $status
