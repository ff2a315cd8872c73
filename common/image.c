/*
 * jst_image_inspect: recognises what a load was given (fatbin wrapper, fatbin,
 * PTX text, cubin) and lists its entries from headers alone. Also the lazy
 * parts: decompressing one entry and listing its kernel names.
 */
#include <elf.h>
#include <limits.h>
#include <lz4.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <zstd.h>
#include "image_int.h"

void jst_image_damage(struct jst_image *img, const char *fmt, ...)
{
    if (img->damaged)
        return;
    img->damaged = 1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(img->damage, sizeof(img->damage), fmt, ap);
    va_end(ap);
}

int jst_image_add(struct jst_image *img, const struct jst_entry *e)
{
    size_t n = img->n_entries;
    /* Capacity is implicit: 4, then doubled whenever n reaches a power of two. */
    if (n == 0 || (n >= 4 && (n & (n - 1)) == 0)) {
        size_t cap = n ? n * 2 : 4;
        struct jst_entry *ne = realloc(img->entries, cap * sizeof(*ne));
        if (!ne) {
            jst_image_damage(img, "out of memory listing entries");
            return -1;
        }
        img->entries = ne;
    }
    img->entries[n] = *e;
    img->n_entries = n + 1;
    return 0;
}

static void inspect_ptx(const uint8_t *p, size_t known, struct jst_image *img)
{
    /* A PTX string ends at its NUL (what the driver reads) or at the known end. */
    size_t len =
        known ? strnlen((const char *)p, known) : strnlen((const char *)p, JST_MAX_DERIVED_SIZE);
    if (!known && len == JST_MAX_DERIVED_SIZE) {
        jst_image_damage(img, "PTX text without a NUL in %zu bytes", len);
        return;
    }
    img->kind = JST_IMG_PTX;
    img->size = known ? known : len + 1;
    struct jst_entry e = {0};
    e.kind = JST_E_PTX;
    e.compress = JST_Z_NONE;
    e.payload = p;
    e.payload_size = len;
    e.raw_size = len;
    e.ptx_isa = ptx_version((const char *)p, len);
    if (ptx_target((const char *)p, len, &e.sm, &e.variant) != 0) {
        jst_image_damage(img, "PTX without a .target sm_XY directive");
        return;
    }
    jst_image_add(img, &e);
}

/* The size of an image in live memory: known, or what its headers say
 * (extent), checked to be readable. 0 when neither holds: the damage is
 * then said with insane (no size) or "<claims> N bytes, past ...". */
static size_t image_extent(const uint8_t *p, size_t known, size_t (*extent)(const uint8_t *),
                           const char *insane, const char *claims, struct jst_image *img)
{
    if (known)
        return known;
    size_t n = extent(p);
    if (!n)
        jst_image_damage(img, "%s", insane);
    else if (!jst_mem_readable(p, n))
        jst_image_damage(img, "%s %zu bytes, past readable memory", claims, n);
    else
        return n;
    return 0;
}

static void inspect_cubin(const uint8_t *p, size_t known, struct jst_image *img)
{
    img->kind = JST_IMG_CUBIN;
    size_t n = image_extent(p, known, cubin_extent, "cubin headers give no sane extent",
                            "cubin headers claim", img);
    if (!n)
        return;
    img->size = n;
    struct jst_entry e = {0};
    e.kind = JST_E_CUBIN;
    e.payload = p;
    e.payload_size = n;
    e.raw_size = n;
    char why[80];
    if (cubin_check(p, n, &e.sm, &e.variant, why, sizeof(why)) != 0) {
        jst_image_damage(img, "%s", why);
        return;
    }
    jst_image_add(img, &e);
}

static void inspect_fatbin(const uint8_t *p, size_t known, struct jst_image *img)
{
    size_t n = image_extent(p, known, fatbin_extent, "fatbin header gives no sane size",
                            "fatbin header claims", img);
    if (!n)
        return;
    img->size = n;
    fatbin_parse(p, n, known != 0, img);
}

/* A __fatBinC_Wrapper_t in live memory: its data pointer leads to the
 * fatbin. In bytes from a file the pointer means nothing. */
static void inspect_wrapper(const uint8_t *p, size_t known, struct jst_image *img)
{
    img->kind = JST_IMG_FATBIN_WRAPPER;
    if (known) {
        /* Bytes from a file or a sized buffer: the pointer inside means nothing. */
        img->size = known;
        jst_image_damage(img, "fatbin wrapper outside a live process (pointer not followed)");
        return;
    }
    const uint8_t *fb = (const uint8_t *)(uintptr_t)jst_rd64(p + 8);
    if (!fb) {
        jst_image_damage(img, "fatbin wrapper with a null data pointer");
        return;
    }
    img->base = fb;
    if (!jst_mem_readable(fb, FATBIN_HDR_SIZE)) {
        jst_image_damage(img, "fatbin wrapper data pointer is not readable memory");
        return;
    }
    if (jst_rd32(fb) != FATBIN_MAGIC) {
        jst_image_damage(img, "fatbin wrapper data has no fatbin magic");
        return;
    }
    inspect_fatbin(fb, 0, img);
}

