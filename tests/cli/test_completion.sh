#!/usr/bin/env bash
# The bash completion offers the subcommands, each subcommand's options as
# its --help lists them, values for --format and --arch, and files after
# `run -- COMMAND`. usage: test_completion.sh JITSTALL SCRIPT
set -u
J=$1
. "$2"
fails=0
# complete_words WORD... : COMPREPLY for the command line "WORD... " with the
# cursor on the last word.
complete_words() {
    COMP_WORDS=("$J" "$@")
    COMP_CWORD=$#
    COMP_LINE="${COMP_WORDS[*]}"
    COMP_POINT=${#COMP_LINE}
    COMPREPLY=()
    _jitstall
    printf '%s\n' "${COMPREPLY[@]}" | sort
}
expect_has() { # label output word...
    local label=$1 out=$2; shift 2
    for w in "$@"; do
        grep -qx -- "$w" <<<"$out" || { echo "FAIL: $label: '$w' not offered (got: $(tr '\n' ' ' <<<"$out"))"; fails=$((fails + 1)); }
    done
}
expect_not() {
    local label=$1 out=$2; shift 2
    for w in "$@"; do
        grep -qx -- "$w" <<<"$out" && { echo "FAIL: $label: '$w' offered"; fails=$((fails + 1)); }
    done
}
out=$(complete_words "")
expect_has "subcommands" "$out" report check diff dump export run scan baseline
out=$(complete_words re)
expect_has "prefix re" "$out" report
expect_not "prefix re" "$out" check
# Every option of every subcommand's --help is offered.
for cmd in $("$J" --help | sed -n 's/^  \([a-z]\+\)  .*/\1/p'); do
    out=$(complete_words "$cmd" -)
    want=$("$J" "$cmd" --help | grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' | grep -oE -- '--[a-z][a-z-]*')
    [ -n "$want" ] || { echo "FAIL: $cmd --help lists no long option"; fails=$((fails + 1)); }
    expect_has "$cmd options" "$out" $want
done
out=$(complete_words export --format "")
expect_has "export --format" "$out" chrome prometheus otlp
out=$(complete_words scan --arch sm_9)
expect_has "scan --arch" "$out" sm_90 sm_90a
# The list comes from the program: every architecture it accepts, the newest
# included, and nothing it refuses.
out=$(complete_words scan --arch sm_1)
expect_has "scan --arch sm_1" "$out" sm_100 sm_100a sm_100f sm_101 sm_120 sm_120f sm_121
expect_not "scan --arch sm_1" "$out" sm_10 sm_111
for a in $("$J" scan --list-archs); do
  "$J" scan --arch "$a" "$J" >/dev/null 2>&1 || { echo "FAIL: --list-archs names $a, which scan refuses"; fails=$((fails + 1)); }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
touch "$tmp/trace-1.jst"
out=$(complete_words report "$tmp/tra")
expect_has "report operand" "$out" "$tmp/trace-1.jst"
# After `run -- CMD`, words belong to CMD: a file, not jitstall's options.
out=$(complete_words run -- ./prog "$tmp/tr")
expect_has "run command args" "$out" "$tmp/trace-1.jst"
out=$(complete_words run -- ./prog --o)
expect_not "run command args" "$out" --output
[ $fails -eq 0 ] && echo "ok: bash completion"
exit $((fails > 0))
