/*
 * Cubin (CUDA ELF, e_machine 190) reading: sanity checks of the ELF header and
 * section table against the bytes there, the SM from e_flags, the "a"/"f"
 * variant from ptxas's notes, and kernel names from the symbol table.
 */
#include <elf.h>
#include <stdio.h>
#include "image_int.h"

/* Section header fields used here (ELF64, little endian). */
struct sec {
    uint32_t name, type;
    uint64_t off, size;
    uint32_t link;
    uint64_t entsize;
};

static void read_sec(const uint8_t *sh, struct sec *s)
{
    s->name = jst_rd32(sh + 0);
    s->type = jst_rd32(sh + 4);
    s->off = jst_rd64(sh + 24);
    s->size = jst_rd64(sh + 32);
    s->link = jst_rd32(sh + 40);
    s->entsize = jst_rd64(sh + 56);
}

static int elf_ident_ok(const uint8_t *p)
{
    return memcmp(p, ELFMAG, SELFMAG) == 0 && p[EI_CLASS] == ELFCLASS64 &&
           p[EI_DATA] == ELFDATA2LSB && jst_rd16(p + 18) == EM_CUDA_MACHINE;
}

/* Is [off, off+len) inside [0, n)? */
static int in_bounds(uint64_t off, uint64_t len, size_t n)
{
    return off <= n && len <= n - off;
}

/* For an image of unknown size: every read beyond the 64-byte ELF header
 * (which the caller has read) is first checked to be mapped memory. */
size_t cubin_extent(const uint8_t *p)
{
    if (!elf_ident_ok(p))
        return 0;
    uint64_t phoff = jst_rd64(p + 32), shoff = jst_rd64(p + 40);
    uint16_t phentsize = jst_rd16(p + 54), phnum = jst_rd16(p + 56);
    uint16_t shentsize = jst_rd16(p + 58), shnum = jst_rd16(p + 60);
    const uint64_t lim = JST_MAX_DERIVED_SIZE;
    uint64_t ext = 64;
    if (phnum) {
        if (phoff > lim || phentsize > 1024)
            return 0;
        uint64_t e = phoff + (uint64_t)phnum * phentsize;
        ext = e > ext ? e : ext;
    }
    if (shoff) {
        if (shoff > lim || shentsize != 64 || !jst_mem_readable(p, shoff + 64))
            return 0;
        uint64_t count = shnum;
        if (count == 0) /* extended numbering: the count is in section 0 */
            count = jst_rd64(p + shoff + 32);
        /* The image is one piece of memory of unknown size: from its start
         * to the end of the table, all of it must be readable. */
        if (count > 65536 || !jst_mem_readable(p, shoff + count * 64))
            return 0;
        uint64_t e = shoff + count * 64;
        ext = e > ext ? e : ext;
        for (uint64_t i = 0; i < count; i++) {
            struct sec s;
            read_sec(p + shoff + i * 64, &s);
            if (s.type == SHT_NOBITS || s.type == SHT_NULL)
                continue;
            if (s.off > lim || s.size > lim)
                return 0;
            e = s.off + s.size;
            ext = e > ext ? e : ext;
        }
    }
    return ext > lim ? 0 : (size_t)ext;
}

/* The checked view of a cubin's section table. */
struct elfv {
    const uint8_t *p;
    size_t n;
    uint64_t shoff, shnum;
    const uint8_t *shstr;
    size_t shstr_size;
};

static int elfv_open(struct elfv *v, const uint8_t *p, size_t n, char *why, size_t whyn)
{
    memset(v, 0, sizeof(*v));
    v->p = p;
    v->n = n;
    if (n < 64) {
        snprintf(why, whyn, "cubin truncated (%zu bytes)", n);
        return -1;
    }
    if (!elf_ident_ok(p)) {
        snprintf(why, whyn, "not a 64-bit little-endian CUDA ELF");
        return -1;
    }
    v->shoff = jst_rd64(p + 40);
    uint16_t shentsize = jst_rd16(p + 58);
    v->shnum = jst_rd16(p + 60);
    uint32_t shstrndx = jst_rd16(p + 62);
    uint64_t phoff = jst_rd64(p + 32);
    uint16_t phentsize = jst_rd16(p + 54), phnum = jst_rd16(p + 56);
    if (phnum && (phentsize < 56 || !in_bounds(phoff, (uint64_t)phnum * phentsize, n))) {
        snprintf(why, whyn, "cubin program headers outside the %zu bytes", n);
        return -1;
    }
    if (v->shoff == 0) {
        v->shnum = 0;
        return 0;
    }
    if (shentsize != 64 || !in_bounds(v->shoff, 64, n)) {
        snprintf(why, whyn, "cubin section table outside the %zu bytes", n);
        return -1;
    }
    if (v->shnum == 0)
        v->shnum = jst_rd64(p + v->shoff + 32);
    if (shstrndx == SHN_XINDEX)
        shstrndx = jst_rd32(p + v->shoff + 40);
    if (v->shnum > 65536 || !in_bounds(v->shoff, v->shnum * 64, n)) {
        snprintf(why, whyn, "cubin section table outside the %zu bytes", n);
        return -1;
    }
    for (uint64_t i = 0; i < v->shnum; i++) {
        struct sec s;
        read_sec(p + v->shoff + i * 64, &s);
        if (s.type != SHT_NOBITS && s.type != SHT_NULL && !in_bounds(s.off, s.size, n)) {
            snprintf(why, whyn, "cubin section %llu outside the %zu bytes", (unsigned long long)i,
                     n);
            return -1;
        }
    }
    if (shstrndx < v->shnum) {
        struct sec s;
        read_sec(p + v->shoff + (uint64_t)shstrndx * 64, &s);
        if (s.type == SHT_STRTAB) {
            v->shstr = p + s.off;
            v->shstr_size = (size_t)s.size;
        }
    }
    return 0;
}

