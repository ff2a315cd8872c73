#!/usr/bin/env bash
# Compiler children reaped where a wait wrapper may do no more than note them.
# 1. A SIGCHLD handler reaps with while (waitpid(-1, &st, WNOHANG) > 0) while
#    the main thread forks and execs ptxas 300 times and mallocs and frees:
#    the wrapper runs in signal context, so it must not allocate, lock, unwind
#    or write there (it used to: heap corruption, a crash or a hang). The
#    program prints "reaped 300" and exits 0, as without the preload, and all
#    300 compiles are in the trace.
# 2. SIGCHLD ignored: the kernel reaps 40 children (waitpid fails with
#    ECHILD); then SIGCHLD is restored and 5 are reaped with waitpid. The 40
#    are recorded without a status (end_unseen) and a note says why; the 5
#    after them have their status: no slot stays taken.
# 3. The same with 40 children at once, never waited for: those that found
#    the 32 slots taken are counted exactly in a note.
# 4. A SIGALRM handler execs /bin/echo while the main thread (with a second
#    thread alive, so malloc locks) mallocs and frees: the exec wrapper writes
#    no END record there (it allocates), so the program never hangs; its
#    trace ends early instead.
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/bin" "$WORK/out"
ln -s "$BIN/fake_cc" "$WORK/bin/ptxas"
P="$BIN/prog_sigchld"

run_plain plain FAKE_CC_MS=1 timeout 120 "$P" handler 300 "$WORK/bin" "$WORK/out"
expect_rc plain 0
grep -qx 'reaped 300' "$WORK/plain.out" || fail "plain run: $(cat "$WORK/plain.out")"
for i in 1 2; do
    run_traced "handler$i" FAKE_CC_MS=1 timeout 120 "$P" handler 300 "$WORK/bin" "$WORK/out"
    same_behaviour plain "handler$i"
    dump_json "$(the_trace "handler$i")" "$WORK/handler$i.json"
    check_json "$WORK/handler$i.json" <<'PY'
cs = of_type("compile")
expect(len(cs) == 300, f"300 compile records, got {len(cs)}")
expect(len({c["child_pid"] for c in cs}) == 300, "one record per child")
expect(all(c["wait_status"] == 0 and c["compiler"] == "ptxas" for c in cs), "each reaped with its status")
expect(all(c["dur_ns"] >= c["wait_ns"] for c in cs), "times of the reap")
expect(len(of_type("end")) == 1, "the trace has its end")
PY
done

# 2. The kernel reaps 40, then 5 are waited for.
run_plain ign_plain FAKE_CC_MS=20 "$P" ignore 40 "$WORK/bin" "$WORK/out"
run_traced ign FAKE_CC_MS=20 "$P" ignore 40 "$WORK/bin" "$WORK/out"
expect_rc ign_plain 0
same_behaviour ign_plain ign
grep -qx 'kernel reaped 40' "$WORK/ign.out" || fail "SIGCHLD was not ignored: $(cat "$WORK/ign.out")"
dump_json "$(the_trace ign)" "$WORK/ign.json"
check_json "$WORK/ign.json" <<'PY'
cs = of_type("compile")
unseen = [c for c in cs if c.get("end_unseen")]
seen = [c for c in cs if "wait_status" in c]
expect(len(unseen) == 40, f"40 children reaped by the kernel recorded, got {len(unseen)}")
expect(all("wait_status" not in c and "wait_ns" not in c for c in unseen), "no status for those")
expect(all(c["dur_ns"] >= 20_000_000 for c in unseen), "each lasted at least its 20 ms")
expect(len(seen) == 5 and all(c["wait_status"] == 0 for c in seen), f"the 5 reaped after: {len(seen)}")
notes = [n["message"] for n in of_type("note")]
expect(sum("ended without a wait call" in m for m in notes) == 1, f"one note on unknown outcomes: {notes}")
PY
"$JST_CLI" report "$(the_trace ign)" >"$WORK/ign.report" 2>&1 || fail "report failed"
! grep -q 'still compiling' "$WORK/ign.report" || fail "children reaped by the kernel shown as still running"

# 3. 40 at once, never waited for.
run_plain burst_plain FAKE_CC_MS=400 "$P" burst 40 "$WORK/bin" "$WORK/out"
run_traced burst FAKE_CC_MS=400 "$P" burst 40 "$WORK/bin" "$WORK/out"
expect_rc burst_plain 0
same_behaviour burst_plain burst
dump_json "$(the_trace burst)" "$WORK/burst.json"
check_json "$WORK/burst.json" <<'PY'
import re
cs = of_type("compile")
unseen = [c for c in cs if c.get("end_unseen")]
seen = [c for c in cs if "wait_status" in c]
notes = [n["message"] for n in of_type("note")]
full = [int(m.group(1)) for n in notes for m in [re.match(r"(\d+) compiler children started while all 32 slots", n)] if m]
expect(len(full) <= 1, f"one note for children without a slot: {notes}")
missing = full[0] if full else 0
expect(len(unseen) + missing == 40, f"40 started: {len(unseen)} recorded + {missing} in the note")
expect(len(unseen) >= 32, f"every slot used: {len(unseen)}")
expect(len(seen) == 5, f"the 5 reaped after have their slots: {len(seen)}")
PY
# 4. exec from a signal handler, five times.
for i in 1 2 3 4 5; do
    run_traced "execsig$i" timeout 30 "$P" execsig 3 /bin/echo "from a handler"
    expect_rc "execsig$i" 0
    grep -qx 'from a handler' "$WORK/execsig$i.out" || fail "execsig$i: the handler's exec did not happen"
    dump_json "$(the_trace "execsig$i")" "$WORK/execsig$i.json"
    check_json "$WORK/execsig$i.json" <<'PY'
expect(not of_type("end"), "no END record written from a signal handler")
expect(len(calls("cuInit")) == 1, "the records before it are there")
PY
done
echo "ok: children reaped in a SIGCHLD handler, and by the kernel; exec from a handler"
