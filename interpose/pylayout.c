/*
 * The Python interpreter the frame reader reads: found on first use (and
 * again after a dlopen while it is absent), its CPython minor version matched
 * against the per-version layout table, its type objects and eval function
 * found, and the layout checked against what the interpreter says of itself
 * where it says it (3.13+). Anything that does not check out turns the reader
 * off with one note in the trace (docs/DRIVER.md, "Python callers").
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pyframes.h"
#include "pyint.h"
#include "backtrace.h"
#include "real.h"
#include "state.h"

/* Offsets in CPython's structures per minor version. They are the same on
 * x86-64 and aarch64: both are LP64 with the same alignment rules, and no
 * field these structures hold before the ones read here differs between the
 * two (CPython 3.11 on aarch64 is read by e2e.python; 3.13 checks itself
 * against _Py_DebugOffsets). Other architectures have no table: the reader
 * stays off there. */
#if defined(__x86_64__) || defined(__aarch64__)
#define JST_PY_LAYOUTS 1
static const struct py_layout py_layouts[] = {
    {10, 176, 24, -1, 1, 32, 24, 96, -1, -1, 104, 112, 112, 120, 40, 0, 0, 48, 72},
    {11, 152, 56, 8, 0, 32, 48, 56, 69, 68, 112, 120, 128, 136, 72, 184, 168, 48, 72},
    {12, 136, 56, 0, 0, 0, 8, 56, 70, -1, 112, 120, 128, 136, 68, 192, 176, 40, 56},
    {13, 152, 72, -1, 0, 0, 8, 56, 70, -1, 112, 120, 128, 136, 68, 200, 184, 40, 56},
};
#else
#define JST_PY_LAYOUTS 0
static const struct py_layout py_layouts[1];
#endif

enum { PY_UNRESOLVED = 0, PY_ABSENT, PY_READY, PY_OFF };
static _Atomic int py_state;
static pthread_mutex_t py_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int py_bad_noted;
static _Atomic unsigned long long py_absent_adds; /* py_adds() when Python was absent */

struct py_interp jst_py;
static int (*py_is_init)(void);
static void *(*py_cur_tstate)(void);
static void *(*py_gil_tstate)(void);

/* How many objects the loader has added: Python can only appear after it
 * changes. */
static unsigned long long py_adds(void)
{
    unsigned long long g[2];
    jst_dl_generation(g);
    return g[0];
}

/* A warning in the trace, and on stderr with JITSTALL_DEBUG=1. */
static void py_note(const char *msg)
{
    jst_note(1, msg);
    jst_dbg("%s", msg);
}

void jst_py_note_bad(const char *what)
{
    if (!jst_py_read_ok())
        return; /* reads fail because the reader is gone: said already */
    if (atomic_exchange(&py_bad_noted, 1))
        return;
    char msg[256];
    snprintf(msg, sizeof msg, "Python frames not recorded: %s", what);
    py_note(msg);
}

/* The running interpreter's minor version (3.minor), or -1 for another
 * major; its version ("3.10.13") into ver. Py_GetVersion() starts with it in
 * every version; Py_Version (3.11+) is a number that needs no parsing. */
static int py_minor(char *ver, size_t cap)
{
    const char *(*gv)(void) = (const char *(*)(void))jst_real_dlsym(RTLD_DEFAULT, "Py_GetVersion");
    char s[16] = {0};
    if (!gv || jst_py_read(s, (uintptr_t)gv(), sizeof s - 1) < 0)
        snprintf(s, sizeof s, "?");
    s[strcspn(s, " ")] = '\0';
    snprintf(ver, cap, "%s", s);
    const unsigned long *pv = jst_real_dlsym(RTLD_DEFAULT, "Py_Version");
    unsigned long v;
    if (pv && jst_py_read(&v, (uintptr_t)pv, sizeof v) == 0)
        return (v >> 24) == 3 ? (int)((v >> 16) & 0xff) : -1;
    return s[0] == '3' && s[1] == '.' ? atoi(s + 2) : -1;
}

/* A type object CPython exports, checked to have the standard object header
 * (ob_type at offset 8 is &PyType_Type: not so in free-threaded builds). */
static uintptr_t py_type(const char *name, uintptr_t type_type)
{
    uintptr_t t = (uintptr_t)jst_real_dlsym(RTLD_DEFAULT, name), ob_type = 0;
    if (!t || jst_py_read(&ob_type, t + 8, sizeof ob_type) < 0 || ob_type != type_type)
        return 0;
    return t;
}

/* Address range of _PyEval_EvalFrameDefault, from its dynamic symbol. */
static void py_eval_range(void)
{
    void *f = jst_real_dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    if (f && dladdr1(f, &info, (void **)&sym, RTLD_DL_SYMENT) && sym && sym->st_size) {
        jst_py.eval_lo = (uintptr_t)f;
        jst_py.eval_hi = (uintptr_t)f + sym->st_size;
    }
}

/* From 3.13, CPython describes its own layout at the start of _PyRuntime
 * (_Py_DebugOffsets: the cookie "xdebugpy", then u64 fields). Our table is
 * used only where it agrees with it: a patch release that moved a field
 * then records nothing instead of garbage. 1 agrees, 0 not. */
