/* What `jitstall scan` says about each image and file: JSON objects, or
 * text grouped by what the images hold. */
#include <dlfcn.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "utf8.h"
#include "cli.h"
#include "scan.h"
#include "image.h"
#include "imgwalk.h"
#include "fixes.h"
#include "jsonw.h"
#include "sfmt.h"
#include "trace.h"

const char *scan_verdict_name(unsigned v)
{
    return v == SCAN_V_EMPTY ? "empty" : jst_verdict_name(v);
}

/* ---- kernel names ---- */

struct names {
    char **v;
    size_t n, cap;
};

static void names_add(void *ctx, const char *name, size_t len)
{
    struct names *ns = ctx;
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? ns->cap * 2 : 16;
        char **v = realloc(ns->v, cap * sizeof(*v));
        if (!v)
            return;
        ns->v = v;
        ns->cap = cap;
    }
    char *s = strndup(name, len);
    if (s)
        ns->v[ns->n++] = s;
}

static void names_free(struct names *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->v[i]);
    free(ns->v);
    memset(ns, 0, sizeof(*ns));
}

/* The entry whose names are listed for a verdict, or -1 when none is cheap
 * enough or needed: the PTX that JITs; for an image that cannot run, a plain
 * cubin, else any PTX, else any cubin; for SASS, the cubin used if it is stored
 * uncompressed (its symbol table is read in place). */
static int names_entry(const struct jst_image *img, const struct jst_decision *d)
{
    if (d->verdict == JST_V_PTX_JIT || d->verdict == JST_V_FORCED_JIT)
        return d->ptx_index;
    if (d->verdict == JST_V_SASS) {
        const struct jst_entry *e = &img->entries[d->sass_index];
        return e->compress == JST_Z_NONE ? d->sass_index : -1;
    }
    if (d->verdict != JST_V_NO_COMPATIBLE && d->verdict != JST_V_JIT_DISABLED)
        return -1;
    int best = -1, rank = 0;
    for (size_t i = 0; i < img->n_entries; i++) {
        const struct jst_entry *e = &img->entries[i];
        int r = e->kind == JST_E_CUBIN && e->compress == JST_Z_NONE ? 3
                : e->kind == JST_E_PTX                              ? 2
                : e->kind == JST_E_CUBIN                            ? 1
                                                                    : 0;
        if (r > rank) {
            rank = r;
            best = (int)i;
        }
    }
    return best;
}

/* ---- output ---- */

static const char *base_name(const char *path)
{
    const char *s = strrchr(path, '/');
    return s && s[1] ? s + 1 : path;
}

static const char *kind_name(unsigned k)
{
    return k == JST_E_PTX ? "ptx" : k == JST_E_CUBIN ? "cubin" : "ltoir";
}

static const char *z_name(unsigned z)
{
    return z == JST_Z_ZSTD ? "zstd" : z == JST_Z_LZ4 ? "lz4" : "none";
}

static const char *entry_arch(char *buf, size_t n, const struct jst_entry *e)
{
    if (e->kind == JST_E_LTOIR) {
        snprintf(buf, n, "lto_%u", e->sm);
        return buf;
    }
    return jst_arch_str(buf, n, e->kind == JST_E_PTX, e->sm, e->variant);
}

/* The fix line; text: PTX carried as a string, which the program hands to the
 * driver itself, so no -gencode of nvcc reaches it; ptx_file: a bare PTX
 * file, which gets report's wording for a PTX file (fixes.c). */
