# fish completion for jitstall. As the bash one, it reads the subcommands and
# options from `jitstall --help` and `jitstall COMMAND --help`, and the
# architectures and verdicts from the program, so it never drifts from it.
# Installed as share/fish/vendor_completions.d/jitstall.fish.

# The jitstall being completed, as typed (build/jitstall works too).
function __jitstall_prog
    set -l w (commandline -opc)
    echo $w[1]
end

# The subcommand on the command line, or nothing yet.
function __jitstall_cmd
    set -l w (commandline -opc)
    set -l skip 0
    for x in $w[2..-1]
        if test $skip = 1
            set skip 0
            continue
        end
        switch $x
            case --color --colour
                set skip 1
            case '-*'
            case '*'
                echo $x
                return 0
        end
    end
    return 1
end

function __jitstall_commands
    set -l p (__jitstall_prog)
    $p --help 2>/dev/null | sed -n 's/^  \([a-z][a-z]*\)  *\(.*\)/\1\t\2/p'
end

# The options of the subcommand, from its --help, each once.
function __jitstall_options
    set -l cmd (__jitstall_cmd); or return
    set -l p (__jitstall_prog)
    $p $cmd --help 2>/dev/null |
        grep -oE '^ +(-[a-zA-Z], )?--[a-z][a-z-]*' |
        grep -oE -- '-[a-zA-Z]\b|--[a-z][a-z-]*' | sort -u
    echo --color
end

# After `run ... COMMAND`, words belong to that command: files.
function __jitstall_in_run_command
    test (__jitstall_cmd) = run; or return 1
    set -l w (commandline -opc)
    set -l seen 0
    for x in $w[2..-1]
        if test $seen = 0
            test $x = run; and set seen 1
            continue
        end
        switch $x
            case -- -o --output
            case '-*'
            case '*'
                return 0
        end
    end
    return 1
end

function __jitstall_verdicts
    set -l p (__jitstall_prog)
    if test (__jitstall_cmd) = check
        $p --list-verdicts 2>/dev/null
    else
        $p scan --list-verdicts 2>/dev/null
    end
end

function __jitstall_archs
    set -l p (__jitstall_prog)
    $p scan --list-archs 2>/dev/null
end

complete -c jitstall -f -n 'not __jitstall_cmd' -a '(__jitstall_commands)'
complete -c jitstall -f -n 'not __jitstall_cmd' -a '--help --version --color=auto --color=always --color=never'
complete -c jitstall -n '__jitstall_cmd; and not __jitstall_in_run_command' -a '(__jitstall_options)'
complete -c jitstall -n '__fish_seen_subcommand_from scan' -l arch -x -a '(__jitstall_archs)'
complete -c jitstall -n '__fish_seen_subcommand_from scan' -l fail-on -x \
    -a '(__fish_complete_list , __jitstall_verdicts)'
complete -c jitstall -n '__fish_seen_subcommand_from check' -l forbid-verdict -x \
    -a '(__jitstall_verdicts)'
complete -c jitstall -l color -x -a 'auto always never'
