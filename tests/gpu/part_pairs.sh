# Plain against traced: each framework's first call, measured by the program
# itself (tests/gpu/fw_first_call.py), in interleaved pairs; sourced by
# tests/gpu/run.sh (JITSTALL_GPU_PARTS=pairs runs only this part), with its
# helpers (ok, fail, $W, $G, $PRELOAD).
# Each run is cold for the frameworks (fresh Triton, Inductor, JAX and CUDA
# caches), so a pair compares the same work. The order inside a pair
# alternates (plain first, then traced first) so that a drift of the machine
# falls on both. JITSTALL_GPU_PAIRS pairs per program (default 3);
# JITSTALL_GPU_PAIRS_PROGRAMS="jax numba" runs only those programs.
# Check, per program: the traced median is within noise of the plain one:
# median(traced) - median(plain) <= max(10% of median(plain), the spread of
# the plain runs (max - min)). Prints one "PAIRS" line per program and the
# table in $W/pairs_figures.md.
PR="$W/pairs"
mkdir -p "$PR"
PFIGS="$W/pairs_figures.md"
printf '| program | plain first calls (ms) | traced first calls (ms) | median plain | median traced | added |\n|---|---|---|---|---|---|\n' >"$PFIGS"
npairs=${JITSTALL_GPU_PAIRS:-3}
np23=${JITSTALL_GPU_NP23:-/tmp/np23}
for mode in ${JITSTALL_GPU_PAIRS_PROGRAMS:-triton compile jax numba}; do
  envs=()
  if [ "$mode" = numba ]; then
    if ! PYTHONPATH="$np23" python3 -c "import numba.cuda" 2>/dev/null; then
      echo "== pairs/numba: skipped, numba.cuda cannot be imported (JITSTALL_GPU_NP23=$np23)"
      continue
    fi
    envs=(PYTHONPATH="$np23")
  fi
  d="$PR/$mode"
  mkdir -p "$d"
  plain=() traced=()
  for i in $(seq 1 "$npairs"); do
    order="plain traced"
    [ $((i % 2)) = 0 ] && order="traced plain"
    for kind in $order; do
      c="$d/c$i$kind"
      rm -rf "$c" "$d/t$i"
      mkdir -p "$c" "$d/t$i"
      cache=(TRITON_CACHE_DIR="$c/triton" TORCHINDUCTOR_CACHE_DIR="$c/inductor"
        JAX_COMPILATION_CACHE_DIR="$c/jax" CUDA_CACHE_PATH="$c/nv")
      if [ "$kind" = plain ]; then
        env "${envs[@]}" "${cache[@]}" python3 "$G/fw_first_call.py" "$mode" >"$d/$kind$i.out" 2>&1
      else
        env "${envs[@]}" "${cache[@]}" JITSTALL_DIR="$d/t$i" LD_PRELOAD="$PRELOAD" \
          python3 "$G/fw_first_call.py" "$mode" >"$d/$kind$i.out" 2>&1
      fi
      ns=$(sed -n 's/^FIRST_CALL_NS //p' "$d/$kind$i.out")
      if [ -z "$ns" ]; then
        fail "pairs/$mode: the $kind run $i printed no first-call time"
        tail -3 "$d/$kind$i.out" | sed "s/^/== pairs $mode $kind: /"
        continue
      fi
      if [ "$kind" = plain ]; then plain+=("$ns"); else traced+=("$ns"); fi
    done
  done
  [ ${#plain[@]} -gt 0 ] && [ ${#traced[@]} -gt 0 ] || continue
  line=$(python3 - "${plain[*]}" "${traced[*]}" <<'PY'
import statistics as st, sys
p = [int(x) / 1e6 for x in sys.argv[1].split()]
t = [int(x) / 1e6 for x in sys.argv[2].split()]
mp, mt = st.median(p), st.median(t)
noise = max(0.10 * mp, max(p) - min(p))
verdict = "ok" if mt - mp <= noise else "over"
print(verdict, f"{mp:.1f}", f"{mt:.1f}", f"{mt - mp:+.1f}", f"{noise:.1f}",
      " ".join(f"{x:.0f}" for x in p) + "|" + " ".join(f"{x:.0f}" for x in t))
PY
)
  read -r verdict mp mt added noise runs <<<"$line"
  echo "PAIRS $mode plain_median=${mp}ms traced_median=${mt}ms added=${added}ms noise=${noise}ms runs=$runs"
  printf '| %s | %s | %s | %s ms | %s ms | %s ms (noise %s ms) |\n' "$mode" "${runs%%|*}" "${runs#*|}" \
    "$mp" "$mt" "$added" "$noise" >>"$PFIGS"
  if [ "$verdict" = ok ]; then
    ok "pairs/$mode: traced first call within noise of plain ($added ms, noise $noise ms)"
  else
    fail "pairs/$mode: traced first call $added ms slower than plain (noise $noise ms)"
  fi
done
cat "$PFIGS"
