/*
 * JITSTALL_LABELS, "service=db,version=1.2": the user's own labels for
 * fleet metrics and spans (implementation: common/labels.c). Shared by the
 * preload, which writes metrics at exit, and the CLI, which exports them
 * from traces, so both read the variable the same way.
 */
#ifndef JST_COMMON_LABELS_H
#define JST_COMMON_LABELS_H

#include <stddef.h>

/* At most this many labels are taken; more are ignored (bounded series). */
#define JST_MAX_LABELS 8
#define JST_LABEL_NAME_MAX 64
#define JST_LABEL_VALUE_MAX 128

struct jst_label {
    char name[JST_LABEL_NAME_MAX];
    char value[JST_LABEL_VALUE_MAX];
};

/* Parses "k=v,k2=v2" into out (max entries); returns how many were taken.
 * A name must match [a-zA-Z_][a-zA-Z0-9_]* and not start with "__" (reserved
 * by Prometheus), nor be one jitstall sets itself (program, host, gpu_arch,
 * driver_version, verdict, outcome, compiler) or one Prometheus reserves for
 * histograms and summaries (le, quantile); entries that break these rules,
 * or that are too long, are skipped. NULL or "" gives 0. */
size_t jst_parse_labels(const char *s, struct jst_label *out, size_t max);

/* The most bytes jst_prom_value writes for one value, its NUL included. */
#define JST_PROM_VALUE_MAX 512
/* Writes v as the inside of a Prometheus label value into out (cap bytes,
 * at least 1), by the one rule for text from a trace (textrule.h): '\\' and
 * '"' escaped, each byte that is not part of valid UTF-8 replaced by U+FFFD,
 * a control character (a newline, ESC, a C1 or bidirectional control) as
 * text shows it, "\\n", "\\x1b", "\\u202e", so that the value reads as
 * in jitstall's report; cut at a whole character so that it fits,
 * NUL-terminated. Returns the length written. No allocation. */
size_t jst_prom_value(char *out, size_t cap, const char *v);

#endif
