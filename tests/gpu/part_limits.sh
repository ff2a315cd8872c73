# Sourced by tests/gpu/run.sh: the program's resources on the real driver
# (docs/jitstall.1.md, "The program's resources").
# - exec from a thread of 16 KiB of stack after a real load (the END record,
#   the Prometheus file): output and exit status as without the preload;
# - exec with only as much stack left as the plain program needs, plus 512;
# - a file-size limit of 16 KiB with the program writing no file of its own:
#   exit 0, the trace at most 16 KiB and ending in a trace_stop note;
# - the fewest descriptors with which a program that opens one file after a
#   load succeeds plain: it succeeds traced too.
L="$W/limits"
rm -rf "$L"; mkdir -p "$L/t1" "$L/t2" "$L/t3" "$L/t4" "$L/prom"
if nvcc -I"$top/tests/e2e" "$top/tests/e2e/prog_harm.c" -o "$P/prog_harm" -lcuda -lpthread; then
  FX="$top/tests/fixtures"
  "$P/prog_harm" "$FX" load-exec 16384 >"$L/plain.out" 2>&1; prc=$?
  env JITSTALL_DIR="$L/t1" JITSTALL_PROM_DIR="$L/prom" LD_PRELOAD="$PRELOAD" \
    "$P/prog_harm" "$FX" load-exec 16384 >"$L/traced.out" 2>&1; trc=$?
  if [ "$prc" = "$trc" ] && cmp -s "$L/plain.out" "$L/traced.out"; then
    ok "limits: exec from a 16 KiB thread after a real load (exit $trc)"
  else
    fail "limits: exec from a 16 KiB thread: exit $prc plain, $trc traced; $(tail -2 "$L/traced.out")"
  fi
  # The least stack the plain program's exec needs after a real load
  # (bisected in steps of 512 bytes), plus 512: the traced one must run too.
  lo=1024 hi=65536
  if "$P/prog_harm" "$FX" load-exec-left $hi >/dev/null 2>&1; then
    while [ $((hi - lo)) -gt 512 ]; do
      mid=$(((lo + hi) / 2 / 512 * 512))
      if "$P/prog_harm" "$FX" load-exec-left $mid >/dev/null 2>&1; then hi=$mid; else lo=$mid; fi
    done
    left=$((hi + 512))
    "$P/prog_harm" "$FX" load-exec-left $left >"$L/left.plain" 2>&1; prc=$?
    env JITSTALL_DIR="$L/t4" JITSTALL_PROM_DIR="$L/prom" LD_PRELOAD="$PRELOAD" \
      "$P/prog_harm" "$FX" load-exec-left $left >"$L/left.traced" 2>&1; trc=$?
    if [ "$prc" = "$trc" ] && cmp -s "$L/left.plain" "$L/left.traced"; then
      ok "limits: exec with $left bytes of stack left (the plain program needs $hi) after a real load"
    else
      fail "limits: exec with $left bytes of stack left: exit $prc plain, $trc traced"
    fi
  else
    fail "limits: the plain program cannot exec with 64 KiB of stack left"
  fi
  ( ulimit -f 16; exec env CUDA_CACHE_DISABLE=1 JITSTALL_DIR="$L/t2" LD_PRELOAD="$PRELOAD" \
      "$P/prog_harm" "$FX" loads 60 2>"$L/fsz.err" ) | cat >"$L/fsz.out"
  frc=${PIPESTATUS[0]}
  tr=$(ls "$L"/t2/*.jst 2>/dev/null | head -1)
  if [ "$frc" = 0 ] && [ -n "$tr" ] && [ "$(stat -c %s "$tr")" -le 16384 ] &&
     "$J" dump "$tr" 2>/dev/null | grep 'trace_stop' >/dev/null; then
    ok "limits: ulimit -f 16: exit 0, trace of $(stat -c %s "$tr") bytes ending in its stop note"
  else
    fail "limits: ulimit -f 16: exit $frc, trace ${tr:-none}; $(cat "$L/fsz.err")"
  fi
  # The real driver holds descriptors of its own (its device nodes), so
  # ulimit -n 4 fails even without the preload: the limit is the smallest
  # that lets the plain program open its file, and the traced program must
  # open it under the same limit.
  nofile=""
  for n in 4 6 8 10 12 16 20 24 32 48 64 96 128; do
    rm -f "$L/own.data"
    if ( exec 3>&-; ulimit -n $n; exec "$P/prog_harm" "$FX" open "$L/own.data" ) >/dev/null 2>&1 &&
       [ "$(cat "$L/own.data" 2>/dev/null)" = "the program's own line" ]; then
      nofile=$n
      break
    fi
  done
  if [ -z "$nofile" ]; then
    fail "limits: the plain program cannot open its file under ulimit -n 128"
  else
    rm -f "$L/own.data"
    ( exec 3>&-; ulimit -n "$nofile"; exec env JITSTALL_DIR="$L/t3" LD_PRELOAD="$PRELOAD" \
        "$P/prog_harm" "$FX" open "$L/own.data" ) >"$L/nofile.out" 2>&1
    nrc=$?
    if [ "$nrc" = 0 ] && [ "$(cat "$L/own.data" 2>/dev/null)" = "the program's own line" ]; then
      ok "limits: ulimit -n $nofile (the fewest the plain program needs): the traced program's open succeeds"
    else
      fail "limits: ulimit -n $nofile (enough plain): exit $nrc traced; $(tail -2 "$L/nofile.out")"
    fi
  fi
else
  fail "limits: cannot build prog_harm"
fi