static void fix_line(char *buf, size_t n, const struct scan *sc, const char *path,
                     const struct jst_decision *d, int text, int ptx_file)
{
    char gc[160], aot[240];
    buf[0] = 0;
    jst_fix_gencode(gc, sizeof gc, sc->cc);
    if (text && d->verdict == JST_V_PTX_JIT)
        snprintf(buf, n,
                 "load a cubin for sm_%u instead of the PTX string in %s (nvcc -cubin "
                 "-arch=sm_%u), or fill the JIT cache first with jitstall warm %s",
                 sc->cc, base_name(path), sc->cc, base_name(path));
    else if (ptx_file && (d->verdict == JST_V_PTX_JIT || d->verdict == JST_V_NO_COMPATIBLE ||
                          d->verdict == JST_V_JIT_DISABLED || d->verdict == JST_V_PTX_TOO_NEW))
        snprintf(buf, n, "compile %s ahead of time for the GPU and load the result: %s",
                 base_name(path), jst_fix_ptx_aot(aot, sizeof aot, sc->cc));
    else if (d->verdict == JST_V_PTX_TOO_NEW) {
        char cv[16], mk[16];
        unsigned made = jst_ptx_isa_cuda(d->ptx_isa), branch = jst_cuda_min_driver(made);
        if (made && branch)
            snprintf(buf, n,
                     "build %s with the driver's toolkit (CUDA %s) or add %s, or upgrade the "
                     "driver to %u or newer (CUDA %s)",
                     base_name(path), jst_cuda_str(cv, sizeof cv, sc->driver_cuda), gc, branch,
                     jst_cuda_str(mk, sizeof mk, made));
        else
            snprintf(buf, n,
                     "build %s with the driver's toolkit (CUDA %s) or add %s, or upgrade the "
                     "driver",
                     base_name(path), jst_cuda_str(cv, sizeof cv, sc->driver_cuda), gc);
    } else if (d->verdict == JST_V_PTX_JIT || d->verdict == JST_V_NO_COMPATIBLE ||
               d->verdict == JST_V_JIT_DISABLED)
        snprintf(buf, n, "add %s when building %s", gc, base_name(path));
    else if (d->verdict == JST_V_DAMAGED)
        snprintf(buf, n, "rebuild %s: its CUDA image is damaged", base_name(path));
}

void scan_file_begin(struct scan *sc, const char *path)
{
    if (sc->file_open)
        return;
    sc->file_open = 1;
    if (sc->json) {
        jst_json_obj(&sc->j);
        jst_json_kstr(&sc->j, "path", path);
        jst_json_key(&sc->j, "images");
        jst_json_arr(&sc->j);
    } else if (!sc->summary_only) {
        printf("%s\n", jst_text(path));
    }
}

/* Text output, per file: images that run as SASS are summed up in one line;
 * the others are grouped by what they hold and their verdict (a library often
 * has hundreds of images built alike), each group printed once with its
 * kernels. JSON output lists every image. */
struct group {
    unsigned verdict;
    char have[256], jit_from[16], reason[160], fix[320];
    size_t count, first_off, n_kernels, ptx_bytes;
    struct names shown; /* the first SCAN_TEXT_KERNELS names */
};

static void sass_note(struct file_sass *fs, const char *arch)
{
    fs->n++;
    if (strstr(fs->archs, arch))
        return;
    size_t used = strlen(fs->archs);
    snprintf(fs->archs + used, sizeof(fs->archs) - used, "%s%s", used ? ", " : "", arch);
}

static struct group *group_for(struct file_sass *fs, unsigned verdict, const char *have,
                               const char *reason)
{
    for (size_t i = 0; i < fs->ng; i++)
        if (fs->g[i].verdict == verdict && !strcmp(fs->g[i].have, have) &&
            !strcmp(fs->g[i].reason, reason))
            return &fs->g[i];
    struct group *g = realloc(fs->g, (fs->ng + 1) * sizeof(*g));
    if (!g)
        return NULL;
    fs->g = g;
    g = &fs->g[fs->ng++];
    memset(g, 0, sizeof(*g));
    g->verdict = verdict;
    snprintf(g->have, sizeof(g->have), "%s", have);
    snprintf(g->reason, sizeof(g->reason), "%s", reason);
    return g;
}

size_t scan_text_width(void)
{
    const char *c = getenv("COLUMNS");
    char *end;
    long v = c && *c ? strtol(c, &end, 10) : 0;
    if (v > 0 && !*end)
        return v < 40 ? 40 : v > 4096 ? 4096 : (size_t)v;
    struct winsize ws;
    if (isatty(STDOUT_FILENO) && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col)
        return ws.ws_col < 40 ? 40 : ws.ws_col;
    return SCAN_DEFAULT_WIDTH;
}

/* One kernel, indented: "demangled  [mangled]" when it fits the width, else
 * the demangled name alone, cut with "..." (JSON has every name whole). */
