#!/usr/bin/env bash
# The bash completion offers the subcommands, each subcommand's options as
# its --help lists them (each once), values for --format, --arch, --color and
# the verdict options, and files after `run -- COMMAND`; zsh's and fish's
# the same, where those shells are installed. usage: test_completion.sh JITSTALL SCRIPT
set -u
J=$1
case $J in /*) ;; *) J=$(pwd)/$J ;; esac
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
# Verdict names, from the program: scan --fail-on (also after a comma) and
# check --forbid-verdict.
out=$(complete_words scan --fail-on "")
expect_has "scan --fail-on" "$out" $("$J" scan --list-verdicts)
expect_not "scan --fail-on" "$out" sass forced_jit
out=$(complete_words scan --fail-on ptx_jit,no)
expect_has "scan --fail-on LIST" "$out" ptx_jit,no_compatible
out=$(complete_words check --forbid-verdict "")
expect_has "check --forbid-verdict" "$out" sass ptx_jit forced_jit no_compatible other_gpus
out=$(complete_words --color "")
expect_has "--color" "$out" auto always never
# No option is offered twice (check's --help names --max-jit-ms twice).
for cmd in $("$J" --help | sed -n 's/^  \([a-z]\+\)  .*/\1/p'); do
    dups=$(complete_words "$cmd" - | uniq -d)
    [ -z "$dups" ] || { echo "FAIL: $cmd offers twice: $dups"; fails=$((fails + 1)); }
done

# zsh and fish, when installed: the same lists, from the same program.
here=$(cd "$(dirname "$2")" && pwd)
if command -v fish >/dev/null; then
    mkdir -p "$tmp/bin" && ln -sf "$J" "$tmp/bin/jitstall"
    fc() { PATH=$tmp/bin:$PATH fish -c "source $here/jitstall.fish; complete -C'$1'" | cut -f1 | sort; }
    expect_has "fish commands" "$(fc 'jitstall ')" report check scan warm
    expect_has "fish scan options" "$(fc 'jitstall scan --')" --arch --fail-on --summary --allow-empty --json
    expect_not "fish scan options" "$(fc 'jitstall scan --')" --forbid-verdict
    expect_has "fish --arch" "$(fc 'jitstall scan --arch sm_12')" sm_120 sm_120f sm_121
    expect_has "fish --fail-on" "$(fc 'jitstall scan --fail-on ptx_jit,no')" ptx_jit,no_compatible
    expect_has "fish --forbid-verdict" "$(fc 'jitstall check --forbid-verdict ')" sass other_gpus
    [ -z "$(fc 'jitstall check --' | uniq -d)" ] || { echo "FAIL: fish offers an option twice"; fails=$((fails + 1)); }
else
    echo "note: fish not installed, its completion not run"
fi
if command -v zsh >/dev/null; then
    # The completion function with the completion system's builtins stubbed:
    # what it would offer, one word a line.
    # detect_leaks=0: in the sanitized build, LeakSanitizer's exit-time
    # stop of the threads hangs for a child of `zsh -c` on a loaded machine
    # (85 of 600 runs of `jitstall --help` from four parallel zsh loops;
    # none with leak checks off, none from bash). The bash part above keeps
    # them on.
    zc() {
        ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 zsh -f -c '
compadd() { while [[ $# -gt 0 && $1 != -- ]]; do [[ $1 == -[SP] ]] && shift; shift; done; shift; print -l -- "$@"; }
_describe() { local a=${@[-1]}; print -l -- ${${(P)a}%%:*}; }
_files() { print -- FILES; }
compset() { return 1; }
source "$1" >/dev/null 2>&1
shift
words=("$@"); CURRENT=$#; PREFIX=${words[CURRENT]}
_jitstall' zc "$here/_jitstall" "$J" "$@" | sort
    }
    expect_has "zsh commands" "$(zc "")" report check scan warm --color=never
    expect_has "zsh scan options" "$(zc scan --)" --arch --fail-on --summary --allow-empty
    expect_has "zsh --arch" "$(zc scan --arch "")" sm_90 sm_120f
    expect_has "zsh --fail-on" "$(zc scan --fail-on "")" ptx_jit no_compatible other_gpus empty
    expect_has "zsh --forbid-verdict" "$(zc check --forbid-verdict "")" sass forced_jit
    expect_has "zsh run command args" "$(zc run -- ./prog --o)" FILES
    [ -z "$(zc check -- | uniq -d)" ] || { echo "FAIL: zsh offers an option twice"; fails=$((fails + 1)); }
else
    echo "note: zsh not installed, its completion not run"
fi
[ $fails -eq 0 ] && echo "ok: bash completion"
exit $((fails > 0))
