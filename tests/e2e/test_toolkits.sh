#!/usr/bin/env bash
# New GPUs, new toolkits, on the simulated driver:
#  - PTX whose .version is newer than the driver (JITSTALL_SIM_DRIVER_VERSION)
#    fails with CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222); the report names the
#    result and the cause, gives the three fixes and does not rank the load
#    as JIT; a 13.1 driver JITs the same PTX;
#  - CUDA_FORCE_PTX_JIT=1 on a SASS-only fatbin of a wheel: the fix is the
#    variable, says what it revealed and names the package;
#  - the same fatbin on a GPU it has no code for: third-party, by package;
#  - a Python program's own fatbin loaded through ctypes is the program's;
#  - an old GPU (sm_70): no -gencode that CUDA 13's nvcc rejects;
#  - invalid JITSTALL_SIM_CC / JITSTALL_SIM_DRIVER_VERSION are refused.
. "$(dirname "$0")/lib.sh"

# PTX of ISA 9.1 (a CUDA 13.1 toolkit): k75.ptx with its .version raised.
mkdir -p "$WORK/fx"
sed 's/^\.version .*/.version 9.1/' "$FIX/k75.ptx" >"$WORK/fx/k91.ptx"
grep -q '^\.version 9\.1$' "$WORK/fx/k91.ptx" || fail "could not make PTX 9.1"

run_traced new "$BIN/prog_direct" "$WORK/fx" 0 module k91.ptx
grep -q "cuModuleLoadData k91.ptx: CUDA_ERROR_UNSUPPORTED_PTX_VERSION" "$WORK/new.out" ||
    fail "the simulated 13.0 driver did not refuse PTX 9.1 with 222: $(cat "$WORK/new.out")"
T=$(the_trace new)
"$JST_CLI" report "$T" >"$WORK/new.report" 2>&1 || true
for want in "CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222)" "ptx_too_new" \
    "PTX ISA 9.1 (CUDA 13.1 toolkit)" "this driver (CUDA 13.0) supports up to 9.0" \
    "upgrade the driver to 590 or newer (CUDA 13.1)" "build with the driver's toolkit (CUDA 13.0)" \
    "ship SASS for sm_90"; do
    grep -qF "$want" "$WORK/new.report" || {
        cat "$WORK/new.report" >&2
        fail "report lacks: $want"
    }
done
"$JST_CLI" report --json "$T" >"$WORK/new.json" 2>/dev/null || true
python3 - "$WORK/new.json" <<'PY' || fail "report --json of the refused load"
import json, sys
r = json.load(open(sys.argv[1]))
mods = [m for p in r["processes"] for m in p["modules"] if m.get("verdict") == "ptx_too_new"]
assert len(mods) == 1, [m.get("verdict") for p in r["processes"] for m in p["modules"]]
m = mods[0]
assert m["result"] == 222 and m["result_name"] == "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", m
assert m["jit"] is False, m
PY

"$JST_CLI" dump "$T" | grep "result=222 (CUDA_ERROR_UNSUPPORTED_PTX_VERSION)" >/dev/null ||
    fail "dump does not name the result"
"$JST_CLI" dump --json "$T" | grep '"result":222,.*"result_name":"CUDA_ERROR_UNSUPPORTED_PTX_VERSION"' >/dev/null ||
    fail "dump --json does not name the result"

# A 13.1 driver JITs it.
run_traced new131 JITSTALL_SIM_DRIVER_VERSION=13010 "$BIN/prog_direct" "$WORK/fx" 0 module k91.ptx
grep -q "UNSUPPORTED_PTX" "$WORK/new131.out" && fail "a 13.1 driver refused PTX 9.1"
"$JST_CLI" report "$(the_trace new131)" >"$WORK/new131.report" 2>&1 || true
grep -q "ptx_jit" "$WORK/new131.report" || fail "PTX 9.1 on 13.1 is not ptx_jit"

# scan --device judges PTX versions against the driver present.
JITSTALL_SIM_DRIVER_VERSION=12040 "$JST_CLI" scan --device --json "$FIX/z_none.fatbin" |
    grep -q '"driver_cuda":"12.4".*"verdict":"ptx_too_new"' || fail "scan --device ignores the driver's version"

