#!/usr/bin/env bash
# Runtime compilers: nvrtcCompileProgram and nvJitLinkComplete (fake libnvrtc /
# libnvJitLink that sleep JST_FAKE_RTC_MS) reached directly and by dlsym. The
# program's output and exit status must not change under the preload; each
# call must be in the trace with its route, a duration of at least the sleep,
# the result passed through (success and an error), the option count and
# -arch; and `jitstall report` must show the time as runtime compile, apart
# from "everything else", with the calls among the culprits and their fix.
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
        grep -q "^nvrtcCreateProgram: 0\$" "$WORK/$n.out" || fail "$n: nvrtcCreateProgram's result"
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
expect(rc.get("rtc_program") == "kernels.cu", f"the name nvrtcCreateProgram gave: {rc.get('rtc_program')}")
expect(not calls("nvrtcCreateProgram") and not [r for r in recs if r.get("call") == "nvrtcCreateProgram"],
       "nvrtcCreateProgram writes no record of its own")
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

# The report: runtime compile before the first kernel, about 2 x MS.
"$JST_CLI" report "$(the_trace direct-0)" >"$WORK/report.txt" 2>&1 || fail "report failed"
grep -Eq 'runtime compile .*(NVRTC|nvJitLink)' "$WORK/report.txt" ||
    { cat "$WORK/report.txt" >&2; fail "no runtime compile line in the report"; }
grep -q 'runtime compile (NVRTC)' "$WORK/report.txt" || fail "nvrtcCompileProgram is no culprit"
grep -q 'nvrtcCompileProgram for sm_90' "$WORK/report.txt" || fail "culprit without its -arch"
grep -q 'prog_rtc.c:' "$WORK/report.txt" || fail "no call site in prog_rtc.c"
grep -q 'CUPY_CACHE_DIR' "$WORK/report.txt" || fail "no NVRTC fix"
"$JST_CLI" report --json "$(the_trace direct-0)" >"$WORK/report.json" || fail "report --json failed"
python3 - "$WORK/report.json" "$MS" <<'PY' || fail "report --json rtc_ns"
import json, sys
rep = json.load(open(sys.argv[1]))
ms = int(sys.argv[2])
b = rep["processes"][0]["ttfk_breakdown"]
rtc = b["rtc_ns"]
assert 2 * ms * 10**6 <= rtc < 2 * ms * 10**6 + 500 * 10**6, f"rtc_ns {rtc} for two {ms} ms calls"
assert b["other_ns"] < rtc, f"runtime compile is not in other_ns: {b}"
mods = [m for m in rep["processes"][0]["modules"] if m["call"] in
        ("nvrtcCompileProgram", "__nvJitLinkComplete_13_0")]
assert len(mods) == 2 and all(m["culprit"] and m["lost_ns"] >= ms * 10**6 for m in mods), mods
assert any(f["kind"] == "rtc_cache" for f in rep["fixes"]), rep["fixes"]
# the compile is named by the program's own name, its target by -arch
nv = [c for c in rep["processes"][0]["compiles"] if c["compiler"] == "nvrtc"]
assert len(nv) == 1 and nv[0]["what"] == "kernels.cu" and nv[0]["target"] == "sm_90", nv
PY
# libnvrtc loaded RTLD_LOCAL by a plugin, not in the global scope: the
# plugin's call still reaches the preload's export, which must find the real
# nvrtcCompileProgram among the loaded objects and pass its result through.
run_plain local.plain JST_FAKE_RTC_RESULT=0 "$BIN/prog_rtc_local" "$BIN/librtc_local_plugin.so"
run_traced local JST_FAKE_RTC_RESULT=0 "$BIN/prog_rtc_local" "$BIN/librtc_local_plugin.so"
expect_rc local.plain 0
same_behaviour local.plain local
grep -q '^nvrtcCompileProgram from a RTLD_LOCAL plugin: 0$' "$WORK/local.out" ||
    fail "the RTLD_LOCAL plugin's compile: $(cat "$WORK/local.out")"
dump_json "$(the_trace local)" "$WORK/local.json"
check_json "$WORK/local.json" <<'PY'
rc = one("nvrtcCompileProgram")
expect(rc["route"] == "direct" and rc["result"] == 0, "the plugin's call, direct, succeeded")
PY
echo "ok: runtime compilers"
