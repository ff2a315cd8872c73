#!/usr/bin/env bash
# Secrets on the command line stay out of traces, reports and baselines:
# credential options, credential headers and variables, URL passwords and
# well-known API keys are recorded as "***" (docs/FORMAT.md),
# the rest as given; JITSTALL_ARGV=0 records no argument; a baseline keeps
# the program's name and an argument hash, never the arguments.
. "$(dirname "$0")/lib.sh"
args=(--password=hunter3 --token tok-4711 --API-KEY=key-1 --db-passwd=pw-2 --pass pw-3
    https://alice:s3cr3t@example.com/x git+https://tok-9@host/r.git -p 22 --name=visible
    'Authorization: Bearer abc.def-123' DB_PASSWORD=hunter4 --key=sk-proj1234567890abcdefXYZ
    --auth bob:pw-5 'Cookie: sess=cookie-6' --model=sk-abcdefghijklmnopqrstu7
    ghp_0123456789abcdefghijABCD8 AWS=AKIAABCDEFGHIJKLMNO9 GITHUB_TOKEN=tok-10
    --keyboard=us --author=ann --pass-through kept-after-flag PWD=/tmp/x key-value.txt
    --monkey sk-short 'Content-Type: text/plain' --passes=3 HOME=/home/u
    --secret)
run_plain plain "$BIN/prog_args" "$FIX" "${args[@]}"
run_traced traced "$BIN/prog_args" "$FIX" "${args[@]}"
expect_rc plain 0
same_behaviour plain traced
t=$(the_trace traced)
dump_json "$t" "$WORK/t.json"
check_json "$WORK/t.json" <<'PY'
argv = of_type("process")[0]["argv"]
want = ["--password=***", "--token", "***", "--API-KEY=***", "--db-passwd=***", "--pass", "***",
        "https://alice:***@example.com/x", "git+https://***@host/r.git", "-p", "22",
        "--name=visible",
        "Authorization: Bearer ***", "DB_PASSWORD=***", "--key=***", "--auth", "bob:***",
        "Cookie: ***", "--model=sk-***", "ghp_***", "AWS=AKIA***", "GITHUB_TOKEN=***",
        "--keyboard=us", "--author=ann", "--pass-through", "kept-after-flag", "PWD=/tmp/x",
        "key-value.txt", "--monkey", "sk-short", "Content-Type: text/plain", "--passes=3",
        "HOME=/home/u", "--secret"]
expect(argv[2:] == want, f"redacted argv: {argv}")
PY
secrets='hunter3|tok-4711|key-1|pw-2|pw-3|s3cr3t|tok-9|abc.def-123|hunter4|sk-proj|pw-5|cookie-6|mnopqrstu7|ABCD8|MNO9|tok-10'
for out in "dump" "report"; do
    "$JST_CLI" $out "$t" >"$WORK/$out.txt" 2>&1 || fail "jitstall $out failed"
    ! grep -Eq "$secrets" "$WORK/$out.txt" || fail "a secret in jitstall $out"
done
grep -q 'name=visible' "$WORK/dump.txt" || fail "ordinary arguments are kept"

# A baseline: the program name and a hash, no arguments.
"$JST_CLI" baseline "$t" -o "$WORK/base.json" 2>/dev/null || fail "baseline failed"
python3 - "$WORK/base.json" <<'PY' || fail "baseline keeps arguments"
import json, sys
p = json.load(open(sys.argv[1]))["processes"][0]
assert p["exe"] == "prog_args" and "argv" not in p and p["argv_hash"].startswith("0x"), p
PY
! grep -q visible "$WORK/base.json" || fail "an argument in the baseline"

# JITSTALL_ARGV=0: none at all.
run_traced none JITSTALL_ARGV=0 "$BIN/prog_args" "$FIX" "${args[@]}"
same_behaviour plain none
dump_json "$(the_trace none)" "$WORK/none.json"
check_json "$WORK/none.json" <<'PY'
p = of_type("process")[0]
expect(not p.get("argv"), f"no argv with JITSTALL_ARGV=0: {p.get('argv')}")
expect(p["exe"].endswith("/prog_args"), "the executable is still known")
PY
echo "ok: secrets in argv"
