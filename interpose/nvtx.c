/*
 * NVTX injection: libjitstall.so is also the NVTX tool of the process it is
 * preloaded into, so the program's own ranges (nvtxRangePushA, torch.cuda.nvtx
 * .range, cupyx.profiler.time_range, domain ranges with registered strings)
 * mark the queries the report is about.
 *
 * NVTX 3 is header-only: at a program's first NVTX call its loader reads
 * NVTX_INJECTION64_PATH, dlopens that library and calls its
 * InitializeInjectionNvtx2, which fills NVTX's function table (docs/DRIVER.md,
 * "NVTX"). The constructor names this library there when the variable is
 * unset; a tool the user named keeps its place, and the trace gets a note
 * that ranges were not recorded. Layouts are written here from the facts, not
 * taken from NVTX's headers, and every table is size-checked before use.
 *
 * Range events are cheap records, buffered in the zstd stream (no flush): a
 * later flushed record (a load's BEGIN, a call) carries them to disk. Before
 * the trace file exists (it is created at the first driver call) they wait
 * in a small static buffer that is written right after the file's opening
 * records.
 */
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <wchar.h>

#include "sampler.h"
#include "state.h"
#include "nvtx.h"
#include "ready.h"
#include "real.h"
#include "startenv.h"
#include "utf8.h"

/* ---- NVTX's injection interface (docs/DRIVER.md, "NVTX") ---- */

#define NVTX_ETID_CALLBACKS 1
#define NVTX_ETID_VERSIONINFO 3
#define NVTX_CB_MODULE_CORE 1
#define NVTX_CB_MODULE_CORE2 5
/* CORE callback ids */
#define CB_MarkEx 1
#define CB_MarkA 2
#define CB_MarkW 3
#define CB_RangeStartEx 4
#define CB_RangeStartA 5
#define CB_RangeStartW 6
#define CB_RangeEnd 7
#define CB_RangePushEx 8
#define CB_RangePushA 9
#define CB_RangePushW 10
#define CB_RangePop 11
/* CORE2 callback ids */
#define CB2_DomainMarkEx 1
#define CB2_DomainRangeStartEx 2
#define CB2_DomainRangeEnd 3
#define CB2_DomainRangePushEx 4
#define CB2_DomainRangePop 5
#define CB2_DomainRegisterStringA 10
#define CB2_DomainRegisterStringW 11
#define CB2_DomainCreateA 12
#define CB2_DomainCreateW 13

/* What push and pop return when no tool tracks them: the program sees the
 * same values as without jitstall. */
#define JST_NVTX_NO_TRACKING (-2)

typedef void (*jst_nvtx_fn)(void);
typedef const void *(*jst_nvtx_get_table)(uint32_t id);
struct jst_nvtx_callbacks {
    size_t struct_size;
    int (*get_module_table)(int module, jst_nvtx_fn ***out_table, unsigned *out_size);
};
struct jst_nvtx_versioninfo {
    size_t struct_size;
    uint32_t version;
    uint32_t reserved0;
    void (*set_injection_version)(uint32_t version);
};

/* nvtxEventAttributes_t version 2: the fields read here, by offset. */
#define ATTR_OFF_SIZE 2
#define ATTR_OFF_MSGTYPE 32
#define ATTR_OFF_MSG 40
#define ATTR_MIN_SIZE 48
#define MSG_ASCII 1
#define MSG_UNICODE 2
#define MSG_REGISTERED 3

/* ---- state ---- */

#define JST_NVTX_ENV "NVTX_INJECTION64_PATH"
#define JST_NVTX_NAME_MAX 256
#define JST_NVTX_PEND_CAP (64u * 1024u)
#define JST_NVTX_DOMAINS 8

JST_START_DATA static int we_set_env; /* the constructor set NVTX_INJECTION64_PATH */
static _Atomic int preloaded = -1;    /* this copy is the global one (LD_PRELOAD); -1: not asked */
static _Atomic int fork_armed;        /* nvtx_atfork_child is registered */
static char foreign_note[512];        /* note for a tool the user named, "" if none */
static _Atomic uint64_t next_range_id;
static _Atomic uint64_t ready_range_id; /* the first start/end range named for ready */

