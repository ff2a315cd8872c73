/*
 * What the process started with, kept by the constructor: the path of this
 * library, the LD_PRELOAD and JITSTALL_DIR entries that the exec wrappers
 * put back into a child's environment (interpose/exec.c), and the identity
 * of descriptor 2, to which alone jitstall's messages go (jst_say). Also the
 * one way the preload adds to the environment (NVTX_INJECTION64_PATH,
 * interpose/nvtx.c).
 *
 * Every process the preload goes into pays for this, most of them programs
 * that never call the driver, so it is kept small: no heap (setenv would
 * set malloc up, a few syscalls and pages), no realpath (a readlink per
 * path component), and what it keeps on the page that the loader has
 * written already (docs/PERFORMANCE.md, "Idle cost").
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "state.h"
#include "startenv.h"

extern char **environ;

#define JST_START_STR 4096 /* the longest entry kept */
#define JST_ENV_SLOTS 512  /* environments up to this size get no malloc */

/* What a start writes, a few hundred bytes: the pointers in .data
 * (state.h), the strings and the environment array in a small arena there
 * too, near the data the loader's relocations have written already (which
 * page each lands on is the linker's choice; e2e.idle checks the count of
 * page faults). What does not fit (long paths, an environment of more than
 * about seventy variables) goes to a large arena in .bss: a page fault
 * more, for those processes only. */
#define JST_START_SMALL 768
JST_START_DATA static struct {
    char *preload, *dir, *self;
    struct jst_file_id *err;
    size_t used_small, used_big;
} st;
JST_START_DATA static char arena_small[JST_START_SMALL] __attribute__((aligned(16)));
static char arena_big[4 * JST_START_STR + 64 + (JST_ENV_SLOTS + 1) * sizeof(char *)]
    __attribute__((aligned(64)));

/* n bytes, aligned for a pointer, from the small arena or else the large;
 * NULL when neither has room. Never freed: the constructor is the only
 * writer. */
JST_IDLE_TEXT static void *start_alloc(size_t n)
{
    n = (n + sizeof(char *) - 1) & ~(sizeof(char *) - 1);
    if (n <= sizeof arena_small - st.used_small) {
        st.used_small += n;
        return arena_small + st.used_small - n;
    }
    if (n <= sizeof arena_big - st.used_big) {
        st.used_big += n;
        return arena_big + st.used_big - n;
    }
    return NULL;
}

/* a, then sep (unless it is 0), then b (unless NULL): no string constants,
 * which would be read from a page of .rodata of their own. */
JST_IDLE_TEXT static char *keep(const char *a, char sep, const char *b)
{
    size_t la = strlen(a), ls = sep != 0, lb = b ? strlen(b) : 0;
    char *p = la + ls + lb < JST_START_STR ? start_alloc(la + ls + lb + 1) : NULL;
    if (!p)
        return NULL;
    memcpy(p, a, la);
    if (sep)
        p[la] = sep;
    if (lb)
        memcpy(p + la + ls, b, lb);
    p[la + ls + lb] = '\0';
    return p;
}

JST_IDLE_TEXT static char *keep_env(const char *name)
{
    const char *v = getenv(name);
    return v && *v ? keep(name, '=', v) : NULL;
}

/* Our path as the loader has it: absolute when found through the search
 * path or given so; a relative LD_PRELOAD is made absolute against the
 * directory we started in, as NVTX's dlopen and a child may run elsewhere. */
JST_IDLE_TEXT static char *self_find(void)
{
    Dl_info info;
    if (!dladdr((void *)jst_startenv_save, &info) || !info.dli_fname || !*info.dli_fname)
        return NULL;
    if (info.dli_fname[0] == '/')
        return keep(info.dli_fname, 0, NULL);
    char cwd[JST_START_STR];
    if (!getcwd(cwd, sizeof cwd))
        return NULL;
    const char *rel = info.dli_fname;
    while (rel[0] == '.' && rel[1] == '/')
        rel += 2;
    return keep(cwd, '/', rel);
}

JST_START_RODATA static const char name_preload[] = "LD_PRELOAD";
JST_START_RODATA static const char name_dir[] = "JITSTALL_DIR";

/* Descriptor 2's identity, in the arena: an fstat, no heap. */
JST_IDLE_TEXT static struct jst_file_id *err_find(void)
{
    struct stat sb;
    if (fstat(2, &sb) != 0)
        return NULL;
    struct jst_file_id *id = start_alloc(sizeof *id);
    if (id) {
        id->dev = sb.st_dev;
        id->ino = sb.st_ino;
    }
    return id;
}

JST_IDLE_TEXT void jst_startenv_save(void)
{
    st.err = err_find();
    st.preload = keep_env(name_preload);
    st.dir = keep_env(name_dir);
    st.self = self_find();
}

JST_IDLE_TEXT const struct jst_file_id *jst_start_stderr(void)
{
    return st.err;
}

JST_START_RODATA static const char none[] = "";

JST_IDLE_TEXT const char *jst_self_path(void)
{
    return st.self ? st.self : none;
}

JST_IDLE_TEXT const char *jst_start_preload(void)
{
    return st.preload ? st.preload : none;
}

JST_IDLE_TEXT const char *jst_start_dir(void)
{
    return st.dir ? st.dir : none;
}

/* glibc's setenv and putenv copy an environment array they did not make
 * before changing it, and unsetenv edits it in place, so an array of ours
 * stays correct whatever the program does with its environment later. */
JST_IDLE_TEXT const char *jst_env_add(const char *name, const char *value)
{
    char *entry = keep(name, '=', value);
    if (!entry)
        return NULL;
    size_t n = 0;
    while (environ && environ[n])
        n++;
    char **env = n + 2 <= JST_ENV_SLOTS ? start_alloc((n + 2) * sizeof *env) : NULL;
    if (!env)
        return putenv(entry) == 0 ? entry : NULL;
    if (n)
        memcpy(env, environ, n * sizeof *env);
    env[n] = entry;
    env[n + 1] = NULL;
    environ = env;
    return entry;
}
