/*
 * The frameworks' compile caches, looked at once per process: Triton's,
 * Inductor's, JAX's, Numba's and CuPy's. A first call that compiles is cheap
 * to fix when the framework can keep what it compiled, so the report wants to
 * know, for each, which directory was in effect, whether it existed before
 * the compiles, whether it is writable, and whether it lies on storage that
 * is gone with the container (tmpfs, or an overlay's upper layer). One
 * FW_CACHE record per framework (docs/FORMAT.md, `fw_cache`), written when a
 * Python process opens its trace, or else just before its first compile
 * record: never in a process that neither runs Python nor compiles.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fwcache.h"
#include "real.h"
#include "state.h"

/* Names counted in a cache directory, at most: whether a cache is empty or
 * holds a few entries is what the report needs, and a directory of 150,000
 * names would cost each framework's probe milliseconds. Past it the record
 * says "more than". */
#define FW_MAX_ENTRIES 1000
/* Bytes of a cache path kept in its record: a longer one is cut short (its
 * full length recorded), so that the record still fits. */
#define FW_PATH_REC 4096
#define FW_MOUNTINFO_MAX (4u << 20)

static _Atomic int fw_done;

/* The user name as Python's getpass.getuser() finds it. */
static void user_name(char *out, size_t cap)
{
    static const char *const vars[] = {"LOGNAME", "USER", "LNAME", "USERNAME"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++) {
        const char *v = getenv(vars[i]);
        if (v && *v) {
            snprintf(out, cap, "%s", v);
            return;
        }
    }
    struct passwd pw, *res = NULL;
    char buf[1024];
    if (getpwuid_r(getuid(), &pw, buf, sizeof buf, &res) == 0 && res)
        snprintf(out, cap, "%s", res->pw_name);
    else
        snprintf(out, cap, "%u", (unsigned)getuid());
}

/* Decodes mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
    char *o = s;
    for (char *p = s; *p; p++) {
        if (p[0] == '\\' && p[1] >= '0' && p[1] <= '7' && p[2] >= '0' && p[2] <= '7' &&
            p[3] >= '0' && p[3] <= '7') {
            *o++ = (char)((p[1] - '0') * 64 + (p[2] - '0') * 8 + (p[3] - '0'));
            p += 3;
        } else {
            *o++ = *p;
        }
    }
    *o = '\0';
}

/* The mount holding the existing path real (resolved): its mount point and
 * file system type, from /proc/self/mountinfo (the longest mount point that
 * is a prefix of it; the last one listed wins a tie, as it hides the
 * others). 0, or -1 when unknown. */
static int mount_of(const char *real, char *mnt, size_t mcap, char *type, size_t tcap)
{
    FILE *f = fopen("/proc/self/mountinfo", "re");
    if (!f)
        return -1;
    char *line = NULL;
    size_t cap = 0, best = 0;
    int found = 0;
    ssize_t n;
    while ((n = getline(&line, &cap, f)) > 0) {
        /* id parent major:minor root mountpoint options... - type source super */
        char *save = NULL, *tok = strtok_r(line, " \n", &save);
        char *mp = NULL;
        for (int i = 0; tok && i < 4; i++) {
            tok = strtok_r(NULL, " \n", &save);
            if (i == 3)
                mp = tok;
        }
        if (!mp)
            continue;
        while ((tok = strtok_r(NULL, " \n", &save)) != NULL && strcmp(tok, "-") != 0)
            ;
        char *fstype = tok ? strtok_r(NULL, " \n", &save) : NULL;
        if (!fstype)
            continue;
        unescape(mp);
        size_t l = strlen(mp);
        int prefix = strncmp(real, mp, l) == 0 && (real[l] == '/' || real[l] == '\0' || l == 1);
        if (prefix && l >= best) {
            best = l;
            snprintf(mnt, mcap, "%s", mp);
            snprintf(type, tcap, "%s", fstype);
            found = 1;
        }
    }
    free(line);
    fclose(f);
    return found ? 0 : -1;
}

/* Names in directory p, up to FW_MAX_ENTRIES; *more when there are more.
 * Opened as a directory only, never blocking: a FIFO or a device put there
 * since it was looked at fails to open instead. */
static uint64_t count_entries(const char *p, int *more)
{
    *more = 0;
    int fd = open(p, O_RDONLY | O_DIRECTORY | O_NONBLOCK | O_CLOEXEC);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    uint64_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) {
            if (n == FW_MAX_ENTRIES) {
                *more = 1;
                break;
            }
            n++;
        }
    closedir(d);
    return n;
}

/* What the record says of path (len bytes): whether it is a directory, and
 * if not, whether it could be made (its nearest existing ancestor is a
 * directory this process may write to); its entries; its mount. Nothing is
 * opened but a directory: a FIFO or a device there is never read. real, mnt
 * and probe have PATH_MAX bytes each. */
