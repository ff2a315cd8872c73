/*
 * Framework events: what Triton, PyTorch, JAX and Numba publish about their
 * own compiles, recorded as FW_EVENT records (docs/FORMAT.md, `fw_event`;
 * docs/framework-events.md says how and when this runs).
 *
 * The preload never links Python and never imports anything. In a Python
 * process it finds the interpreter's C API with dlsym and adds an audit hook
 * (PySys_AddAuditHook, Python 3.8+) when the interpreter looks up an
 * extension module's PyInit_ function while one of the frameworks is being
 * (or has been) imported: then the interpreter is initialized, the
 * looking-up thread holds the GIL, and the process is one that can have
 * framework events; a Python process that imports none of them gets no
 * hook and pays nothing. The hook is C; it
 * notes the start of an import of one of the modules through which a
 * framework publishes its events (the "watched" modules below). At the next
 * audit event after such a module finished running its body (the
 * framework's import goes on and raises more events), with the GIL held by
 * the thread that raised it and no exception set, it hands the module to a
 * few lines of Python kept here (glue[]), which add jitstall's listener
 * where the framework offers one and write a note when it does not. The
 * listeners call back into C (fwe_emit) to write the record.
 *
 * What the program sees: nothing it can rely on changes. Listener slots
 * that hold one value (Triton's) are filled only when empty; list-like
 * registries (JAX, PyTorch, Numba) get one more entry. Every listener
 * catches its own errors, the C side never leaves an exception set, and the
 * audit hook always lets the event proceed. JITSTALL_FW_EVENTS=0 turns it
 * off.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitstall/format.h"
#include "backtrace.h"
#include "pyevents.h"
#include "real.h"
#include "sampler.h"
#include "sink.h"
#include "state.h"
#include "trace.h"

typedef struct fwe_obj fwe_obj; /* PyObject: never looked into */
typedef fwe_obj *(*fwe_cfunc)(fwe_obj *, fwe_obj *);
struct fwe_methoddef { /* PyMethodDef, the same in every CPython 3 */
    const char *name;
    fwe_cfunc meth;
    int flags;
    const char *doc;
};
#define FWE_METH_VARARGS 1
#define FWE_FILE_INPUT 257 /* Py_file_input */

/* The C API, as dlsym finds it in the process (the executable, or a
 * libpython it loaded). */
static struct {
    int (*add_audit_hook)(int (*)(const char *, fwe_obj *, void *), void *);
    int (*is_initialized)(void);
    int (*gil_check)(void);
    fwe_obj *(*err_occurred)(void);
    void (*err_clear)(void);
    fwe_obj *(*unicode_from)(const char *);
    const char *(*unicode_utf8)(fwe_obj *);
    fwe_obj *(*import_get)(fwe_obj *);
    fwe_obj *(*getattr)(fwe_obj *, const char *);
    int (*is_true)(fwe_obj *);
    fwe_obj *(*dict_new)(void);
    int (*dict_set)(fwe_obj *, const char *, fwe_obj *);
    fwe_obj *(*dict_get)(fwe_obj *, const char *);
    fwe_obj *(*builtins)(void);
    fwe_obj *(*compile)(const char *, const char *, int, void *, int);
    fwe_obj *(*eval)(fwe_obj *, fwe_obj *, fwe_obj *);
    fwe_obj *(*cfunc_new)(struct fwe_methoddef *, fwe_obj *, fwe_obj *);
    long (*tuple_size)(fwe_obj *);
    fwe_obj *(*tuple_item)(fwe_obj *, long);
    fwe_obj *(*tuple_pack)(long, ...);
    fwe_obj *(*call)(fwe_obj *, fwe_obj *, fwe_obj *);
    long long (*long_as)(fwe_obj *);
    fwe_obj *(*long_from)(long long);
    void (*decref)(fwe_obj *);
} py;

_Static_assert(sizeof py == 24 * sizeof(void (*)(void)), "one pointer per name in fwe_syms");
static const char *const fwe_syms[] = {
    "PySys_AddAuditHook", "Py_IsInitialized",   "PyGILState_Check",     "PyErr_Occurred",
    "PyErr_Clear",        "PyUnicode_FromString", "PyUnicode_AsUTF8",   "PyImport_GetModule",
    "PyObject_GetAttrString", "PyObject_IsTrue", "PyDict_New",          "PyDict_SetItemString",
    "PyDict_GetItemString", "PyEval_GetBuiltins", "Py_CompileStringExFlags", "PyEval_EvalCode",  "PyCFunction_NewEx",
    "PyTuple_Size",       "PyTuple_GetItem",    "PyTuple_Pack",         "PyObject_Call",
    "PyLong_AsLongLong",  "PyLong_FromLongLong", "Py_DecRef",
};

