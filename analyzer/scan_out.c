/* What `jitstall scan` says about each image and file: JSON objects, or
 * text grouped by what the images hold. */
#include <dlfcn.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "scan.h"
#include "image.h"
#include "imgwalk.h"
#include "jsonw.h"
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
 * driver itself, so no -gencode of nvcc reaches it. */
static void fix_line(char *buf, size_t n, const struct scan *sc, const char *path,
                     const struct jst_decision *d, int text)
{
    buf[0] = 0;
    if (text && d->verdict == JST_V_PTX_JIT)
        snprintf(buf, n,
                 "load a cubin for sm_%u instead of the PTX string in %s (nvcc -cubin "
                 "-arch=sm_%u), or fill the JIT cache first with jitstall warm %s",
                 sc->cc, base_name(path), sc->cc, base_name(path));
    else if (d->verdict == JST_V_PTX_JIT || d->verdict == JST_V_NO_COMPATIBLE ||
             d->verdict == JST_V_JIT_DISABLED)
        snprintf(buf, n, "add -gencode arch=compute_%u,code=sm_%u when building %s", sc->cc, sc->cc,
                 base_name(path));
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
    } else {
        printf("%s\n", path);
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

void scan_print_groups(const struct scan *sc, struct file_sass *fs)
{
    for (size_t k = 0; k < fs->ng; k++) {
        struct group *g = &fs->g[k];
        const char *vname = scan_verdict_name(g->verdict);
        if (g->count == 1)
            printf("  image @0x%zx [%s]: %s", g->first_off, g->have, vname);
        else
            printf("  %zu images like @0x%zx [%s]: %s", g->count, g->first_off, g->have, vname);
        if (g->jit_from[0])
            printf(" from %s", g->jit_from);
        printf(" (%s)\n", g->reason);
        if (g->n_kernels) {
            if (g->verdict == JST_V_PTX_JIT)
                printf("    %zu kernel%s would JIT from %s (%zu bytes of PTX):\n", g->n_kernels,
                       g->n_kernels == 1 ? "" : "s", g->jit_from, g->ptx_bytes);
            else
                printf("    %zu kernel%s cannot run on sm_%u:\n", g->n_kernels,
                       g->n_kernels == 1 ? "" : "s", sc->cc);
            for (size_t i = 0; i < g->shown.n; i++) {
                char dm[1024];
                jst_demangle(g->shown.v[i], dm, sizeof(dm));
                if (strcmp(dm, g->shown.v[i]))
                    printf("      %s  [%s]\n", dm, g->shown.v[i]);
                else
                    printf("      %s\n", dm);
            }
            if (g->n_kernels > g->shown.n)
                printf("      ... and %zu more\n", g->n_kernels - g->shown.n);
        }
        if (g->fix[0])
            printf("    fix: %s\n", g->fix);
        names_free(&g->shown);
    }
    free(fs->g);
    fs->g = NULL;
    fs->ng = 0;
}

/* An image that would JIT or cannot run but has no kernels is "empty": nvcc
 * puts an sm_75 cubin without kernels into every host-only program, and
 * nothing in it is ever launched, so it is neither a problem nor a fix. LTO-IR
 * names are not read, so an LTO-IR image is never called empty. */
static void mark_empty(const struct jst_image *img, int ni, int nk, struct jst_decision *d)
{
    if (ni < 0 || nk != 0 || img->entries[ni].kind == JST_E_LTOIR ||
        (d->verdict != JST_V_PTX_JIT && d->verdict != JST_V_NO_COMPATIBLE &&
         d->verdict != JST_V_JIT_DISABLED))
        return;
    d->verdict = SCAN_V_EMPTY;
    d->jit_from[0] = 0;
    d->ptx_index = -1;
    snprintf(d->reason, sizeof(d->reason), "no kernels: nothing in it is ever launched");
}

/* JSON output: every image, with its kernels and entries. */
static void image_json(struct scan *sc, size_t offset, const struct jst_image *img,
                       const struct jst_decision *d, const struct names *ns, const char *fix,
                       int text)
{
    const char *vname = scan_verdict_name(d->verdict);
    struct jst_json *j = &sc->j;
    jst_json_obj(j);
    jst_json_ku64(j, "offset", offset);
    jst_json_kstr(j, "origin", text ? "data" : img->kind == JST_IMG_FATBIN ? "fatbin" : "file");
    jst_json_kstr(j, "verdict", vname);
    jst_json_kstr(j, "sass_arch", d->sass_arch[0] ? d->sass_arch : NULL);
    jst_json_kstr(j, "jit_from", d->jit_from[0] ? d->jit_from : NULL);
    jst_json_kstr(j, "reason", d->reason);
    jst_json_kstr(j, "fix", fix[0] ? fix : NULL);
    if (d->ptx_index >= 0)
        jst_json_ku64(j, "ptx_size", img->entries[d->ptx_index].raw_size);
    jst_json_key(j, "kernels");
    jst_json_arr(j);
    for (size_t i = 0; i < ns->n; i++)
        jst_json_str(j, ns->v[i]);
    jst_json_end(j);
    jst_json_key(j, "kernels_demangled");
    jst_json_arr(j);
    for (size_t i = 0; i < ns->n; i++) {
        char dm[1024];
        jst_json_str(j, jst_demangle(ns->v[i], dm, sizeof(dm)));
    }
    jst_json_end(j);
    jst_json_key(j, "entries");
    jst_json_arr(j);
    for (size_t i = 0; i < img->n_entries; i++) {
        const struct jst_entry *e = &img->entries[i];
        char a[24];
        jst_json_obj(j);
        jst_json_kstr(j, "kind", kind_name(e->kind));
        jst_json_kstr(j, "arch", entry_arch(a, sizeof(a), e));
        jst_json_kstr(j, "compressed", z_name(e->compress));
        jst_json_ku64(j, "size", e->payload_size);
        jst_json_end(j);
    }
    jst_json_end(j);
    jst_json_end(j);
}

void scan_report_image(struct scan *sc, const char *path, size_t offset,
                       const struct jst_image *img, struct file_sass *fs, int text)
{
    struct jst_decision d;
    jst_image_decide(img, sc->cc, 0, &d);
    struct names ns = {0};
    int ni = img->damaged ? -1 : names_entry(img, &d);
    int nk = ni >= 0 ? jst_entry_kernels(&img->entries[ni], names_add, &ns) : 0;
    mark_empty(img, ni, nk, &d);
    sc->t.images++;
    sc->t.verdicts[d.verdict <= SCAN_V_EMPTY ? d.verdict : JST_V_NONE]++;
    if (d.verdict == JST_V_PTX_JIT)
        sc->t.kernels_jit += ns.n;
    else if (d.verdict == JST_V_NO_COMPATIBLE)
        sc->t.kernels_dead += ns.n;
    char fix[320];
    fix_line(fix, sizeof(fix), sc, path, &d, text);
    scan_file_begin(sc, path);

    if (sc->json) {
        image_json(sc, offset, img, &d, &ns, fix, text);
        names_free(&ns);
        return;
    }
    if (d.verdict == JST_V_SASS) {
        sass_note(fs, d.sass_arch);
        names_free(&ns);
        return;
    }
    char have[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < img->n_entries && used + 24 < sizeof(have); i++) {
        char a[24];
        used += (size_t)snprintf(have + used, sizeof(have) - used, "%s%s", used ? " " : "",
                                 entry_arch(a, sizeof(a), &img->entries[i]));
    }
    if (text)
        snprintf(have + used, sizeof(have) - used, ", PTX text in data");
    struct group *g = group_for(fs, d.verdict, have, d.reason);
    if (g) {
        if (!g->count++) {
            g->first_off = offset;
            snprintf(g->jit_from, sizeof(g->jit_from), "%s", d.jit_from);
            snprintf(g->fix, sizeof(g->fix), "%s", fix);
        }
        g->n_kernels += ns.n;
        if (d.ptx_index >= 0)
            g->ptx_bytes += img->entries[d.ptx_index].raw_size;
        for (size_t i = 0; i < ns.n && g->shown.n < SCAN_TEXT_KERNELS; i++)
            names_add(&g->shown, ns.v[i], strlen(ns.v[i]));
    }
    names_free(&ns);
}
