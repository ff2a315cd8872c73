#!/usr/bin/env bash
# The link flow through dlsym, like CuPy and hashcat: cuLinkCreate_v2,
# cuLinkAddData_v2 of PTX text, cuLinkComplete, then cuModuleLoadData of the
# linked cubin. The JIT happens inside the link calls; the cubin load is SASS.
. "$(dirname "$0")/lib.sh"
run_plain plain CUDA_CACHE_PATH="$WORK/cache-plain" "$BIN/prog_link" "$FIX" 4 k75.ptx
run_traced traced "$BIN/prog_link" "$FIX" 4 k75.ptx
expect_rc plain 4
same_behaviour plain traced
grep -q '^linked cubin: non-empty$' "$WORK/plain.out" || fail "the link produced no cubin"

dump_json "$(the_trace traced)" "$WORK/traced.json"
ptx_size=$(stat -c %s "$FIX/k75.ptx")
check_json "$WORK/traced.json" us_per_kb="$JITSTALL_SIM_JIT_US_PER_KB" ptx_size="$ptx_size" <<'PY'
floor = int(arg["ptx_size"]) * int(arg["us_per_kb"]) // 1024 * 1000
create, add, complete = one("cuLinkCreate"), one("cuLinkAddData"), one("cuLinkComplete")
for c in (create, add, complete):
    expect(c["route"] == "dlsym" and c["result"] == 0, f"{c['call_id']} by dlsym, succeeded")
expect(create["call"] == "cuLinkCreate_v2", "the exported variant cuLinkCreate_v2")
expect(add["call"] == "cuLinkAddData_v2", "the exported variant cuLinkAddData_v2")
expect(add.get("jit_input") == 1, "CU_JIT_INPUT_PTX recorded")
expect(add["dur_ns"] + complete["dur_ns"] >= floor, "the PTX JIT time is inside the link calls")
expect(complete.get("cubin_size", 0) > 0, "the linked cubin's size")
ld = one("cuModuleLoadData")
expect(ld["result"] == 0 and ld["verdict"] == "sass" and ld["image_kind"] == "cubin",
       "the linked cubin loads as SASS")
expect(len(calls("cuLaunchKernel")) == 1, "one first launch")
PY
echo "ok: link flow"
