/*
 * Why JAX compiled although its persistent cache was on (analyzer/miss.h).
 * JAX keeps each compiled program as a file at the cache's top level named
 * by its key: the module's name ("jit_f"), a dash and 64 hex digits of a
 * hash of everything the compile depends on (the computation, jaxlib's
 * version, the platform, XLA_FLAGS and --xla flags, the compile options,
 * the GPUs); some versions add "-cache" (the entry) and "-atime" (its last
 * use) to the name. A hit touches the entry. JAX writes an entry only for a
 * compile that took at least its minimum compile time (1 s unless
 * JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS says otherwise) and whose
 * entry is at least its minimum size.
 *
 * So, where the cache is still there when the report runs, for each module
 * the process compiled: an entry of that name older than the process is a
 * near miss (the key's inputs changed); none at all, neither older nor
 * written during the process, is a compile JAX did not keep, and a compile
 * under a second is why.
 *
 * The cache is input from a file system the report does not own: at most
 * MAX_FILES names are looked at, and only regular files count.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "miss.h"
#include "sfmt.h"

#define MAX_FILES 65536
#define HASH_HEX 64
#define MIN_COMPILE_NS 1000000000ull /* JAX's default minimum compile time */

/* The module of a cache file's name: its length before "-<64 hex>" (and an
 * optional "-cache" or "-atime"), or 0 when the name is no entry. */
static size_t module_len(const char *name)
{
    size_t n = strlen(name);
    if (n > 6 && (!strcmp(name + n - 6, "-cache") || !strcmp(name + n - 6, "-atime")))
        n -= 6;
    if (n < HASH_HEX + 2 || name[n - HASH_HEX - 1] != '-')
        return 0;
    for (size_t i = n - HASH_HEX; i < n; i++)
        if (!strchr("0123456789abcdef", name[i]))
            return 0;
    return n - HASH_HEX - 1;
}

int jst_jax_miss_words(const char *cache, uint64_t from_ns, uint64_t to_ns,
                       const struct jst_jax_compile *c, size_t n_c, char *buf, size_t n)
{
    return jst_jax_miss_words_limits(cache, from_ns, to_ns, c, n_c, NULL, buf, n);
}

int jst_jax_miss_words_limits(const char *cache, uint64_t from_ns, uint64_t to_ns,
                              const struct jst_jax_compile *c, size_t n_c,
                              const struct jst_jax_limits *lim, char *buf, size_t n)
{
    uint64_t min_ns = lim && lim->known ? lim->min_compile_ns : MIN_COMPILE_NS;
    buf[0] = 0;
    if (!n_c || n < 2)
        return 0;
    DIR *d = opendir(cache);
    if (!d)
        return 0;
    /* per compiled module: an entry older than the process, one of its time */
    unsigned char *older = calloc(n_c, 1), *during = calloc(n_c, 1);
    if (!older || !during) {
        free(older);
        free(during);
        closedir(d);
        return 0;
    }
    struct dirent *de;
    size_t seen = 0;
    while (seen < MAX_FILES && (de = readdir(d))) {
        seen++;
        size_t ml = module_len(de->d_name);
        if (!ml)
            continue;
        char path[4096];
        struct stat st;
        if ((size_t)snprintf(path, sizeof path, "%s/%s", cache, de->d_name) >= sizeof path ||
            lstat(path, &st) || !S_ISREG(st.st_mode))
            continue;
        uint64_t t = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
        for (size_t i = 0; i < n_c; i++)
            if (strlen(c[i].module) == ml && !strncmp(c[i].module, de->d_name, ml)) {
                if (t < from_ns)
                    older[i] = 1;
                else if (t <= to_ns)
                    during[i] = 1;
            }
    }
    closedir(d);
    /* the first of each kind, and how many */
    size_t changed = 0, short_kept = 0, not_kept = 0, first_changed = 0, first_short = 0,
           first_not = 0;
    for (size_t i = 0; i < n_c; i++) {
        if (older[i]) {
            if (!changed++)
                first_changed = i;
        } else if (!during[i] && c[i].dur_ns < min_ns) {
            if (!short_kept++)
                first_short = i;
        } else if (!during[i]) {
            if (!not_kept++)
                first_not = i;
        }
    }
    free(older);
    free(during);
    char more[64];
    if (changed) {
        jst_sfmt(more, sizeof more, changed > 1 ? " (and %zu more)" : "", changed - 1);
        jst_sfmt(buf, n,
                 "it missed: the cache held %s%s from an earlier run under another key: the "
                 "computation (shapes, dtypes, code), jaxlib, XLA flags, compile options or GPUs "
                 "changed",
                 c[first_changed].module, more);
    }
    if (short_kept) {
        char lim_words[64];
        if (lim && lim->known)
            jst_sfmt(lim_words, sizeof lim_words, "%.2f s here", (double)min_ns / 1e9);
        else
            jst_sfmt(lim_words, sizeof lim_words, "1 s unless set");
        jst_sfmt(more, sizeof more, short_kept > 1 ? " (and %zu more)" : "", short_kept - 1);
        jst_sfmt(buf + strlen(buf), n - strlen(buf),
                 "%sJAX did not keep %s%s (%.2f s): it keeps compiles of at least "
                 "JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS (%s); set it to 0",
                 buf[0] ? "; " : "", c[first_short].module, more,
                 (double)c[first_short].dur_ns / 1e9, lim_words);
    }
    if (not_kept) {
        jst_sfmt(more, sizeof more, not_kept > 1 ? " (and %zu more)" : "", not_kept - 1);
        if (lim && lim->known && lim->any_size)
            jst_sfmt(buf + strlen(buf), n - strlen(buf),
                     "%sJAX did not keep %s%s although its thresholds keep every entry: the "
                     "cache was not on when it compiled (set after the compile, or the program "
                     "sets jax_compilation_cache_dir itself)",
                     buf[0] ? "; " : "", c[first_not].module, more);
        else
            jst_sfmt(buf + strlen(buf), n - strlen(buf),
                     "%sJAX did not keep %s%s: under JAX_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES, "
                     "or the cache was set after the compile",
                     buf[0] ? "; " : "", c[first_not].module, more);
    }
    return buf[0] != 0;
}
