#!/usr/bin/env bash
# An idle preloaded process (one that never calls the driver) maps nothing of
# jitstall's heavy libraries: no libzstd, liblz4, libunwind or liblzma, and
# writes no trace. A process that does reach the driver still records stacks
# (glibc's backtrace() for its first captures, libunwind later).
. "$(dirname "$0")/lib.sh"
mkdir -p "$WORK/idle.traces"
env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/idle.traces" cat /proc/self/maps >"$WORK/maps" ||
    fail "cat under the preload failed"
grep -q libjitstall "$WORK/maps" || fail "libjitstall.so is not mapped: the test proves nothing"
heavy=$(grep -oE 'lib(zstd|lz4|unwind[-a-z0-9_]*|lzma)\.so[.0-9]*' "$WORK/maps" | sort -u | tr '\n' ' ' || true)
[ -z "$heavy" ] || fail "an idle process maps $heavy"
[ -z "$(ls "$WORK/idle.traces")" ] || fail "an idle process wrote a trace"
# What the constructor leaves behind (tests/e2e/prog_idle.c): no heap, an
# absolute NVTX_INJECTION64_PATH even for a relative LD_PRELOAD, and an
# environment the program changes as usual.
"$BIN/prog_idle" plain || fail "prog_idle fails without the preload: the test proves nothing"
env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/idle.traces" "$BIN/prog_idle" preloaded ||
    fail "the constructor left the process changed (above)"
rel=$(realpath --relative-to="$WORK" "$JST_PRELOAD")
(cd "$WORK" && env LD_PRELOAD="$rel" JITSTALL_DIR="$WORK/idle.traces" "$BIN/prog_idle" preloaded) ||
    fail "with a relative LD_PRELOAD ($rel) the constructor left the process changed (above)"
[ -z "$(ls "$WORK/idle.traces")" ] || fail "an idle process wrote a trace"
# The same preload in a process that loads a module: a stack is recorded.
run_traced busy "$BIN/prog_dlsym" "$FIX" 0 module sm90.fatbin
expect_rc busy 0
"$JST_CLI" dump --json "$WORK"/busy.traces/*.jst >"$WORK/busy.json"
grep -q '"type":"stack"' "$WORK/busy.json" || grep -q '"stack_id"' "$WORK/busy.json" ||
    fail "no stack in the trace of a process that called the driver"
echo "ok: idle maps only libjitstall.so; a driver user still records stacks"
