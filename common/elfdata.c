/*
 * Host ELF files as the driver's callers see them: a section by name (the
 * .nv_fatbin that cudart registers) and PTX text carried as a string in an
 * object's data, which a program hands to cuModuleLoadData itself (NVIDIA's
 * matrixMulDynlinkJIT sample does). Every offset and size read from the file
 * is checked against the bytes really there.
 */
#include <elf.h>
#include <string.h>
#include "image_int.h"

/* Longest comment block allowed before ".version" in a PTX string: the same
 * bound ptx_detect() uses. */
#define ELF_PTX_LEAD_MAX 65536u

struct elf_shdrs {
    const uint8_t *p;
    size_t n;
    uint64_t shoff, shnum;
    Elf64_Shdr str; /* the section-name string table */
};

/* Validates the ELF header and the section table; returns 0 or -1. */
static int elf_open(const uint8_t *p, size_t n, struct elf_shdrs *t)
{
    if (n < sizeof(Elf64_Ehdr) || memcmp(p, ELFMAG, SELFMAG) || p[EI_CLASS] != ELFCLASS64 ||
        p[EI_DATA] != ELFDATA2LSB)
        return -1;
    Elf64_Ehdr eh;
    memcpy(&eh, p, sizeof(eh));
    if (!eh.e_shoff || eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shoff > n)
        return -1;
    Elf64_Shdr sh;
    if (n - eh.e_shoff < sizeof(sh))
        return -1;
    memcpy(&sh, p + eh.e_shoff, sizeof(sh));
    uint64_t shnum = eh.e_shnum ? eh.e_shnum : sh.sh_size;
    uint32_t strndx = eh.e_shstrndx == SHN_XINDEX ? sh.sh_link : eh.e_shstrndx;
    if (shnum > (n - eh.e_shoff) / sizeof(sh) || strndx >= shnum)
        return -1;
    memcpy(&t->str, p + eh.e_shoff + (uint64_t)strndx * sizeof(sh), sizeof(t->str));
    if (t->str.sh_offset > n || t->str.sh_size > n - t->str.sh_offset)
        return -1;
    t->p = p;
    t->n = n;
    t->shoff = eh.e_shoff;
    t->shnum = shnum;
    return 0;
}

/* Section i's header; 0 if its name and its bytes lie inside the file. */
static int elf_shdr(const struct elf_shdrs *t, uint64_t i, Elf64_Shdr *sh, const char **name)
{
    memcpy(sh, t->p + t->shoff + i * sizeof(*sh), sizeof(*sh));
    if (sh->sh_name >= t->str.sh_size)
        return -1;
    *name = (const char *)t->p + t->str.sh_offset + sh->sh_name;
    if (!memchr(*name, 0, t->str.sh_size - sh->sh_name))
        return -1;
    if (sh->sh_type == SHT_NOBITS)
        return 0;
    return sh->sh_offset > t->n || sh->sh_size > t->n - sh->sh_offset ? -1 : 0;
}

int jst_elf_section(const uint8_t *p, size_t n, const char *want, size_t *off, size_t *size)
{
    struct elf_shdrs t;
    if (elf_open(p, n, &t) != 0)
        return -1;
    for (uint64_t i = 1; i < t.shnum; i++) {
        Elf64_Shdr sh;
        const char *name;
        if (elf_shdr(&t, i, &sh, &name) != 0 || sh.sh_type != SHT_PROGBITS || strcmp(name, want))
            continue;
        if (sh.sh_flags & SHF_COMPRESSED)
            return -1;
        *off = (size_t)sh.sh_offset;
        *size = (size_t)sh.sh_size;
        return 0;
    }
    return -1;
}

/* Cheap test before any walk: PTX's ".version" opens a line (after a newline,
 * blanks or the string's start) and is followed by blanks and a digit. */
