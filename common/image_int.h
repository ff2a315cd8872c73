/*
 * Internal helpers shared by the image inspection files (image.c, fatbin.c,
 * ptx.c, cubin.c). Not part of the contract: use common/image.h.
 */
#ifndef JST_COMMON_IMAGE_INT_H
#define JST_COMMON_IMAGE_INT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "image.h"

#define FATBIN_WRAPPER_MAGIC 0x466243B1u
#define FATBIN_MAGIC 0xBA55ED50u
#define FATBIN_HDR_SIZE 16
#define FATBIN_ENTRY_MIN_HDR 64
#define FATBIN_FLAG_LZ4 0x2000u
#define FATBIN_FLAG_ZSTD 0x8000u
#define FATBIN_FLAG_ARCH_SPECIFIC 0x100000u
#define FATBIN_FLAG_FAMILY 0x200000u
#define EM_CUDA_MACHINE 190
#define STO_CUDA_ENTRY_FLAG 0x10

/* With known_size == 0 the extent comes from headers; beyond this it is not
 * believed (a real fatbin, cubin or PTX module is far smaller). */
#define JST_MAX_DERIVED_SIZE ((size_t)1 << 31)
/* Largest buffer jst_entry_data will allocate for one entry. */
#define JST_MAX_RAW_SIZE ((size_t)1 << 31)

static inline uint16_t jst_rd16(const uint8_t *p)
{
    uint16_t v;
    memcpy(&v, p, 2);
    return v;
}
static inline uint32_t jst_rd32(const uint8_t *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}
static inline uint64_t jst_rd64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

/* May [p, p+n) of this process be read without a fault? For extents taken
 * from an unsized image's own headers (common/memprobe.c). */
int jst_mem_readable(const void *p, size_t n);

/* Marks img damaged with a printf-style reason (the first reason wins). */
void jst_image_damage(struct jst_image *img, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Appends an entry; returns 0, or -1 (and marks img damaged) when out of memory. */
int jst_image_add(struct jst_image *img, const struct jst_entry *e);

/* Fatbin: size of the header-declared extent, or 0 if p is not a sane fatbin header. */
size_t fatbin_extent(const uint8_t *p);
/* Parses one fatbin (many == 0) or several back to back, 8-byte aligned, in
 * avail bytes (many == 1). Entries are appended to img; damage is recorded in img. */
void fatbin_parse(const uint8_t *p, size_t avail, int many, struct jst_image *img);

/* PTX text: does p start with optional whitespace/comments then ".version"?
 * Reads at most avail bytes and stops at a NUL. */
int ptx_detect(const uint8_t *p, size_t avail);
/* Finds ".target sm_XY[a|f]" in the first directives; returns 0 or -1. */
int ptx_target(const char *p, size_t n, unsigned *sm, unsigned *variant);
/* Reads ".version X.Y" at the start of PTX text; returns X*10+Y, or 0. */
unsigned ptx_version(const char *p, size_t n);
/* Kernel names from .entry directives; returns the count. */
int ptx_kernels(const char *p, size_t n, void (*cb)(void *, const char *, size_t), void *ctx);

/* Cubin: extent derived from the ELF header and section/program header tables
 * (for known_size == 0), or 0 if not sane. */
size_t cubin_extent(const uint8_t *p);
/* Checks an ELF cubin of n bytes; fills sm and variant. Returns 0, or -1 with why. */
int cubin_check(const uint8_t *p, size_t n, unsigned *sm, unsigned *variant, char *why,
                size_t whyn);
/* Kernel names: STT_FUNC symbols marked STO_CUDA_ENTRY. Returns the count or -1. */
int cubin_kernels(const uint8_t *p, size_t n, void (*cb)(void *, const char *, size_t), void *ctx);

#endif
