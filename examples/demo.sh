#!/usr/bin/env bash
# Builds jitstall and shows its main job: a program whose first query is slow
# because its kernels ship as PTX only, run under `jitstall run`, then the
# report that names the module, the kernels, the call site and the fix, and
# both fixes applied: a warm JIT cache, then the module rebuilt with SASS.
# With an NVIDIA GPU it uses the real driver; without one, the simulated driver.
# Its traces and reports stay in a new /tmp/jitstall-demo.XXXXXX, or in
# JITSTALL_DEMO_DIR when set.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
# JITSTALL_BUILD=DIR: use a build made elsewhere (as tests/gpu/run.sh does).
B=${JITSTALL_BUILD:-$top/build}
if [ -n "${JITSTALL_DEMO_DIR:-}" ]; then
  mkdir -p "$JITSTALL_DEMO_DIR"
  W=$(cd "$JITSTALL_DEMO_DIR" && pwd)
else
  W=$(mktemp -d /tmp/jitstall-demo.XXXXXX)
fi
if [ -z "${JITSTALL_BUILD:-}" ]; then
  . tests/deps.sh
  jst_deps build || exit $?
  # The build is quiet (its output goes to a log) but not silent: on a fresh
  # clone it takes a while, so say so, and show the log if it fails.
  log=$W/build.log
  if [ -x "$B/jitstall" ]; then
    echo "== Updating the build of jitstall in $B (log: $log)..."
  else
    echo "== Building jitstall in $B: about 20 s on 8 cores, longer on fewer (log: $log)..."
  fi
  s0=$SECONDS
  if ! { cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=RelWithDebInfo &&
         cmake --build "$B" -j"$(nproc 2>/dev/null || echo 2)"; } >"$log" 2>&1; then
    echo "== The build failed; the end of $log:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  echo "   built in $((SECONDS - s0)) s"
fi
B=$(cd "$B" && pwd)
J="$B/jitstall"
ex="$top/examples/driver-ptx-only"
# What the demo leaves in $W, said at every exit: only what is there.
done_note() {
  echo
  echo "Traces and reports are in $W:"
  (cd "$W" && ls -d cold warm fixed report.txt diff-warm.txt diff-fixed.txt 2>/dev/null) |
    sed 's/^/  /'
}

if command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1; then
  echo "== Real NVIDIA driver: $(nvidia-smi --query-gpu=name,compute_cap --format=csv,noheader | head -1)"
  cc -g -I/usr/local/cuda/include "$ex/query.c" -o "$W/query" -lcuda
else
  echo "== No NVIDIA GPU here: using the SIMULATED driver ($B/simdriver/libcuda.so.1)."
  echo "   It JIT-compiles at 1.9 ms per KB of PTX, the rate measured on an H200."
  cc -g -I/usr/local/cuda/include "$ex/query.c" -o "$W/query" -L"$B/simdriver" -lcuda
  export LD_LIBRARY_PATH="$B/simdriver${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export JITSTALL_SIM_JIT_US_PER_KB=1900
fi
# A fresh JIT cache, as in a new container.
export CUDA_CACHE_PATH="$W/cache"

echo
echo "== 1. First start, empty JIT cache:  jitstall run -o $W/cold -- query kernels.ptx"
(cd "$ex" && "$J" run -o "$W/cold" -- "$W/query" kernels.ptx)
echo
echo "== 2. The report:  jitstall report $W/cold  (kept in $W/report.txt)"
"$J" report "$W/cold" | tee "$W/report.txt"
echo
echo "== 3. Second start, warm cache, compared:  jitstall diff $W/cold $W/warm"
(cd "$ex" && "$J" run -o "$W/warm" -- "$W/query" kernels.ptx >/dev/null 2>&1)
"$J" diff "$W/cold" "$W/warm" | tee "$W/diff-warm.txt"
echo
# Fix 1, the lasting one: the report says to compile the PTX file ahead of
# time for this GPU; its nvcc command is run on kernels.ptx as given. Without
# nvcc, the same command's output shipped beside the example
# (kernels_sm90.fatbin, made for sm_90) stands in.
fixcmd=$("$J" report "$W/cold" | grep -o 'nvcc -fatbin -gencode arch=compute_[0-9a-z]*,code=\[sm_[0-9a-z]*,compute_[0-9a-z]*\]' | head -1)
echo "== 4. Fix 1 applied: the PTX compiled ahead of time: $fixcmd kernels.ptx, empty JIT cache again"
if [ -z "$fixcmd" ]; then
  echo "   (the report gave no nvcc command: step skipped)"
  done_note
  exit 0
elif command -v nvcc >/dev/null; then
  read -ra nvargs <<<"${fixcmd#nvcc }" # no globbing of code=[...]
  nvcc "${nvargs[@]}" "$ex/kernels.ptx" -o "$W/kernels.fatbin"
elif [ "$fixcmd" != "nvcc -fatbin -gencode arch=compute_90,code=[sm_90,compute_90]" ]; then
  echo "   (no nvcc here, and the prebuilt module is for sm_90 only: step skipped)"
  done_note
  exit 0
else
  echo "   (no nvcc here: using examples/driver-ptx-only/kernels_sm90.fatbin, the output of"
  echo "    that command)"
  cp "$ex/kernels_sm90.fatbin" "$W/kernels.fatbin"
fi
export CUDA_CACHE_PATH="$W/cache-fixed"
(cd "$ex" && "$J" run -o "$W/fixed" -- "$W/query" "$W/kernels.fatbin" >/dev/null 2>&1)
"$J" diff "$W/cold" "$W/fixed" | tee "$W/diff-fixed.txt"
ttfk() { NO_COLOR=1 "$J" report "$1" | sed -n 's/^ *Time to first kernel  *\([0-9.]* [a-z]*\).*/\1/p' | head -1; }
echo
echo "== With fix 1, time to first kernel $(ttfk "$W/cold") -> $(ttfk "$W/fixed"), and no cache is needed."
done_note