/* The modules through which the frameworks publish their events. */
static const char *const watched[] = {
    "triton.knobs",           /* Triton 3.4+: knobs.compilation.listener */
    "torch._dynamo.callback", /* PyTorch: on_compile_start / on_compile_end */
    "jax._src.monitoring",    /* JAX: duration and event listeners */
    "numba.core.event",       /* Numba: numba:compile */
    "numba.cuda.core.event",  /* numba-cuda's own copy */
};
#define FWE_N (sizeof watched / sizeof watched[0])

/* Which interpreter runs: the listeners live in the main one, and objects
 * of one interpreter are never handed to another (a server may run
 * subinterpreters). 3.9+: PyThreadState_GetInterpreter(PyThreadState_Get());
 * 3.8: _PyInterpreterState_Get(). */
static void *(*fwe_main_interp)(void);
static void *(*fwe_ts_get)(void);
static void *(*fwe_ts_interp)(void *);
static void *(*fwe_interp_get_38)(void);
static void *fwe_main;

/* The calling thread's interpreter (it holds the GIL), or NULL when this
 * Python cannot say. */
static void *fwe_interp(void)
{
    if (fwe_ts_interp && fwe_ts_get)
        return fwe_ts_interp(fwe_ts_get());
    return fwe_interp_get_38 ? fwe_interp_get_38() : NULL;
}

static _Atomic int fwe_state;       /* 0 not yet, 1 hook added, 2 never (off, no API) */
static _Atomic unsigned fwe_seen;   /* bit i: watched[i]'s import started */
/* bit i: watched[i] may be on its way: its top package was being imported
 * when the hook was added. The interpreter raises a submodule's import
 * event before it imports the parents, so an import of numba.core.event
 * that loads numba (whose extension modules add the hook) raised its event
 * before the hook existed. Given up once the package is imported without
 * it. */
static _Atomic unsigned fwe_maybe;
static _Atomic unsigned fwe_claim;  /* bit i: set up, or being set up */
static fwe_obj *fwe_names[FWE_N];   /* watched[] as str objects */
static fwe_obj *fwe_globals;        /* glue[]'s namespace, kept for the process's life */
static __thread int fwe_busy __attribute__((tls_model("initial-exec")));

/* Framework names and stages stored as given, at most this long. */
#define FWE_STR_MAX 255

/* The Python side: one function, _setup(which, module), that adds the
 * listeners for one watched module. _emit(framework, stage, name, cache,
 * dur_ns, end_ns, detail, stack) writes a record of a span that ended at
 * end_ns (0: now), with the caller's stack when stack is true (a whole
 * compile, or a stage of a framework that reports no whole compile: the
 * program's call site is on it); _now() is the trace's clock; _note(level, text) writes a note.
 * It imports nothing: the modules it reads were imported by the program. */
