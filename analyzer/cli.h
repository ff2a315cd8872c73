/*
 * The jitstall CLI's command table. Each analyzer/cmd_<name>.c registers
 * itself with JST_COMMAND, so adding a subcommand touches no other file.
 */
#ifndef JST_ANALYZER_CLI_H
#define JST_ANALYZER_CLI_H

#include <getopt.h>
#include <stddef.h>

/* Exit codes shared by every subcommand (docs/jitstall.1.md). */
enum {
    JST_EXIT_OK = 0,    /* success; for check: within budget */
    JST_EXIT_FAIL = 1,  /* check: a regression or a budget exceeded */
    JST_EXIT_USAGE = 2, /* usage error, or input that cannot be read */
};

struct jst_command {
    const char *name;
    const char *summary;               /* one line for `jitstall --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
    struct jst_command *next;
};
void jst_command_register(struct jst_command *c);

#define JST_COMMAND(NAME, FN, SUMMARY)                                                             \
    static struct jst_command jst_cmd_##NAME = {#NAME, SUMMARY, FN, 0};                            \
    __attribute__((constructor)) static void jst_cmd_reg_##NAME(void)                              \
    {                                                                                              \
        jst_command_register(&jst_cmd_##NAME);                                                     \
    }

/* A subcommand's options, as jst_cli_parse (cli.c) reads them. */
struct jst_cli {
    const char *cmd;
    const char *shortopts;         /* getopt_long's; 'h' is --help */
    const struct option *longopts; /* ends with JST_CLI_HELP_END */
    const char *help;              /* -h and --help print it on stdout */
    /* What the "no ... given" error names when no operand follows the
     * options; NULL: the command checks its operands itself. */
    const char *operands;
    /* One of the command's options (c as getopt_long returns it, arg its
     * value): 0, or -1 after one error line. A leading ':' in shortopts
     * (after '+') also brings c == ':' for an option left without its
     * value, arg then naming that option. */
    int (*option)(int c, const char *arg, void *ctx);
};

/* The end of every command's longopts: --help, then the terminator. */
// clang-format off
#define JST_CLI_HELP_END {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}
// clang-format on

/* jst_cli_parse's "go on": the options are read, optind is the first
 * operand. */
#define JST_CLI_GO (-1)

/* Reads the options of argv (argv[0] is the command) through cli->option.
 * Returns JST_CLI_GO, or the exit status the command returns at once:
 * JST_EXIT_OK after --help, JST_EXIT_USAGE after one error line ("unknown
 * option 'ARG'", or "unknown option or missing value 'ARG'" when getopt
 * cannot tell, "no OPERANDS given", or the option's own). */
int jst_cli_parse(const struct jst_cli *cli, int argc, char **argv, void *ctx);
/* The option function of a command whose one option is a flag: sets the
 * int that ctx points to. */
int jst_cli_set_flag(int c, const char *arg, void *ctx);

/* --color=WHEN, a global option (main.c): before the command or among its
 * options, read once there and taken out of argv. */
enum { JST_COLOR_AUTO, JST_COLOR_ALWAYS, JST_COLOR_NEVER };
/* Parses WHEN ("auto", "always", "never"); -1 when it is none of them. */
int jst_cli_color_parse(const char *when);
void jst_cli_set_color(int mode);
/* Whether output to fd gets colour: --color=always or never, else (auto)
 * only on a terminal, never with NO_COLOR set or TERM=dumb. */
int jst_cli_colour(int fd);
/* Whether fd is a terminal that takes cursor controls (a progress line):
 * a terminal, TERM not dumb. */
int jst_cli_smart_tty(int fd);

/* The program as the user ran it, for a command line to run next: argv[0]
 * when it names a path (build/jitstall), else "jitstall" (found on PATH). */
void jst_cli_set_self(const char *argv0);
const char *jst_cli_self(void);

/* One line on stderr: "jitstall <cmd>: <message>". For errors only. */
void jst_errorf(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line on stderr: "jitstall <cmd>: warning: <message>"; the command
 * goes on and its exit status does not change for it. */
void jst_warnf(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