/* Records made before the trace file exists. */
static pthread_mutex_t pend_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t pend_buf[JST_NVTX_PEND_CAP];
static size_t pend_len;
static int pend_drained; /* the file is open: emit directly */
static uint64_t pend_dropped;

/* Push depth per domain on this thread (slot 0: the default domain). */
struct jst_nvtx_depth {
    const void *domain;
    int depth;
    int ready_at; /* depth of an open range named as JITSTALL_READY says, 0: none */
};
static __thread struct jst_nvtx_depth tls_depth[JST_NVTX_DOMAINS]
    __attribute__((tls_model("initial-exec")));
/* This thread's id, asked of the kernel once (0: not yet). */
static __thread uint32_t tls_tid __attribute__((tls_model("initial-exec")));

/* A domain or registered string: a handle we gave out, the name after it.
 * Kept in one list, so that the same name gets the same handle again. */
struct jst_nvtx_handle {
    uint32_t magic;
    struct jst_nvtx_handle *next;
    char name[];
};
static pthread_mutex_t handle_lock = PTHREAD_MUTEX_INITIALIZER;
static struct jst_nvtx_handle *handles;
#define JST_NVTX_DOMAIN_MAGIC 0x4a53444du /* "JSDM" */
#define JST_NVTX_STRING_MAGIC 0x4a535354u /* "JSST" */

/* ---- records ---- */

/* Puts a record into the pending buffer, or says it must be emitted now
 * (returns 1) because the trace file has been opened meanwhile. */
static int pend_add(const struct jst_rec *r)
{
    int direct = 0;
    pthread_mutex_lock(&pend_lock);
    if (pend_drained)
        direct = 1;
    else if (r->len <= sizeof pend_buf - pend_len) {
        memcpy(pend_buf + pend_len, r->buf, r->len);
        pend_len += r->len;
    } else
        pend_dropped++;
    pthread_mutex_unlock(&pend_lock);
    return direct;
}

static void nvtx_emit(const struct jst_rec *r)
{
    if (r->overflow)
        return;
    int st = atomic_load_explicit(&jst_state, memory_order_acquire);
    if (st == JST_ST_OFF)
        return;
    if (st == JST_ST_ON || pend_add(r))
        jst_emit(r, 0);
}

/* Called by init.c once the trace file's opening records are written, on
 * the thread that opened it (open lock held): the pending records follow. */
void jst_nvtx_drain(struct jst_writer *w)
{
    pthread_mutex_lock(&pend_lock);
    size_t off = 0;
    while (off + JST_REC_HDR_SIZE <= pend_len) {
        const uint8_t *p = pend_buf + off;
        size_t n = JST_REC_HDR_SIZE +
                   ((size_t)p[4] | (size_t)p[5] << 8 | (size_t)p[6] << 16 | (size_t)p[7] << 24);
        if (n > pend_len - off)
            break;
        struct jst_rec r = {(uint8_t *)p, n, n, 0};
        jst_writer_emit(w, &r, 0);
        off += n;
    }
    if (pend_dropped) {
        uint8_t buf[256];
        char msg[160];
        struct jst_rec r;
        snprintf(msg, sizeof msg,
                 "%llu NVTX range events before the first driver call were not recorded "
                 "(buffer full)",
                 (unsigned long long)pend_dropped);
        jst_rec_begin(&r, buf, sizeof buf, JST_REC_NOTE);
        jst_rec_str(&r, JST_F_MESSAGE, msg);
        jst_rec_u64(&r, JST_F_LEVEL, 1);
        jst_rec_u64(&r, JST_F_DROPPED, pend_dropped);
        jst_writer_emit(w, &r, 0);
    }
    pend_len = 0;
    pend_dropped = 0;
    pend_drained = 1;
    pthread_mutex_unlock(&pend_lock);
    jst_ready_opened(w); /* a ready said before, and the live work */
}

/* UTF-8 of a wide string, cut to fit n bytes (NUL included). */
static void wide_to_utf8(const wchar_t *w, char *out, size_t n)
{
    size_t k = 0;
    for (; w && *w; w++) {
        char t[4];
        size_t m = jst_utf8_put((uint32_t)*w, t);
        if (k + m + 1 > n)
            break;
        memcpy(out + k, t, m);
        k += m;
    }
    out[k] = '\0';
}

