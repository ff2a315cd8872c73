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

static const char usage_text[] =
    "usage: jitstall baseline [-o FILE] TRACE|DIR...\n"
    "\n"
    "Write a baseline of a known-good run for 'jitstall check --baseline FILE':\n"
    "per process, the time to first kernel and JIT time; per module, the image\n"
    "hash, verdict, JIT time and cache outcome (docs/jitstall-baseline.1.md).\n"
    "\n"
    "  -o, --output FILE  write the baseline to FILE (default: standard output)\n"
    "  -h, --help         show this help\n"
    "\n"
    "exit codes: 0 written, 2 usage error or unreadable input\n";

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
            jst_errorf("baseline", "unknown or incomplete option '%s' (see --help)",
                       argv[optind - 1]);
            return JST_EXIT_USAGE;
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

    /* Write beside the target and rename, so a failed write never leaves a
     * half baseline where a good one was. */
    char tmp[4096];
    FILE *f = stdout;
    if (out && strcmp(out, "-")) {
        if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", out, (long)getpid()) >= sizeof tmp) {
            jst_errorf("baseline", "%s: path too long", out);
            jst_model_free(&run);
            return JST_EXIT_USAGE;
        }
        if (!(f = fopen(tmp, "w"))) {
            jst_errorf("baseline", "%s: %s", tmp, strerror(errno));
            jst_model_free(&run);
            return JST_EXIT_USAGE;
        }
    }
    int werr = jst_baseline_write(f, &run, argv + optind, argc - optind);
    if (f != stdout) {
        werr |= fclose(f) != 0 ? -1 : 0;
        if (!werr && rename(tmp, out) != 0)
            werr = -1;
        if (werr) {
            jst_errorf("baseline", "%s: cannot write: %s", out, strerror(errno));
            remove(tmp);
        } else {
            fprintf(stderr, "jitstall baseline: wrote %s (%zu process%s)\n", out, run.n_procs,
                    run.n_procs == 1 ? "" : "es");
        }
    } else if (werr) {
        jst_errorf("baseline", "cannot write to standard output");
    }
    jst_model_free(&run);
    return werr ? JST_EXIT_USAGE : JST_EXIT_OK;
}

JST_COMMAND(baseline, cmd_baseline, "record a known-good run for 'check --baseline'")
