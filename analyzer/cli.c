/*
 * The option handling every subcommand shares: the getopt_long loop, -h and
 * --help, and the one-line errors for an unknown option and for missing
 * operands, so that each cmd_<name>.c says only what its own options do.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "cli.h"

static int color_mode = JST_COLOR_AUTO;
static const char *self_name = "jitstall";

int jst_cli_color_parse(const char *when)
{
    return !strcmp(when, "auto")     ? JST_COLOR_AUTO
           : !strcmp(when, "always") ? JST_COLOR_ALWAYS
           : !strcmp(when, "never")  ? JST_COLOR_NEVER
                                     : -1;
}

void jst_cli_set_color(int mode)
{
    color_mode = mode;
}

int jst_cli_smart_tty(int fd)
{
    const char *term = getenv("TERM");
    return isatty(fd) && !(term && !strcmp(term, "dumb"));
}

int jst_cli_colour(int fd)
{
    if (color_mode != JST_COLOR_AUTO)
        return color_mode == JST_COLOR_ALWAYS;
    const char *nc = getenv("NO_COLOR");
    if (nc && *nc)
        return 0;
    return jst_cli_smart_tty(fd);
}

void jst_cli_set_self(const char *argv0)
{
    /* A name without '/' was found on PATH: "jitstall" runs it again. */
    if (argv0 && strchr(argv0, '/'))
        self_name = argv0;
}

const char *jst_cli_self(void)
{
    return self_name;
}

/* A shortopts with a leading ':' (after '+') lets getopt_long tell a
 * missing value (':') from an unknown option ('?'), so the message can say
 * which; without it both arrive as '?'. */
static int cli_tells_missing(const char *shortopts)
{
    return shortopts[shortopts[0] == '+'] == ':';
}

static int cli_bad_option(const struct jst_cli *cli, char **argv)
{
    jst_errorf(cli->cmd, "unknown option%s '%s' (see 'jitstall %s --help')",
               cli_tells_missing(cli->shortopts) ? "" : " or missing value",
               optind > 0 ? argv[optind - 1] : "?", cli->cmd);
    return JST_EXIT_USAGE;
}

int jst_cli_parse(const struct jst_cli *cli, int argc, char **argv, void *ctx)
{
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, cli->shortopts, cli->longopts, NULL)) != -1) {
        if (c == 'h') {
            fputs(cli->help, stdout);
            return JST_EXIT_OK;
        }
        if (c == '?')
            return cli_bad_option(cli, argv);
        const char *arg = c == ':' ? argv[optind - 1] : optarg;
        if (cli->option(c, arg, ctx) != 0)
            return JST_EXIT_USAGE;
    }
    if (cli->operands && optind >= argc) {
        jst_errorf(cli->cmd, "no %s given (see 'jitstall %s --help')", cli->operands, cli->cmd);
        return JST_EXIT_USAGE;
    }
    return JST_CLI_GO;
}

int jst_cli_set_flag(int c, const char *arg, void *ctx)
{
    (void)c, (void)arg;
    *(int *)ctx = 1;
    return 0;
}