static void fw_probe(struct jst_rec *r, const char *path, size_t len, char *real, char *mnt,
                     char *probe, char *type, size_t tcap)
{
    if (len >= PATH_MAX) { /* no system call takes it: it cannot be used */
        jst_rec_u64(r, JST_F_EXISTS, 0);
        jst_rec_u64(r, JST_F_WRITABLE, 0);
        return;
    }
    struct stat st;
    int found = stat(path, &st) == 0;
    int exists = found && S_ISDIR(st.st_mode);
    jst_rec_u64(r, JST_F_EXISTS, (uint64_t)exists);
    /* The nearest existing ancestor: where the directory would be made. */
    memcpy(probe, path, len + 1);
    while (!found && probe[0]) {
        char *sl = strrchr(probe, '/');
        if (!sl)
            snprintf(probe, PATH_MAX, ".");
        else if (sl == probe)
            probe[1] = '\0';
        else
            *sl = '\0';
        if (stat(probe, &st) == 0) {
            found = 1;
            break;
        }
        if (strcmp(probe, "/") == 0 || strcmp(probe, ".") == 0)
            break;
    }
    int dir = found && S_ISDIR(st.st_mode);
    if (found && !dir)
        jst_rec_u64(r, JST_F_NOT_DIR, 1); /* a FIFO, a device, a file: no cache there */
    jst_rec_u64(r, JST_F_WRITABLE, dir && access(probe, W_OK) == 0);
    if (exists) {
        int more;
        jst_rec_u64(r, JST_F_ENTRIES, count_entries(path, &more));
        if (more)
            jst_rec_u64(r, JST_F_ENTRIES_MORE, 1);
    }
    if (dir && realpath(probe, real) && mount_of(real, mnt, PATH_MAX, type, tcap) == 0) {
        jst_rec_str(r, JST_F_FS_TYPE, type);
        jst_rec_str(r, JST_F_MOUNT, mnt);
        int eph = !strcmp(type, "tmpfs") || !strcmp(type, "ramfs") || !strcmp(type, "overlay") ||
                  !strcmp(type, "overlayfs");
        jst_rec_u64(r, JST_F_EPHEMERAL, (uint64_t)eph);
    }
}

/* One record: framework fw, variable env, default path dflt (NULL: none). */
static void fw_record(const char *fw, const char *env, const char *dflt)
{
    const char *v = getenv(env);
    int from_env = v && *v;
    const char *path = from_env ? v : dflt;
    /* On the heap: a hook may run on a thread with a small stack. */
    size_t rcap = 2 * PATH_MAX + 512;
    char *buf = malloc(3 * PATH_MAX + rcap);
    if (!buf)
        return;
    char *real = buf, *mnt = buf + PATH_MAX, *probe = buf + 2 * PATH_MAX;
    uint8_t *rb = (uint8_t *)buf + 3 * PATH_MAX;
    char type[64] = "";
    struct jst_rec r;
    jst_rec_begin(&r, rb, rcap, JST_REC_FW_CACHE);
    jst_rec_u64(&r, JST_F_PHASE, 0);
    jst_rec_u64(&r, JST_F_START_NS, jst_now_ns());
    jst_rec_str(&r, JST_F_FRAMEWORK, fw);
    jst_rec_str(&r, JST_F_ENV_NAME, env);
    jst_rec_u64(&r, JST_F_CACHE_PATH_ENV, (uint64_t)from_env);
    if (path) {
        size_t len = strlen(path), keep = len;
        if (keep > FW_PATH_REC) { /* cut where a UTF-8 character begins */
            keep = FW_PATH_REC;
            while (keep > 0 && ((unsigned char)path[keep] & 0xC0) == 0x80)
                keep--;
        }
        jst_rec_strn(&r, JST_F_CACHE_PATH, path, keep);
        if (len > FW_PATH_REC)
            jst_rec_u64(&r, JST_F_PATH_LEN, len);
        fw_probe(&r, path, len, real, mnt, probe, type, sizeof type);
    }
    jst_emit(&r, 0);
    free(buf);
}

void jst_fwcache_once(void)
{
    if (atomic_exchange(&fw_done, 1))
        return;
    int saved = errno; /* its time counts in the caller's event */
    const char *home = getenv("HOME");
    char *d = malloc(4 * PATH_MAX);
    if (d) {
        char *triton = d, *inductor = d + PATH_MAX, *cupy = d + 2 * PATH_MAX, user[256];
        char *ext = d + 3 * PATH_MAX; /* torch.utils.cpp_extension's build root */
        int have_home = home && *home;
        const char *xdg = getenv("XDG_CACHE_HOME");
        if (xdg && *xdg)
            snprintf(ext, PATH_MAX, "%s/torch_extensions", xdg);
        else
            snprintf(ext, PATH_MAX, "%s/.cache/torch_extensions", have_home ? home : "");
        snprintf(triton, PATH_MAX, "%s/.triton/cache", have_home ? home : "");
        snprintf(cupy, PATH_MAX, "%s/.cupy/kernel_cache", have_home ? home : "");
        const char *tmp = getenv("TMPDIR");
        user_name(user, sizeof user);
        snprintf(inductor, PATH_MAX, "%s/torchinductor_%s", tmp && *tmp ? tmp : "/tmp", user);
        fw_record("triton", "TRITON_CACHE_DIR", have_home ? triton : NULL);
        fw_record("inductor", "TORCHINDUCTOR_CACHE_DIR", inductor);
        fw_record("jax", "JAX_COMPILATION_CACHE_DIR", NULL);
        fw_record("numba", "NUMBA_CACHE_DIR", NULL);
        fw_record("cupy", "CUPY_CACHE_DIR", have_home ? cupy : NULL);
        fw_record("torch_extensions", "TORCH_EXTENSIONS_DIR",
                  have_home || (xdg && *xdg) ? ext : NULL);
        free(d);
    }
    errno = saved;
}

int jst_fwcache_python(void)
{
    typedef int (*py_init_fn)(void);
    py_init_fn f = (py_init_fn)jst_real_dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    return f && f();
}
