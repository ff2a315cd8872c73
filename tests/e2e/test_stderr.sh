#!/usr/bin/env bash
# Everything the preload says goes to descriptor 2 only while it is the file
# the process started with:
# - a daemon closes 0-2, opens /dev/null twice and its data file, which gets
#   descriptor 2; with JITSTALL_DIR naming a plain file (the trace cannot be
#   created), an invalid JITSTALL_BUDGET_MS, a budget that is exceeded and
#   JITSTALL_DEBUG=1, its data file holds its own line and nothing else;
# - an invalid JITSTALL_BUDGET_MS is said once, by the process that traces,
#   not again by every process it execs.
. "$(dirname "$0")/lib.sh"
touch "$WORK/plainfile"
for v in "JITSTALL_BUDGET_MS=abc" "JITSTALL_BUDGET_MS=0" "JITSTALL_DEBUG=1"; do
    data="$WORK/data-${v%%=*}"
    rc=0
    env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/plainfile" "$v" \
        "$BIN/prog_harm" "$FIX" daemon "$data" >"$WORK/d.out" 2>"$WORK/d.err" || rc=$?
    [ "$rc" = 0 ] || fail "$v: the daemon exited $rc"
    [ "$(cat "$data")" = "the daemon's own line" ] ||
        fail "$v: the daemon's data file holds: $(cat "$data")"
    # The same with a trace directory: the END record, exit-time messages.
    mkdir -p "$WORK/d.traces"
    env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/d.traces" "$v" \
        "$BIN/prog_harm" "$FIX" daemon "$data" >"$WORK/d.out" 2>"$WORK/d.err" || rc=$?
    [ "$rc" = 0 ] || fail "$v: the traced daemon exited $rc"
    [ "$(cat "$data")" = "the daemon's own line" ] ||
        fail "$v: the traced daemon's data file holds: $(cat "$data")"
done
# Messages still reach a descriptor 2 that was left alone.
run_traced budget JITSTALL_BUDGET_MS=0 "$BIN/prog_harm" "$FIX" loads 1
grep -q 'ms spent in PTX JIT' "$WORK/budget.err" || fail "no budget alert on stderr"
run_traced nodir JITSTALL_DIR="$WORK/plainfile" "$BIN/prog_harm" "$FIX" loads 1
grep -q 'tracing disabled: cannot create trace file' "$WORK/nodir.err" ||
    fail "no word about the trace directory: $(cat "$WORK/nodir.err")"

# An invalid budget, in a process that execs another: one line.
run_traced twice JITSTALL_BUDGET_MS=abc "$BIN/prog_exec" "$FIX" exec /bin/echo hi
n=$(grep -c 'JITSTALL_BUDGET_MS is not a number' "$WORK/twice.err" || true)
[ "$n" = 1 ] || fail "an invalid JITSTALL_BUDGET_MS said $n times: $(cat "$WORK/twice.err")"
# ... and none by a program that never calls CUDA.
run_traced shell JITSTALL_BUDGET_MS=abc /bin/echo hi
[ ! -s "$WORK/shell.err" ] || fail "a process without CUDA spoke: $(cat "$WORK/shell.err")"
echo "ok: stderr"
