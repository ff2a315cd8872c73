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
(cd build && ctest --output-on-failure -j"$jobs" --timeout 600)

# In CI (or with JITSTALL_SANITIZE=1): the parsers, the analyzer and the
# simulated driver again under ASan and UBSan. Tests that preload
# libjitstall.so into another program cannot host the ASan runtime, so they
# run only in the build above.
if [ "${CI:-}" = true ] || [ "${JITSTALL_SANITIZE:-0}" = 1 ]; then
  cmake -S . -B build-asan -DJITSTALL_SANITIZE=ON -DJITSTALL_WERROR="$werror"
  cmake --build build-asan -j"$jobs"
  (cd build-asan && ctest --output-on-failure -j"$jobs" --timeout 600 \
    -E '^e2e\.|preload|pytest|run_e2e')
fi