static const char glue[] =
    "def _s(x):\n"
    "    try:\n"
    "        return None if x is None else str(x)[:255]\n"
    "    except Exception:\n"
    "        return None\n"
    "def _ns(us):\n"
    "    try:\n"
    "        return max(0, int(us)) * 1000\n"
    "    except Exception:\n"
    "        return 0\n"
    "def _triton(m):\n"
    "    c = getattr(m, 'compilation', None)\n"
    "    if c is None or not hasattr(c, 'listener'):\n"
    "        _note(1, 'framework events: triton.knobs has no compilation.listener (Triton before 3.4): Triton compiles are sampled')\n"
    "        return\n"
    "    if c.listener is not None:\n"
    "        _note(1, 'framework events: the program set triton.knobs.compilation.listener itself: Triton compiles are sampled')\n"
    "        return\n"
    "    def listener(*a, **k):\n"
    "        try:\n"
    "            src = k.get('src', a[0] if len(a) > 0 else None)\n"
    "            md = k.get('metadata', a[1] if len(a) > 1 else None)\n"
    "            t = k.get('times', a[3] if len(a) > 3 else None)\n"
    "            hit = k.get('cache_hit', a[4] if len(a) > 4 else None)\n"
    "            name = getattr(src, 'name', None)\n"
    "            if name is None and isinstance(md, dict):\n"
    "                name = md.get('name')\n"
    "            total = _ns(getattr(t, 'total', 0))\n"
    "            end = _now()\n"
    "            cache = 'unknown' if hit is None else ('hit' if hit else 'miss')\n"
    "            _emit('triton', 'compile', _s(name), cache, total, end, 'triton.knobs.compilation.listener', 1)\n"
    "            if hit or t is None:\n"
    "                return\n"
    "            segs = [('trace', 'ir_initialization', _ns(getattr(t, 'ir_initialization', 0)))]\n"
    "            for st in list(getattr(t, 'lowering_stages', None) or ()):\n"
    "                s = str(st[0])\n"
    "                segs.append(('backend' if s in ('ptx', 'cubin', 'amdgcn', 'hsaco') else 'lower', s, _ns(st[1])))\n"
    "            segs.append(('cache_store', 'store_results', _ns(getattr(t, 'store_results', 0))))\n"
    "            lead = total - sum(x[2] for x in segs)\n"
    "            if lead > 0:\n"
    "                segs.insert(0, ('cache_lookup', 'cache key and lookup', lead))\n"
    "            left = total\n"
    "            for stage, what, d in segs:\n"
    "                d = min(d, left)\n"
    "                left -= d\n"
    "                if d:\n"
    "                    _emit('triton', stage, _s(name), cache, d, end - left, what, 0)\n"
    "        except Exception:\n"
    "            pass\n"
    "    c.listener = listener\n"
    "    _note(0, 'framework events: triton.knobs.compilation.listener')\n"
    "def _counts():\n"
    "    try:\n"
    "        u = _modules.get('torch._dynamo.utils')\n"
    "        c = u.counters['inductor']\n"
    "        return (int(c['fxgraph_cache_hit']), int(c['fxgraph_cache_miss']))\n"
    "    except Exception:\n"
    "        return None\n"
    "def _torch(m):\n"
    "    h = getattr(m, 'callback_handler', None)\n"
    "    if h is None or not hasattr(h, 'register_start_callback') or not hasattr(h, 'register_end_callback'):\n"
    "        _note(1, 'framework events: torch._dynamo.callback has no callback_handler: PyTorch compiles are sampled')\n"
    "        return\n"
    "    open_ = []\n"
    "    def trig(a, k):\n"
    "        x = a[0] if a else k.get('args')\n"
    "        t = getattr(x, 'callback_trigger', None)\n"
    "        return str(getattr(t, 'name', t)).lower() if t is not None else None\n"
    "    def start(*a, **k):\n"
    "        try:\n"
    "            open_.append((_now(), trig(a, k), _counts()))\n"
    "        except Exception:\n"
    "            pass\n"
    "    def end(*a, **k):\n"
    "        try:\n"
    "            if not open_:\n"
    "                return\n"
    "            t0, tr, c0 = open_.pop()\n"
    "            c1 = _counts()\n"
    "            cache = 'unknown'\n"
    "            if c0 is not None and c1 is not None:\n"
    "                if c1[1] > c0[1]:\n"
    "                    cache = 'miss'\n"
    "                elif c1[0] > c0[0]:\n"
    "                    cache = 'hit'\n"
    "            stage = {'triton_autotuning': 'autotune', 'cudagraph_recording': 'graph_record'}.get(tr, 'compile')\n"
    "            t1 = _now()\n"
    "            _emit('inductor', stage, None, cache, max(0, t1 - t0), t1, 'trigger=' + tr if tr else None, 1)\n"
    "        except Exception:\n"
    "            pass\n"
    "    h.register_start_callback(start)\n"
    "    h.register_end_callback(end)\n"
    "    _note(0, 'framework events: torch._dynamo.callback')\n"
    "_JAX = {'/jax/core/compile/jaxpr_trace_duration': 'trace',\n"
    "        '/jax/core/compile/jaxpr_to_mlir_module_duration': 'lower',\n"
    "        '/jax/core/compile/backend_compile_duration': 'backend',\n"
    "        '/jax/compilation_cache/cache_retrieval_time_sec': 'cache_load'}\n"
    "def _jax(m):\n"
    "    rd = getattr(m, 'register_event_duration_secs_listener', None)\n"
    "    re = getattr(m, 'register_event_listener', None)\n"
    "    if rd is None:\n"
    "        _note(1, 'framework events: jax.monitoring has no duration listeners: JAX compiles are sampled')\n"
    "        return\n"
    "    def dur(event, *a, **k):\n"
    "        try:\n"
    "            s = _JAX.get(event)\n"
    "            if s is None:\n"
    "                return\n"
    "            d = a[0] if a else k.get('duration_secs', k.get('duration', 0))\n"
    "            _emit('jax', s, _s(k.get('fun_name')), 'hit' if s == 'cache_load' else 'unknown',\n"
    "                  max(0, int(float(d) * 1e9)), 0, event, s != 'lower')\n"
    "        except Exception:\n"
    "            pass\n"
    "    def ev(event, *a, **k):\n"
    "        try:\n"
    "            if event == '/jax/compilation_cache/cache_hits':\n"
    "                _emit('jax', 'cache_lookup', None, 'hit', 0, 0, event, 0)\n"
    "            elif event == '/jax/compilation_cache/cache_misses':\n"
    "                _emit('jax', 'cache_lookup', None, 'miss', 0, 0, event, 0)\n"
    "        except Exception:\n"
    "            pass\n"
    "    rd(dur)\n"
    "    if re is not None:\n"
    "        re(ev)\n"
    "    _note(0, 'framework events: jax.monitoring')\n"
    "_NUMBA_LOCK = [0, 0, False]\n"
    "def _numba(m, which):\n"
    "    L = getattr(m, 'Listener', None)\n"
    "    reg = getattr(m, 'register', None)\n"
    "    if L is None or reg is None:\n"
    "        _note(1, 'framework events: ' + which + ' has no Listener: Numba compiles are sampled')\n"
    "        return\n"
    "    open_ = []\n"
    "    lock = _NUMBA_LOCK\n"
    "    class _L(L):\n"
    "        def on_start(self, event):\n"
    "            try:\n"
    "                open_.append(_now())\n"
    "            except Exception:\n"
    "                pass\n"
    "        def on_end(self, event):\n"
    "            try:\n"
    "                if not open_:\n"
    "                    return\n"
    "                t0 = open_.pop()\n"
    "                lock[2] = True\n"
    "                name = None\n"
    "                cache = 'miss'\n"
    "                try:\n"
    "                    d = event.data['dispatcher']\n"
    "                    if type(getattr(d, '_cache', None)).__name__ == 'NullCache':\n"
    "                        cache = 'disabled'\n"
    "                    f = d.py_func\n"
    "                    name = getattr(f, '__qualname__', None) or f.__name__\n"
    "                except Exception:\n"
    "                    pass\n"
    "                t1 = _now()\n"
    "                _emit('numba', 'compile', _s(name), cache, max(0, t1 - t0), t1, kind, 1)\n"
    "            except Exception:\n"
    "                pass\n"
    "    class _K(L):\n"
    "        def on_start(self, event):\n"
    "            try:\n"
    "                if lock[0] == 0:\n"
    "                    lock[1] = _now()\n"
    "                    lock[2] = False\n"
    "                lock[0] += 1\n"
    "            except Exception:\n"
    "                pass\n"
    "        def on_end(self, event):\n"
    "            try:\n"
    "                lock[0] -= 1\n"
    "                if lock[0] == 0 and not lock[2]:\n"
    "                    t1 = _now()\n"
    "                    if t1 - lock[1] >= 1000000:\n"
    "                        _emit('numba', 'cache_load', None, 'unknown', t1 - lock[1], t1, pre + 'compiler_lock', 0)\n"
    "            except Exception:\n"
    "                pass\n"
    "    kind = None\n"
    "    for pre in (('numba-cuda:', 'numba:') if which == 'numba.cuda.core.event' else ('numba:',)):\n"
    "        try:\n"
    "            reg(pre + 'compile', _L())\n"
    "            kind = pre + 'compile'\n"
    "            break\n"
    "        except ValueError:\n"
    "            pass\n"
    "    if kind is None:\n"
    "        _note(1, 'framework events: ' + which + ' takes no compile listener: Numba compiles are sampled')\n"
    "        return\n"
    "    try:\n"
    "        reg(pre + 'compiler_lock', _K())\n"
    "    except Exception:\n"
    "        pass\n"
    "    _note(0, 'framework events: ' + which + ' (' + kind + ')')\n"
    "def _setup(which, m):\n"
    "    try:\n"
    "        if which == 'triton.knobs':\n"
    "            _triton(m)\n"
    "        elif which == 'torch._dynamo.callback':\n"
    "            _torch(m)\n"
    "        elif which == 'jax._src.monitoring':\n"
    "            _jax(m)\n"
    "        else:\n"
    "            _numba(m, which)\n"
    "    except Exception as e:\n"
    "        try:\n"
    "            _note(1, 'framework events: ' + which + ': ' + type(e).__name__ + ': its compiles are sampled')\n"
    "        except Exception:\n"
    "            pass\n";