# A wheel's SASS-only fatbin, loaded by path.
SITE="$WORK/venv/lib/python3.12/site-packages"
mkdir -p "$SITE/torch/lib" "$SITE/torch-2.11.0+cu130.dist-info"
cp "$FIX/sm90.fatbin" "$SITE/torch/lib/kern.fatbin"
printf 'Metadata-Version: 2.1\nName: torch\nVersion: 2.11.0+cu130\n\n' \
    >"$SITE/torch-2.11.0+cu130.dist-info/METADATA"
printf 'torch/lib/kern.fatbin,sha256=x,1\n' >"$SITE/torch-2.11.0+cu130.dist-info/RECORD"

run_traced forced CUDA_FORCE_PTX_JIT=1 "$BIN/prog_direct" "$SITE/torch/lib" 0 module file:kern.fatbin
"$JST_CLI" report "$(the_trace forced)" >"$WORK/forced.report" 2>&1 || true
for want in "unset CUDA_FORCE_PTX_JIT" "torch 2.11.0+cu130" "ships no PTX at all" \
    "newest SASS (sm_90)" "CUDA_ERROR_NO_BINARY_FOR_GPU (209)"; do
    grep -qF "$want" "$WORK/forced.report" || {
        cat "$WORK/forced.report" >&2
        fail "forced-JIT report lacks: $want"
    }
done
grep -q "rebuild .*kern.fatbin" "$WORK/forced.report" && fail "forced JIT still says rebuild"

run_traced blackwell JITSTALL_SIM_CC=120 "$BIN/prog_direct" "$SITE/torch/lib" 0 module file:kern.fatbin
"$JST_CLI" report "$(the_trace blackwell)" >"$WORK/bw.report" 2>&1 || true
grep -qF "is third-party (torch 2.11.0+cu130, a Python package)" "$WORK/bw.report" || {
    cat "$WORK/bw.report" >&2
    fail "a wheel's fatbin without code for sm_120 is not named by its package"
}

# sm_70: CUDA 13 no longer builds it.
run_traced volta JITSTALL_SIM_CC=70 "$BIN/prog_direct" "$FIX" 0 module sm90.fatbin
"$JST_CLI" report "$(the_trace volta)" >"$WORK/volta.report" 2>&1 || true
grep -qF "built with CUDA 12.9 or older (CUDA 13's nvcc no longer builds sm_70)" \
    "$WORK/volta.report" || {
    cat "$WORK/volta.report" >&2
    fail "sm_70's fix does not name the toolkit that builds it"
}

# A Python program loading its own fatbin through ctypes: the load was made
# by the program, not by libffi (the FFI machinery is skipped).
run_traced ctypes python3 "$JST_E2E_SRC/py_own_fatbin.py" "$FIX/ptx75.fatbin"
expect_rc ctypes 0
"$JST_CLI" report "$(the_trace ctypes)" >"$WORK/ctypes.report" 2>&1 || true
grep -q "  fix .*the fatbin that .*py_own_fatbin.py passes to cuModuleLoadData" "$WORK/ctypes.report" || {
    cat "$WORK/ctypes.report" >&2
    fail "the ctypes load is not the program's own"
}
grep -qi "libffi\|_ctypes\|third-party" "$WORK/ctypes.report" && {
    grep -i "fix" "$WORK/ctypes.report" >&2
    fail "the ctypes load is blamed on the FFI machinery"
}

# Bad simulated settings are refused, not turned into 9.0 / 13.0.
for bad in abc 1000 99; do
    run_plain badcc JITSTALL_SIM_CC=$bad "$BIN/prog_direct" "$FIX" 0 module sm90.fatbin
    grep -q "JITSTALL_SIM_CC '$bad' is not" "$WORK/badcc.err" || fail "JITSTALL_SIM_CC=$bad accepted"
    grep -q "cuInit: CUDA_ERROR_INVALID_VALUE" "$WORK/badcc.out" || fail "cuInit did not fail for $bad"
done
run_plain baddrv JITSTALL_SIM_DRIVER_VERSION=13.0 "$BIN/prog_direct" "$FIX" 0 module sm90.fatbin
grep -q "JITSTALL_SIM_DRIVER_VERSION '13.0' is not" "$WORK/baddrv.err" ||
    fail "JITSTALL_SIM_DRIVER_VERSION=13.0 accepted"
echo "ok: toolkits"
