# The cold starts of real GPU programs, cold and then warm, on the real GPU
# (issue 31's Done-when table); sourced by tests/gpu/run.sh
# (JITSTALL_GPU_PARTS=table runs only this part), with its helpers (ok, fail,
# $J, $W, $G, $PRELOAD).
# Each case is a mode of tests/gpu/fw_first_call.py, which times its own first
# call. Per case, six processes, each on its own set of caches:
#   plain cold (caches A), traced cold (B), traced warm (B again), plain warm
#   (A again), cProfile cold (C), cProfile warm (C again)
# so a warm process runs on the caches its cold one left, and the plain and
# traced processes of each pair run the same work (the order inside the pair
# alternates). The caches: every one a framework here keeps (CUDA's, Triton's,
# Inductor's, JAX's persistent cache with its thresholds at zero, Numba's,
# CuPy's, torch extensions', the nvcc program's own).
# tests/gpu/table.py reads what is left (report.json of each traced process,
# the programs' outputs) and prints the table and its checks; it runs again
# anywhere on a copy of $W/table (--jitstall J remakes the reports).
# JITSTALL_GPU_TABLE="triton jax": only these cases (default: all).
# JITSTALL_GPU_TABLE_PROF="triton jax": of these, only the cProfile processes
# (to remake cProfile's side of a table whose traces came from an earlier run).
TB="$W/table"
mkdir -p "$TB"
np23=${JITSTALL_GPU_NP23:-/tmp/np23}
for mode in ${JITSTALL_GPU_TABLE:-triton compile mlp autotune reduceoh jax numbac cupy nvcc graphs ext}; do
  if [ -n "${JITSTALL_GPU_UNTIL:-}" ] && [ "$(date +%s)" -ge "$JITSTALL_GPU_UNTIL" ]; then
    echo "== table: $mode not run (JITSTALL_GPU_UNTIL passed)"
    continue
  fi
  envs=()
  case $mode in
    numbac)
      if ! PYTHONPATH="$np23" python3 -c "import numba.cuda" 2>/dev/null; then
        fail "table/numbac: numba.cuda cannot be imported (JITSTALL_GPU_NP23=$np23)"; continue
      fi
      envs=(PYTHONPATH="$np23") ;;
    ext) envs=(TORCH_CUDA_ARCH_LIST=9.0) ;;
  esac
  d="$TB/$mode"
  only_prof=0
  case " ${JITSTALL_GPU_TABLE_PROF:-} " in *" $mode "*) only_prof=1 ;; esac
  [ $only_prof = 1 ] || rm -rf "$d"
  mkdir -p "$d/cold/trace" "$d/warm/trace"
  cset() { # cset DIR: every cache under DIR
    echo CUDA_CACHE_PATH="$1/nv" TRITON_CACHE_DIR="$1/triton" TORCHINDUCTOR_CACHE_DIR="$1/inductor" \
      JAX_COMPILATION_CACHE_DIR="$1/jax" JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 \
      JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=-1 NUMBA_CACHE_DIR="$1/numba" \
      CUPY_CACHE_DIR="$1/cupy" TORCH_EXTENSIONS_DIR="$1/ext" FFC_NVCC_DIR="$1/nvcc"
  }
  tt0=$SECONDS
  plain() { # plain WHEN CACHES
    env "${envs[@]}" $(cset "$2") python3 "$G/fw_first_call.py" "$mode" >"$d/$1/plain.out" 2>"$d/$1/plain.err"
  }
  traced() { # traced WHEN CACHES
    env "${envs[@]}" $(cset "$2") JITSTALL_DIR="$d/$1/trace" LD_PRELOAD="$PRELOAD" PYTHONUNBUFFERED=1 \
      python3 "$G/fw_first_call.py" "$mode" >"$d/$1/traced.out" 2>"$d/$1/traced.err"
  }
  prof() { # prof WHEN CACHES
    env "${envs[@]}" $(cset "$2") FFC_PSTATS="$d/$1/prof.pstats" python3 "$G/fw_first_call.py" "$mode" --cprofile \
      >"$d/$1/prof.out" 2>"$d/$1/prof.err"
  }
  r1=0 r2=0 r3=0 r4=0
  if [ $only_prof = 0 ]; then
    plain cold "$d/cA"; r1=$?
    traced cold "$d/cB"; r2=$?
    traced warm "$d/cB"; r3=$?
    plain warm "$d/cA"; r4=$?
  fi
  prof cold "$d/cC"; r5=$?
  prof warm "$d/cC"; r6=$?
  echo "== table: $mode: six processes in $((SECONDS - tt0)) s (exit codes $r1 $r2 $r3 $r4 $r5 $r6)"
  if [ "$r1$r2$r3$r4$r5$r6" != 000000 ]; then
    fail "table/$mode: a process failed"
    tail -3 "$d"/*/*.err | sed "s/^/== table $mode: /"
  fi
  for when in cold warm; do
    "$J" report --json "$d/$when/trace" >"$d/$when/report.json" 2>"$d/$when/report.err"
    NO_COLOR=1 "$J" report "$d/$when/trace" >"$d/$when/report.txt" 2>&1
  done
  # what the caches the traced processes saw held (then only the figures stay)
  (cd "$d/cB" 2>/dev/null && for c in *; do echo "$c $(find "$c" -type f | wc -l) files $(du -sk "$c" | cut -f1) KiB"; done) >"$d/caches.txt"
  rm -rf "$d/cA" "$d/cB" "$d/cC"
done
if python3 "$G/table.py" "$TB"; then ok "table: every case meets the targets"
else fail "table: see the lines above"; fi
