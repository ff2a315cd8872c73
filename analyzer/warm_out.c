/* What `jitstall warm` says: each image's fate and the totals, as text or
 * JSON. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include "utf8.h"
#include "jsonw.h"
#include "warm.h"

/* ---- output ---- */

static const char *status_name(unsigned s)
{
    static const char *const names[] = {"todo",   "warmed",     "cached", "duplicate",
                                        "failed", "not_stored", "skipped"};
    return s < sizeof(names) / sizeof(names[0]) ? names[s] : "unknown";
}

static void human(char *buf, size_t n, uint64_t v)
{
    if (v >= (1ull << 30))
        snprintf(buf, n, "%.1f GiB", (double)v / (double)(1ull << 30));
    else if (v >= (1ull << 20))
        snprintf(buf, n, "%.1f MiB", (double)v / (double)(1ull << 20));
    else if (v >= 1024)
        snprintf(buf, n, "%.1f KiB", (double)v / 1024.0);
    else
        snprintf(buf, n, "%" PRIu64 " bytes", v);
}

/* CUDA_CACHE_MAXSIZE that holds the set, rounded up to MiB; 0 if it fits. */
static uint64_t maxsize_needed(const struct warm *w)
{
    uint64_t need = (w->need_bytes + (1ull << 20) - 1) & ~((1ull << 20) - 1);
    return need > w->before.max_bytes ? need : 0;
}

struct warm_sum warm_summarize(const struct warm *w)
{
    struct warm_sum s = {0};
    for (size_t i = 0; i < w->n; i++) {
        const struct warm_img *m = &w->v[i];
        s.warmed += m->status == WS_WARMED;
        s.cached += m->status == WS_CACHED;
        s.dup += m->status == WS_DUP;
        s.bad += m->status == WS_FAILED || m->status == WS_NOT_STORED || m->status == WS_SKIPPED;
        if (m->status == WS_WARMED || m->status == WS_CACHED)
            s.kernels += m->kernels;
    }
    return s;
}

static void print_img(const struct warm_img *m)
{
    char b[32];
    printf("  %-10s %s @0x%zx [%s%s]: %zu kernel%s", status_name(m->status), jst_text(m->path),
           m->off, m->jit_from[0] ? jst_text(m->jit_from) : "?",
           m->text ? ", PTX text in data" : "", m->kernels, m->kernels == 1 ? "" : "s");
    if (m->status == WS_WARMED) {
        human(b, sizeof(b), m->new_bytes);
        printf(", compiled in %.2f s, +%" PRIu64 " entr%s (%s)\n", (double)m->dur_ns / 1e9,
               m->new_entries, m->new_entries == 1 ? "y" : "ies", b);
    } else if (m->status == WS_CACHED) {
        printf(", already in the cache (loaded in %.1f ms)\n", (double)m->dur_ns / 1e6);
    } else if (m->status == WS_DUP) {
        printf(", same image as one above\n");
    } else {
        printf(": %s\n", jst_text(m->why));
    }
}

void warm_print_text(const struct warm *w)
{
    char mx[32], add[32], tot[32];
    const struct jst_warm_for *t = &w->target;
    printf("cache %s (CUDA_CACHE_MAXSIZE %" PRIu64 ")\n", jst_text(w->before.path),
           w->before.max_bytes);
    /* A name that already says its architecture (the simulated driver's
     * "... (sm_90)") is not told it twice. */
    char arch[24];
    snprintf(arch, sizeof arch, "(sm_%u)", w->cc);
    printf("GPU %d: %s%s%s, driver %s%sCUDA %" PRIu64 ".%" PRIu64 "%s\n", w->ordinal,
           jst_text(t->gpu), strstr(t->gpu, arch) ? "" : " ", strstr(t->gpu, arch) ? "" : arch,
           jst_text(t->driver), t->driver[0] ? " (" : "", t->driver_version / 1000,
           t->driver_version % 1000 / 10, t->driver[0] ? ")" : "");
    for (size_t i = 0; i < w->n; i++)
        print_img(&w->v[i]);
    struct warm_sum s = warm_summarize(w);
    uint64_t need = maxsize_needed(w);
    if (need) {
        human(mx, sizeof(mx), w->before.max_bytes);
        human(add, sizeof(add), w->need_bytes);
        printf("cache too small: the set needs about %s, CUDA_CACHE_MAXSIZE is %s: set "
               "CUDA_CACHE_MAXSIZE=%" PRIu64 " when warming and when running%s\n",
               add, mx, need,
               need > JST_CACHE_LIMIT_MAX ? " (above the 4 GiB limit: ship SASS)" : "");
    }
    uint64_t de = w->after.entries > w->before.entries ? w->after.entries - w->before.entries : 0;
    uint64_t db =
        w->after.size_bytes > w->before.size_bytes ? w->after.size_bytes - w->before.size_bytes : 0;
    human(add, sizeof(add), db);
    human(tot, sizeof(tot), w->after.size_bytes);
    printf("summary for sm_%u: %zu image%s need%s the JIT: %zu warmed, %zu already cached, %zu "
           "not warmed (%zu kernel%s ready); %.2f s; cache +%" PRIu64 " entr%s, +%s (now %" PRIu64
           " entr%s, %s); %zu SASS, %zu empty, %zu cannot run, %zu damaged",
           w->cc, w->n - s.dup, w->n - s.dup == 1 ? "" : "s", w->n - s.dup == 1 ? "s" : "",
           s.warmed, s.cached, s.bad, s.kernels, s.kernels == 1 ? "" : "s",
           (double)w->total_ns / 1e9, de, de == 1 ? "y" : "ies", add, w->after.entries,
           w->after.entries == 1 ? "y" : "ies", tot, w->sass, w->empty, w->cannot_run, w->damaged);
    if (w->other_gpus)
        printf(", %zu for other GPUs", w->other_gpus);
    printf("\n");
}