static int py_offsets_agree(const struct py_layout *L)
{
    uint64_t d[44];
    const void *rt = jst_real_dlsym(RTLD_DEFAULT, "_PyRuntime");
    if (!rt || jst_py_read(d, (uintptr_t)rt, sizeof d) < 0 || memcmp(d, "xdebugpy", 8) != 0)
        return 0;
    /* d[2] free_threaded; thread state from d[19], frame from d[28], code from d[34] */
    return d[2] == 0 && d[23] == L->ts_frame && d[24] == L->ts_thread_id && d[29] == L->fr_prev &&
           d[30] == L->fr_code && d[31] == L->fr_instr && d[33] == (uint64_t)L->fr_owner &&
           d[35] == L->co_filename && d[36] == L->co_name && d[37] == L->co_qualname &&
           d[38] == L->co_linetable && d[39] == L->co_firstlineno && d[43] == L->co_code;
}

/* Turns the reader off for this process, with a note that says why. */
__attribute__((format(printf, 1, 2))) static void py_off(const char *fmt, ...)
{
    char msg[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    py_note(msg);
    atomic_store(&py_state, PY_OFF);
}

/* Finds the interpreter and checks its layout. Under py_lock. */
static void py_resolve(void)
{
    const char *env = getenv("JITSTALL_PYTHON");
    if (env && strcmp(env, "0") == 0) {
        atomic_store(&py_state, PY_OFF);
        return;
    }
    atomic_store(&py_absent_adds, py_adds());
    py_is_init = (int (*)(void))jst_real_dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    if (!py_is_init) {
        atomic_store(&py_state, PY_ABSENT); /* looked up again after the next dlopen */
        return;
    }
    /* The reads must work here (no descriptor left, no /proc). */
    uint64_t probe = 1, copy = 0;
    if (jst_py_read(&copy, (uintptr_t)&probe, sizeof probe) < 0 || copy != probe) {
        py_off("Python frames not recorded: memory cannot be read through /proc/self/mem here");
        return;
    }
    char ver[16];
    int minor = py_minor(ver, sizeof ver);
    for (size_t i = 0; JST_PY_LAYOUTS && i < sizeof py_layouts / sizeof py_layouts[0]; i++)
        if ((int)py_layouts[i].minor == minor)
            jst_py.lay = &py_layouts[i];
    if (!jst_py.lay) {
        py_off("Python frames not recorded: CPython %s's frame layout is unknown to jitstall "
               "(it reads 3.10 to 3.13)",
               ver);
        return;
    }
    uintptr_t tt = (uintptr_t)jst_real_dlsym(RTLD_DEFAULT, "PyType_Type");
    jst_py.code_type = py_type("PyCode_Type", tt);
    jst_py.unicode_type = py_type("PyUnicode_Type", tt);
    jst_py.bytes_type = py_type("PyBytes_Type", tt);
    jst_py.frame_type = py_type("PyFrame_Type", tt);
    py_cur_tstate = (void *(*)(void))jst_real_dlsym(
        RTLD_DEFAULT, minor >= 13 ? "PyThreadState_GetUnchecked" : "_PyThreadState_UncheckedGet");
    py_gil_tstate = (void *(*)(void))jst_real_dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    py_eval_range();
    if (!tt || !jst_py.code_type || !jst_py.unicode_type || !jst_py.bytes_type ||
        !jst_py.frame_type || !py_gil_tstate || (minor >= 13 && !py_offsets_agree(jst_py.lay))) {
        py_off("Python frames not recorded: CPython %s has an object layout jitstall does "
               "not know (debug or free-threaded build?)",
               ver);
        return;
    }
    jst_dbg("python %s: frames readable, eval frame %#lx-%#lx", ver, (unsigned long)jst_py.eval_lo,
            (unsigned long)jst_py.eval_hi);
    atomic_store(&py_state, PY_READY);
}

static int py_ready(void)
{
    int st = atomic_load(&py_state);
    if (st == PY_READY)
        return 1;
    if (st == PY_OFF)
        return 0;
    /* trylock: a forked child whose parent forked mid-resolve must not wait
     * on a lock nobody will release; it just records no Python frames. */
    if (pthread_mutex_trylock(&py_lock) != 0)
        return 0;
    if (atomic_load(&py_state) != PY_READY && atomic_load(&py_state) != PY_OFF)
        py_resolve();
    pthread_mutex_unlock(&py_lock);
    return atomic_load(&py_state) == PY_READY;
}

int jst_py_maybe(void)
{
    int st = atomic_load(&py_state);
    if (!jst_py_read_ok())
        return 0;
    if (st == PY_ABSENT && py_adds() == atomic_load(&py_absent_adds))
        return 0; /* no Python, and nothing loaded since we looked */
    return st != PY_OFF;
}

/* Does the thread state at ts belong to the calling thread? */
static int py_ts_mine(uintptr_t ts)
{
    unsigned long id;
    return ts && jst_py_read(&id, ts + jst_py.lay->ts_thread_id, sizeof id) == 0 &&
           id == (unsigned long)pthread_self();
}

/* The calling thread's thread state. The "current" one is ours when we hold
 * the GIL (3.10, 3.11: it is the GIL holder's, hence the check); with the
 * GIL released, the thread's own from the GIL-state key. */
static uintptr_t py_tstate(void)
{
    uintptr_t ts = py_cur_tstate ? (uintptr_t)py_cur_tstate() : 0;
    if (py_ts_mine(ts))
        return ts;
    ts = (uintptr_t)py_gil_tstate();
    if (py_ts_mine(ts))
        return ts;
    /* The key holds this thread's own state: if its thread_id does not say
     * so, the layout is not what we think. */
    if (ts)
        jst_py_note_bad("this thread's state does not name this thread");
    return 0;
}

uintptr_t jst_py_thread(void)
{
    if (!py_ready() || !jst_py_read_ok() || !py_is_init())
        return 0;
    return py_tstate();
}