/* The name of a handle we gave out, or NULL for anything else. */
static const char *handle_name(const void *h, uint32_t magic)
{
    const struct jst_nvtx_handle *p = h;
    return p && p->magic == magic ? p->name : NULL;
}

/* The message of an event-attribute structure, read only as far as its own
 * size field says it goes. */
static const char *attr_name(const void *attr, char *wbuf, size_t n)
{
    const uint8_t *a = attr;
    if (!a)
        return NULL;
    uint16_t size;
    int32_t type;
    const void *msg;
    memcpy(&size, a + ATTR_OFF_SIZE, sizeof size);
    if (size < ATTR_MIN_SIZE)
        return NULL;
    memcpy(&type, a + ATTR_OFF_MSGTYPE, sizeof type);
    memcpy(&msg, a + ATTR_OFF_MSG, sizeof msg);
    if (type == MSG_ASCII)
        return msg;
    if (type == MSG_UNICODE) {
        wide_to_utf8(msg, wbuf, n);
        return wbuf;
    }
    if (type == MSG_REGISTERED)
        return handle_name(msg, JST_NVTX_STRING_MAGIC);
    return NULL;
}

/* The depth slot of domain on this thread, NULL when all are taken. */
static struct jst_nvtx_depth *depth_slot(const void *domain)
{
    if (!domain)
        return &tls_depth[0];
    for (int i = 1; i < JST_NVTX_DOMAINS; i++)
        if (tls_depth[i].domain == domain)
            return &tls_depth[i];
    for (int i = 1; i < JST_NVTX_DOMAINS; i++)
        if (!tls_depth[i].domain || !tls_depth[i].depth) {
            tls_depth[i].domain = domain;
            tls_depth[i].depth = 0;
            tls_depth[i].ready_at = 0;
            return &tls_depth[i];
        }
    return NULL;
}

/* One range record. name may be NULL (pop, end); id 0 and depth < 0 are omitted. */
static void range_event(unsigned op, const char *name, const void *domain, uint64_t id, int depth)
{
    int saved = errno;
    uint8_t buf[JST_NVTX_NAME_MAX + 192];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_RANGE);
    jst_rec_u64(&r, JST_F_RANGE_OP, op);
    jst_rec_u64(&r, JST_F_START_NS, jst_now_ns());
    if (!tls_tid)
        tls_tid = jst_tid();
    jst_rec_u64(&r, JST_F_TID, tls_tid);
    if (name)
        jst_rec_strn(&r, JST_F_NAME, name, strnlen(name, JST_NVTX_NAME_MAX));
    const char *dn = handle_name(domain, JST_NVTX_DOMAIN_MAGIC);
    if (dn)
        jst_rec_strn(&r, JST_F_DOMAIN, dn, strnlen(dn, JST_NVTX_NAME_MAX));
    if (id)
        jst_rec_u64(&r, JST_F_RANGE_ID, id);
    if (depth >= 0)
        jst_rec_u64(&r, JST_F_DEPTH, (uint64_t)depth);
    nvtx_emit(&r);
    errno = saved;
}

/* The program said it is ready (JITSTALL_READY=nvtx:NAME), on this thread. */
static void ready_here(void)
{
    if (!tls_tid)
        tls_tid = jst_tid();
    jst_ready_fire(tls_tid);
}

static int do_push(const void *domain, const char *name)
{
    struct jst_nvtx_depth *d = depth_slot(domain);
    int depth = d ? ++d->depth : -1;
    if (d && !d->ready_at && jst_ready_nvtx_is(name))
        d->ready_at = depth;
    range_event(JST_RANGE_PUSH, name ? name : "", domain, 0, depth);
    if (name && !jst_guard && strncmp(name, "XlaCompile", 10) == 0)
        jst_sampler_event(1); /* XLA compiles in-process: compile work (sampler.c) */
    return JST_NVTX_NO_TRACKING;
}

