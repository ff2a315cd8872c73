/*
 * The known call chain of the end-to-end backtrace test:
 * main (main.c) -> load_catalog (catalog.c) -> open_shard (shard.c) -> cuModuleLoadData.
 * Each call line carries the marker "chain-call" so that the test finds the
 * expected line numbers with grep -n instead of hard-coding them.
 */
#ifndef JST_CHAIN_H
#define JST_CHAIN_H

#include <cuda.h>
#include <stddef.h>

/* The whole file, NUL-terminated, malloc'd; NULL if unreadable (chain_io.c). */
char *chain_read_file(const char *path);
/* cuInit and the primary context of device 0 made current; 0 on success (chain_io.c). */
int chain_driver_setup(void);
/* Sets up the driver and loads the PTX-only image at ptx_path; 0 on success. */
int load_catalog(const char *ptx_path);
/* Loads one image (NUL-terminated PTX) into the current context; 0 on success. */
int open_shard(const char *image);

#endif
