/*
 * The insides of `jitstall scan` shared by cmd_scan.c (options, files,
 * devices, totals) and scan_out.c (what is said about each image and file).
 */
#ifndef JST_ANALYZER_SCAN_H
#define JST_ANALYZER_SCAN_H

#include <stddef.h>
#include "image.h"
#include "imgwalk.h"
#include "jsonw.h"

#define SCAN_MAX_ARCHS 16
/* scan's own verdict, beyond enum jst_verdict: an image without kernels. */
#define SCAN_V_EMPTY (JST_V_DAMAGED + 1)
#define SCAN_TEXT_KERNELS 10 /* kernel names listed per image in text output */

struct scan_totals {
    size_t cuda_files, images, kernels_jit, kernels_dead;
    size_t verdicts[SCAN_V_EMPTY + 1];
};

struct scan {
    unsigned cc;
    int json;
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
    } fs; /* the file being scanned, text output */
};

/* "sass", "ptx_jit", ..., or "empty" for SCAN_V_EMPTY. */
const char *scan_verdict_name(unsigned v);
/* Decides one image for sc->cc and says so: a JSON object, or into the
 * file's text groups (fs). text: PTX text found in a data section. */
void scan_report_image(struct scan *sc, const char *path, size_t offset,
                       const struct jst_image *img, struct file_sass *fs, int text);
/* Text output: the file's groups of images that do not run as SASS. */
void scan_print_groups(const struct scan *sc, struct file_sass *fs);
/* Opens the file's output (its name, or its JSON object) once. */
void scan_file_begin(struct scan *sc, const char *path);

#endif
