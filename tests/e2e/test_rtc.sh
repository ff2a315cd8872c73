#!/usr/bin/env bash
# Runtime compilers: nvrtcCompileProgram and nvJitLinkComplete (fake libnvrtc /
# libnvJitLink that sleep JST_FAKE_RTC_MS) reached directly and by dlsym. The
# program's output and exit status must not change under the preload; each
# call must be in the trace with its route, a duration of at least the sleep,
# the result passed through (success and an error), the option count and
# -arch.
. "$(dirname "$0")/lib.sh"
export LD_LIBRARY_PATH="$BIN/fakertc:$LD_LIBRARY_PATH"
MS=60
args=("$FIX" 5 module sm90.fatbin)

for prog in direct dlsym; do
    for res in 0 6; do
        n=$prog-$res
        run_plain "$n.plain" JST_FAKE_RTC_MS=$MS JST_FAKE_RTC_RESULT=$res "$BIN/prog_rtc_$prog" "${args[@]}"
        run_traced "$n" JST_FAKE_RTC_MS=$MS JST_FAKE_RTC_RESULT=$res "$BIN/prog_rtc_$prog" "${args[@]}"
        expect_rc "$n.plain" 5
        same_behaviour "$n.plain" "$n"
        grep -q "^nvrtcCompileProgram: $res\$" "$WORK/$n.out" || fail "$n: the result $res did not reach the program"
        dump_json "$(the_trace "$n")" "$WORK/$n.json"
        check_json "$WORK/$n.json" route="$prog" res="$res" ms="$MS" <<'PY'
route, res, ms = arg["route"], int(arg["res"]), int(arg["ms"])
rc = one("nvrtcCompileProgram")
expect(rc["call"] == "nvrtcCompileProgram", "exact name nvrtcCompileProgram")
expect(rc["route"] == route, f"nvrtcCompileProgram by route {route}: {rc['route']}")
expect(rc["result"] == res, f"nvrtcCompileProgram result {res} passed through")
expect(rc["dur_ns"] >= ms * 1000000, f"nvrtcCompileProgram took the fake's {ms} ms")
expect(rc["num_options"] == 3, "three options")
expect(rc["name"] == "sm_90", "-arch=sm_90 recorded as the name")
expect(rc.get("stack_id", 0) > 0, "a call stack")
expect(isinstance(rc.get("tid"), int) and rc["tid"] > 0, "a thread id")
lk = one("nvJitLinkComplete")
want = "__nvJitLinkComplete_13_0"
expect(lk["call"] == want, f"nvJitLinkComplete by its versioned export {want}: {lk['call']}")
expect(lk["route"] == route and lk["result"] == res, "nvJitLinkComplete route and result")
expect(lk["dur_ns"] >= ms * 1000000, "nvJitLinkComplete took the fake's time")
expect(rc["start_ns"] < one("cuLaunchKernel")["start_ns"], "both compile before the first launch")
PY
    done
done

echo "ok: runtime compilers"
