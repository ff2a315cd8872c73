# The scenario every route test runs (sourced after lib.sh): a PTX-only fatbin
# (JIT), a SASS fatbin, a PTX file by path (cuModuleLoad) and a fatbin with
# SASS for another GPU plus PTX (cuModuleLoadDataEx), each module's kernel
# launched twice. Usage: route_scenario PROGRAM ROUTE

route_scenario() {
    local prog=$1 route=$2
    local args=("$FIX" 7 module ptx75.fatbin sm90.fatbin file:k75.ptx ex:sm80_ptx80.fatbin)
    run_plain plain CUDA_CACHE_PATH="$WORK/cache-plain" "$BIN/$prog" "${args[@]}"
    run_traced traced "$BIN/$prog" "${args[@]}"
    expect_rc plain 7
    same_behaviour plain traced
    grep -q '^cuModuleLoadData ptx75.fatbin: CUDA_SUCCESS$' "$WORK/plain.out" ||
        fail "the program did not load ptx75.fatbin"

    dump_json "$(the_trace traced)" "$WORK/traced.json"
    check_json "$WORK/traced.json" route="$route" us_per_kb="$JITSTALL_SIM_JIT_US_PER_KB" <<'PY'
route = arg["route"]
us_per_kb = int(arg["us_per_kb"])

def jit_floor_ns(ptx):  # what the simulated driver sleeps for a JIT of ptx bytes
    return ptx * us_per_kb // 1024 * 1000

expect(len(of_type("process")) == 1, "one process record")
expect(len(of_type("end")) == 1, "an end record")
expect(recs[-1]["type"] == "end", "the end record is last")

init = one("cuInit")
expect(init["result"] == 0 and init["route"] == route, f"cuInit by route {route}")
retain = one("cuDevicePrimaryCtxRetain")
expect(retain["result"] == 0 and retain["route"] == route, "cuDevicePrimaryCtxRetain")

ld = loads()
expect([l["call_id"] for l in ld] ==
       ["cuModuleLoadData", "cuModuleLoadData", "cuModuleLoad", "cuModuleLoadDataEx"],
       "the four loads, in order")
for l in ld:
    expect(l["result"] == 0, f"{l['call_id']} succeeded")
    expect(l["route"] == route, f"{l['call_id']} reached by route {route}")
    expect(l["dur_ns"] > 0, f"{l['call_id']} has a duration")
    expect(isinstance(l.get("tid"), int) and l["tid"] > 0, "a thread id")
    expect(l["call"].startswith(l["call_id"]), f"call name {l['call']} for {l['call_id']}")

ptx, sass, byfile, ex = ld
expect(ptx["verdict"] == "ptx_jit" and ptx["jit_from"] == "compute_75", "ptx75.fatbin JITs from compute_75")
expect(ptx["image_kind"] == "fatbin", "ptx75.fatbin is a fatbin")
expect(ptx["ptx_size"] > 0, "PTX size recorded")
expect(ptx["dur_ns"] >= jit_floor_ns(ptx["ptx_size"]),
       f"JIT load took at least the sim's JIT time: {ptx['dur_ns']} ns for {ptx['ptx_size']} B")
expect("add_one" in ptx.get("kernels", []), "kernels of the JIT'd PTX")
expect(ptx["cache"] == "miss_stored", "a cold cache stores the JIT result")

expect(sass["verdict"] == "sass" and sass["sass_arch"] == "sm_90", "sm90.fatbin runs its SASS")
expect(sass.get("cache", "none") == "none", "no cache question without JIT")

expect(byfile["path"].endswith("/k75.ptx"), "cuModuleLoad records the path")
expect(byfile["verdict"] == "ptx_jit", "a PTX file JITs")
expect(byfile["cache"] in ("hit", "miss_stored"), "PTX file cache outcome")

expect(ex["verdict"] == "ptx_jit" and ex["jit_from"] == "compute_80",
       "sm_80 SASS does not run on sm_90: JIT from compute_80")
expect(ex["dur_ns"] >= jit_floor_ns(ex["ptx_size"]), "cuModuleLoadDataEx JIT time")
expect(ex["cache"] == "miss_stored", "second PTX stored")

gf = calls("cuModuleGetFunction")
expect(len(gf) == 4 and all(c["result"] == 0 and c["route"] == route for c in gf),
       "four cuModuleGetFunction calls")
launches = calls("cuLaunchKernel")
expect(len(launches) == 4, f"one first-launch record per function (4), got {len(launches)}")
expect(all(c["result"] == 0 and c["route"] == route for c in launches), "launches")
PY
}
