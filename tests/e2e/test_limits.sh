#!/usr/bin/env bash
# The process's limits are the program's; the trace gives way:
# - a file-size limit (ulimit -f) that the program's own output fits in: the
#   trace stops one block short of it with a note that says why
#   (trace_stop "file_size_limit"), one line on stderr, and no SIGXFSZ
#   kills the program;
# - ulimit -n 4 (one free descriptor) and a program that opens one file: the
#   trace is given up, the program's open succeeds;
# - a full disk: the trace stops, the program goes on;
# - a program with several threads: the trace's descriptor goes where the
#   descriptor table need not grow (growing it there makes the kernel wait
#   for an RCU grace period, milliseconds inside the first driver call).
. "$(dirname "$0")/lib.sh"

# 1. ulimit -f 8 (8 KiB): 40 loads make a trace of more than that. The
# program writes no file of its own (stdout through a pipe, no JIT cache).
limited() { # NAME TRACED(0|1) CMD...
    local name=$1 traced=$2
    shift 2
    mkdir -p "$WORK/$name.traces"
    local pre=()
    [ "$traced" = 1 ] && pre=(LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/$name.traces")
    set +e
    (
        ulimit -f 8
        exec env CUDA_CACHE_DISABLE=1 "${pre[@]}" "$@" 2>"$WORK/$name.err"
    ) | cat >"$WORK/$name.out"
    echo "${PIPESTATUS[0]}" >"$WORK/$name.rc"
    set -e
}
limited fsz.plain 0 "$BIN/prog_harm" "$FIX" loads 40
expect_rc fsz.plain 0
limited fsz 1 "$BIN/prog_harm" "$FIX" loads 40
expect_rc fsz 0
cmp -s "$WORK/fsz.plain.out" "$WORK/fsz.out" || fail "output changed under a file-size limit"
t=$(the_trace fsz)
size=$(stat -c %s "$t")
[ "$size" -le 8192 ] || fail "the trace is $size bytes, over the limit"
n=$(grep -c '^jitstall: ' "$WORK/fsz.err" || true)
[ "$n" = 1 ] || fail "expected one line on stderr, got: $(cat "$WORK/fsz.err")"
grep -q 'file-size limit' "$WORK/fsz.err" || fail "stderr does not name the limit: $(cat "$WORK/fsz.err")"
dump_json "$t" "$WORK/fsz.json"
check_json "$WORK/fsz.json" <<'PY'
stops = [n for n in of_type("note") if "trace_stop" in n]
expect(len(stops) == 1, f"one stop note: {stops}")
expect(stops[0]["trace_stop"] in (2, "file_size_limit"), f"the reason: {stops[0]}")
expect(of_type("call"), "the calls before the limit are in the trace")
PY

# 2. ulimit -n 4: descriptors 0-2 and one for the program's file.
scarce() { # NAME TRACED
    local name=$1 traced=$2
    mkdir -p "$WORK/$name.traces"
    local pre=()
    [ "$traced" = 1 ] && pre=(LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/$name.traces")
    local rc=0
    (
        exec 3>&- # whatever the test runner left on 3: the program gets only that one
        ulimit -n 4
        exec env "${pre[@]}" "$BIN/prog_harm" "$FIX" open "$WORK/$name.data"
    ) >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
    echo "$rc" >"$WORK/$name.rc"
}
scarce nofile.plain 0
expect_rc nofile.plain 0
scarce nofile 1
expect_rc nofile 0
cmp -s "$WORK/nofile.plain.out" "$WORK/nofile.out" || fail "output changed with ulimit -n 4"
[ "$(cat "$WORK/nofile.data")" = "the program's own line" ] || fail "the program's file is wrong"
grep -q 'descriptors are scarce' "$WORK/nofile.err" ||
    fail "no word about scarce descriptors: $(cat "$WORK/nofile.err")"
[ -z "$(traces_of nofile)" ] || fail "a trace file was left: $(traces_of nofile)"

# 3. A full disk (a test double preloaded first: the trace's writes fail
# with ENOSPC once it holds 8 KiB): the program goes on as without the
# preload, one line on stderr says why the trace stopped, and what was
# written before is readable.
shim="$JST_E2E_BIN/libnospace_shim.so"
[ -e "$shim" ] || fail "no $shim"
run_plain full.plain CUDA_CACHE_DISABLE=1 "$BIN/prog_harm" "$FIX" loads 40
expect_rc full.plain 0
run_traced full CUDA_CACHE_DISABLE=1 LD_PRELOAD="$shim:$JST_PRELOAD" "$BIN/prog_harm" "$FIX" loads 40
expect_rc full 0
cmp -s "$WORK/full.plain.out" "$WORK/full.out" || fail "output changed on a full disk"
n=$(grep -c '^jitstall: ' "$WORK/full.err" || true)
[ "$n" = 1 ] || fail "expected one line on stderr, got: $(cat "$WORK/full.err")"
grep -qi 'no space left on device' "$WORK/full.err" || fail "stderr does not say the disk is full: $(cat "$WORK/full.err")"
t=$(the_trace full)
size=$(stat -c %s "$t")
[ "$size" -le 8192 ] || fail "the trace is $size bytes, past the full disk"
"$JST_CLI" dump "$t" >"$WORK/full.dump" 2>"$WORK/full.dump.err" || true
grep -q '^call ' "$WORK/full.dump" || fail "nothing readable before the full disk: $(cat "$WORK/full.dump.err")"
# 4. Several threads: the trace's descriptor lies in the top quarter of the
# table the program has, not beyond it (the soft limit raised to 4096 where
# the hard one allows, so that the top quarter below it, 3072 and up, lies
# beyond any table a new process starts with).
(
    ulimit -n 4096 2>/dev/null || true
    exec env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/fdt.traces" \
        python3 "$JST_E2E_SRC/py_fdtable.py" "$JST_SIMDIR/libcuda.so.1"
) >"$WORK/fdt.out" 2>"$WORK/fdt.err" || fail "py_fdtable failed: $(cat "$WORK/fdt.err")"
read -r _ rc _ before after _ tfd _ soft <"$WORK/fdt.out" || fail "py_fdtable: $(cat "$WORK/fdt.out")"
[ "$rc" = 0 ] || fail "cuInit returned $rc"
[ "$tfd" -ge 0 ] || fail "no trace descriptor: $(cat "$WORK/fdt.out" "$WORK/fdt.err")"
[ "$after" = "$before" ] ||
    fail "the trace grew the descriptor table from $before to $after (trace descriptor $tfd, soft limit $soft)"
[ "$tfd" -ge $((before - before / 4)) ] || fail "trace descriptor $tfd is below the top quarter of $before"
echo "ok: trace descriptor $tfd in a table of $before (soft limit $soft), which it did not grow"
echo "ok: limits"
