/*
 * What a load was given and what the driver did with it: image kind, size and
 * content hash, the ELF object holding the image, the verdict for the current
 * device (headers only, decided before the call), and for loads that JIT the
 * PTX compiled, its kernels and the JIT cache outcome from snapshots of the
 * cache directory taken around the call.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cost.h"
#include "ext.h"
#include "image.h"
#include "jitcache.h"
#include "state.h"
#include "event.h"
#include "real.h"
#include "load.h"

struct load_priv {
    struct jst_image img;
    int have_img;
    struct jst_decision dec;
    int decided;
    struct jst_cache_snap before;
    int have_before;
    char source[PATH_MAX];
    /* The PTX's kernel names, NUL-separated: decompressing and scanning a
     * large PTX (2 ms for 32 heavy kernels) is done once, not for both the
     * BEGIN and the call record. */
    char *knames;
    size_t knames_len, knames_cap;
    int knames_done;
};

/* Verdict for the current device, and the "before" snapshot for JIT loads. */
static void load_decide(struct jst_load *ld, struct load_priv *p, int cache)
{
    ld->cc = jst_current_cc(&ld->dev, &ld->ctx);
    if (!ld->cc)
        return;
    jst_image_decide(&p->img, ld->cc, jst_env_jit_flags(), &p->dec);
    p->decided = 1;
    ld->jit = p->dec.verdict == JST_V_PTX_JIT || p->dec.verdict == JST_V_FORCED_JIT;
    if (ld->jit && cache) {
        jst_cache_snapshot_before(&p->before);
        p->have_before = 1;
    }
}

void jst_load_pre_mem(struct jst_load *ld, const void *image, size_t known_size, int cache)
{
    uint64_t t0 = jst_now_ns();
    memset(ld, 0, sizeof *ld);
    struct load_priv *p = calloc(1, sizeof *p);
    if (!p || !image) {
        free(p);
        return;
    }
    ld->priv = p;
    ld->active = 1;
    ld->ptr = image;
    jst_image_inspect(image, known_size, &p->img);
    p->have_img = 1;
    ld->image_kind = p->img.kind;
    ld->size = p->img.size;
    /* A damaged image's extent may come from a header that lies: hash only
     * what inspection vouched for. */
    if (p->img.base && p->img.size && !p->img.damaged)
        ld->hash = jst_hash64(p->img.base, p->img.size);
    Dl_info info;
    if (dladdr(image, &info) && info.dli_fname) {
        const char *f = info.dli_fname[0] ? info.dli_fname : jst_exe_path();
        strncpy(p->source, f, sizeof p->source - 1);
    }
    load_decide(ld, p, cache);
    jst_cost_add(JST_COST_INSPECT, jst_now_ns() - t0);
}

void jst_load_pre_file(struct jst_load *ld, const char *path, int cache)
{
    uint64_t t0 = jst_now_ns();
    memset(ld, 0, sizeof *ld);
    struct load_priv *p = calloc(1, sizeof *p);
    if (!p)
        return;
    ld->priv = p;
    ld->active = 1;
    ld->path = path;
    ld->image_kind = JST_IMG_FILE;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m != MAP_FAILED) {
            ld->map = m;
            ld->map_len = (size_t)st.st_size;
        }
    }
    close(fd);
    if (!ld->map)
        return;
    ld->ptr = ld->map;
    ld->size = ld->map_len;
    ld->hash = jst_hash64(ld->map, ld->map_len);
    jst_image_inspect(ld->map, ld->map_len, &p->img);
    p->have_img = 1;
    load_decide(ld, p, cache);
    jst_cost_add(JST_COST_INSPECT, jst_now_ns() - t0);
}

/* The largest compressed cubin whose kernel names a SASS load records. */
#define JST_SASS_NAMES_MAX (1u << 20)

/* Adds one JST_F_KERNEL while the record has room for the rest. */
static void kernel_cb(void *ctx, const char *name, size_t len)
{
    struct jst_rec *r = ctx;
    if (len > 4096 || r->len + len + 16 + 4096 > r->cap)
        return;
    jst_rec_strn(r, JST_F_KERNEL, name, len);
}

/* Keeps one kernel name (names over 4096 bytes are never written anyway);
 * at most 4 MiB of names, more than any record holds. */
static void kernel_keep(void *ctx, const char *name, size_t len)
{
    struct load_priv *p = ctx;
    if (len > 4096 || memchr(name, '\0', len) || p->knames_len + len + 1 > (4u << 20))
        return;
    if (p->knames_len + len + 1 > p->knames_cap) {
        size_t cap = p->knames_cap ? p->knames_cap * 2 : 4096;
        while (cap < p->knames_len + len + 1)
            cap *= 2;
        char *n = realloc(p->knames, cap);
        if (!n)
            return;
        p->knames = n;
        p->knames_cap = cap;
    }
    memcpy(p->knames + p->knames_len, name, len);
    p->knames[p->knames_len + len] = '\0';
    p->knames_len += len + 1;
}

/* Writes the kernel names of e (the PTX compiled, or the cubin loaded) into
 * r, scanning e the first time. */
static void load_kernels(struct load_priv *p, const struct jst_entry *e, struct jst_rec *r)
{
    if (!p->knames_done) {
        uint64_t t0 = jst_now_ns();
        jst_entry_kernels(e, kernel_keep, p);
        p->knames_done = 1;
        jst_cost_add(JST_COST_INSPECT, jst_now_ns() - t0);
    }
    for (size_t i = 0; i < p->knames_len;) {
        size_t l = strlen(p->knames + i);
        kernel_cb(r, p->knames + i, l);
        i += l + 1;
    }
}

