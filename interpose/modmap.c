/*
 * The module map for the preload: every loaded ELF object with its path, load
 * bias, address range, GNU build-id, file size and mtime, written as
 * JST_REC_MODMAP so the analyzer can symbolize stacks later, on another
 * machine. Kept current as the program dlopens and dlcloses (Python loads the
 * CUDA libraries late): before each stack capture, the loader's load/unload
 * counters are compared with the last map, and what appeared or went is
 * written (DLOPEN / DLCLOSE) before the stack that may need it.
 *
 * Why not wrap dlopen: glibc resolves a bare name along the RUNPATH/RPATH of
 * the object that called dlopen, found from dlopen's return address. A
 * wrapper makes libjitstall.so that caller, so a library that dlopens its
 * neighbours through $ORIGIN (PyTorch, CUDA's pip wheels) would fail to load
 * under the preload. Checking at capture time changes nothing for the program.
 *
 * Locking: the objects are collected inside dl_iterate_phdr (glibc's
 * dl_load_write_lock held) into plain memory; paths, stat() and the records
 * are done after it returns, so the writer's lock is never taken under the
 * loader's lock.
 */
#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "backtrace.h"
#include "state.h"
#include "trace.h"

#define MM_BUILD_ID_MAX 64

struct mm_obj {
    char *name; /* malloc'd; as the loader has it ("" for the program) */
    char *path; /* malloc'd; resolved after collection */
    uint64_t bias, start, end;
    uint8_t build_id[MM_BUILD_ID_MAX];
    size_t build_id_len;
    uint64_t file_size, mtime_ns;
    int have_stat;
};

struct mm_set {
    struct mm_obj *v;
    size_t n, cap;
    int oom;
};

static pthread_mutex_t mm_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mm_set mm_known;
static int mm_started; /* jst_modmap_initial() has run */
/* The loader's dlpi_adds / dlpi_subs when the map was last taken. */
static unsigned long long mm_adds, mm_subs;
static __thread int mm_busy __attribute__((tls_model("initial-exec")));

static pthread_once_t mm_once = PTHREAD_ONCE_INIT;

static void mm_set_free(struct mm_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        free(s->v[i].name);
        free(s->v[i].path);
    }
    free(s->v);
    memset(s, 0, sizeof *s);
}

/* Reads the GNU build-id from a PT_NOTE segment in memory. The segment is read
 * only when it lies inside one of the object's PT_LOAD segments (mapped). */
static void mm_note_build_id(const struct dl_phdr_info *info, const ElfW(Phdr) * note,
                             struct mm_obj *o)
{
    uintptr_t lo = info->dlpi_addr + note->p_vaddr;
    uintptr_t hi = lo + note->p_memsz;
    int mapped = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t s = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && lo >= s && hi <= s + ph->p_filesz)
            mapped = 1;
    }
    if (!mapped || hi < lo)
        return;
    size_t align = note->p_align == 8 ? 8 : 4;
    const uint8_t *p = (const uint8_t *)lo, *end = (const uint8_t *)hi;
    while ((size_t)(end - p) >= sizeof(ElfW(Nhdr))) {
        ElfW(Nhdr) nh;
        memcpy(&nh, p, sizeof nh);
        size_t name_off = sizeof nh;
        size_t desc_off = name_off + ((nh.n_namesz + align - 1) & ~(align - 1));
        size_t next = desc_off + ((nh.n_descsz + align - 1) & ~(align - 1));
        if (desc_off > (size_t)(end - p) || next > (size_t)(end - p) || next < desc_off)
            return;
        if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
            memcmp(p + name_off, "GNU", 4) == 0 && nh.n_descsz > 0) {
            o->build_id_len = nh.n_descsz < MM_BUILD_ID_MAX ? nh.n_descsz : MM_BUILD_ID_MAX;
            memcpy(o->build_id, p + desc_off, o->build_id_len);
            return;
        }
        p += next;
    }
}

