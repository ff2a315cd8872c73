#!/usr/bin/env bash
# Every wrapper that can run on one of the program's threads fits in a small
# stack: exec, posix_spawn and a load from a thread of PTHREAD_STACK_MIN
# (16 KiB), and an exec that ends an open trace (END record, Prometheus file)
# from a thread of 32 KiB, behave as they do without the preload; and an exec
# with no more stack left than the plain program needs; and none of them
# allocates on a thread other than the main one.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/prom"
for c in "exec 16384" "spawn 16384" "load 16384" "load-exec 32768" "load-exec 16384"; do
    set -- $c
    name="$1-$2"
    run_plain "$name.plain" "$BIN/prog_harm" "$FIX" "$1" "$2"
    expect_rc "$name.plain" 0
    run_traced "$name.traced" "$BIN/prog_harm" "$FIX" "$1" "$2"
    same_behaviour "$name.plain" "$name.traced"
    # The same with the Prometheus file asked for, which exit and exec write.
    run_traced "$name.prom" JITSTALL_PROM_DIR="$WORK/prom" "$BIN/prog_harm" "$FIX" "$1" "$2"
    same_behaviour "$name.plain" "$name.prom"
done
# An exec with only as much stack left as the plain program needs (the
# fewest bytes, in steps of 512, with which it runs), plus 512: the preload
# must need no more. It does its work (the real function's lookup, the
# environment, the END record) on a stack of its own there, and is bound at
# load (BIND_NOW), so that no first call of a symbol resolves on the small
# stack: on x86-64 the dynamic linker saves the vector registers there, which
# with AVX-512 or AMX takes kilobytes.
need=""
for n in $(seq 1024 512 24576); do
    if "$BIN/prog_harm" "$FIX" load-exec-left "$n" >/dev/null 2>&1; then need=$n; break; fi
done
[ -n "$need" ] || fail "the plain program cannot exec with 24 KiB of stack left"
left=$((need + 512))
run_plain left.plain "$BIN/prog_harm" "$FIX" load-exec-left "$left"
expect_rc left.plain 0
run_traced left.traced JITSTALL_PROM_DIR="$WORK/prom" "$BIN/prog_harm" "$FIX" load-exec-left "$left"
same_behaviour left.plain left.traced
dump_json "$(the_trace left.traced)" "$WORK/left.json"
check_json "$WORK/left.json" <<'PY'
end = of_type("end")
expect(len(end) == 1 and end[0]["end_reason"] == "exec", f"end: {end}")
PY
readelf -dW "$JST_PRELOAD" | grep 'BIND_NOW' >/dev/null || fail "libjitstall.so is not linked with -z now"
echo "ok: exec with $left bytes of stack left (the plain program needs $need)"
# The exec after a load ended its trace properly, from the small stack.
dump_json "$(the_trace load-exec-16384.traced)" "$WORK/le.json"
check_json "$WORK/le.json" <<'PY'
end = of_type("end")
expect(len(end) == 1 and end[0]["end_reason"] == "exec", f"end: {end}")
PY
ls "$WORK/prom"/jitstall_prog_harm_*.prom >/dev/null || fail "no Prometheus file"
# An exec or spawn from a thread other than the main one allocates nothing in
# the preload: it may come from a signal handler that interrupted malloc (a
# crash handler starting a reporter), where an allocation would hang. A test
# double preloaded first counts what the calls allocate; the preload must add
# nothing to the C library's count, on a thread of the default size and on a
# small one. (Asking glibc how much stack a thread has left allocates.)
shim="$JST_E2E_BIN/liballoc_shim.so"
[ -f "$shim" ] || fail "no $shim"
for sz in 0 16384; do
    run_plain "alloc.plain.$sz" JST_ALLOC_SHIM_OUT="$WORK/alloc.plain.$sz" \
        LD_PRELOAD="$shim" "$BIN/prog_harm" "$FIX" missing "$sz"
    expect_rc "alloc.plain.$sz" 0
    run_plain "alloc.traced.$sz" JST_ALLOC_SHIM_OUT="$WORK/alloc.traced.$sz" \
        LD_PRELOAD="$shim:$JST_PRELOAD" JITSTALL_DIR="$WORK/alloc.traces" "$BIN/prog_harm" "$FIX" missing "$sz"
    same_behaviour "alloc.plain.$sz" "alloc.traced.$sz"
    grep -q '^exec: No such file' "$WORK/alloc.traced.$sz.out" || fail "missing $sz: $(cat "$WORK/alloc.traced.$sz.out")"
    [ -s "$WORK/alloc.plain.$sz" ] || fail "the allocation counter wrote nothing"
    cmp -s "$WORK/alloc.plain.$sz" "$WORK/alloc.traced.$sz" ||
        fail "exec/spawn on a thread (stack $sz) allocated under the preload: plain $(tr '\n' ' ' <"$WORK/alloc.plain.$sz"), preloaded $(tr '\n' ' ' <"$WORK/alloc.traced.$sz" 2>/dev/null)"
done
echo "ok: exec and spawn on a thread allocate nothing in the preload"
echo "ok: small stacks"
