/*
 * Warm bundles: `jitstall warm --run --bundle DIR -- CMD` and `jitstall warm
 * --check DIR` (implementation: analyzer/bundle.c, the runs and the second
 * run's verdicts; analyzer/bundle_manifest.c, DIR/jitstall-bundle.json;
 * analyzer/bundle_fw.c, the frameworks' versions; analyzer/bundle_check.c,
 * the manifest against this machine). The schema of
 * the manifest is in docs/bundle.md.
 */
#ifndef JST_ANALYZER_BUNDLE_H
#define JST_ANALYZER_BUNDLE_H

#include <stddef.h>
#include <stdint.h>

#define JST_BUNDLE_FILE "jitstall-bundle.json"
#define JST_BUNDLE_TRACES "jitstall-traces"

/* One cache a bundle holds: where its variable points and what is there. */
struct jst_bundle_cache {
    const char *name;  /* "cuda", "triton", ... (static) */
    const char *env;   /* the variable that moves it: "TRITON_CACHE_DIR" (static) */
    const char *label; /* "the driver's JIT cache" (static) */
    char path[4096];   /* where the runs had it */
    int user_set;      /* the user's own setting was kept: path is theirs */
    int in_bundle;     /* path is DIR/name */
    uint64_t files, bytes;
};

#define JST_BUNDLE_N_CACHES 7
/* The caches jitstall knows, in the order the output lists them. */
extern const struct jst_bundle_cache jst_bundle_caches[JST_BUNDLE_N_CACHES];

/* Whether an environment variable NAME (up to '=' or the end) enters a
 * framework's cache key or decides whether the driver JITs: the settings the
 * manifest keeps and --check compares. The variables that only say where a
 * cache lives or what it keeps (bundle caches, size thresholds) are not. */
int jst_bundle_key_setting(const char *name);

/* Files and bytes under path (regular files, not following links; at most
 * a bounded number of directories deep). */
void jst_bundle_count(const char *path, uint64_t *files, uint64_t *bytes);

/* What the manifest records about the machine the bundle was made on. */
struct jst_bundle_device {
    int known;
    char name[128];
    unsigned cc;
    uint64_t driver_version; /* cuDriverGetVersion: 13000 */
    char release[32];        /* the kernel module's, "580.159.04", or "" */
};

/* A framework the program mapped a shared object of (analyzer/bundle_fw.c). */
struct jst_bundle_fw {
    char name[16];    /* "triton" */
    char version[64]; /* "3.1.0", or "" when no dist-info names it */
    char site[4096];  /* the site-packages directory it was imported from */
};
#define JST_BUNDLE_MAX_FW 16

struct jst_run;
/* The frameworks of the run's traces (module maps), each once per site. */
size_t jst_bundle_fw_from_run(const struct jst_run *run, struct jst_bundle_fw *out, size_t max);
/* pkg's version from the <dist>-<version>.dist-info names in site: 0 with
 * ver ("" when none names it), or -1 when site cannot be read. */
int jst_bundle_fw_version(const char *site, const char *pkg, char *ver, size_t n);

/* Writes DIR/jitstall-bundle.json (beside, then renamed). 0, or -1 with a
 * message in err. */
int jst_bundle_manifest_write(const char *dir, const struct jst_bundle_device *dev,
                              const struct jst_bundle_cache *caches, size_t n_caches,
                              const struct jst_bundle_fw *fw, size_t n_fw, char **argv,
                              size_t compiles, size_t hits, size_t again, char *err, size_t errlen);

/* The commands (argv[0] is "warm"): exit status 0, 1 or 2. */
int jst_bundle_run(int argc, char **argv);
int jst_bundle_check(int argc, char **argv);
/* Whether argv (a `warm` command line) asks for --run or --check. */
int jst_bundle_wanted(int argc, char **argv);

#endif