/* dl_iterate_phdr callback: copy out what the loader knows. No I/O, no writer. */
static int mm_collect_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    struct mm_set *s = data;
    if (s->n == s->cap) {
        size_t ncap = s->cap ? s->cap * 2 : 64;
        struct mm_obj *nv = realloc(s->v, ncap * sizeof *nv);
        if (!nv) {
            s->oom = 1;
            return 1;
        }
        s->v = nv;
        s->cap = ncap;
    }
    struct mm_obj *o = &s->v[s->n];
    memset(o, 0, sizeof *o);
    o->bias = info->dlpi_addr;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD) {
            uint64_t a = info->dlpi_addr + ph->p_vaddr;
            if (a < lo)
                lo = a;
            if (a + ph->p_memsz > hi)
                hi = a + ph->p_memsz;
        } else if (ph->p_type == PT_NOTE && o->build_id_len == 0) {
            mm_note_build_id(info, ph, o);
        }
    }
    if (hi == 0) /* nothing mapped */
        return 0;
    o->start = lo;
    o->end = hi;
    /* "" is the main program; resolved after the walk. */
    o->name = strdup(info->dlpi_name ? info->dlpi_name : "");
    if (!o->name) {
        s->oom = 1;
        return 1;
    }
    s->n++;
    return 0;
}

/* Turns the loader's name into a path another process can open, and stats
 * it; -1 when out of memory. */
static int mm_resolve(struct mm_obj *o)
{
    char *buf = malloc(PATH_MAX); /* not on the stack: a hook may run on a small one */
    if (!buf)
        return -1;
    const char *p = o->name;
    if (p[0] == '\0') {
        ssize_t k = readlink("/proc/self/exe", buf, PATH_MAX - 1);
        if (k > 0) {
            buf[k] = '\0';
            p = buf;
        }
    } else if (p[0] != '/' && strchr(p, '/') && realpath(p, buf)) {
        /* dlopen("./x.so") keeps the relative name; the cwd is still the one it used. */
        p = buf;
    }
    o->path = strdup(p);
    free(buf);
    if (!o->path)
        return -1;
    struct stat st;
    if (o->path[0] == '/' && stat(o->path, &st) == 0) {
        o->have_stat = 1;
        o->file_size = (uint64_t)st.st_size;
        o->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000ull + (uint64_t)st.st_mtim.tv_nsec;
    }
    return 0;
}

/* Same object: same loader name at the same place. */
static int mm_same(const struct mm_obj *a, const struct mm_obj *b)
{
    return a->bias == b->bias && a->start == b->start && a->end == b->end &&
           strcmp(a->name, b->name) == 0;
}

static const struct mm_obj *mm_find(const struct mm_set *s, const struct mm_obj *o)
{
    for (size_t i = 0; i < s->n; i++)
        if (mm_same(&s->v[i], o))
            return &s->v[i];
    return NULL;
}

/* The objects loaded now. Those already in known keep their path and stat
 * (a program dlopening hundreds of Python extensions must not stat every
 * object each time); only new ones are resolved. */
static int mm_collect(struct mm_set *s, const struct mm_set *known)
{
    memset(s, 0, sizeof *s);
    dl_iterate_phdr(mm_collect_cb, s);
    for (size_t i = 0; i < s->n && !s->oom; i++) {
        struct mm_obj *o = &s->v[i];
        const struct mm_obj *k = known ? mm_find(known, o) : NULL;
        if (k) {
            o->path = strdup(k->path);
            o->have_stat = k->have_stat;
            o->file_size = k->file_size;
            o->mtime_ns = k->mtime_ns;
            s->oom = !o->path;
        } else {
            s->oom = mm_resolve(o) < 0;
        }
    }
    if (s->oom) {
        mm_set_free(s);
        return -1;
    }
    return 0;
}

static void mm_write(const struct mm_obj *o, unsigned event, int flush)
{
    size_t cap = JST_REC_HDR_SIZE + PATH_MAX + MM_BUILD_ID_MAX + 256;
    uint8_t *buf = malloc(cap); /* NULL: the record overflows and is dropped */
    struct jst_rec r;
    jst_rec_begin(&r, buf, buf ? cap : 0, JST_REC_MODMAP);
    jst_rec_u64(&r, JST_F_MOD_EVENT, event);
    jst_rec_str(&r, JST_F_MOD_PATH, o->path);
    jst_rec_u64(&r, JST_F_MOD_BIAS, o->bias);
    jst_rec_u64(&r, JST_F_MOD_START, o->start);
    jst_rec_u64(&r, JST_F_MOD_END, o->end);
    if (o->build_id_len)
        jst_rec_bytes(&r, JST_F_BUILD_ID, o->build_id, o->build_id_len);
    if (o->have_stat) {
        jst_rec_u64(&r, JST_F_FILE_SIZE, o->file_size);
        jst_rec_u64(&r, JST_F_MTIME_NS, o->mtime_ns);
    }
    jst_emit(&r, flush);
    free(buf);
}

