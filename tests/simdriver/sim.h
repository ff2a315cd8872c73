/*
 * Internal interface of the simulated driver (tests/simdriver): the on-disk
 * JIT cache that sim_cache.c keeps the way the real driver does. Not a
 * contract of jitstall; only sim.c and test_sim.c include it.
 */
#ifndef JST_SIM_H
#define JST_SIM_H

#include <stdint.h>

/* Cache settings, read from the environment once, at cuInit. */
struct sim_cache_cfg {
    int disabled;       /* CUDA_CACHE_DISABLE set and not "0" */
    uint64_t max_bytes; /* CUDA_CACHE_MAXSIZE: default 1 GiB, capped at 4 GiB */
    int have_path;      /* 0 when neither CUDA_CACHE_PATH nor HOME is set */
    char path[4096];    /* CUDA_CACHE_PATH, or $HOME/.nv/ComputeCache */
};

void sim_cache_config(struct sim_cache_cfg *c);

/* Size of the "SASS" entry stored for ptx_size bytes of PTX: 25/16 of the PTX,
 * as measured on the H200, never under 16 KiB (common/jitcache.c judges "too
 * small" with a slightly lower estimate, 1.5 times). */
uint64_t sim_cache_entry_size(uint64_t ptx_size);

/* 1 when an intact entry for (key, cc) is in the cache, else 0. */
int sim_cache_lookup(const struct sim_cache_cfg *c, uint64_t key, unsigned cc);

/* Stores the entry for (key, cc) compiled from ptx_size bytes of PTX, evicting
 * the oldest entries to stay under max_bytes. Silent like the real driver:
 * returns 1 when stored, 0 when not (disabled, too large, not writable). */
int sim_cache_store(const struct sim_cache_cfg *c, uint64_t key, unsigned cc, uint64_t ptx_size);

/* Relative path of the entry for (key, cc): "ab/cd/0123456789abcd". */
void sim_cache_entry_name(uint64_t key, unsigned cc, char out[24]);

/* NVIDIA's rules as the simulated driver keeps them (sim_rules.c), apart
 * from common/arch.c's: what a load of img on a device of compute capability
 * cc does under a driver of CUDA version driver (13000 for 13.0). */
struct jst_image;
enum sim_pick {
    SIM_PICK_SASS = 1,
    SIM_PICK_JIT,
    SIM_PICK_NO_BINARY,    /* CUDA_ERROR_NO_BINARY_FOR_GPU */
    SIM_PICK_JIT_DISABLED, /* CUDA_ERROR_JIT_COMPILATION_DISABLED */
    SIM_PICK_PTX_TOO_NEW,  /* CUDA_ERROR_UNSUPPORTED_PTX_VERSION */
    SIM_PICK_INVALID,      /* CUDA_ERROR_INVALID_IMAGE */
};
/* Returns an enum sim_pick; *sass and *ptx are the entries used, or -1. */
int sim_choose(const struct jst_image *img, unsigned cc, int env_flags, unsigned driver, int *sass,
               int *ptx);
int sim_sass_ok(unsigned sm, unsigned variant, unsigned cc);
int sim_ptx_ok(unsigned sm, unsigned variant, unsigned cc);
/* 1 when a driver of CUDA version driver JITs PTX of ISA isa (x10). */
int sim_ptx_isa_ok(unsigned isa, unsigned driver);
/* 1 when cc is a compute capability some GPU reports. */
int sim_cc_known(unsigned cc);

#endif