/* The string of a tuple item, or NULL (None, not a str); never leaves an
 * error set. */
static const char *item_str(fwe_obj *args, long i)
{
    fwe_obj *o = py.tuple_item(args, i);
    const char *s = o ? py.unicode_utf8(o) : NULL;
    if (!s)
        py.err_clear();
    return s;
}

static uint64_t item_u64(fwe_obj *args, long i)
{
    fwe_obj *o = py.tuple_item(args, i);
    long long v = o ? py.long_as(o) : 0;
    if (!o || py.err_occurred()) {
        py.err_clear();
        return 0;
    }
    return v > 0 ? (uint64_t)v : 0;
}

/* _emit(framework, stage, name, cache, dur_ns, end_ns, detail, stack) */
static fwe_obj *fwe_emit(fwe_obj *self, fwe_obj *args)
{
    (void)self;
    int saved = errno;
    if (args && py.tuple_size(args) == 8 && !jst_guard) {
        uint64_t now = jst_now_ns(), dur = item_u64(args, 4), end = item_u64(args, 5);
        if (!end || end > now)
            end = now;
        uint64_t start = dur < end ? end - dur : 0;
        uint8_t buf[4 * FWE_STR_MAX + 256];
        struct jst_rec r;
        jst_rec_begin(&r, buf, sizeof buf, JST_REC_FW_EVENT);
        jst_rec_u64(&r, JST_F_TID, jst_tid());
        jst_rec_u64(&r, JST_F_START_NS, start);
        jst_rec_u64(&r, JST_F_DUR_NS, end - start);
        static const uint16_t keys[] = {JST_F_FRAMEWORK, JST_F_FW_STAGE, JST_F_NAME, JST_F_FW_CACHE};
        for (long i = 0; i < 4; i++) {
            const char *s = item_str(args, i);
            if (s)
                jst_rec_strn(&r, keys[i], s, strnlen(s, FWE_STR_MAX));
        }
        const char *d = item_str(args, 6);
        if (d)
            jst_rec_strn(&r, JST_F_FW_DETAIL, d, strnlen(d, FWE_STR_MAX));
        jst_guard++;
        if (jst_trace()) {
            /* the stack that asked for the compile, Python frames and all
             * (the program's call site) */
            uint64_t sid = item_u64(args, 7) ? jst_bt_capture() : 0;
            if (sid)
                jst_rec_u64(&r, JST_F_STACK_ID, sid);
            jst_emit(&r, 0);
        }
        jst_guard--;
        jst_sampler_event(1); /* compile work on this thread (sampler.c) */
    }
    py.err_clear();
    errno = saved;
    return py.long_from(0);
}

