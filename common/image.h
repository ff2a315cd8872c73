/*
 * CUDA image inspection and the architecture rules (implementation:
 * common/image.c, common/fatbin.c, common/ptx.c, common/cubin.c, common/arch.c).
 * Shared by the preload, the simulated driver and the CLI. Every offset and
 * length read from an image is checked against the bytes really there.
 */
#ifndef JST_COMMON_IMAGE_H
#define JST_COMMON_IMAGE_H

#include <stddef.h>
#include <stdint.h>
#include "jitstall/format.h"

enum jst_entry_kind { JST_E_PTX = 1, JST_E_CUBIN = 2, JST_E_LTOIR = 8 };
enum jst_compress { JST_Z_NONE = 0, JST_Z_ZSTD = 1, JST_Z_LZ4 = 2 };
/* Arch variant of an entry: plain sm_XY / compute_XY, arch-specific "a", family "f". */
enum jst_arch_variant { JST_A_PLAIN = 0, JST_A_SPECIFIC = 1, JST_A_FAMILY = 2 };

struct jst_entry {
    uint16_t kind;           /* enum jst_entry_kind */
    uint16_t compress;       /* enum jst_compress */
    uint32_t sm;             /* 75, 80, 90, 100, ... */
    uint32_t variant;        /* enum jst_arch_variant */
    const uint8_t *payload;  /* as stored (maybe compressed) */
    size_t payload_size;     /* bytes at payload */
    size_t raw_size;         /* uncompressed size, or payload_size */
    unsigned ptx_isa;        /* PTX: .version as major*10+minor (90 for 9.0), 0 if unknown */
};

struct jst_image {
    unsigned kind;           /* enum jst_image_kind of the outermost container */
    const uint8_t *base;     /* first byte of the image (after following a wrapper) */
    size_t size;             /* total bytes the image spans */
    size_t n_entries;
    struct jst_entry *entries; /* malloc'd; a bare PTX or cubin is one entry */
    int damaged;
    char damage[96];         /* why, when damaged */
};

/* Inspects an image in memory. known_size is the size if the caller knows it
 * (files, cuLibraryLoadData has none), or 0 when the extent must be derived
 * from headers (cuModuleLoadData). Headers only: nothing is decompressed.
 * Returns 0; a damaged image is returned with damaged set, never an error. */
int jst_image_inspect(const void *ptr, size_t known_size, struct jst_image *out);
void jst_image_free(struct jst_image *img);

/* Environment switches that change the driver's choice. */
enum { JST_ENV_FORCE_JIT = 1, JST_ENV_DISABLE_JIT = 2 };
/* Reads CUDA_FORCE_PTX_JIT / CUDA_FORCE_JIT / CUDA_DISABLE_PTX_JIT / CUDA_DISABLE_JIT. */
int jst_env_jit_flags(void);

struct jst_decision {
    unsigned verdict;        /* enum jst_verdict */
    int sass_index;          /* entry used for SASS, or -1 */
    int ptx_index;           /* PTX entry compiled, or -1 */
    char sass_arch[16];      /* "sm_90a" or "" */
    char jit_from[16];       /* "compute_75" or "" */
    char reason[160];        /* one line, e.g. "PTX compute_75 only; GPU is sm_90" */
    unsigned ptx_isa;        /* .version of the PTX entry that would JIT (ptx_index), or 0 */
};
/* Decides what the driver does with img on a device of compute capability cc
 * (major*10+minor, e.g. 90), following NVIDIA's rules (docs/DRIVER.md, "Which image the driver picks"). */
void jst_image_decide(const struct jst_image *img, unsigned cc, int env_flags,
                      struct jst_decision *out);

/* The same, for a driver of CUDA version driver_cuda (cuDriverGetVersion's
 * form, 13000 for 13.0; 0: unknown, not checked): PTX whose .version is newer
 * than that driver supports gets JST_V_PTX_TOO_NEW, the load's
 * CUDA_ERROR_UNSUPPORTED_PTX_VERSION. */
void jst_image_decide_drv(const struct jst_image *img, unsigned cc, int env_flags,
                          unsigned driver_cuda, struct jst_decision *out);

/* Images built for other GPUs: 1 when nothing in img is for cc: no SASS
 * runs on it and no PTX (or LTO-IR) compiles for it, such as [sm_120
 * compute_120] on sm_90. In a file that also carries code that runs on cc,
 * such an image is a variant the program never needs there
 * (JST_V_OTHER_GPUS), not a failure, PTX or not. scan and warm apply this
 * rule per file; the analyzer applies it to a trace's loads per ELF object
 * (analyzer/model.c), since a load in the preload is judged alone. */
int jst_image_for_other_gpus(const struct jst_image *img, unsigned cc);
/* Whether a verdict means the image's code runs on the target (SASS or JIT). */
int jst_verdict_runs(unsigned verdict);