static int do_pop(const void *domain)
{
    struct jst_nvtx_depth *d = depth_slot(domain);
    if (d && d->depth <= 0)
        return JST_NVTX_NO_TRACKING; /* a pop without a push: nothing to end */
    int depth = d ? d->depth-- : -1;
    range_event(JST_RANGE_POP, NULL, domain, 0, depth);
    if (d && d->ready_at && depth <= d->ready_at) {
        d->ready_at = 0;
        ready_here();
    }
    return JST_NVTX_NO_TRACKING;
}

static uint64_t do_start(const void *domain, const char *name)
{
    uint64_t id = atomic_fetch_add(&next_range_id, 1) + 1;
    range_event(JST_RANGE_START, name ? name : "", domain, id, -1);
    uint64_t none = 0;
    if (jst_ready_nvtx_is(name))
        atomic_compare_exchange_strong(&ready_range_id, &none, id);
    return id;
}

static void do_mark(const char *name)
{
    if (jst_ready_nvtx_is(name))
        ready_here();
}

/* ---- the callbacks NVTX calls ---- */

/* The callbacks of an operation that takes a name (op: push or start), one
 * per way NVTX hands the name over: ASCII, wide, event attributes, and event
 * attributes in a domain. */
#define JST_NVTX_NAMED(op, ret_t)                                                                  \
    static ret_t cb_##op##_a(const char *m)                                                        \
    {                                                                                              \
        return do_##op(NULL, m);                                                                   \
    }                                                                                              \
    static ret_t cb_##op##_w(const wchar_t *m)                                                     \
    {                                                                                              \
        char b[JST_NVTX_NAME_MAX];                                                                 \
        wide_to_utf8(m, b, sizeof b);                                                              \
        return do_##op(NULL, b);                                                                   \
    }                                                                                              \
    static ret_t cb_##op##_ex(const void *attr)                                                    \
    {                                                                                              \
        return cb_dom_##op(NULL, attr);                                                            \
    }

static int cb_dom_push(const void *dom, const void *attr)
{
    char b[JST_NVTX_NAME_MAX];
    return do_push(dom, attr_name(attr, b, sizeof b));
}

static uint64_t cb_dom_start(const void *dom, const void *attr)
{
    char b[JST_NVTX_NAME_MAX];
    return do_start(dom, attr_name(attr, b, sizeof b));
}

JST_NVTX_NAMED(push, int)
JST_NVTX_NAMED(start, uint64_t)

static int cb_dom_pop(const void *dom)
{
    return do_pop(dom);
}

static int cb_pop(void)
{
    return cb_dom_pop(NULL);
}

static void cb_dom_end(const void *dom, uint64_t id)
{
    if (!id)
        return;
    range_event(JST_RANGE_END, NULL, dom, id, -1);
    if (id == atomic_load(&ready_range_id))
        ready_here();
}

/* Marks are recorded only as the ready moment they may be. */
static void cb_mark_a(const char *m)
{
    do_mark(m);
}

static void cb_mark_w(const wchar_t *m)
{
    char b[JST_NVTX_NAME_MAX];
    wide_to_utf8(m, b, sizeof b);
    do_mark(b);
}

static void cb_dom_mark(const void *dom, const void *attr)
{
    (void)dom;
    char b[JST_NVTX_NAME_MAX];
    do_mark(attr_name(attr, b, sizeof b));
}

static void cb_mark_ex(const void *attr)
{
    cb_dom_mark(NULL, attr);
}

static void cb_end(uint64_t id)
{
    cb_dom_end(NULL, id);
}

/* Domains and registered strings live as long as the process: NVTX gives
 * no promise that a handle is not used after its domain is destroyed. A
 * program that creates the same domain or string again (per call, say) gets
 * the handle it got before, so memory does not grow with calls. */
static void *new_handle(uint32_t magic, const char *s)
{
    size_t n = s ? strnlen(s, JST_NVTX_NAME_MAX - 1) : 0;
    int saved = errno;
    pthread_mutex_lock(&handle_lock);
    struct jst_nvtx_handle *h = handles;
    while (h && !(h->magic == magic && strncmp(h->name, s ? s : "", n) == 0 && !h->name[n]))
        h = h->next;
    if (!h && (h = malloc(sizeof *h + n + 1)) != NULL) {
        h->magic = magic;
        if (n)
            memcpy(h->name, s, n);
        h->name[n] = '\0';
        h->next = handles;
        handles = h;
    }
    pthread_mutex_unlock(&handle_lock);
    errno = saved;
    return h;
}