static void json_img(struct jst_json *j, const struct warm_img *m)
{
    jst_json_obj(j);
    jst_json_kstr(j, "path", m->path);
    jst_json_ku64(j, "offset", m->off);
    jst_json_kstr(j, "origin", m->text ? "data" : "image");
    jst_json_kstr(j, "jit_from", m->jit_from[0] ? m->jit_from : NULL);
    jst_json_ku64(j, "kernels", m->kernels);
    jst_json_ku64(j, "ptx_size", m->ptx_size);
    jst_json_kstr(j, "status", status_name(m->status));
    jst_json_kstr(j, "reason", m->why[0] ? m->why : NULL);
    jst_json_kdouble(j, "load_ms", (double)m->dur_ns / 1e6);
    jst_json_ku64(j, "entries_added", m->new_entries);
    jst_json_ku64(j, "bytes_added", m->new_bytes);
    jst_json_end(j);
}

int warm_print_json(const struct warm *w)
{
    struct jst_json j;
    struct warm_sum s = warm_summarize(w);
    jst_json_init(&j, stdout, 1);
    jst_json_obj(&j);
    jst_json_key(&j, "cache");
    jst_json_obj(&j);
    jst_json_kstr(&j, "path", w->before.path);
    jst_json_ku64(&j, "max_bytes", w->before.max_bytes);
    jst_json_ku64(&j, "entries_before", w->before.entries);
    jst_json_ku64(&j, "bytes_before", w->before.size_bytes);
    jst_json_ku64(&j, "entries_after", w->after.entries);
    jst_json_ku64(&j, "bytes_after", w->after.size_bytes);
    uint64_t need = maxsize_needed(w);
    jst_json_kopt_u64(&j, "maxsize_needed", need != 0, need);
    jst_json_end(&j);
    jst_json_key(&j, "device");
    jst_json_obj(&j);
    jst_json_ku64(&j, "ordinal", (uint64_t)w->ordinal);
    jst_json_kstr(&j, "name", w->target.gpu);
    jst_json_ku64(&j, "cc", w->cc);
    jst_json_ku64(&j, "driver_version", w->target.driver_version);
    jst_json_kstr(&j, "driver", w->target.driver[0] ? w->target.driver : NULL);
    jst_json_end(&j);
    jst_json_key(&j, "images");
    jst_json_arr(&j);
    for (size_t i = 0; i < w->n; i++)
        json_img(&j, &w->v[i]);
    jst_json_end(&j);
    jst_json_key(&j, "summary");
    jst_json_obj(&j);
    jst_json_ku64(&j, "need_jit", w->n - s.dup);
    jst_json_ku64(&j, "warmed", s.warmed);
    jst_json_ku64(&j, "cached", s.cached);
    jst_json_ku64(&j, "not_warmed", s.bad);
    jst_json_ku64(&j, "kernels", s.kernels);
    jst_json_kdouble(&j, "seconds", (double)w->total_ns / 1e9);
    jst_json_ku64(&j, "sass", w->sass);
    jst_json_ku64(&j, "empty", w->empty);
    jst_json_ku64(&j, "cannot_run", w->cannot_run);
    jst_json_ku64(&j, "other_gpus", w->other_gpus);
    jst_json_ku64(&j, "damaged", w->damaged);
    jst_json_end(&j);
    jst_json_end(&j);
    return jst_json_finish(&j);
}