static fwe_obj *fwe_now(fwe_obj *self, fwe_obj *args)
{
    (void)self, (void)args;
    return py.long_from((long long)jst_now_ns());
}

/* What the set-up said, for every trace this process opens (a note is no
 * reason to open one: a process that imports a framework and never uses the
 * GPU writes no trace). Written under the GIL, before the count that
 * publishes it. */
#define FWE_NOTE_MAX 200
static struct {
    int level;
    char text[FWE_NOTE_MAX];
} fwe_notes[FWE_N + 1];
static _Atomic unsigned fwe_n_notes;

/* _note(level, text) */
static fwe_obj *fwe_note(fwe_obj *self, fwe_obj *args)
{
    (void)self;
    int saved = errno;
    unsigned n = atomic_load(&fwe_n_notes);
    if (args && py.tuple_size(args) == 2 && n < FWE_N + 1) {
        const char *s = item_str(args, 1);
        if (s) {
            fwe_notes[n].level = item_u64(args, 0) ? 1 : 0;
            snprintf(fwe_notes[n].text, sizeof fwe_notes[n].text, "%s", s);
            atomic_store(&fwe_n_notes, n + 1);
            if (!jst_guard && jst_sink_owned()) {
                jst_guard++;
                jst_note(fwe_notes[n].level, fwe_notes[n].text);
                jst_guard--;
            }
        }
    }
    py.err_clear();
    errno = saved;
    return py.long_from(0);
}

