/*
 * Inside the preload: the real driver (interpose/real.c).
 */
#ifndef JST_INTERPOSE_REAL_H
#define JST_INTERPOSE_REAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdatomic.h>
#include "state.h"

/* The real dlsym (dlvsym GLIBC_2.34, else the architecture's oldest version). */
void *jst_real_dlsym(void *handle, const char *name);
/* The real dlsym itself (resolved once), NULL if not found. */
JST_NO_SANITIZE void *jst_real_dlsym_fn(void);
/* Opens the real driver once and resolves every hooked symbol in it.
 * Returns the driver handle or NULL. */
void *jst_driver(void);
/* Says once (stderr when safe, and a note in the trace) what is wrong with
 * the library JITSTALL_REAL_LIBCUDA names, when something is. */
void jst_driver_report(void);
/* A symbol of the real driver, NULL if absent. */
void *jst_driver_sym(const char *name);
/* Is handle (from dlopen) the real driver or any object named libcuda.so*? */
int jst_is_libcuda_handle(void *handle);
/* Does the file name in path (after its last '/') start with prefix? */
int jst_file_named(const char *path, const char *prefix);
/* Device ordinal current on this thread (or 0) and its compute capability
 * (major*10+minor, 0 if unknown), queried once per device through the real driver. */
unsigned jst_current_cc(int *dev_out, uint64_t *ctx_out);
/* Writes one JST_REC_DEVICE per device (after cuInit succeeded). */
void jst_emit_devices(void);
/* cuInit succeeded once in this process. */
extern _Atomic int jst_cuinit_ok;

#endif