static int version_line(const uint8_t *p, size_t s, size_t e, size_t h)
{
    uint8_t before = h > s ? p[h - 1] : 0;
    if (before != 0 && before != '\n' && before != '\r' && before != ' ' && before != '\t' &&
        before != '/')
        return 0;
    size_t k = h + 8;
    if (k >= e || (p[k] != ' ' && p[k] != '\t'))
        return 0;
    while (k < e && (p[k] == ' ' || p[k] == '\t'))
        k++;
    return k < e && p[k] >= '0' && p[k] <= '9';
}

size_t jst_ptx_texts_window(const uint8_t *p, size_t s, size_t e, size_t from, size_t to,
                            void (*cb)(void *ctx, size_t off, size_t len), void *ctx)
{
    /* Each ".version" whose first byte lies in [from, to) is taken back to the
     * start of its string (the byte after a NUL, or the section start), which
     * must open with PTX (comments, then .version) and carry a .target before
     * its NUL. Reads stay inside [s, e). */
    if (to > e)
        to = e;
    size_t i = from, end = e - to > 7 ? to + 7 : e;
    while (i < to && end - i >= 8) {
        /* memchr for the dot, then a compare: several times faster than
         * memmem on binary data, where dots are rare. */
        const uint8_t *hit = memchr(p + i, '.', end - i - 7);
        if (!hit)
            break;
        size_t h = (size_t)(hit - p);
        if (memcmp(hit, ".version", 8) != 0) {
            i = h + 1;
            continue;
        }
        if (!version_line(p, s, e, h)) {
            i = h + 8;
            continue;
        }
        size_t lim = h - s > ELF_PTX_LEAD_MAX ? h - ELF_PTX_LEAD_MAX : s;
        const uint8_t *z = h > lim ? memrchr(p + lim, 0, h - lim) : NULL;
        size_t b = z ? (size_t)(z - p) + 1 : lim;
        const uint8_t *nul = memchr(hit, 0, e - h);
        if ((z || lim == s) && nul) {
            size_t len = (size_t)(nul - p) - b;
            unsigned sm, var;
            if (ptx_detect(p + b, len) && ptx_target((const char *)p + b, len, &sm, &var) == 0) {
                if (cb)
                    cb(ctx, b, len);
                i = b + len + 1;
                continue;
            }
        }
        i = h + 8;
    }
    return i > to ? i : to;
}

size_t jst_elf_data_sections(const uint8_t *p, size_t n,
                             void (*cb)(void *ctx, size_t off, size_t size), void *ctx)
{
    struct elf_shdrs t;
    if (elf_open(p, n, &t) != 0)
        return 0;
    size_t found = 0;
    for (uint64_t i = 1; i < t.shnum; i++) {
        Elf64_Shdr sh;
        const char *name;
        if (elf_shdr(&t, i, &sh, &name) != 0 || sh.sh_type != SHT_PROGBITS)
            continue;
        /* Data a program can point at: allocated, not code, not compressed,
         * and not the fatbins (inspected as such, and 100+ MB in big libraries). */
        if (!(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & (SHF_EXECINSTR | SHF_COMPRESSED)) ||
            !strcmp(name, ".nv_fatbin") || !strcmp(name, "__nv_relfatbin") || sh.sh_size < 8)
            continue;
        cb(ctx, (size_t)sh.sh_offset, (size_t)sh.sh_size);
        found++;
    }
    return found;
}

struct texts_ctx {
    const uint8_t *p;
    void (*cb)(void *, size_t, size_t);
    void *ctx;
};

static void texts_in_section(void *ctx, size_t off, size_t size)
{
    struct texts_ctx *t = ctx;
    jst_ptx_texts_window(t->p, off, off + size, off, off + size, t->cb, t->ctx);
}

size_t jst_elf_ptx_texts(const uint8_t *p, size_t n, void (*cb)(void *ctx, size_t off, size_t len),
                         void *ctx)
{
    struct texts_ctx t = {p, cb, ctx};
    return jst_elf_data_sections(p, n, texts_in_section, &t);
}