void jst_pyevents_opened(void)
{
    unsigned n = atomic_load(&fwe_n_notes);
    for (unsigned i = 0; i < n; i++)
        jst_note(fwe_notes[i].level, fwe_notes[i].text);
}

static struct fwe_methoddef fwe_defs[] = {
    {"_emit", fwe_emit, FWE_METH_VARARGS, NULL},
    {"_now", fwe_now, FWE_METH_VARARGS, NULL},
    {"_note", fwe_note, FWE_METH_VARARGS, NULL},
};

/* glue[]'s namespace, made once; NULL when it cannot be (then never tried
 * again: fwe_state 2). */
static fwe_obj *fwe_namespace(void)
{
    if (fwe_globals)
        return fwe_globals;
    fwe_obj *g = py.dict_new();
    if (!g)
        return NULL;
    int ok = py.dict_set(g, "__builtins__", py.builtins()) == 0;
    for (size_t i = 0; ok && i < sizeof fwe_defs / sizeof fwe_defs[0]; i++) {
        fwe_obj *f = py.cfunc_new(&fwe_defs[i], NULL, NULL);
        ok = f && py.dict_set(g, fwe_defs[i].name, f) == 0;
        if (f)
            py.decref(f);
    }
    fwe_obj *sys = NULL, *mods = NULL;
    if (ok) {
        fwe_obj *name = py.unicode_from("sys");
        sys = name ? py.import_get(name) : NULL;
        if (name)
            py.decref(name);
        mods = sys ? py.getattr(sys, "modules") : NULL;
        ok = mods && py.dict_set(g, "_modules", mods) == 0;
    }
    if (mods)
        py.decref(mods);
    if (sys)
        py.decref(sys);
    /* its frames say "<jitstall>": readers leave them out of stacks */
    fwe_obj *code = ok ? py.compile(glue, "<jitstall>", FWE_FILE_INPUT, NULL, -1) : NULL;
    fwe_obj *r = code ? py.eval(code, g, g) : NULL;
    if (code)
        py.decref(code);
    if (r)
        py.decref(r);
    if (!r) {
        py.err_clear();
        py.decref(g);
        atomic_store(&fwe_state, 2);
        jst_dbg("framework events: the listeners could not be set up");
        return NULL;
    }
    fwe_globals = g;
    return g;
}

/* Whether module m has finished running its body (importlib keeps
 * __spec__._initializing true until then). */
static int fwe_ready(fwe_obj *m)
{
    fwe_obj *spec = py.getattr(m, "__spec__");
    if (!spec) {
        py.err_clear();
        return 1;
    }
    fwe_obj *ini = py.getattr(spec, "_initializing");
    int busy = ini ? py.is_true(ini) == 1 : 0;
    if (ini)
        py.decref(ini);
    py.decref(spec);
    py.err_clear();
    return !busy;
}

/* Is watched[i]'s top package in sys.modules and still being imported? */
static int fwe_top_importing(size_t i)
{
    char top[64];
    size_t n = strcspn(watched[i], ".");
    if (n >= sizeof top)
        return 0;
    memcpy(top, watched[i], n);
    top[n] = 0;
    fwe_obj *name = py.unicode_from(top);
    fwe_obj *m = name ? py.import_get(name) : NULL;
    int busy = m ? !fwe_ready(m) : 0;
    if (m)
        py.decref(m);
    if (name)
        py.decref(name);
    py.err_clear();
    return busy;
}

