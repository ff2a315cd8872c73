/* Entry point of the jitstall CLI: dispatches to the registered subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include "cli.h"
#include "trace.h"
#include "utf8.h"
#include "xalloc.h"

static struct jst_command *commands;

/* Keeps the list sorted by name, so --help is stable whatever order the
 * constructors ran in. */
void jst_command_register(struct jst_command *c)
{
    struct jst_command **pp = &commands;
    while (*pp && strcmp((*pp)->name, c->name) < 0)
        pp = &(*pp)->next;
    c->next = *pp;
    *pp = c;
}

/* "jitstall <cmd>: <kind><message>" and a newline, on stderr. The message
 * often holds a path or a name from a trace: it is escaped (utf8.h), so that
 * it stays one line and no terminal control passes. The system's error texts
 * (strerror: "No such file or directory") are written in lower case, as
 * jitstall's own are, so that one error reads the same whichever command or
 * path found it. */
static void cli_vsay(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
    char *msg = NULL;
    fprintf(stderr, "jitstall %s: %s", cmd, kind);
    if (vasprintf(&msg, fmt, ap) >= 0) {
        for (int e = 1; e < 134; e++) {
            const char *t = strerror(e);
            size_t tl = strlen(t);
            for (char *q = strstr(msg, t); tl > 1 && q; q = strstr(q + tl, t))
                if (q[0] >= 'A' && q[0] <= 'Z' && q[1] >= 'a' && q[1] <= 'z')
                    q[0] = (char)(q[0] - 'A' + 'a');
        }
        jst_text_put(stderr, msg);
        free(msg);
    }
    fputc('\n', stderr);
}

void jst_errorf(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vsay(cmd, "", fmt, ap);
    va_end(ap);
}

void jst_warnf(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cli_vsay(cmd, "warning: ", fmt, ap);
    va_end(ap);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: jitstall <command> [options] [args]\n\n"
               "Find the PTX JIT stalls behind a slow first GPU query.\n\ncommands:\n");
    for (struct jst_command *c = commands; c; c = c->next)
        fprintf(f, "  %-9s %s\n", c->name, c->summary);
    fprintf(f, "\nglobal options: --color=auto|always|never (auto: on a terminal, not with\n"
               "NO_COLOR set or TERM=dumb), before the command or among its options\n"
               "\n'jitstall <command> --help' describes a command; 'man jitstall' has the manual.\n"
               "exit codes: 0 success, 1 check failed, 2 usage error or unreadable input\n");
}

/* Every command's standard output is flushed and closed here, once more: a
 * write error a command did not see (a full disk, a closed pipe's EIO) turns
 * its exit status into 2, never a silent 0 with a short output. */
static int out_closed(const char *cmd, int rc)
{
    int bad = fflush(stdout) != 0 || ferror(stdout);
    bad |= fclose(stdout) != 0;
    if (bad && rc != JST_EXIT_USAGE) {
        jst_errorf(cmd, "cannot write to standard output");
        rc = JST_EXIT_USAGE;
    }
    return rc;
}

/* Takes the global --color=WHEN (or --color WHEN, --colour) out of argv,
 * wherever it is before "--": every command that colours follows it. The
 * words of the program `jitstall run` starts are never touched: for run, the
 * scan stops at its first operand. 0, or -1 after one error line. */
static int global_options(int *argc, char **argv)
{
    int out = 1;
    const char *cmd = NULL;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *when = NULL;
        if (cmd && !strcmp(cmd, "run") && a[0] != '-')
            a = "--"; /* the rest is run's COMMAND and its arguments */
        else if (!cmd && a[0] != '-')
            cmd = a;
        if (!strcmp(a, "--")) {
            while (i < *argc)
                argv[out++] = argv[i++];
            break;
        }
        size_t n = !strncmp(a, "--color", 7) ? 7 : !strncmp(a, "--colour", 8) ? 8 : 0;
        if (!n || (a[n] && a[n] != '=')) {
            argv[out++] = argv[i];
            continue;
        }
        if (a[n] == '=')
            when = a + n + 1;
        else if (i + 1 < *argc)
            when = argv[++i];
        int mode = when ? jst_cli_color_parse(when) : -1;
        if (mode < 0) {
            fprintf(stderr, "jitstall: bad --color '%s' (want auto, always or never)\n",
                    when ? when : "");
            return -1;
        }
        jst_cli_set_color(mode);
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

int main(int argc, char **argv)
{
    jst_cli_set_self(argv[0]);
    if (global_options(&argc, argv) != 0)
        return JST_EXIT_USAGE;
    if (argc < 2) {
        usage(stderr);
        return JST_EXIT_USAGE;
    }
    /* `jitstall help CMD` is `jitstall CMD --help`. */
    if (!strcmp(argv[1], "help") && argc > 2) {
        for (struct jst_command *c = commands; c; c = c->next)
            if (!strcmp(c->name, argv[2])) {
                char *hv[] = {argv[2], "--help", NULL};
                return out_closed(c->name, c->run(2, hv));
            }
        fprintf(stderr, "jitstall: unknown command '%s' (see 'jitstall --help')\n", argv[2]);
        return JST_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return out_closed("--help", JST_EXIT_OK);
    }
    /* Not in --help; for the shell completion: the verdicts of a trace's
     * loads (check --forbid-verdict), from the program itself. */
    if (!strcmp(argv[1], "--list-verdicts")) {
        for (unsigned k = JST_V_SASS; jst_verdict_name(k); k++)
            printf("%s\n", jst_verdict_name(k));
        return out_closed("--list-verdicts", JST_EXIT_OK);
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("jitstall %s\n", JITSTALL_VERSION);
        return out_closed("--version", JST_EXIT_OK);
    }
    for (struct jst_command *c = commands; c; c = c->next)
        if (!strcmp(c->name, argv[1])) {
            jst_xalloc_command(c->name);
            return out_closed(c->name, c->run(argc - 1, argv + 1));
        }
    fprintf(stderr, "jitstall: unknown command '%s' (see 'jitstall --help')\n", argv[1]);
    return JST_EXIT_USAGE;
}
