# bash completion for jitstall.
# Subcommands and options are read from `jitstall --help` and
# `jitstall COMMAND --help` when asked for, so they never drift from the
# program. Installed as share/bash-completion/completions/jitstall.

# Long and short options of one subcommand, from its --help.
_jitstall_options()
{
    "$1" "$2" --help 2>/dev/null |
        grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' |
        grep -oE -- '-[a-zA-Z]\b|--[a-z][a-z-]*' | sort -u
}

# Words for a comma-separated list option: the names, each after what the
# current word already holds up to its last comma.
_jitstall_list()
{
    local head=""
    [[ $cur == *,* ]] && head=${cur%,*},
    COMPREPLY=($(compgen -P "$head" -W "$1" -- "${cur##*,}"))
}

_jitstall()
{
    local cur prev words cword
    if declare -F _init_completion >/dev/null; then
        _init_completion || return
    else
        cur=${COMP_WORDS[COMP_CWORD]}
        prev=${COMP_WORDS[COMP_CWORD - 1]}
        words=("${COMP_WORDS[@]}")
        cword=$COMP_CWORD
    fi
    local prog=${words[0]} cmd="" i
    for ((i = 1; i < cword; i++)); do
        case ${words[i]} in
        --color | --colour) ((i++)) ;;
        -*) ;;
        *) cmd=${words[i]}; break ;;
        esac
    done
    case $prev in
    --color | --colour)
        COMPREPLY=($(compgen -W "auto always never" -- "$cur"))
        return ;;
    esac
    if [ -z "$cmd" ]; then
        local cmds
        cmds=$("$prog" --help 2>/dev/null | sed -n 's/^  \([a-z]\+\)  .*/\1/p')
        COMPREPLY=($(compgen -W "$cmds --help --version --color=auto --color=always --color=never" -- "$cur"))
        return
    fi
    # `run` hands everything after its command to that command.
    if [ "$cmd" = run ]; then
        for ((i = i + 1; i < cword; i++)); do
            case ${words[i]} in
            -o | --output) ((i++)) ;;
            --) break ;;
            -*) ;;
            *) break ;;
            esac
        done
        if [ "$i" -lt "$cword" ]; then
            COMPREPLY=($(compgen -f -- "$cur"))
            return
        fi
    fi
    case $prev in
    -o | --output | --junit | --baseline)
        COMPREPLY=($(compgen -f -- "$cur"))
        return ;;
    -f | --format)
        local fmts
        # From the usage line: [--format chrome|prometheus|otlp]
        fmts=$("$prog" "$cmd" --help 2>/dev/null | head -1 | grep -oE -- '--format [a-z|]+' | cut -d' ' -f2 | tr '|' ' ')
        COMPREPLY=($(compgen -W "${fmts:-chrome}" -- "$cur"))
        return ;;
    --arch)
        # From the program itself: every architecture it accepts (and a
        # list, as --arch takes one).
        COMPREPLY=($(compgen -W "$("$prog" scan --list-archs 2>/dev/null) sm_90,sm_100,sm_120" -- "$cur"))
        return ;;
    --fail-on)
        # The verdicts scan --fail-on takes, from the program.
        _jitstall_list "$("$prog" scan --list-verdicts 2>/dev/null)"
        return ;;
    --forbid-verdict)
        COMPREPLY=($(compgen -W "$("$prog" --list-verdicts 2>/dev/null)" -- "$cur"))
        return ;;
    --driver)
        COMPREPLY=($(compgen -W "12.4 12.8 12.9 13.0 13.1 550.54 570.86 575.51 580.65 590.44" -- "$cur"))
        return ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_jitstall_options "$prog" "$cmd") --color" -- "$cur"))
        return
    fi
    # Operands: traces (*.jst), directories of them, binaries to scan.
    COMPREPLY=($(compgen -f -- "$cur"))
    compopt -o filenames 2>/dev/null
}
complete -F _jitstall jitstall
