#!/usr/bin/env bash
# A cudart-like program: it reaches the driver only through cuGetProcAddress_v2
# (with the self-lookup) and loads fatbins with cuLibraryLoadData given a
# __fatBinC_Wrapper_t. Every call must be in the trace with route "procaddr",
# the wrapper recognised, and the program's behaviour unchanged.
. "$(dirname "$0")/lib.sh"
args=("$FIX" 0 ptx75.fatbin sm90.fatbin)
run_plain plain CUDA_CACHE_PATH="$WORK/cache-plain" "$BIN/prog_cudart_like" "${args[@]}"
run_traced traced "$BIN/prog_cudart_like" "${args[@]}"
expect_rc plain 0
same_behaviour plain traced
grep -q '^cuLibraryLoadData ptx75.fatbin: CUDA_SUCCESS$' "$WORK/plain.out" ||
    fail "cuLibraryLoadData failed on the simulated driver"

dump_json "$(the_trace traced)" "$WORK/traced.json"
check_json "$WORK/traced.json" us_per_kb="$JITSTALL_SIM_JIT_US_PER_KB" <<'PY'
us_per_kb = int(arg["us_per_kb"])
for c in calls():
    expect(c["route"] == "procaddr", f"{c['call_id']} reached through cuGetProcAddress")
ld = loads()
expect([l["call_id"] for l in ld] == ["cuLibraryLoadData", "cuLibraryLoadData"], "two library loads")
jit, sass = ld
for l in ld:
    expect(l["result"] == 0 and l["dur_ns"] > 0, "loads succeeded, with durations")
    expect(l["image_kind"] == "fatbin_wrapper", "the __fatBinC_Wrapper_t is recognised")
expect(jit["verdict"] == "ptx_jit" and jit["jit_from"] == "compute_75", "PTX-only fatbin JITs")
expect(jit["dur_ns"] >= jit["ptx_size"] * us_per_kb // 1024 * 1000, "the JIT time is inside cuLibraryLoadData")
expect(jit["cache"] == "miss_stored", "cold cache stores")
expect("add_one" in jit.get("kernels", []), "kernel names of the JIT'd PTX")
expect(sass["verdict"] == "sass" and sass["sass_arch"] == "sm_90", "SASS fatbin")
gk = calls("cuLibraryGetKernel")
expect(len(gk) == 2 and all(c["result"] == 0 for c in gk), "cuLibraryGetKernel twice")
expect(len(calls("cuKernelGetFunction")) == 2, "cuKernelGetFunction twice")
expect(len(calls("cuLaunchKernel")) == 2, "one first launch per kernel")
expect(one("cuInit")["result"] == 0, "cuInit")
PY
echo "ok: cudart-like"
