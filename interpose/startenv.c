/*
 * What the process started with, kept by the constructor: the path of this
 * library, and the LD_PRELOAD and JITSTALL_DIR entries that the exec
 * wrappers put back into a child's environment (interpose/exec.c). Also the
 * one way the preload adds to the environment (NVTX_INJECTION64_PATH,
 * interpose/nvtx.c).
 *
 * Every process the preload goes into pays for this, most of them programs
 * that never call the driver, so it is kept small: no heap (setenv would
 * set malloc up, a few syscalls and pages), no realpath (a readlink per
 * path component), and the strings packed into one page
 * (docs/PERFORMANCE.md, "Idle cost").
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "state.h"
#include "startenv.h"

extern char **environ;

#define JST_START_STR 4096 /* the longest entry kept */
#define JST_ENV_SLOTS 512  /* environments up to this size get no malloc */

/* What a start writes, a few hundred bytes, lies on a page or two: the
 * pointers in .data (state.h), the strings and then the environment array
 * one after the other in an arena. (Aligning the arena to a page would
 * align all of .bss, and push crtstuff's flag, written at exit, off the
 * page the loader clears anyway: one fault more, not less.) */
JST_START_DATA static struct {
    char *preload, *dir, *self;
    size_t used;
} st;
static char arena[4 * JST_START_STR + 64 + (JST_ENV_SLOTS + 1) * sizeof(char *)]
    __attribute__((aligned(64)));

static char *keep(const char *a, const char *b, const char *c)
{
    size_t la = strlen(a), lb = strlen(b), lc = strlen(c);
    if (la + lb + lc >= JST_START_STR || st.used + la + lb + lc + 1 > 4 * JST_START_STR + 64)
        return NULL;
    char *p = arena + st.used;
    memcpy(p, a, la);
    memcpy(p + la, b, lb);
    memcpy(p + la + lb, c, lc);
    p[la + lb + lc] = '\0';
    st.used += la + lb + lc + 1;
    return p;
}

static char *keep_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? keep(name, "=", v) : NULL;
}

/* Our path as the loader has it: absolute when found through the search
 * path or given so; a relative LD_PRELOAD is made absolute against the
 * directory we started in, as NVTX's dlopen and a child may run elsewhere. */
static char *self_find(void)
{
    Dl_info info;
    if (!dladdr((void *)jst_startenv_save, &info) || !info.dli_fname || !*info.dli_fname)
        return NULL;
    if (info.dli_fname[0] == '/')
        return keep(info.dli_fname, "", "");
    char cwd[JST_START_STR];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    const char *rel = info.dli_fname;
    while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    return keep(cwd, "/", rel);
}

void jst_startenv_save(void)
{
    st.preload = keep_env("LD_PRELOAD");
    st.dir = keep_env("JITSTALL_DIR");
    st.self = self_find();
}

const char *jst_self_path(void)
{
    return st.self ? st.self : "";
}

const char *jst_start_preload(void)
{
    return st.preload ? st.preload : "";
}

const char *jst_start_dir(void)
{
    return st.dir ? st.dir : "";
}

/* glibc's setenv and putenv copy an environment array they did not make
 * before changing it, and unsetenv edits it in place, so an array of ours
 * stays correct whatever the program does with its environment later. */
const char *jst_env_add(const char *name, const char *value)
{
    char *entry = keep(name, "=", value);
    if (!entry)
        return NULL;
    size_t n = 0;
    while (environ && environ[n])
        n++;
    if (n + 2 > JST_ENV_SLOTS)
        return putenv(entry) == 0 ? entry : NULL;
    /* After the strings, aligned; the strings never grow past this point
     * again (the constructor is done with them). */
    size_t at = (st.used + sizeof(char *) - 1) & ~(sizeof(char *) - 1);
    char **env = (char **)(void *)(arena + at);
    if (n)
        memcpy(env, environ, n * sizeof *env);
    env[n] = entry;
    env[n + 1] = NULL;
    st.used = at + (n + 2) * sizeof *env;
    environ = env;
    return entry;
}