static void fwe_setup(size_t i, fwe_obj *m)
{
    fwe_obj *g = fwe_namespace();
    fwe_obj *f = g ? py.dict_get(g, "_setup") : NULL; /* borrowed */
    fwe_obj *which = f ? py.unicode_from(watched[i]) : NULL;
    fwe_obj *args = which ? py.tuple_pack(2, which, m) : NULL;
    fwe_obj *r = args ? py.call(f, args, NULL) : NULL;
    if (r)
        py.decref(r);
    if (args)
        py.decref(args);
    if (which)
        py.decref(which);
    py.err_clear();
    jst_dbg("framework events: %s set up", watched[i]);
}

/* Sets up each watched module whose import started and has ended. One
 * thread at a time: the Python it runs may let another thread take the GIL,
 * and that one's events then wait for a later turn. */
static _Atomic int fwe_setting;
static void fwe_check(unsigned pending)
{
    if (atomic_exchange(&fwe_setting, 1))
        return;
    for (size_t i = 0; i < FWE_N; i++) {
        unsigned bit = 1u << i;
        if (!(pending & bit) || (atomic_fetch_or(&fwe_claim, bit) & bit))
            continue;
        fwe_obj *m = fwe_names[i] ? py.import_get(fwe_names[i]) : NULL;
        if (!m) {
            py.err_clear();
            atomic_fetch_and(&fwe_claim, ~bit);
            continue;
        }
        if (fwe_ready(m))
            fwe_setup(i, m);
        else
            atomic_fetch_and(&fwe_claim, ~bit);
        py.decref(m);
    }
    atomic_store(&fwe_setting, 0);
}

/* An import of name began: a watched module that may be on its way is
 * given up when it is not there, its top package is no longer being
 * imported, and name is no package of it (its own chain's import events
 * came before the hook). */
static void fwe_maybe_drop(const char *name)
{
    unsigned maybe = atomic_load(&fwe_maybe);
    for (size_t i = 0; maybe && i < FWE_N; i++) {
        unsigned bit = 1u << i;
        size_t n = strlen(name);
        if (!(maybe & bit) || (!strncmp(watched[i], name, n) &&
                               (watched[i][n] == '.' || !watched[i][n])))
            continue;
        fwe_obj *m = fwe_names[i] ? py.import_get(fwe_names[i]) : NULL;
        if (m)
            py.decref(m);
        py.err_clear();
        if (!m && !fwe_top_importing(i))
            atomic_fetch_and(&fwe_seen, ~bit);
        if (m || !fwe_top_importing(i))
            atomic_fetch_and(&fwe_maybe, ~bit);
    }
}

static void fwe_saw_import(fwe_obj *args)
{
    const char *name = py.tuple_size(args) > 0 ? item_str(args, 0) : NULL;
    if (name && atomic_load(&fwe_maybe))
        fwe_maybe_drop(name);
    for (size_t i = 0; name && i < FWE_N; i++)
        if (!strcmp(name, watched[i]))
            atomic_fetch_or(&fwe_seen, 1u << i);
}

/* The audit hook: runs for every audit event of the process, on the thread
 * that raised it, with the GIL held. Always lets the event go on. */
static int fwe_audit(const char *event, fwe_obj *args, void *data)
{
    (void)data;
    if (fwe_busy || !event)
        return 0;
    fwe_busy = 1;
    int saved = errno;
    unsigned pending = atomic_load_explicit(&fwe_seen, memory_order_relaxed) &
                       ~atomic_load_explicit(&fwe_claim, memory_order_relaxed);
    int import = event[0] == 'i' && !strcmp(event, "import");
    /* the interpreter's own events (cpython.*: its finalization among them)
     * are no place to run code; nor is a moment with an exception set */
    if ((import || pending) && strncmp(event, "cpython.", 8) != 0 &&
        atomic_load(&fwe_state) == 1 && fwe_interp() == fwe_main && !py.err_occurred()) {
        if (pending)
            fwe_check(pending);
        if (import && args)
            fwe_saw_import(args);
        py.err_clear();
    }
    errno = saved;
    fwe_busy = 0;
    return 0;
}

static int fwe_off(void)
{
    const char *v = getenv("JITSTALL_FW_EVENTS");
    return v && v[0] == '0' && !v[1];
}

/* The frameworks whose events are read: a process that imported none of
 * them gets no audit hook (once a hook exists, the interpreter builds every
 * audit event's arguments, about 750 instructions each). */
static const char *const fwe_frameworks[] = {"triton", "torch", "jax", "numba"};

