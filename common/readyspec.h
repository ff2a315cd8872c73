/*
 * JITSTALL_READY, the moment a program is ready to serve: its forms, read
 * the same way by the preload and by `jitstall run --ready`
 * (implementation: common/readyspec.c; the record: docs/FORMAT.md, `ready`).
 */
#ifndef JST_COMMON_READYSPEC_H
#define JST_COMMON_READYSPEC_H

#include <stddef.h>
#include <stdint.h>

enum jst_ready_kind {
    JST_READY_NONE = 0, /* unset or empty */
    JST_READY_NVTX,     /* nvtx:NAME: a mark, or the end of the first range, named NAME */
    JST_READY_FILE,     /* file:PATH: when PATH exists */
    JST_READY_AFTER,    /* after:SECONDS: that long after the process started */
    JST_READY_BAD,      /* none of these: why says what is wrong */
};

/* The longest NAME and PATH taken. */
#define JST_READY_ARG_MAX 4095

struct jst_ready_spec {
    enum jst_ready_kind kind;
    const char *arg; /* NAME or PATH, inside the parsed string; NULL for after */
    uint64_t after_ns;
    const char *why; /* JST_READY_BAD: a constant phrase */
};

/* Reads s (NULL or "" is JST_READY_NONE). No allocation: arg points into s. */
void jst_ready_parse(const char *s, struct jst_ready_spec *out);

#endif
