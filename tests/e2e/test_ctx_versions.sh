#!/usr/bin/env bash
# cuCtxCreate v2, v3 and v4 have different signatures. By each route the
# preload must hand the program a wrapper of the exact variant: the contexts
# land on device 1 as asked, the output is the same as without the preload,
# and the trace names each variant with its route.
. "$(dirname "$0")/lib.sh"
export JITSTALL_SIM_DEVICES=2
run_plain plain "$BIN/prog_ctx_versions" 9
run_traced traced "$BIN/prog_ctx_versions" 9
expect_rc plain 9
same_behaviour plain traced
[ "$(grep -c ': CUDA_SUCCESS, current new, device 1$' "$WORK/plain.out")" = 7 ] ||
    fail "not every cuCtxCreate variant made a context on device 1: $(cat "$WORK/plain.out")"

dump_json "$(the_trace traced)" "$WORK/traced.json"
check_json "$WORK/traced.json" <<'PY'
cc = calls("cuCtxCreate")
got = [(c["route"], c["call"]) for c in cc]
expect(len(cc) == 7, f"seven cuCtxCreate calls, got {got}")
expect(all(c["result"] == 0 for c in cc), "all succeeded")
expect(got[0] == ("direct", "cuCtxCreate_v4"), f"direct v4: {got[0]}")
expect(got[1:4] == [("dlsym", "cuCtxCreate_v2"), ("dlsym", "cuCtxCreate_v3"),
                    ("dlsym", "cuCtxCreate_v4")], f"dlsym variants: {got[1:4]}")
expect([r for r, _ in got[4:]] == ["procaddr"] * 3, "procaddr route")
expect([n for _, n in got[4:]] == ["cuCtxCreate_v2", "cuCtxCreate_v3", "cuCtxCreate_v4"],
       f"procaddr names the variant of each cudaVersion: {got[4:]}")
PY
echo "ok: cuCtxCreate variants"
