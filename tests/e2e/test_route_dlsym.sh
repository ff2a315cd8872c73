#!/usr/bin/env bash
# Route "dlsym": prog_dlsym loads, launches and exits 7; its output and exit status
# must not change under the preload, and every load, its duration, verdict,
# cache outcome and result must be in the trace with route "dlsym".
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/routes.sh"
route_scenario prog_dlsym dlsym

# The program's libcuda.so.1 is not the copy jitstall opened for itself
# (JITSTALL_REAL_LIBCUDA names another): a lookup on the program's handle is
# still wrapped, the handle known by its file name, and its calls recorded.
mkdir -p "$WORK/own"
cp "$JST_SIMDIR/libcuda.so.1" "$WORK/own/libcuda.so.1"
run_traced other JITSTALL_REAL_LIBCUDA="$WORK/own/libcuda.so.1" "$BIN/prog_dlsym" "$FIX" 7 module \
    ptx75.fatbin
expect_rc other 7
grep -q '^cuModuleLoadData ptx75.fatbin: CUDA_SUCCESS$' "$WORK/other.out" ||
    fail "the program did not load ptx75.fatbin: $(cat "$WORK/other.out")"
dump_json "$(the_trace other)" "$WORK/other.json"
check_json "$WORK/other.json" <<'PY'
ld = one("cuModuleLoadData")
expect(ld["route"] == "dlsym" and ld["result"] == 0, "the load by the dlsym route, recorded")
PY
echo "ok: route dlsym"