static const char *entry_kind_name(unsigned k)
{
    return k == JST_E_PTX ? "ptx" : k == JST_E_CUBIN ? "cubin" : k == JST_E_LTOIR ? "ltoir" : "?";
}

static const char *compress_name(unsigned c)
{
    return c == JST_Z_ZSTD ? "zstd" : c == JST_Z_LZ4 ? "lz4" : "none";
}

/* The PTX entry the verdict compiles, or NULL. */
static const struct jst_entry *load_ptx(const struct load_priv *p)
{
    if (p->dec.ptx_index >= 0 && (size_t)p->dec.ptx_index < p->img.n_entries)
        return &p->img.entries[p->dec.ptx_index];
    return NULL;
}

void jst_load_describe(struct jst_load *ld, struct jst_rec *r)
{
    struct load_priv *p = ld->priv;
    jst_rec_u64(r, JST_F_IMAGE_KIND, ld->image_kind);
    jst_rec_u64(r, JST_F_IMAGE_SIZE, ld->size);
    if (ld->hash)
        jst_rec_u64(r, JST_F_IMAGE_HASH, ld->hash);
    if (ld->path)
        jst_rec_str(r, JST_F_PATH, ld->path);
    if (!p)
        return;
    if (p->source[0])
        jst_rec_str(r, JST_F_SOURCE, p->source);
    if (ld->ctx)
        jst_rec_u64(r, JST_F_CTX, ld->ctx);
    jst_rec_u64(r, JST_F_LOAD_DEVICE, (uint64_t)ld->dev);
    unsigned isa_max = 0;
    if (p->have_img) {
        for (size_t i = 0; i < p->img.n_entries && i < 256; i++) {
            const struct jst_entry *e = &p->img.entries[i];
            if (e->kind == JST_E_PTX && e->ptx_isa > isa_max)
                isa_max = e->ptx_isa;
            char arch[24], s[64];
            jst_arch_str(arch, sizeof arch, e->kind == JST_E_PTX, e->sm, e->variant);
            snprintf(s, sizeof s, "%s %s %s", entry_kind_name(e->kind), arch,
                     compress_name(e->compress));
            jst_rec_str(r, JST_F_ENTRY, s);
        }
    }
    if (!p->decided) {
        jst_rec_str(r, JST_F_REASON, ld->cc ? "not inspected" : "compute capability unknown");
        return;
    }
    jst_rec_u64(r, JST_F_TARGET_CC, ld->cc);
    jst_rec_u64(r, JST_F_VERDICT, p->dec.verdict);
    if (p->dec.sass_arch[0])
        jst_rec_str(r, JST_F_SASS_ARCH, p->dec.sass_arch);
    if (p->dec.jit_from[0])
        jst_rec_str(r, JST_F_JIT_FROM, p->dec.jit_from);
    jst_rec_str(r, JST_F_REASON, p->dec.reason);
    /* The analyzer compares these with the device's driver version. */
    if (p->dec.ptx_isa)
        jst_rec_u64(r, JST_F_PTX_ISA, p->dec.ptx_isa);
    if (isa_max)
        jst_rec_u64(r, JST_F_PTX_ISA_MAX, isa_max);
    if (!ld->jit) {
        /* A SASS load names its kernels too (so that a module rebuilt from
         * PTX to SASS is recognised), when that is cheap: the cubin's symbol
         * table read in place, or a compressed cubin of at most
         * JST_SASS_NAMES_MAX bytes decompressed (about a millisecond),
         * never a large one. */
        int si = p->dec.sass_index;
        if (p->dec.verdict == JST_V_SASS && si >= 0 && (size_t)si < p->img.n_entries &&
            p->img.entries[si].kind == JST_E_CUBIN &&
            (p->img.entries[si].compress == JST_Z_NONE ||
             p->img.entries[si].raw_size <= JST_SASS_NAMES_MAX))
            load_kernels(p, &p->img.entries[si], r);
        return;
    }
    const struct jst_entry *ptx = load_ptx(p);
    if (ptx) {
        jst_rec_u64(r, JST_F_PTX_SIZE, ptx->raw_size);
        load_kernels(p, ptx, r);
    }
}

void jst_load_post(struct jst_load *ld, struct jst_rec *r, uint64_t dur_ns, int result)
{
    struct load_priv *p = ld->priv;
    jst_load_describe(ld, r);
    if (!p || !p->decided || !ld->jit || result != CUDA_SUCCESS)
        return;
    const struct jst_entry *ptx = load_ptx(p);
    uint64_t ptx_size = ptx ? ptx->raw_size : 0;
    if (p->have_before) {
        struct jst_cache_snap *after = malloc(sizeof *after);
        if (after) {
            jst_cache_snapshot_after(&p->before, after);
            unsigned reason = JST_CR_NONE;
            unsigned out = jst_cache_outcome(&p->before, after, dur_ns, ptx_size, &reason);
            jst_rec_u64(r, JST_F_CACHE, out);
            if (out == JST_C_MISS_NOT_STORED)
                jst_rec_u64(r, JST_F_CACHE_REASON, reason);
            jst_rec_u64(r, JST_F_CACHE_NEW_BYTES, after->new_bytes);
            jst_rec_u64(r, JST_F_CACHE_NEW_ENTRIES, after->new_entries);
            free(after);
        }
    }
    const char *label = ld->path ? ld->path : p->source[0] ? p->source : "(image in memory)";
    jst_budget_note_jit(label, dur_ns);
}

void jst_load_free(struct jst_load *ld)
{
    struct load_priv *p = ld->priv;
    if (p) {
        if (p->have_img)
            jst_image_free(&p->img);
        free(p->knames);
        free(p);
    }
    if (ld->map)
        munmap(ld->map, ld->map_len);
    memset(ld, 0, sizeof *ld);
}