static void *cb_dom_create_a(const char *name)
{
    return new_handle(JST_NVTX_DOMAIN_MAGIC, name);
}

static void *cb_dom_create_w(const wchar_t *name)
{
    char b[JST_NVTX_NAME_MAX];
    wide_to_utf8(name, b, sizeof b);
    return new_handle(JST_NVTX_DOMAIN_MAGIC, b);
}

static void *cb_reg_string_a(const void *dom, const char *s)
{
    (void)dom;
    return new_handle(JST_NVTX_STRING_MAGIC, s);
}

static void *cb_reg_string_w(const void *dom, const wchar_t *s)
{
    char b[JST_NVTX_NAME_MAX];
    (void)dom;
    wide_to_utf8(s, b, sizeof b);
    return new_handle(JST_NVTX_STRING_MAGIC, b);
}

/* ---- attaching ---- */

struct jst_nvtx_slot {
    unsigned id;
    jst_nvtx_fn fn;
};

/* Fills the slots NVTX's table of one module has room for; ids beyond the
 * size it reports (an older NVTX) are left alone. Returns the count set. */
static int fill_module(const struct jst_nvtx_callbacks *cb, int module,
                       const struct jst_nvtx_slot *s, size_t n)
{
    jst_nvtx_fn **table = NULL;
    unsigned size = 0;
    if (!cb->get_module_table(module, &table, &size) || !table)
        return 0;
    int set = 0;
    for (size_t i = 0; i < n; i++) {
        if (s[i].id >= size || !table[s[i].id])
            continue;
        *table[s[i].id] = s[i].fn;
        set++;
    }
    return set;
}

#define SLOT(id, f)                                                                                \
    {                                                                                              \
        id, (jst_nvtx_fn)(f)                                                                       \
    }

static int attach(jst_nvtx_get_table get)
{
    const struct jst_nvtx_callbacks *cb = get(NVTX_ETID_CALLBACKS);
    if (!cb || cb->struct_size < sizeof *cb || !cb->get_module_table)
        return 0;
    static const struct jst_nvtx_slot core[] = {
        SLOT(CB_MarkEx, cb_mark_ex),      SLOT(CB_MarkA, cb_mark_a),
        SLOT(CB_MarkW, cb_mark_w),        SLOT(CB_RangeStartEx, cb_start_ex),
        SLOT(CB_RangeStartA, cb_start_a), SLOT(CB_RangeStartW, cb_start_w),
        SLOT(CB_RangeEnd, cb_end),        SLOT(CB_RangePushEx, cb_push_ex),
        SLOT(CB_RangePushA, cb_push_a),   SLOT(CB_RangePushW, cb_push_w),
        SLOT(CB_RangePop, cb_pop),
    };
    static const struct jst_nvtx_slot core2[] = {
        SLOT(CB2_DomainMarkEx, cb_dom_mark),
        SLOT(CB2_DomainRangeStartEx, cb_dom_start),
        SLOT(CB2_DomainRangeEnd, cb_dom_end),
        SLOT(CB2_DomainRangePushEx, cb_dom_push),
        SLOT(CB2_DomainRangePop, cb_dom_pop),
        SLOT(CB2_DomainRegisterStringA, cb_reg_string_a),
        SLOT(CB2_DomainRegisterStringW, cb_reg_string_w),
        SLOT(CB2_DomainCreateA, cb_dom_create_a),
        SLOT(CB2_DomainCreateW, cb_dom_create_w),
    };
    int set = fill_module(cb, NVTX_CB_MODULE_CORE, core, sizeof core / sizeof core[0]);
    set += fill_module(cb, NVTX_CB_MODULE_CORE2, core2, sizeof core2 / sizeof core2[0]);
    const struct jst_nvtx_versioninfo *vi = get(NVTX_ETID_VERSIONINFO);
    if (vi && vi->struct_size >= sizeof *vi && vi->set_injection_version)
        vi->set_injection_version(2);
    return set > 0;
}

