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
# Where an idle process's work lies (docs/PERFORMANCE.md, "Idle cost"): the
# code that every process runs (constructor, exit, the exec and dlsym
# wrappers) within one 64 KiB window at the start of the file, mapped in by
# the fault that brings in the ELF headers.
# x86-64's assembly dlsym entry asks jst_dlsym_target where to jump; the C
# dlsym (aarch64, JITSTALL_NO_ASM) has no such helper.
idle_syms="jst_ctor jst_fini jst_startenv_save jst_config_early jst_nvtx_start jst_budget_install waitpid
    jst_env_add execve posix_spawn dlsym jst_real_dlsym_fn jst_exec_end"
[ "${JST_DLSYM_ASM:-0}" = 1 ] && idle_syms="$idle_syms jst_dlsym_target"
nm "$JST_PRELOAD" >"$WORK/nm" || fail "nm cannot read $JST_PRELOAD"
for s in $idle_syms; do
    a=$(awk -v s="$s" '$3 == s { print $1; exit }' "$WORK/nm")
    [ -n "$a" ] || fail "no symbol $s in $JST_PRELOAD: the layout check proves nothing"
    [ $((16#$a >> 16)) = 0 ] || fail "$s lies at 0x$a, outside the first 64 KiB of the file"
done
# And the whole object costs an idle /bin/true few page faults more than an
# empty shared object as the toolchain builds it: less than 4 more (means of
# 61 interleaved runs). It takes about 2 more: 1.8 to 2.3 on the development
# VM, 2.6 once on CI, so the bound fails when every start touches two pages
# more than now, not when the machine is busy. Under qemu-user the faults
# are the emulator's own, a thousand of them.
if [ "$JST_EMULATED" = 1 ]; then
    echo "skip (this part): page faults under qemu-user are the emulator's"
    f_jst=- f_empty=-
else
empty="$JST_E2E_BIN/../bench/libjst_bench_empty.so"
[ -e "$empty" ] || fail "no $empty to compare with"
read -r f_empty f_jst < <(python3 - "$empty" "$JST_PRELOAD" <<'PY'
import os, statistics, subprocess, sys
def faults(pre):
    p = subprocess.Popen(["/bin/true"], env=dict(os.environ, LD_PRELOAD=pre))
    return os.wait4(p.pid, 0)[2].ru_minflt
# Interleaved, so that what the machine does meanwhile falls on both alike.
# A run takes one to three faults more or fewer than the next (where ASLR
# puts a page boundary): the means of 61 runs differ by about 0.1 between
# two sets of runs, while a page more touched at every start adds 1.
runs = [(faults(sys.argv[1]), faults(sys.argv[2])) for _ in range(61)]
print(statistics.mean(r[0] for r in runs), statistics.mean(r[1] for r in runs))
PY
)
printf "page faults of an idle /bin/true (mean): %.2f under libjitstall.so, %.2f under an empty object\n" "$f_jst" "$f_empty"
python3 -c "import sys; sys.exit(0 if float('$f_jst') < float('$f_empty') + 4 else 1)" ||
    fail "an idle /bin/true takes $f_jst page faults under libjitstall.so, $f_empty under an empty object"
fi
# The same preload in a process that loads a module: a stack is recorded.
run_traced busy "$BIN/prog_dlsym" "$FIX" 0 module sm90.fatbin
expect_rc busy 0
"$JST_CLI" dump --json "$WORK"/busy.traces/*.jst >"$WORK/busy.json"
grep -q '"type":"stack"' "$WORK/busy.json" || grep -q '"stack_id"' "$WORK/busy.json" ||
    fail "no stack in the trace of a process that called the driver"
echo "ok: idle maps only libjitstall.so, its start-up code in the first 64 KiB, $f_jst page faults (empty object: $f_empty); a driver user still records stacks"