static void kernel_line(const struct scan *sc, const char *mangled)
{
    static const char indent[] = "      ";
    size_t room = sc->width > sizeof indent + 20 ? sc->width - (sizeof indent - 1) : 20;
    char *dm = jst_demangle_dup(mangled);
    const char *name = dm ? dm : mangled;
    char *buf = malloc(room + 1);
    if (!buf) {
        free(dm);
        return;
    }
    int both = strcmp(name, mangled) != 0;
    if (both && strlen(name) + strlen(mangled) + 4 <= room && !jst_text_unsafe(name) &&
        !jst_text_unsafe(mangled))
        printf("%s%s  [%s]\n", indent, name, mangled);
    else
        printf("%s%s\n", indent, jst_text_esc(buf, room + 1, name));
    free(buf);
    free(dm);
}

void scan_print_other(const struct scan *sc, const struct file_sass *fs)
{
    if (!fs->n_other || sc->summary_only)
        return;
    char head[64], tail[96], list[sizeof fs->other_archs];
    snprintf(head, sizeof head, "  %zu image%s for other GPUs (", fs->n_other,
             fs->n_other == 1 ? "" : "s");
    snprintf(tail, sizeof tail, "): not loaded on sm_%u, no fix needed", sc->cc);
    size_t fixed = strlen(head) + strlen(tail),
           room = sc->width > fixed + 20 ? sc->width - fixed : 20;
    if (room + 1 > sizeof list)
        room = sizeof list - 1;
    printf("%s%s%s\n", head, jst_text_esc(list, room + 1, fs->other_archs), tail);
}

void scan_print_groups(const struct scan *sc, struct file_sass *fs)
{
    for (size_t k = 0; k < fs->ng && sc->summary_only; k++)
        names_free(&fs->g[k].shown);
    for (size_t k = 0; k < fs->ng && !sc->summary_only; k++) {
        struct group *g = &fs->g[k];
        const char *vname = scan_verdict_name(g->verdict);
        if (g->count == 1)
            printf("  image @0x%zx [%s]: %s", g->first_off, g->have, vname);
        else
            printf("  %zu images like @0x%zx [%s]: %s", g->count, g->first_off, g->have, vname);
        if (g->jit_from[0])
            printf(" from %s", jst_text(g->jit_from));
        printf(" (%s)\n", jst_text(g->reason));
        if (g->n_kernels) {
            if (g->verdict == JST_V_PTX_JIT)
                printf("    %zu kernel%s would JIT from %s (%zu bytes of PTX):\n", g->n_kernels,
                       g->n_kernels == 1 ? "" : "s", jst_text(g->jit_from), g->ptx_bytes);
            else
                printf("    %zu kernel%s cannot run on sm_%u:\n", g->n_kernels,
                       g->n_kernels == 1 ? "" : "s", sc->cc);
            for (size_t i = 0; i < g->shown.n; i++)
                kernel_line(sc, g->shown.v[i]);
            if (g->n_kernels > g->shown.n)
                printf("      ... and %zu more\n", g->n_kernels - g->shown.n);
        }
        if (g->fix[0])
            printf("    fix: %s\n", jst_text(g->fix));
        names_free(&g->shown);
    }
    free(fs->g);
    fs->g = NULL;
    fs->ng = 0;
}

/* An image with no kernels is "empty", whatever the architecture: nvcc puts
 * a cubin without kernels into every host-only program, and nothing in it is
 * ever launched, so it is neither a problem nor a fix, and it counts the same
 * on a GPU whose SASS it happens to carry as on any other. LTO-IR names are
 * not read, so an LTO-IR image is never called empty. */
static void mark_empty(const struct jst_image *img, int ni, int nk, struct jst_decision *d)
{
    if (ni < 0 || nk != 0 || img->entries[ni].kind == JST_E_LTOIR ||
        (d->verdict != JST_V_PTX_JIT && d->verdict != JST_V_NO_COMPATIBLE &&
         d->verdict != JST_V_JIT_DISABLED && d->verdict != JST_V_SASS))
        return;
    d->sass_arch[0] = 0;
    d->verdict = SCAN_V_EMPTY;
    d->jit_from[0] = 0;
    d->ptx_index = -1;
    snprintf(d->reason, sizeof(d->reason), "no kernels: nothing in it is ever launched");
}

