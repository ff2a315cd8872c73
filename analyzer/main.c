/* Entry point of the jitstall CLI: dispatches to the registered subcommands. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include "cli.h"
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

/* "jitstall <cmd>: <kind><message>" and a newline, on stderr. */
static void cli_vsay(const char *cmd, const char *kind, const char *fmt, va_list ap)
{
    fprintf(stderr, "jitstall %s: %s", cmd, kind);
    vfprintf(stderr, fmt, ap);
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
    fprintf(f, "\n'jitstall <command> --help' describes a command; 'man jitstall' has the manual.\n"
               "exit codes: 0 success, 1 check failed, 2 usage error or unreadable input\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return JST_EXIT_USAGE;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return JST_EXIT_OK;
    }
    if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
        printf("jitstall %s\n", JITSTALL_VERSION);
        return JST_EXIT_OK;
    }
    for (struct jst_command *c = commands; c; c = c->next)
        if (!strcmp(c->name, argv[1])) {
            jst_xalloc_command(c->name);
            return c->run(argc - 1, argv + 1);
        }
    fprintf(stderr, "jitstall: unknown command '%s' (see 'jitstall --help')\n", argv[1]);
    return JST_EXIT_USAGE;
}
