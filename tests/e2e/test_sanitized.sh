#!/usr/bin/env bash
# Programs built with -fsanitize=thread and -fsanitize=address under the
# preload: same output and exit status as without it, and a trace of their
# loads. Their runtimes look libc functions up with dlsym(RTLD_NEXT) while they
# start; an emulated RTLD_NEXT that calls dlopen then crashed them (exit 139).
# ASan insists on coming first among the loaded objects, so its runtime is
# preloaded before libjitstall.so, as README.md says.
. "$(dirname "$0")/lib.sh"
# The program and the simulated driver keep their images to the end; a leak
# in libjitstall.so would still be reported, and change the exit status.
printf 'leak:e2e_read\nleak:sim_\nleak:names_add\n' >"$WORK/lsan.supp"
export LSAN_OPTIONS="suppressions=$WORK/lsan.supp:print_suppressions=0"
# LeakSanitizer cannot run under qemu-user (it stops the process to scan it).
[ "$JST_EMULATED" = 1 ] && export ASAN_OPTIONS=detect_leaks=0
ran=0
for san in thread address; do
    prog="$BIN/prog_direct_$san"
    [ -x "$prog" ] || continue
    ran=$((ran + 1))
    pre=$JST_PRELOAD
    if [ "$san" = address ]; then
        rt=$(ldd "$prog" | sed -n 's/^[[:space:]]*libasan\.so[^ ]* => \([^ ]*\) .*/\1/p')
        [ -n "$rt" ] || fail "cannot find the ASan runtime of $prog"
        pre="$rt:$JST_PRELOAD"
    fi
    run_plain "$san.plain" CUDA_CACHE_PATH="$WORK/cache-$san-plain" "$prog" "$FIX" 6 module ptx75.fatbin
    mkdir -p "$WORK/$san.traced.traces"
    rc=0
    env LD_PRELOAD="$pre" JITSTALL_DIR="$WORK/$san.traced.traces" CUDA_CACHE_PATH="$WORK/cache-$san" \
        "$prog" "$FIX" 6 module ptx75.fatbin >"$WORK/$san.traced.out" 2>"$WORK/$san.traced.err" || rc=$?
    echo "$rc" >"$WORK/$san.traced.rc"
    expect_rc "$san.plain" 6
    same_behaviour "$san.plain" "$san.traced"
    dump_json "$(the_trace "$san.traced")" "$WORK/$san.json"
    check_json "$WORK/$san.json" <<'PY'
expect([l["call_id"] for l in loads()] == ["cuModuleLoadData"], "one load traced")
expect(len(of_type("end")) == 1, "an end record")
PY
    echo "ok: $san-sanitized program"
done
[ "$ran" -gt 0 ] || { echo "skip: no sanitizer-built program"; exit 77; }
