#!/usr/bin/env bash
# The CLI's output files (baseline -o, export -o) never follow a symlink
# planted beside the target: not at the old predictable temporary name
# "<out>.tmp.<pid>", nor at names like the ones it now draws. The victim file
# stays as it was, the output is written, and no temporary file is left.
. "$(dirname "$0")/lib.sh"
run_traced run "$BIN/prog_direct" "$FIX" 0 module ptx75.fatbin
expect_rc run 0
trace=$(the_trace run)
victim="$WORK/victim"
echo "precious" >"$victim"
out="$WORK/out"
mkdir -p "$out"
for cmd in baseline export; do
    target="$out/$cmd.json"
    rm -f "$out"/*
    # mkstemp-like names, and the name the old code used: <target>.tmp.<pid of
    # the exec'd jitstall>, which is the pid of the shell that execs it.
    for s in XXXXXX aaaaaaaaaaaa 000000000000 ZZZZZZZZZZZZ; do
        ln -s "$victim" "$target.tmp.$s"
    done
    rc=0
    sh -c 'ln -s "$1" "$2.tmp.$$" && exec "$3" "$4" "$5" -o "$2"' sh "$victim" "$target" \
        "$JST_CLI" "$cmd" "$trace" >"$WORK/$cmd.out" 2>"$WORK/$cmd.err" || rc=$?
    [ "$rc" = 0 ] || fail "$cmd -o exited $rc: $(cat "$WORK/$cmd.err")"
    [ "$(cat "$victim")" = precious ] || fail "$cmd -o wrote through a planted symlink"
    [ -f "$target" ] && [ ! -L "$target" ] || fail "$cmd -o: no regular output file"
    python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$target" ||
        fail "$cmd -o: output is not JSON"
    left=$(find "$out" -name '*.tmp.*' ! -type l | wc -l)
    [ "$left" = 0 ] || fail "$cmd -o left $left temporary files"
    links=$(find "$out" -name '*.tmp.*' -type l | wc -l)
    [ "$links" = 5 ] || fail "$cmd -o removed or replaced a planted symlink ($links left)"
done
echo "ok: -o never follows a planted symlink"
