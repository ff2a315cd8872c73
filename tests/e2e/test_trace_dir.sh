#!/usr/bin/env bash
# The README's own example, JITSTALL_DIR=/tmp/traces LD_PRELOAD=... ./prog,
# must trace when the directory does not exist yet: it is created with its
# parents, mode 0700 (a trace holds the command line), as heaptrack and nsys
# do; and `jitstall report` then reads it. A directory that exists keeps its
# mode.
. "$(dirname "$0")/lib.sh"
d="$WORK/not/there/yet"
env JITSTALL_DIR="$d" LD_PRELOAD="$JST_PRELOAD" \
    "$JST_E2E_BIN/prog_direct" "$JST_FIXTURES" 0 module sm90.fatbin >"$WORK/out" 2>"$WORK/err" ||
    fail "prog_direct failed under the preload: $(cat "$WORK/err")"
grep -q "tracing disabled" "$WORK/err" && fail "tracing was disabled: $(cat "$WORK/err")"
n=$(ls "$d"/*.jst 2>/dev/null | wc -l)
[ "$n" = 1 ] || fail "expected one trace in the new JITSTALL_DIR, found $n"
for p in "$WORK/not" "$WORK/not/there" "$d"; do
    m=$(stat -c %a "$p")
    [ "$m" = 700 ] || fail "$p was created with mode $m, not 700"
done
"$JST_CLI" report "$d" >"$WORK/report" 2>&1 || fail "report on the new directory: $(cat "$WORK/report")"
mkdir -m 755 "$WORK/open"
env JITSTALL_DIR="$WORK/open" LD_PRELOAD="$JST_PRELOAD" \
    "$JST_E2E_BIN/prog_direct" "$JST_FIXTURES" 0 module sm90.fatbin >/dev/null 2>&1
[ "$(stat -c %a "$WORK/open")" = 755 ] || fail "an existing directory's mode was changed"
echo "ok: JITSTALL_DIR is created, mode 0700"
