/*
 * Inside the preload: NVTX injection: the program's own ranges (interpose/nvtx.c).
 */
#ifndef JST_INTERPOSE_NVTX_H
#define JST_INTERPOSE_NVTX_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "trace.h"

/* Writes the range records made before the trace file existed; called once
 * the file's opening records are written. */
void jst_nvtx_drain(struct jst_writer *w);
/* Constructor: names this library in NVTX_INJECTION64_PATH, unless a tool
 * is named there already (then a note says ranges are not recorded). */
void jst_nvtx_start(void);
/* The NVTX_INJECTION64_PATH entry of envp that this process set, or NULL. */
const char *jst_nvtx_env_entry(char *const envp[]);

#endif
