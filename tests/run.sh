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
cd build
ctest --output-on-failure -j"$jobs" --timeout 600
