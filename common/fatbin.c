/*
 * Fatbin container walking (magic 0xBA55ED50): the 16-byte fatbin header, then
 * entry headers (PTX, cubin, LTO-IR), each checked against the bytes there.
 * Headers only: payloads are neither read nor decompressed here.
 */
#include <stdio.h>
#include "image_int.h"

size_t fatbin_extent(const uint8_t *p)
{
    if (jst_rd32(p) != FATBIN_MAGIC)
        return 0;
    uint16_t hsize = jst_rd16(p + 6);
    uint64_t size = jst_rd64(p + 8);
    if (hsize < FATBIN_HDR_SIZE || size > JST_MAX_DERIVED_SIZE)
        return 0;
    return (size_t)hsize + (size_t)size;
}

size_t jst_fatbin_size(const void *ptr, size_t avail)
{
    const uint8_t *p = ptr;
    if (!p || avail < FATBIN_HDR_SIZE)
        return 0;
    size_t ext = fatbin_extent(p);
    return ext <= avail ? ext : 0;
}

static int all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return 0;
    return 1;
}

/* One entry header at p with room bytes up to the end of its fatbin.
 * Returns the bytes it spans, or 0 when damaged. */
static size_t parse_entry(const uint8_t *p, size_t room, size_t at, struct jst_image *img)
{
    if (room < FATBIN_ENTRY_MIN_HDR) {
        jst_image_damage(img, "truncated entry header at offset %zu", at);
        return 0;
    }
    uint16_t kind = jst_rd16(p);
    uint32_t hsz = jst_rd32(p + 4);
    uint64_t psz = jst_rd64(p + 8);
    uint32_t csz = jst_rd32(p + 0x10);
    uint32_t sm = jst_rd32(p + 0x1C);
    uint64_t flags = jst_rd64(p + 0x28);
    uint64_t usz = jst_rd64(p + 0x38);
    if (hsz < FATBIN_ENTRY_MIN_HDR || hsz > room) {
        jst_image_damage(img, "entry at offset %zu: header size %u invalid", at, hsz);
        return 0;
    }
    if (psz > room - hsz) {
        jst_image_damage(img, "entry at offset %zu: payload %llu bytes, only %zu there", at,
                         (unsigned long long)psz, room - hsz);
        return 0;
    }
    size_t span = hsz + (size_t)psz;
    if (kind != JST_E_PTX && kind != JST_E_CUBIN && kind != JST_E_LTOIR)
        return span; /* unknown kinds are skipped, as the driver ignores them */

    struct jst_entry e = {0};
    e.kind = kind;
    e.sm = sm;
    e.variant = (flags & FATBIN_FLAG_ARCH_SPECIFIC) ? JST_A_SPECIFIC
                : (flags & FATBIN_FLAG_FAMILY)      ? JST_A_FAMILY
                                                    : JST_A_PLAIN;
    e.payload = p + hsz;
    /* A PTX entry's header carries its .version: minor at 0x18, major at 0x1A. */
    if (kind == JST_E_PTX) {
        unsigned minor = jst_rd16(p + 0x18), major = jst_rd16(p + 0x1A);
        e.ptx_isa = major && minor < 10 ? major * 10 + minor : 0;
    }
    if ((flags & FATBIN_FLAG_LZ4) && (flags & FATBIN_FLAG_ZSTD)) {
        jst_image_damage(img, "entry at offset %zu: both LZ4 and zstd flags", at);
        return 0;
    }
    if (flags & (FATBIN_FLAG_LZ4 | FATBIN_FLAG_ZSTD)) {
        e.compress = (flags & FATBIN_FLAG_ZSTD) ? JST_Z_ZSTD : JST_Z_LZ4;
        if (csz == 0 || csz > psz) {
            jst_image_damage(img, "entry at offset %zu: compressed size %u invalid", at, csz);
            return 0;
        }
        if (usz == 0 || usz > JST_MAX_RAW_SIZE) {
            jst_image_damage(img, "entry at offset %zu: uncompressed size %llu invalid", at,
                             (unsigned long long)usz);
            return 0;
        }
        e.payload_size = csz;
        e.raw_size = (size_t)usz;
    } else {
        e.compress = JST_Z_NONE;
        e.payload_size = (size_t)psz;
        e.raw_size = (size_t)psz;
        /* Stored PTX is NUL-padded: its text size ends at the last non-NUL byte. */
        if (kind == JST_E_PTX)
            while (e.raw_size && e.payload[e.raw_size - 1] == 0)
                e.raw_size--;
        /* A cubin stored plain must at least look like ELF (4 bytes, still a header). */
        if (kind == JST_E_CUBIN && (psz < 4 || memcmp(e.payload, "\177ELF", 4) != 0)) {
            jst_image_damage(img, "entry at offset %zu: cubin payload is not ELF", at);
            return 0;
        }
    }
    if (jst_image_add(img, &e) != 0)
        return 0;
    return span;
}

void fatbin_parse(const uint8_t *p, size_t avail, int many, struct jst_image *img)
{
    size_t off = 0;
    for (;;) {
        size_t left = avail - off;
        if (left < FATBIN_HDR_SIZE) {
            jst_image_damage(img, "truncated fatbin header at offset %zu", off);
            return;
        }
        if (jst_rd32(p + off) != FATBIN_MAGIC) {
            jst_image_damage(img, "no fatbin magic at offset %zu", off);
            return;
        }
        uint16_t hsize = jst_rd16(p + off + 6);
        uint64_t size = jst_rd64(p + off + 8);
        if (hsize < FATBIN_HDR_SIZE || hsize > left) {
            jst_image_damage(img, "fatbin at offset %zu: header size %u invalid", off, hsize);
            return;
        }
        if (size > left - hsize) {
            jst_image_damage(img, "fatbin at offset %zu: size %llu, only %zu bytes there", off,
                             (unsigned long long)size, left - hsize);
            return;
        }
        size_t s = off + hsize, end = s + (size_t)size;
        while (s < end) {
            size_t n = parse_entry(p + s, end - s, s, img);
            if (!n)
                return;
            s += n;
        }
        off = end;
        if (!many)
            return;
        /* The next fatbin starts 8-byte aligned; linkers may pad with more zeros. */
        off += (8 - (off & 7)) & 7;
        if (off >= avail || all_zero(p + off, avail - off))
            return;
        while (avail - off >= 8 && jst_rd64(p + off) == 0)
            off += 8;
    }
}