int jst_image_inspect(const void *ptr, size_t known_size, struct jst_image *out)
{
    memset(out, 0, sizeof(*out));
    const uint8_t *p = ptr;
    out->base = p;
    out->kind = JST_IMG_UNKNOWN;
    if (!p) {
        jst_image_damage(out, "null image pointer");
        return 0;
    }
    /* With a known size, never look at more than 4 bytes before checking it. */
    if (known_size && known_size < 4) {
        out->size = known_size;
        jst_image_damage(out, "image of %zu bytes is too small", known_size);
        return 0;
    }
    /* Without a size, a NUL in the first four bytes means text shorter than
     * any binary magic (none of them holds a zero byte): read no further
     * than that NUL. */
    if (!known_size && strnlen((const char *)p, 4) < 4) {
        size_t n = strnlen((const char *)p, 4);
        out->size = n + 1;
        jst_image_damage(out, "text of %zu bytes, not an image", n);
        return 0;
    }
    uint32_t magic = jst_rd32(p);
    if (magic == FATBIN_WRAPPER_MAGIC) {
        inspect_wrapper(p, known_size, out);
        return 0;
    }
    if (magic == FATBIN_MAGIC) {
        out->kind = JST_IMG_FATBIN;
        if (known_size ? known_size < FATBIN_HDR_SIZE : !jst_mem_readable(p, FATBIN_HDR_SIZE)) {
            out->size = known_size;
            jst_image_damage(out, "fatbin header truncated (%zu bytes)", known_size);
            return 0;
        }
        inspect_fatbin(p, known_size, out);
        return 0;
    }
    if (memcmp(p, ELFMAG, 4) == 0) {
        out->kind = JST_IMG_CUBIN;
        if (known_size ? known_size < 64 : !jst_mem_readable(p, 64)) {
            out->size = known_size;
            jst_image_damage(out, "ELF header truncated (%zu bytes)", known_size);
            return 0;
        }
        uint16_t machine = jst_rd16(p + 18);
        if (machine != EM_CUDA_MACHINE) {
            out->size = known_size;
            jst_image_damage(out, "ELF for machine %u, not a CUDA cubin", machine);
            return 0;
        }
        inspect_cubin(p, known_size, out);
        return 0;
    }
    /* Without a size the image is PTX text only up to its NUL, as the driver
     * reads it: never look past that. */
    if (ptx_detect(p, known_size ? known_size : strnlen((const char *)p, 65536))) {
        inspect_ptx(p, known_size, out);
        return 0;
    }
    out->size = known_size;
    jst_image_damage(out, "unknown image format (first bytes %02x %02x %02x %02x)", p[0], p[1],
                     p[2], p[3]);
    return 0;
}

void jst_image_free(struct jst_image *img)
{
    if (!img)
        return;
    free(img->entries);
    img->entries = NULL;
    img->n_entries = 0;
}

uint8_t *jst_entry_data(const struct jst_entry *e, size_t *len)
{
    if (len)
        *len = 0;
    if (!e || !e->payload || e->raw_size > JST_MAX_RAW_SIZE)
        return NULL;
    size_t cap = e->compress == JST_Z_NONE ? e->payload_size : e->raw_size;
    /* Check the claimed size against what the codec can produce before
     * allocating it: a damaged header must not cost gigabytes. */
    if (e->compress == JST_Z_ZSTD) {
        unsigned long long fcs = ZSTD_getFrameContentSize(e->payload, e->payload_size);
        if (fcs == ZSTD_CONTENTSIZE_ERROR)
            return NULL;
        if (fcs == ZSTD_CONTENTSIZE_UNKNOWN ? cap / 64 > e->payload_size
                                            : fcs != (unsigned long long)cap)
            return NULL;
    } else if (e->compress == JST_Z_LZ4) {
        if (cap / 255 > e->payload_size + 16) /* LZ4's largest ratio is about 255:1 */
            return NULL;
    }
    uint8_t *dst = malloc(cap + 1);
    if (!dst)
        return NULL;
    size_t got = 0;
    if (e->compress == JST_Z_NONE) {
        memcpy(dst, e->payload, cap);
        got = cap;
    } else if (e->compress == JST_Z_ZSTD) {
        size_t r = ZSTD_decompress(dst, cap, e->payload, e->payload_size);
        if (ZSTD_isError(r))
            goto fail;
        got = r;
    } else if (e->compress == JST_Z_LZ4) {
        if (e->payload_size > INT_MAX || cap > INT_MAX)
            goto fail;
        int r = LZ4_decompress_safe((const char *)e->payload, (char *)dst, (int)e->payload_size,
                                    (int)cap);
        if (r < 0)
            goto fail;
        got = (size_t)r;
    } else {
        goto fail;
    }
    dst[got] = 0;
    if (e->kind == JST_E_PTX)
        got = strnlen((const char *)dst, got); /* the stored text may carry NUL padding */
    if (len)
        *len = got;
    return dst;
fail:
    free(dst);
    return NULL;
}

int jst_entry_kernels(const struct jst_entry *e,
                      void (*cb)(void *ctx, const char *name, size_t len), void *ctx)
{
    if (!e || !e->payload)
        return -1;
    if (e->kind == JST_E_LTOIR)
        return 0; /* NVVM bitcode: names are not read here */
    const uint8_t *d = e->payload;
    size_t n = e->payload_size;
    uint8_t *buf = NULL;
    if (e->compress != JST_Z_NONE) {
        buf = jst_entry_data(e, &n);
        if (!buf)
            return -1;
        d = buf;
    }
    int r = -1;
    if (e->kind == JST_E_PTX)
        r = ptx_kernels((const char *)d, n, cb, ctx);
    else if (e->kind == JST_E_CUBIN)
        r = cubin_kernels(d, n, cb, ctx);
    free(buf);
    return r;
}
