/*
 * `jitstall baseline TRACE|DIR... -o FILE`: records what a known-good run
 * looked like (per process and module: verdict, JIT time, cache outcome) so
 * that `jitstall check --baseline FILE` can flag what got worse.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "check_util.h"
#include "cli.h"
#include "outfile.h"

static const char usage_text[] =
    "usage: jitstall baseline [-o FILE] TRACE|DIR...\n"
    "\n"
    "Write a baseline of a known-good run for 'jitstall check --baseline FILE':\n"
    "per process, the time to first kernel and JIT time; per module, the image\n"
    "hash, verdict, JIT time and cache outcome (jitstall-baseline(1)).\n"
    "\n"
    "  -o, --output FILE  write the baseline to FILE (default: standard output)\n"
    "  -h, --help         show this help\n"
    "\n"
    "exit codes: 0 written, 2 usage error or unreadable input\n";

struct baseline_out {
    const struct jst_run *run;
    char **paths;
    int n_paths;
};

static int write_baseline(FILE *f, void *ctx)
{
    const struct baseline_out *bo = ctx;
    return jst_baseline_write(f, bo->run, bo->paths, bo->n_paths);
}

static int cmd_baseline(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = NULL;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o':
            out = optarg;
            break;
        case 'h':
            fputs(usage_text, stdout);
            return JST_EXIT_OK;
        default:
            return jst_bad_option("baseline", argv);
        }
    }
    if (optind >= argc) {
        jst_errorf("baseline", "no trace or directory given (see --help)");
        return JST_EXIT_USAGE;
    }
    struct jst_run run = {0};
    int rc = jst_run_load("baseline", argv + optind, argc - optind, &run, 0);
    if (rc != JST_EXIT_OK) {
        jst_model_free(&run);
        return rc;
    }

    struct baseline_out bo = {&run, argv + optind, argc - optind};
    rc = jst_outfile_write("baseline", out, run.n_procs, write_baseline, &bo, NULL);
    jst_model_free(&run);
    return rc;
}

JST_COMMAND(baseline, cmd_baseline, "record a known-good run for 'check --baseline'")
