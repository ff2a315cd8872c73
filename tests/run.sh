#!/usr/bin/env bash
# Installs what the build needs (as root), configures, builds and runs every
# test through ctest. Usage: tests/run.sh [extra cmake -D options]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"

pkgs=(build-essential cmake pkg-config libzstd-dev libunwind-dev liblz4-dev
      libelf-dev libdw-dev libcmocka-dev python3)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "tests/run.sh: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "tests/run.sh: missing packages; run as root or install them with:" >&2
    echo "  sudo apt-get install -y ${missing[*]}" >&2
    exit 2
  fi
fi
if ! command -v nvcc >/dev/null && [ ! -e /usr/local/cuda/include/cuda.h ]; then
  echo "tests/run.sh: the CUDA toolkit headers (cuda.h) are needed; install the CUDA toolkit" >&2
  exit 2
fi
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"

werror=OFF
[ "${CI:-}" = true ] && werror=ON
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DJITSTALL_WERROR="$werror" "$@"
cmake --build build -j"$jobs"
cd build
ctest --output-on-failure -j"$jobs" --timeout 600
