/*
 * `jitstall baseline TRACE|DIR... -o FILE`: records what a known-good run
 * looked like (per process and module: verdict, JIT time, cache outcome; per
 * process the compiles of other compilers and its framework caches' outcomes)
 * so that `jitstall check --baseline FILE` can flag what got worse.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check_util.h"
#include "cli.h"

static const char usage_text[] =
    "usage: jitstall baseline [-o FILE] TRACE|DIR...\n"
    "\n"
    "Write a baseline of a known-good run for 'jitstall check --baseline FILE':\n"
    "per process, the time to first kernel and JIT time; per module, the image\n"
    "hash, verdict, JIT time and cache outcome; the compiles of other compilers\n"
    "(count, time, cache outcome) and each framework cache's outcome\n"
    "(jitstall-baseline(1)).\n"
    "\n"
    "  -o, --output FILE  write the baseline to FILE (default: standard output)\n"
    "  -h, --help         show this help\n"
    "\n"
    "exit codes: 0 written, 2 usage error or unreadable input\n";

/* The traces the baseline was made from go into it. */
struct baseline_src {
    char **paths;
    int n;
};

static int write_baseline(FILE *f, const struct jst_run *run, void *ctx)
{
    const struct baseline_src *src = ctx;
    return jst_baseline_write(f, run, src->paths, src->n);
}

static int baseline_option(int c, const char *arg, void *ctx)
{
    (void)c; /* -o FILE */
    *(const char **)ctx = arg;
    return 0;
}

static const struct option baseline_longopts[] = {
    {"output", required_argument, NULL, 'o'},
    JST_CLI_HELP_END,
};
static const struct jst_cli baseline_cli = {
    "baseline", "o:h", baseline_longopts, usage_text, "trace or directory", baseline_option,
};

static int cmd_baseline(int argc, char **argv)
{
    const char *out = NULL;
    int rc = jst_cli_parse(&baseline_cli, argc, argv, &out);
    if (rc != JST_CLI_GO)
        return rc;
    struct baseline_src src = {argv + optind, argc - optind};
    return jst_run_write("baseline", src.paths, src.n, 0, out, write_baseline, &src, NULL);
}

JST_COMMAND(baseline, cmd_baseline, "record a known-good run for 'check --baseline'")
