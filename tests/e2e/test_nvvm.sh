#!/usr/bin/env bash
# NVVM: a program that dlopens a stand-in libnvvm.so.4 by its full path (as
# Numba does) and calls nvvmCompileProgram gets a call record for it, like
# NVRTC's: route dlsym, the fake's duration, the result passed through, the
# -arch value as the name, a stack, and a begin record before it. Output and
# exit status are unchanged.
. "$(dirname "$0")/lib.sh"
LIB="$BIN/fakenvvm/libnvvm.so.4"
for res in 0 7; do
    run_plain "p$res" JST_FAKE_NVVM_MS=40 JST_FAKE_NVVM_RESULT=$res "$BIN/prog_nvvm" "$LIB" "$FIX"
    run_traced "t$res" JST_FAKE_NVVM_MS=40 JST_FAKE_NVVM_RESULT=$res "$BIN/prog_nvvm" "$LIB" "$FIX"
    expect_rc "p$res" 0
    same_behaviour "p$res" "t$res"
    grep -q "^nvvmCompileProgram: $res\$" "$WORK/t$res.out" || fail "result $res did not reach the program"
    dump_json "$(the_trace "t$res")" "$WORK/t$res.json"
    check_json "$WORK/t$res.json" res=$res <<'PY'
c = one("nvvmCompileProgram")
expect(c["call"] == "nvvmCompileProgram" and c["route"] == "dlsym", f"route {c['route']}")
expect(c["result"] == int(arg["res"]), f"result {c['result']}")
expect(c["dur_ns"] >= 40_000_000, f"dur_ns {c['dur_ns']}")
expect(c["name"] == "compute_90" and c["num_options"] == 2, "arch and option count")
expect(c.get("stack_id", 0) > 0, "a stack")
b = [r for r in of_type("begin") if r["seq"] == c["seq"]]
expect(len(b) == 1 and b[0]["call_id"] == "nvvmCompileProgram", "a begin record")
expect(c["start_ns"] < one("cuLaunchKernel")["start_ns"], "before the first launch")
PY
done
echo "ok: nvvmCompileProgram through dlopen by path"