static int fwe_framework_imported(void)
{
    int found = 0;
    for (size_t i = 0; !found && i < sizeof fwe_frameworks / sizeof fwe_frameworks[0]; i++) {
        fwe_obj *name = py.unicode_from(fwe_frameworks[i]);
        fwe_obj *m = name ? py.import_get(name) : NULL;
        found = m != NULL;
        if (m)
            py.decref(m);
        if (name)
            py.decref(name);
    }
    py.err_clear();
    return found;
}

/* The C API found once (fwe_loaded 1), or found missing (fwe_state 2). */
static _Atomic int fwe_loaded;

static int fwe_load(void)
{
    if (atomic_load(&fwe_loaded))
        return 1;
    void **slot = (void **)&py;
    for (size_t i = 0; i < sizeof fwe_syms / sizeof fwe_syms[0]; i++) {
        slot[i] = jst_real_dlsym(RTLD_DEFAULT, fwe_syms[i]);
        if (!slot[i]) {
            /* no audit hooks (Python before 3.8), or not CPython */
            jst_dbg("framework events: no %s in this process", fwe_syms[i]);
            int expected = 0;
            if (jst_real_dlsym(RTLD_DEFAULT, "Py_IsInitialized") &&
                atomic_compare_exchange_strong(&fwe_state, &expected, 2)) {
                fwe_notes[0].level = 1;
                snprintf(fwe_notes[0].text, sizeof fwe_notes[0].text,
                         "framework events: this Python has no %s (before 3.8): framework "
                         "compiles are sampled",
                         fwe_syms[i]);
                atomic_store(&fwe_n_notes, 1);
            }
            atomic_store(&fwe_state, 2);
            return 0;
        }
    }
    fwe_main_interp = (void *(*)(void))jst_real_dlsym(RTLD_DEFAULT, "PyInterpreterState_Main");
    fwe_ts_get = (void *(*)(void))jst_real_dlsym(RTLD_DEFAULT, "PyThreadState_Get");
    fwe_ts_interp = (void *(*)(void *))jst_real_dlsym(RTLD_DEFAULT, "PyThreadState_GetInterpreter");
    fwe_interp_get_38 = (void *(*)(void))jst_real_dlsym(RTLD_DEFAULT, "_PyInterpreterState_Get");
    if (!fwe_main_interp || (!(fwe_ts_get && fwe_ts_interp) && !fwe_interp_get_38)) {
        jst_dbg("framework events: this Python cannot say which interpreter runs");
        atomic_store(&fwe_state, 2);
        return 0;
    }
    atomic_store(&fwe_loaded, 1);
    return 1;
}

void jst_pyevents_arm(void)
{
    int st = atomic_load(&fwe_state);
    if (st || fwe_busy || jst_guard)
        return;
    if (!jst_config() || fwe_off()) {
        atomic_store(&fwe_state, 2);
        return;
    }
    if (!fwe_load())
        return;
    /* Only from a thread that holds the GIL of the initialized main
     * interpreter (an extension module's import), in a process that has
     * begun importing a framework (which loads its own extension modules);
     * else at a later lookup. */
    if (!py.is_initialized() || py.gil_check() != 1)
        return;
    fwe_main = fwe_main_interp();
    if (!fwe_main || fwe_interp() != fwe_main)
        return;
    fwe_busy = 1;
    int fw = fwe_framework_imported();
    fwe_busy = 0;
    if (!fw)
        return;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&fwe_state, &expected, 3))
        return;
    fwe_busy = 1;
    for (size_t i = 0; i < FWE_N; i++) {
        fwe_names[i] = py.unicode_from(watched[i]);
        /* a watched module imported before this moment */
        fwe_obj *m = fwe_names[i] ? py.import_get(fwe_names[i]) : NULL;
        if (m) {
            atomic_fetch_or(&fwe_seen, 1u << i);
            py.decref(m);
        } else if (fwe_top_importing(i)) {
            atomic_fetch_or(&fwe_maybe, 1u << i);
            atomic_fetch_or(&fwe_seen, 1u << i);
        }
    }
    py.err_clear();
    int ok = py.add_audit_hook(fwe_audit, NULL) == 0;
    py.err_clear();
    atomic_store(&fwe_state, ok ? 1 : 2);
    fwe_busy = 0;
    jst_dbg("framework events: audit hook %s", ok ? "added" : "refused");
}