static int mm_gen_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    unsigned long long *g = data;
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs) {
        g[0] = info->dlpi_adds;
        g[1] = info->dlpi_subs;
    }
    return 1; /* the counters are global: one object is enough */
}

void jst_dl_generation(unsigned long long g[2])
{
    g[0] = g[1] = 0;
    dl_iterate_phdr(mm_gen_cb, g);
}

/* A forked child writes a trace of its own, which starts with a full map when
 * it opens: until then, nothing to diff against. */
static void mm_atfork_child(void)
{
    pthread_mutex_init(&mm_lock, NULL);
    mm_set_free(&mm_known);
    __atomic_store_n(&mm_started, 0, __ATOMIC_RELEASE);
    mm_busy = 0;
}

static void mm_atfork_prepare(void)
{
    pthread_mutex_lock(&mm_lock);
}

static void mm_atfork_parent(void)
{
    pthread_mutex_unlock(&mm_lock);
}

static void mm_init(void)
{
    pthread_atfork(mm_atfork_prepare, mm_atfork_parent, mm_atfork_child);
}

void jst_modmap_initial(void)
{
    int saved = errno;
    pthread_once(&mm_once, mm_init);
    /* Read before the walk: a dlopen racing with it shows as a change later. */
    unsigned long long gen[2];
    jst_dl_generation(gen);
    struct mm_set cur;
    if (mm_busy || mm_collect(&cur, NULL) < 0) {
        errno = saved;
        return;
    }
    mm_busy = 1;
    pthread_mutex_lock(&mm_lock);
    for (size_t i = 0; i < cur.n; i++)
        mm_write(&cur.v[i], JST_MOD_INITIAL, i + 1 == cur.n);
    mm_set_free(&mm_known);
    mm_known = cur;
    mm_adds = gen[0];
    mm_subs = gen[1];
    __atomic_store_n(&mm_started, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mm_lock);
    mm_busy = 0;
    errno = saved;
}

void jst_modmap_refresh(int event)
{
    (void)event; /* what appeared is written as DLOPEN, what went as DLCLOSE */
    int saved = errno;
    if (mm_busy || !__atomic_load_n(&mm_started, __ATOMIC_ACQUIRE)) {
        errno = saved;
        return;
    }
    mm_busy = 1;
    pthread_mutex_lock(&mm_lock);
    unsigned long long gen[2];
    jst_dl_generation(gen);
    struct mm_set cur;
    if ((gen[0] != mm_adds || gen[1] != mm_subs || (!gen[0] && !gen[1])) &&
        mm_collect(&cur, &mm_known) == 0) {
        size_t n_new = 0, n_gone = 0, done = 0;
        for (size_t i = 0; i < cur.n; i++)
            n_new += !mm_find(&mm_known, &cur.v[i]);
        for (size_t i = 0; i < mm_known.n; i++)
            n_gone += !mm_find(&cur, &mm_known.v[i]);
        for (size_t i = 0; i < mm_known.n; i++)
            if (!mm_find(&cur, &mm_known.v[i]))
                mm_write(&mm_known.v[i], JST_MOD_DLCLOSE, ++done == n_new + n_gone);
        for (size_t i = 0; i < cur.n; i++)
            if (!mm_find(&mm_known, &cur.v[i]))
                mm_write(&cur.v[i], JST_MOD_DLOPEN, ++done == n_new + n_gone);
        mm_set_free(&mm_known);
        mm_known = cur;
        mm_adds = gen[0];
        mm_subs = gen[1];
    }
    pthread_mutex_unlock(&mm_lock);
    mm_busy = 0;
    errno = saved;
}

/* Keeps the map current without wrapping dlopen (see the top): the loader
 * counts every object added and removed, so a change since the last event
 * means a dlopen or dlclose happened in between. No lock when nothing did. */
void jst_modmap_check(void)
{
    static _Atomic unsigned long long seen_adds, seen_subs;
    unsigned long long c[2];
    jst_dl_generation(c);
    unsigned long long a = atomic_exchange(&seen_adds, c[0]);
    unsigned long long s = atomic_exchange(&seen_subs, c[1]);
    if (a && (a != c[0] || s != c[1]))
        jst_modmap_refresh(a != c[0] ? JST_MOD_DLOPEN : JST_MOD_DLCLOSE);
}