static void nvtx_atfork_child(void);
JST_EXPORT int InitializeInjectionNvtx2(jst_nvtx_get_table get);

/* Whether this copy of the library is the one in the global scope, that is,
 * the preloaded one; asked once, when first needed. */
static int nvtx_preloaded(void)
{
    int p = atomic_load(&preloaded);
    if (p < 0) {
        p = jst_real_dlsym(RTLD_DEFAULT, "InitializeInjectionNvtx2") ==
            (void *)InitializeInjectionNvtx2;
        atomic_store(&preloaded, p);
    }
    return p;
}

/* The fork handler, from the first NVTX state on (none before). */
static void nvtx_arm_fork(void)
{
    if (!atomic_exchange(&fork_armed, 1))
        pthread_atfork(NULL, NULL, nvtx_atfork_child);
}

/* NVTX's loader calls this once per NVTX instance in the process (each
 * library built with the headers has its own). Returning 0 makes that
 * instance a no-op, exactly as without a tool. */
JST_EXPORT int InitializeInjectionNvtx2(jst_nvtx_get_table get)
{
    if (!get || !nvtx_preloaded() || !jst_config())
        return 0;
    nvtx_arm_fork();
    int saved = errno;
    int ok = attach(get);
    jst_dbg("NVTX instance %s", ok ? "attached" : "not attached (no table)");
    errno = saved;
    return ok;
}

/* ---- constructor, exec, fork ---- */

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    if (strcmp(a, b) == 0)
        return 1;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* The note for a tool the user named (foreign_note), waiting for the trace file. */
static void pend_note(void)
{
    uint8_t buf[sizeof foreign_note + 64];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_NOTE);
    jst_rec_str(&r, JST_F_MESSAGE, foreign_note);
    jst_rec_u64(&r, JST_F_LEVEL, 1);
    pend_add(&r);
}

/* In a forked child the parent's pending records are not the child's, and
 * the lock may have been held by a thread that is gone. */
static void nvtx_atfork_child(void)
{
    pthread_mutex_init(&pend_lock, NULL);
    pthread_mutex_init(&handle_lock, NULL);
    pend_len = 0;
    pend_dropped = 0;
    pend_drained = 0;
    tls_tid = 0; /* the forking thread has a new id in the child */
    if (foreign_note[0])
        pend_note();
}

JST_START_RODATA static const char nvtx_env_name[] = JST_NVTX_ENV;

JST_IDLE_TEXT void jst_nvtx_start(void)
{
    const char *self = jst_self_path();
    if (!*self)
        return;
    const char *v = getenv(nvtx_env_name);
    if (!v || !*v) {
        /* The usual case. A copy that was dlopened rather than preloaded
         * would set it too, harmlessly: InitializeInjectionNvtx2 then
         * declines (nvtx_preloaded), as if there were no tool. */
        we_set_env = jst_env_add(nvtx_env_name, self) != NULL;
        return;
    }
    /* Loaded by NVTX's dlopen into a process that is not traced (a child
     * that lost LD_PRELOAD): our export is not the global one; stay inert. */
    if (!nvtx_preloaded() || !jst_config())
        return;
    if (!same_file(v, self)) {
        snprintf(foreign_note, sizeof foreign_note,
                 "NVTX ranges were not recorded: NVTX_INJECTION64_PATH names another tool "
                 "(%.400s)",
                 v);
        pend_note();
    }
    nvtx_arm_fork();
}

/* The entry of envp that this process's constructor put there, or NULL: the
 * exec wrappers leave it out of a child's environment (a traced child sets
 * its own; an untraced one must not load us through NVTX). */
JST_IDLE_TEXT const char *jst_nvtx_env_entry(char *const envp[])
{
    size_t n = sizeof nvtx_env_name - 1;
    if (!we_set_env)
        return NULL;
    for (size_t i = 0; envp && envp[i]; i++)
        if (strncmp(envp[i], nvtx_env_name, n) == 0 && envp[i][n] == '=')
            return strcmp(envp[i] + n + 1, jst_self_path()) == 0 ? envp[i] : NULL;
    return NULL;
}