/* An entry as JSON shows it, kept after the image's bytes are gone. */
struct pent {
    unsigned kind, sm, variant, compress;
    size_t size;
};

struct scan_pending {
    size_t off, ptx_bytes, n_e;
    int text, ptx_file, other, img_kind;
    struct jst_decision d;
    struct names ns;
    char have[256];
    struct pent *e;
};

void scan_report_image(struct scan *sc, const char *path, size_t offset,
                       const struct jst_image *img, struct file_sass *fs, int text)
{
    (void)path;
    struct scan_pending *pv = realloc(fs->pend, (fs->npend + 1) * sizeof(*pv));
    if (!pv)
        return;
    fs->pend = pv;
    struct scan_pending *q = &pv[fs->npend++];
    memset(q, 0, sizeof(*q));
    jst_image_decide_drv(img, sc->cc, 0, sc->driver_cuda, &q->d);
    int ni = img->damaged ? -1 : names_entry(img, &q->d);
    int nk = ni >= 0 ? jst_entry_kernels(&img->entries[ni], names_add, &q->ns) : 0;
    mark_empty(img, ni, nk, &q->d);
    q->off = offset;
    q->text = text;
    q->img_kind = (int)img->kind;
    q->ptx_file = !text && img->kind == JST_IMG_PTX;
    q->other = q->d.verdict == JST_V_NO_COMPATIBLE && jst_image_for_other_gpus(img, sc->cc);
    if (q->d.ptx_index >= 0)
        q->ptx_bytes = img->entries[q->d.ptx_index].raw_size;
    size_t used = 0;
    for (size_t i = 0; i < img->n_entries && used + 24 < sizeof(q->have); i++) {
        char a[24];
        used += (size_t)snprintf(q->have + used, sizeof(q->have) - used, "%s%s", used ? " " : "",
                                 entry_arch(a, sizeof(a), &img->entries[i]));
    }
    if (text)
        snprintf(q->have + used, sizeof(q->have) - used, ", PTX text in data");
    if (sc->json && img->n_entries) {
        q->e = calloc(img->n_entries, sizeof(*q->e));
        for (size_t i = 0; q->e && i < img->n_entries; i++) {
            const struct jst_entry *e = &img->entries[i];
            q->e[i] = (struct pent){e->kind, e->sm, e->variant, e->compress, e->payload_size};
        }
        q->n_e = q->e ? img->n_entries : 0;
    }
}

