#!/usr/bin/env bash
# JITSTALL_CUPTI=1 with a libcupti that works (a stand-in, fake_cupti.c): its
# JIT activity records land in the trace as cupti_jit records, with the
# operation, the cache path and size, and times converted from CUPTI's clock
# to CLOCK_MONOTONIC so that they fall inside the process's own timeline.
. "$(dirname "$0")/lib.sh"
args=("$BIN/prog_procaddr" "$FIX" 0 module ptx75.fatbin)
run_plain plain CUDA_CACHE_PATH="$WORK/pc" "${args[@]}"
run_traced fake JITSTALL_CUPTI=1 JITSTALL_CUPTI_PATH="$BIN/fakecupti/libcupti.so" "${args[@]}"
same_behaviour plain fake
dump_json "$(the_trace fake)" "$WORK/fake.json"
check_json "$WORK/fake.json" cache="$CUDA_CACHE_PATH" <<'PY'
expect([n for n in of_type("note") if n.get("message") == "JITSTALL_CUPTI=1: CUPTI JIT activity on"],
       "a note says CUPTI is on")
cj = of_type("cupti_jit")
expect([c["cupti_op"] for c in cj] == ["compile", "cache_store"], f"compile then store: {cj}")
ld = loads()[0]
end = of_type("end")[0]
for c in cj:
    expect(c["cupti_cache_path"] == arg["cache"], "the cache path CUPTI reported")
    expect(c["cupti_cache_size"] == 1 << 30, "the cache size CUPTI reported")
    expect(c["cupti_start_ns"] <= c["cupti_end_ns"], "start before end")
    # Converted to CLOCK_MONOTONIC: inside [trace open, end record], to 5 ms.
    expect(of_type("process")[0]["mono_ns"] - 5_000_000 <= c["cupti_start_ns"], "start on the monotonic clock")
    expect(c["cupti_end_ns"] <= end["start_ns"] + 5_000_000, "end on the monotonic clock")
    expect(c["cupti_load_seq"] == 0, "tied to loads by time, offline")
expect(cj[0]["cupti_start_ns"] <= ld["start_ns"] + 5_000_000, "compile spans the load")
PY
echo "ok: CUPTI records recorded and converted"
