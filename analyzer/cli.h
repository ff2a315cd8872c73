/*
 * The jitstall CLI's command table. Each analyzer/cmd_<name>.c registers
 * itself with JST_COMMAND, so adding a subcommand touches no other file.
 */
#ifndef JST_ANALYZER_CLI_H
#define JST_ANALYZER_CLI_H

/* Exit codes shared by every subcommand (docs/jitstall.1.md). */
enum {
    JST_EXIT_OK = 0,        /* success; for check: within budget */
    JST_EXIT_FAIL = 1,      /* check: a regression or a budget exceeded */
    JST_EXIT_USAGE = 2,     /* usage error, or input that cannot be read */
};

struct jst_command {
    const char *name;
    const char *summary;    /* one line for `jitstall --help` */
    int (*run)(int argc, char **argv); /* argv[0] is the subcommand name */
    struct jst_command *next;
};
void jst_command_register(struct jst_command *c);

#define JST_COMMAND(NAME, FN, SUMMARY)                                          \
    static struct jst_command jst_cmd_##NAME = {#NAME, SUMMARY, FN, 0};         \
    __attribute__((constructor)) static void jst_cmd_reg_##NAME(void)           \
    {                                                                           \
        jst_command_register(&jst_cmd_##NAME);                                  \
    }

/* What getopt_long refused (the argument it stopped at, argv[optind - 1]),
 * in one line: "jitstall <cmd>: unknown option or missing value 'ARG' (see
 * 'jitstall <cmd> --help')". Returns JST_EXIT_USAGE. */
int jst_bad_option(const char *cmd, char **argv);

/* One line on stderr: "jitstall <cmd>: <message>". For errors only. */
void jst_errorf(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One line on stderr: "jitstall <cmd>: warning: <message>"; the command
 * goes on and its exit status does not change for it. */
void jst_warnf(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