/* JSON output: every image, with its kernels and entries. */
static void pending_json(struct scan *sc, const struct scan_pending *q, const char *fix)
{
    const struct jst_decision *d = &q->d;
    struct jst_json *j = &sc->j;
    jst_json_obj(j);
    jst_json_ku64(j, "offset", q->off);
    jst_json_kstr(j, "origin",
                  q->text                         ? "data"
                  : q->img_kind == JST_IMG_FATBIN ? "fatbin"
                                                  : "file");
    jst_json_kstr(j, "verdict", scan_verdict_name(d->verdict));
    jst_json_kstr(j, "sass_arch", d->sass_arch[0] ? d->sass_arch : NULL);
    jst_json_kstr(j, "jit_from", d->jit_from[0] ? d->jit_from : NULL);
    jst_json_kstr(j, "reason", d->reason);
    jst_json_kstr(j, "fix", fix[0] ? fix : NULL);
    if (d->ptx_index >= 0)
        jst_json_ku64(j, "ptx_size", q->ptx_bytes);
    if (d->ptx_isa) {
        char v[16];
        snprintf(v, sizeof v, "%u.%u", d->ptx_isa / 10, d->ptx_isa % 10);
        jst_json_kstr(j, "ptx_isa", v);
    }
    jst_json_key(j, "kernels");
    jst_json_arr(j);
    for (size_t i = 0; i < q->ns.n; i++)
        jst_json_str(j, q->ns.v[i]);
    jst_json_end(j);
    jst_json_key(j, "kernels_demangled");
    jst_json_arr(j);
    for (size_t i = 0; i < q->ns.n; i++) { /* whole, however long (c++filt agrees) */
        char *dm = jst_demangle_dup(q->ns.v[i]);
        jst_json_str(j, dm ? dm : q->ns.v[i]);
        free(dm);
    }
    jst_json_end(j);
    jst_json_key(j, "entries");
    jst_json_arr(j);
    for (size_t i = 0; i < q->n_e; i++) {
        const struct pent *e = &q->e[i];
        char a[24];
        struct jst_entry je = {.kind = (uint16_t)e->kind, .sm = e->sm, .variant = e->variant};
        jst_json_obj(j);
        jst_json_kstr(j, "kind", kind_name(e->kind));
        jst_json_kstr(j, "arch", entry_arch(a, sizeof(a), &je));
        jst_json_kstr(j, "compressed", z_name(e->compress));
        jst_json_ku64(j, "size", e->size);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_end(j);
}

/* One image, its verdict final: counted, checked against --fail-on, said. */
static void pending_say(struct scan *sc, const char *path, struct scan_pending *q,
                        struct file_sass *fs)
{
    struct jst_decision *d = &q->d;
    sc->t.images++;
    sc->t.verdicts[d->verdict <= SCAN_V_EMPTY ? d->verdict : JST_V_NONE]++;
    if (d->verdict < 32 && (sc->fail_mask >> d->verdict & 1))
        sc->failed++;
    if (d->verdict == JST_V_PTX_JIT) {
        sc->t.kernels_jit += q->ns.n;
        sc->t.ptx_jit_bytes += q->ptx_bytes;
    } else if (d->verdict == JST_V_NO_COMPATIBLE || d->verdict == JST_V_PTX_TOO_NEW) {
        sc->t.kernels_dead += q->ns.n;
    }
    char fix[320];
    fix_line(fix, sizeof(fix), sc, path, d, q->text, q->ptx_file);
    scan_file_begin(sc, path);
    if (sc->json) {
        pending_json(sc, q, fix);
        return;
    }
    if (d->verdict == JST_V_SASS) {
        sass_note(fs, d->sass_arch);
        return;
    }
    if (d->verdict == JST_V_OTHER_GPUS) {
        fs->n_other++;
        if (!strstr(fs->other_archs, q->have)) {
            size_t u = strlen(fs->other_archs);
            jst_sfmt(fs->other_archs + u, sizeof(fs->other_archs) - u, "%s%s", u ? ", " : "",
                     q->have);
        }
        return;
    }
    struct group *g = group_for(fs, d->verdict, q->have, d->reason);
    if (g) {
        if (!g->count++) {
            g->first_off = q->off;
            snprintf(g->jit_from, sizeof(g->jit_from), "%s", d->jit_from);
            snprintf(g->fix, sizeof(g->fix), "%s", fix);
        }
        g->n_kernels += q->ns.n;
        g->ptx_bytes += q->ptx_bytes;
        for (size_t i = 0; i < q->ns.n && g->shown.n < SCAN_TEXT_KERNELS; i++)
            names_add(&g->shown, q->ns.v[i], strlen(q->ns.v[i]));
    }
}

void scan_file_flush(struct scan *sc, const char *path)
{
    struct file_sass *fs = &sc->fs;
    int runs = 0;
    for (size_t i = 0; i < fs->npend; i++)
        runs |= jst_verdict_runs(fs->pend[i].d.verdict);
    for (size_t i = 0; i < fs->npend; i++) {
        struct scan_pending *q = &fs->pend[i];
        /* The file has code for the GPU: an image with nothing for it (other
         * GPUs' SASS, PTX for a newer one) is a variant the library never
         * loads here, not a failure. */
        if (runs && q->other) {
            char gpu[16];
            q->d.verdict = JST_V_OTHER_GPUS;
            jst_sfmt(q->d.reason, sizeof(q->d.reason),
                     "built for other GPUs only (%.100s); the file has code that runs on %s",
                     q->have, jst_arch_str(gpu, sizeof gpu, 0, sc->cc, JST_A_PLAIN));
        }
        pending_say(sc, path, q, fs);
        names_free(&q->ns);
        free(q->e);
    }
    free(fs->pend);
    fs->pend = NULL;
    fs->npend = 0;
}
