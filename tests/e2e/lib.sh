# Shared by the end-to-end test scripts (sourced, not run). ctest sets
# JST_E2E_BIN, JST_PRELOAD, JST_CLI, JST_SIMDIR, JST_FIXTURES and JST_E2E_SRC
# (tests/e2e/CMakeLists.txt). Each script gets a private work directory and
# its own JIT cache, and runs the programs on the simulated driver.
set -euo pipefail

for v in JST_E2E_BIN JST_PRELOAD JST_CLI JST_SIMDIR JST_FIXTURES JST_E2E_SRC; do
    if [ -z "${!v:-}" ]; then
        echo "$0: $v is not set; run this test through ctest" >&2
        exit 2
    fi
done

# JST_E2E_WORK: reuse the work directory of an outer script (matrix_ro.sh).
if [ -n "${JST_E2E_WORK:-}" ]; then
    WORK=$JST_E2E_WORK
else
    WORK=$(mktemp -d /tmp/jst-e2e-XXXXXX)
    cleanup() {
        chmod -R u+w "$WORK" 2>/dev/null || true
        rm -rf "$WORK"
    }
    trap cleanup EXIT
fi

# JITSTALL_EMULATED=1 (tests/cross/aarch64.sh): the programs run under
# qemu-user, where a few checks cannot mean anything (skip_emulated).
JST_EMULATED=${JITSTALL_EMULATED:-0}
# skip_emulated REASON: under emulation, skip this test (exit 77) saying why.
skip_emulated() {
    if [ "$JST_EMULATED" = 1 ]; then
        echo "skip: under qemu-user emulation: $*"
        exit 77
    fi
}

# A clean environment: nothing of the caller's CUDA or jitstall settings leaks in.
for v in $(env | sed -n 's/^\(CUDA_[A-Z_]*\|JITSTALL_[A-Z_]*\)=.*/\1/p'); do
    unset "$v"
done
export LD_LIBRARY_PATH="$JST_SIMDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# 5 ms per KiB of PTX: the ~2 KiB fixtures JIT in about 10 ms, a hit takes 0.1 ms.
export JITSTALL_SIM_JIT_US_PER_KB=5000
export CUDA_CACHE_PATH="$WORK/cache"

fail() {
    echo "FAIL: $*" >&2
    exit 1
}

# run_plain NAME [VAR=value...] PROGRAM ARGS...: runs without the preload and
# keeps stdout, stderr and the exit status in $WORK/NAME.{out,err,rc}.
run_plain() {
    local name=$1
    shift
    local rc=0
    env "$@" >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
    echo "$rc" >"$WORK/$name.rc"
}

# run_traced NAME [VAR=value...] PROGRAM ARGS...: the same under libjitstall.so,
# with its traces in $WORK/NAME.traces.
run_traced() {
    local name=$1
    shift
    mkdir -p "$WORK/$name.traces"
    local rc=0
    env LD_PRELOAD="$JST_PRELOAD" JITSTALL_DIR="$WORK/$name.traces" "$@" \
        >"$WORK/$name.out" 2>"$WORK/$name.err" || rc=$?
    echo "$rc" >"$WORK/$name.rc"
}

rc_of() { cat "$WORK/$1.rc"; }

# same_behaviour A B: stdout, stderr and exit status are identical.
same_behaviour() {
    local a=$1 b=$2 part
    for part in out err rc; do
        if ! cmp -s "$WORK/$a.$part" "$WORK/$b.$part"; then
            echo "--- $a.$part vs $b.$part:" >&2
            diff -u "$WORK/$a.$part" "$WORK/$b.$part" >&2 || true
            fail "$a and $b differ in $part"
        fi
    done
}

# expect_rc NAME CODE
expect_rc() {
    [ "$(rc_of "$1")" = "$2" ] || {
        cat "$WORK/$1.out" "$WORK/$1.err" >&2
        fail "$1 exited $(rc_of "$1"), expected $2"
    }
}

# traces_of NAME: the trace files of a traced run, one per line.
traces_of() {
    find "$WORK/$1.traces" -maxdepth 1 -name 'jitstall-*.jst' -type f | sort
}

# the_trace NAME: its only trace file.
the_trace() {
    local t n
    t=$(traces_of "$1")
    n=$(printf '%s' "$t" | grep -c . || true)
    [ "$n" = 1 ] || fail "$1: expected one trace file, found $n: $t"
    printf '%s\n' "$t"
}

# dump_json TRACE OUT: jitstall dump --json, which must succeed.
dump_json() {
    local rc=0
    "$JST_CLI" dump --json "$1" >"$2" 2>"$2.err" || rc=$?
    [ "$rc" = 0 ] || {
        cat "$2.err" >&2
        fail "jitstall dump --json $1 exited $rc"
    }
}

# check_json JSON [ARGS...] <<'PY' ... PY: Python assertions over the records
# (tests/e2e/tracecheck.py defines the helpers).
check_json() {
    python3 "$JST_E2E_SRC/tracecheck.py" "$@"
}

# Fixture and program shortcuts, used by the scripts that source this file.
# shellcheck disable=SC2034
FIX=$JST_FIXTURES
BIN=$JST_E2E_BIN