static void elfv_sec(const struct elfv *v, uint64_t i, struct sec *s)
{
    read_sec(v->p + v->shoff + i * 64, s);
}

/* Does section s have bytes in the file? Only those were checked against the
 * image by elfv_open: a NOBITS or NULL section's offset and size are not. */
static int sec_has_bytes(const struct elfv *v, const struct sec *s)
{
    return s->type != SHT_NOBITS && s->type != SHT_NULL && in_bounds(s->off, s->size, v->n);
}

/* Does section s have the given name? Bounded by the string table. */
static int sec_named(const struct elfv *v, const struct sec *s, const char *name)
{
    size_t k = strlen(name);
    if (!v->shstr || s->name >= v->shstr_size || v->shstr_size - s->name < k + 1)
        return 0;
    return memcmp(v->shstr + s->name, name, k + 1) == 0;
}

/* ptxas records its command line ("-arch sm_90a -m 64") in .note.nv.tkinfo. */
static int variant_from_tkinfo(const uint8_t *d, size_t n, unsigned *variant)
{
    static const char pat[] = "-arch sm_";
    const size_t k = sizeof(pat) - 1;
    for (size_t i = 0; i + k < n; i++) {
        if (d[i] != '-' || memcmp(d + i, pat, k) != 0)
            continue;
        size_t j = i + k;
        while (j < n && d[j] >= '0' && d[j] <= '9')
            j++;
        *variant = JST_A_PLAIN;
        if (j < n && d[j] == 'a')
            *variant = JST_A_SPECIFIC;
        else if (j < n && d[j] == 'f')
            *variant = JST_A_FAMILY;
        return 0;
    }
    return -1;
}

/* Fallback: .nv.compat attribute 0x09 (one-byte value) is 1 for arch-specific code. */
static int variant_from_compat(const uint8_t *d, size_t n, unsigned *variant)
{
    size_t i = 0;
    while (n - i >= 4) {
        uint8_t fmt = d[i], attr = d[i + 1];
        if (fmt == 2 && attr == 0x09) {
            *variant = d[i + 2] == 1 ? JST_A_SPECIFIC : JST_A_PLAIN;
            return 0;
        }
        size_t step = 4;
        if (fmt == 4)
            step += jst_rd16(d + i + 2);
        if (step > n - i)
            break;
        i += step;
    }
    return -1;
}

int cubin_check(const uint8_t *p, size_t n, unsigned *sm, unsigned *variant, char *why, size_t whyn)
{
    struct elfv v;
    if (elfv_open(&v, p, n, why, whyn) != 0)
        return -1;
    uint32_t flags = jst_rd32(p + 48);
    /* ELF ABI version 8 (CUDA 12.8+) moved the SM to bits 8..15. */
    *sm = p[EI_ABIVERSION] >= 8 ? (flags >> 8) & 0xff : flags & 0xff;
    *variant = JST_A_PLAIN;
    int have = 0;
    for (uint64_t i = 0; i < v.shnum && !have; i++) {
        struct sec s;
        elfv_sec(&v, i, &s);
        if (s.type == SHT_NOTE && sec_has_bytes(&v, &s) && sec_named(&v, &s, ".note.nv.tkinfo"))
            have = variant_from_tkinfo(p + s.off, (size_t)s.size, variant) == 0;
    }
    for (uint64_t i = 0; i < v.shnum && !have; i++) {
        struct sec s;
        elfv_sec(&v, i, &s);
        if (sec_has_bytes(&v, &s) && sec_named(&v, &s, ".nv.compat"))
            have = variant_from_compat(p + s.off, (size_t)s.size, variant) == 0;
    }
    return 0;
}

int cubin_kernels(const uint8_t *p, size_t n, void (*cb)(void *, const char *, size_t), void *ctx)
{
    struct elfv v;
    char why[64];
    if (elfv_open(&v, p, n, why, sizeof(why)) != 0)
        return -1;
    int count = 0;
    for (uint64_t i = 0; i < v.shnum; i++) {
        struct sec s, str;
        elfv_sec(&v, i, &s);
        if (s.type != SHT_SYMTAB)
            continue;
        if (s.entsize != sizeof(Elf64_Sym) || s.link >= v.shnum)
            return -1;
        elfv_sec(&v, s.link, &str);
        if (str.type != SHT_STRTAB)
            return -1;
        const uint8_t *syms = p + s.off, *strs = p + str.off;
        size_t nsym = (size_t)(s.size / sizeof(Elf64_Sym)), strsz = (size_t)str.size;
        for (size_t k = 0; k < nsym; k++) {
            const uint8_t *sym = syms + k * sizeof(Elf64_Sym);
            uint32_t name = jst_rd32(sym);
            uint8_t info = sym[4], other = sym[5];
            uint16_t shndx = jst_rd16(sym + 6);
            if (ELF64_ST_TYPE(info) != STT_FUNC || !(other & STO_CUDA_ENTRY_FLAG) ||
                shndx == SHN_UNDEF)
                continue;
            if (name >= strsz)
                return -1;
            const uint8_t *nm = strs + name;
            const uint8_t *nul = memchr(nm, 0, strsz - name);
            if (!nul)
                return -1;
            if (cb)
                cb(ctx, (const char *)nm, (size_t)(nul - nm));
            count++;
        }
    }
    return count;
}