/* PTX ISA versions (common/ptxisa.c), all as major*10+minor for ISAs and
 * cuDriverGetVersion's major*1000+minor*10 for CUDA versions, 0 when unknown.
 * From NVIDIA's PTX ISA release history and the CUDA toolkit release notes
 * (docs/DRIVER.md, "PTX ISA versions and drivers"). */
/* The CUDA release that introduced PTX ISA isa (91 -> 13010). */
unsigned jst_ptx_isa_cuda(unsigned isa);
/* The newest PTX ISA a driver of CUDA version cuda can JIT (13000 -> 90). */
unsigned jst_cuda_max_ptx_isa(unsigned cuda);
/* A driver release ("580.95.05", "550.54") -> the CUDA version it supports,
 * by its branch (the first number): 580 -> 13000. 0 when older than any row. */
unsigned jst_driver_release_cuda(const char *release);
/* The first driver branch for CUDA version cuda (13010 -> 590), 0 if unknown. */
unsigned jst_cuda_min_driver(unsigned cuda);
/* Parses "12.4" or "13.0" (a CUDA version) or "550.54" (a driver release)
 * into a CUDA version; 0 when it is neither. */
unsigned jst_driver_arg_cuda(const char *s);
/* "13.1" from 13010; returns buf. */
const char *jst_cuda_str(char *buf, size_t n, unsigned cuda);
/* The newest CUDA toolkit that still builds SASS for sm (CUDA 13 dropped
 * sm_50-sm_72, CUDA 12 sm_35/sm_37, CUDA 11 sm_30/sm_32), e.g. "CUDA 12.9";
 * NULL when the current toolkit builds it. */
const char *jst_arch_last_toolkit(unsigned sm);

/* Rules. */
int jst_sass_runs_on(unsigned sm, unsigned variant, unsigned cc);
int jst_ptx_jits_to(unsigned sm, unsigned variant, unsigned cc);
/* "sm_90a", "compute_75"; returns buf. */
const char *jst_arch_str(char *buf, size_t n, int ptx, unsigned sm, unsigned variant);
/* Parses "sm_90", "sm_90a", "90", "9.0", "compute_90"; returns cc or 0.
 * Strict: two or three digits without a leading zero after a prefix, a
 * major.minor form only without one ("sm_9.0" and "sm_0100" are refused). */
unsigned jst_arch_parse(const char *s, unsigned *variant);

/* 1 if sm_XY with that variant is an architecture NVIDIA has shipped (a
 * compiler target or a GPU), so that a typo such as sm_999 is refused. */
int jst_arch_known(unsigned sm, unsigned variant);

/* Decompresses entry e into a malloc'd buffer (NUL-terminated for PTX). */
uint8_t *jst_entry_data(const struct jst_entry *e, size_t *len);
/* Kernel names of one entry (PTX .entry lines or cubin symbol table), mangled.
 * Calls cb for each; returns the number found or -1 if damaged. */
int jst_entry_kernels(const struct jst_entry *e,
                      void (*cb)(void *ctx, const char *name, size_t len), void *ctx);
/* Demangles a C++ name into buf; copies it when it is not mangled. */
const char *jst_demangle(const char *name, char *buf, size_t n);
/* The same, whole however long, malloc'd (NULL when out of memory). */
char *jst_demangle_dup(const char *name);

/* Size (header + body) of the fatbin at p if its header is sane and it fits in
 * avail bytes, else 0. Splits an ELF .nv_fatbin section into its fatbins. */
size_t jst_fatbin_size(const void *p, size_t avail);

/* Host ELF files (common/elfdata.c). The section named name (e.g.
 * ".nv_fatbin") of a 64-bit little-endian ELF file of n bytes at p: returns 0
 * with its file offset and size, or -1 (absent, compressed, or out of bounds). */
int jst_elf_section(const uint8_t *p, size_t n, const char *name, size_t *off, size_t *size);
/* PTX text carried as a string in a host ELF file's allocated data (.rodata,
 * .data, ...; never code or .nv_fatbin). jst_elf_data_sections calls cb with
 * the file offset and size of each section searched. jst_ptx_texts_window
 * searches the section [s, e) for strings whose ".version" starts in
 * [from, to), calling cb with the file offset and length (its NUL follows) of
 * each string that opens with .version and has a .target; it returns where
 * the next window starts (past a string that crossed to). Windows let a
 * caller that mapped the file release pages as it goes. jst_elf_ptx_texts
 * does all sections in one go; it returns the number of sections searched. */
size_t jst_elf_data_sections(const uint8_t *p, size_t n,
                             void (*cb)(void *ctx, size_t off, size_t size), void *ctx);
size_t jst_ptx_texts_window(const uint8_t *p, size_t s, size_t e, size_t from, size_t to,
                            void (*cb)(void *ctx, size_t off, size_t len), void *ctx);
size_t jst_elf_ptx_texts(const uint8_t *p, size_t n, void (*cb)(void *ctx, size_t off, size_t len),
                         void *ctx);

/* Fast 64-bit content hash, used to recognise the same module across runs. */
uint64_t jst_hash64(const void *p, size_t n);

#endif
