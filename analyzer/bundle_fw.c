/*
 * The frameworks a warm bundle depends on, and their versions: a trace does
 * not record a framework's version, but it records every shared object the
 * program mapped (module maps). An object under .../site-packages/<pkg>/ (or
 * dist-packages) belongs to the installed package <pkg>, whose version is in
 * the name of its <dist>-<version>.dist-info directory beside it. --check
 * reads the same directory again, so a framework upgraded in place (which
 * changes its cache keys: Triton and Inductor key on their own version) is
 * named before the program starts.
 */
#include "bundle.h"

#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include "model.h"

/* Packages whose version enters their compile caches' keys. */
static const char *const fw_pkgs[] = {"torch", "triton", "jaxlib", "jax", "cupy", "numba"};

int jst_bundle_fw_version(const char *site, const char *pkg, char *ver, size_t n)
{
    DIR *d = opendir(site);
    if (!d)
        return -1;
    size_t pl = strlen(pkg);
    int found = 0; /* 2: exact name, 1: pkg_cudaNN (cupy_cuda12x) */
    struct dirent *e;
    while ((e = readdir(d))) {
        const char *name = e->d_name;
        size_t len = strlen(name);
        if (len < 11 || strcmp(name + len - 10, ".dist-info"))
            continue;
        const char *dash = strchr(name, '-');
        if (!dash)
            continue;
        size_t dl = (size_t)(dash - name);
        int q = dl == pl && !strncmp(name, pkg, pl)                                         ? 2
                : dl > pl + 5 && !strncmp(name, pkg, pl) && !strncmp(name + pl, "_cuda", 5) ? 1
                                                                                            : 0;
        if (q <= found)
            continue;
        found = q;
        size_t vl = (size_t)(name + len - 10 - (dash + 1));
        snprintf(ver, n, "%.*s", (int)(vl < n ? vl : n - 1), dash + 1);
    }
    closedir(d);
    if (!found)
        ver[0] = 0;
    return 0;
}

/* "<site>/<pkg>/..." in path: the site directory into site, the package's
 * index in fw_pkgs; -1 when path is in none. */
static int fw_of_path(const char *path, char *site, size_t n)
{
    static const char *const roots[] = {"/site-packages/", "/dist-packages/"};
    for (size_t r = 0; r < 2; r++) {
        const char *s = strstr(path, roots[r]);
        if (!s)
            continue;
        const char *pkg = s + strlen(roots[r]);
        for (size_t i = 0; i < sizeof(fw_pkgs) / sizeof(fw_pkgs[0]); i++) {
            size_t pl = strlen(fw_pkgs[i]);
            if (!strncmp(pkg, fw_pkgs[i], pl) && pkg[pl] == '/') {
                size_t sl = (size_t)(pkg - 1 - path);
                if (sl >= n)
                    return -1;
                memcpy(site, path, sl);
                site[sl] = 0;
                return (int)i;
            }
        }
    }
    return -1;
}

size_t jst_bundle_fw_from_run(const struct jst_run *run, struct jst_bundle_fw *out, size_t max)
{
    size_t k = 0;
    char site[sizeof(out->site)];
    for (size_t i = 0; i < run->n_procs; i++) {
        const struct jst_process *p = &run->procs[i];
        for (size_t m = 0; m < p->n_mods && k < max; m++) {
            int f = p->mods[m].path ? fw_of_path(p->mods[m].path, site, sizeof(site)) : -1;
            if (f < 0)
                continue;
            size_t j = 0;
            while (j < k && (strcmp(out[j].name, fw_pkgs[f]) || strcmp(out[j].site, site)))
                j++;
            if (j < k)
                continue;
            snprintf(out[k].name, sizeof(out[k].name), "%s", fw_pkgs[f]);
            snprintf(out[k].site, sizeof(out[k].site), "%s", site);
            if (jst_bundle_fw_version(site, fw_pkgs[f], out[k].version, sizeof(out[k].version)) !=
                0)
                out[k].version[0] = 0;
            k++;
        }
    }
    return k;
}
