#!/usr/bin/env bash
# The in-process budget alert: JITSTALL_BUDGET_MS prints one line at
# exit when the JIT time exceeds it; JITSTALL_FAIL_EXIT_CODE, opt-in, turns an
# exit status 0 into its value and never changes a non-zero one.
. "$(dirname "$0")/lib.sh"
line_re='^jitstall: [0-9]+\.[0-9] ms spent in PTX JIT \(budget 1 ms\); worst: .+ \([0-9]+\.[0-9] ms\)$'
prog=("$BIN/prog_direct" "$FIX")

# Baselines without the preload: exit 0 and exit 3.
run_plain base0 CUDA_CACHE_PATH="$WORK/pc0" "${prog[@]}" 0 module ptx75.fatbin
run_plain base3 CUDA_CACHE_PATH="$WORK/pc3" "${prog[@]}" 3 module ptx75.fatbin
expect_rc base0 0
expect_rc base3 3

# No budget set: nothing printed, nothing changed.
run_traced none CUDA_CACHE_PATH="$WORK/c1" "${prog[@]}" 0 module ptx75.fatbin
same_behaviour base0 none

# Over budget (an 8 ms JIT against 1 ms): one line naming the worst load.
run_traced over CUDA_CACHE_PATH="$WORK/c2" JITSTALL_BUDGET_MS=1 "${prog[@]}" 0 module ptx75.fatbin
expect_rc over 0
cmp -s "$WORK/base0.out" "$WORK/over.out" || fail "stdout changed over budget"
grep -Ev '^jitstall: ' "$WORK/over.err" | cmp -s - "$WORK/base0.err" || fail "stderr changed beyond the alert"
[ "$(grep -c '^jitstall: ' "$WORK/over.err")" = 1 ] || fail "expected exactly one alert line: $(cat "$WORK/over.err")"
grep -Eq "$line_re" "$WORK/over.err" || fail "alert line malformed: $(cat "$WORK/over.err")"
total=$(sed -nE 's/^jitstall: ([0-9.]+) ms spent.*/\1/p' "$WORK/over.err")
# The simulator sleeps 5000 us per KiB of the 1612 bytes of PTX: 7.87 ms at least.
python3 -c "import sys; sys.exit(0 if float('$total') >= 1612 * 5000 / 1024 / 1000 else 1)" ||
    fail "reported JIT time $total ms is below the simulated JIT time"

# Within budget: silent.
run_traced within CUDA_CACHE_PATH="$WORK/c3" JITSTALL_BUDGET_MS=60000 JITSTALL_FAIL_EXIT_CODE=42 \
    "${prog[@]}" 0 module ptx75.fatbin
same_behaviour base0 within

# A SASS-only program never exceeds a zero budget: no JIT at all.
run_plain sass.plain CUDA_CACHE_PATH="$WORK/pc4" "${prog[@]}" 0 module sm90.fatbin
run_traced sass CUDA_CACHE_PATH="$WORK/c4" JITSTALL_BUDGET_MS=0 JITSTALL_FAIL_EXIT_CODE=42 \
    "${prog[@]}" 0 module sm90.fatbin
same_behaviour sass.plain sass

# Opt-in exit code: 0 becomes 42, and stdout still arrives whole.
run_traced fail0 CUDA_CACHE_PATH="$WORK/c5" JITSTALL_BUDGET_MS=1 JITSTALL_FAIL_EXIT_CODE=42 \
    "${prog[@]}" 0 module ptx75.fatbin
expect_rc fail0 42
cmp -s "$WORK/base0.out" "$WORK/fail0.out" || fail "stdout lost when the exit code was changed"
grep -Eq "$line_re" "$WORK/fail0.err" || fail "no alert line with the exit code"

# ... but a non-zero status is never changed.
run_traced fail3 CUDA_CACHE_PATH="$WORK/c6" JITSTALL_BUDGET_MS=1 JITSTALL_FAIL_EXIT_CODE=42 \
    "${prog[@]}" 3 module ptx75.fatbin
expect_rc fail3 3
cmp -s "$WORK/base3.out" "$WORK/fail3.out" || fail "stdout changed with exit status 3"

# The exit code alone, without a budget, changes nothing.
run_traced codeonly CUDA_CACHE_PATH="$WORK/c7" JITSTALL_FAIL_EXIT_CODE=42 \
    "${prog[@]}" 0 module ptx75.fatbin
same_behaviour base0 codeonly

# The trace still ends properly when the exit status was replaced.
dump_json "$(the_trace fail0)" "$WORK/fail0.json"
check_json "$WORK/fail0.json" <<'PY'
expect(len(of_type("end")) == 1, "the end record is written before the exit code is replaced")
PY
echo "ok: budget alert and exit code"
