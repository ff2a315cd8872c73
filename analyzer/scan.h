/*
 * The insides of `jitstall scan` shared by cmd_scan.c (options, files,
 * devices, totals) and scan_out.c (what is said about each image and file).
 */
#ifndef JST_ANALYZER_SCAN_H
#define JST_ANALYZER_SCAN_H

#include <stddef.h>
#include <stdint.h>
#include "image.h"
#include "imgwalk.h"
#include "jsonw.h"

#define SCAN_MAX_ARCHS 16
/* scan's own verdict, beyond enum jst_verdict: an image without kernels. */
#define SCAN_V_EMPTY (JST_V_OTHER_GPUS + 1)
#define SCAN_TEXT_KERNELS 10 /* kernel names listed per image in text output */

struct scan_totals {
    size_t cuda_files, images, kernels_jit, kernels_dead;
    size_t verdicts[SCAN_V_EMPTY + 1];
    uint64_t ptx_jit_bytes; /* PTX that would JIT, for the estimated cost */
};

/* One image of the file being scanned, held until the file is done: whether
 * an image that carries only other GPUs' SASS is a failure depends on the
 * rest of the file (jst_image_for_other_gpus). */
struct scan_pending;

struct scan {
    unsigned cc;
    unsigned driver_cuda; /* --driver: CUDA version of the driver judged, 0 if none */
    unsigned fail_mask;   /* --fail-on: bit per verdict */
    size_t failed;        /* images that met --fail-on */
    int json;
    int summary_only; /* --summary: text output without the file listing */
    size_t width;     /* text output: columns a line may take (names are cut) */
    struct jst_json j;
    struct jst_walk walk;
    struct scan_totals t;
    size_t readable; /* paths given on the command line that could be read */
    int file_open;   /* JSON: a "files" member has been opened for this file */
    struct file_sass {
        size_t n;
        char archs[128];
        struct group *g;
        size_t ng;
        size_t n_other; /* images for other GPUs (text output) */
        char other_archs[192];
        struct scan_pending *pend; /* images of the file, until it is done */
        size_t npend;
    } fs; /* the file being scanned */
};

/* "sass", "ptx_jit", ..., or "empty" for SCAN_V_EMPTY. */
const char *scan_verdict_name(unsigned v);
/* Decides one image for sc->cc and says so: a JSON object, or into the
 * file's text groups (fs). text: PTX text found in a data section. */
void scan_report_image(struct scan *sc, const char *path, size_t offset,
                       const struct jst_image *img, struct file_sass *fs, int text);
/* The file is done: applies the other-GPUs rule over its images and says
 * what each is (JSON objects, or text groups); totals are counted here. */
void scan_file_flush(struct scan *sc, const char *path);
/* Text output: the file's groups of images that do not run as SASS (none
 * with --summary); frees them either way. */
void scan_print_groups(const struct scan *sc, struct file_sass *fs);
/* Opens the file's output (its name, or its JSON object) once. */
void scan_file_begin(struct scan *sc, const char *path);
/* Text output: the width lines are cut to, from COLUMNS, else the terminal
 * on stdout, else SCAN_DEFAULT_WIDTH. */
#define SCAN_DEFAULT_WIDTH 100
size_t scan_text_width(void);
/* Text output, files: the "N images for other GPUs (...)" line, its list
 * cut to the width. */
void scan_print_other(const struct scan *sc, const struct file_sass *fs);

#endif
