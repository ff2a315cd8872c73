/*
 * Python frames for the stacks of recorded events: when a load, link, runtime
 * compile or first launch comes from Python, the calling thread's CPython
 * frame chain is read (function, file, line of each frame) and tied to the
 * interpreter eval frames of the native stack.
 *
 * Why this is safe (docs/DRIVER.md, "Python callers"):
 * - The GIL is never taken and no Python API that needs it is called: the
 *   functions used (Py_IsInitialized, _PyThreadState_UncheckedGet or
 *   PyThreadState_GetUnchecked, PyGILState_GetThisThreadState) only read a
 *   global or a thread-specific key. So a thread that holds the GIL while
 *   waiting on this one cannot deadlock with it, and nothing is allocated in
 *   the interpreter.
 * - Only the calling thread's own frames are read. While this thread is
 *   inside the hook, its frame chain cannot change: only the owning thread
 *   pushes and pops its frames, and the code objects they point at hold
 *   strong references to their names and tables. That holds whether the
 *   caller kept the GIL (ctypes.PyDLL, CuPy's RawKernel) or released it
 *   (ctypes.CDLL, CuPy's RawModule(path=), PyTorch's cuLibraryLoadData).
 * - Every read goes through a pipe made for the capture: write(2) copies
 *   from the address inside the kernel and fails with EFAULT instead of
 *   faulting on an unmapped address (py_copyv says why not process_vm_readv),
 *   and every object
 *   is checked before its fields are trusted: the thread state must name this
 *   thread, code objects, strings and bytes must have the type CPython
 *   exports for them, lengths are capped and the walk is bounded. A layout
 *   that does not check out yields no frames, never a crash.
 * - The struct offsets are per CPython minor version (3.10 to 3.13, release
 *   builds with the default object header); any other version records
 *   nothing and says so once in a note.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "pyframes.h"
#include "state.h"
#include "real.h"
#include "trace.h"

/* Frames walked at most (a cycle in a damaged chain ends here). */
#define PY_MAX_WALK 4096
/* Eval frames of the native stack tracked at most. */
#define PY_MAX_EVALS 256
#define PY_FUNC_MAX 200
#define PY_FILE_MAX 512
/* Bytes read past an object's header on the first try, in the hope that
 * the text or table is there too (saves a read: each costs a system call). */
#define PY_SPEC 512
#define PY_OWNED_BY_GENERATOR 1
#define PY_OWNED_BY_CSTACK 3

/* Where CPython keeps what we read, for one minor version (offsets in bytes,
 * measured with offsetof against that version's headers). */
struct py_layout {
    unsigned minor;
    unsigned ts_thread_id; /* PyThreadState.thread_id */
    unsigned ts_frame;     /* .frame (3.10), .cframe (3.11, 3.12), .current_frame (3.13) */
    int cf_current;        /* _PyCFrame.current_frame; -1: ts_frame is the frame */
    int frame_object;      /* 3.10: frames are PyFrameObjects with an int f_lasti */
    unsigned fr_code, fr_prev, fr_instr;
    int fr_owner, fr_entry; /* -1: no such field */
    unsigned co_filename, co_name, co_qualname, co_linetable, co_firstlineno;
    unsigned co_code, co_firsttraceable; /* 3.11+: instructions, first traceable one */
    unsigned ascii_size, compact_size;   /* sizeof PyASCIIObject, PyCompactUnicodeObject */
};

static const struct py_layout py_layouts[] = {
    {10, 176, 24, -1, 1, 32, 24, 96, -1, -1, 104, 112, 112, 120, 40, 0, 0, 48, 72},
    {11, 152, 56, 8, 0, 32, 48, 56, 69, 68, 112, 120, 128, 136, 72, 184, 168, 48, 72},
    {12, 136, 56, 0, 0, 0, 8, 56, 70, -1, 112, 120, 128, 136, 68, 192, 176, 40, 56},
    {13, 152, 72, -1, 0, 0, 8, 56, 70, -1, 112, 120, 128, 136, 68, 200, 184, 40, 56},
};

enum { PY_UNRESOLVED = 0, PY_ABSENT, PY_READY, PY_OFF };
static _Atomic int py_state;
static pthread_mutex_t py_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int py_bad_noted;
static _Atomic unsigned long long py_absent_adds; /* py_adds() when Python was absent */

static const struct py_layout *py_lay;
static uintptr_t py_code_type, py_unicode_type, py_bytes_type, py_frame_type;
static uintptr_t py_eval_lo, py_eval_hi;
static int (*py_is_init)(void);
static void *(*py_cur_tstate)(void);
static void *(*py_gil_tstate)(void);

/* The capture's pipe (jst_py_capture makes it and closes it): no descriptor
 * of ours outlives the hook, so a program that closes every descriptor can
 * never have one of its own files written by us. */
static __thread int py_pfd[2] __attribute__((tls_model("initial-exec"))) = {-1, -1};

/* Copies rem[0..n) into loc[0..n), in order, through the pipe; returns the
 * bytes copied before the first unreadable one (0 or less: none).
 * process_vm_readv would do it in one call, but seccomp profiles refuse it,
 * and a filter such as systemd's SystemCallFilter kills the process for a
 * call it does not allow, before any error could be seen. A pipe, write(2)
 * and read(2) are what every program is allowed. One batch stays below the
 * pipe's capacity (PY_PIPE_MAX): the write end is non-blocking. */
#define PY_PIPE_MAX 16384
static ssize_t py_copyv(const struct iovec *loc, const struct iovec *rem, int n)
{
    if (py_pfd[1] < 0) {
        errno = EBADF;
        return -1;
    }
    ssize_t w = writev(py_pfd[1], rem, n);
    if (w <= 0)
        return w;
    size_t left = (size_t)w, i = 0, off = 0;
    while (left) { /* drain exactly what was written, into loc in order */
        size_t want = loc[i].iov_len - off < left ? loc[i].iov_len - off : left;
        ssize_t r = read(py_pfd[0], (uint8_t *)loc[i].iov_base + off, want);
        if (r <= 0)
            return -1; /* cannot happen with the bytes in the pipe; stop */
        left -= (size_t)r;
        off += (size_t)r;
        if (off == loc[i].iov_len) {
            i++;
            off = 0;
        }
    }
    return w;
}

/* Copies n bytes at addr into dst; 0 on success, -1 when any of them is not
 * readable. */
static int py_read(void *dst, uintptr_t addr, size_t n)
{
    if (!addr || n == 0)
        return -1;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < PY_PIPE_MAX ? n - done : PY_PIPE_MAX;
        struct iovec local = {(uint8_t *)dst + done, k}, remote = {(void *)(addr + done), k};
        if (py_copyv(&local, &remote, 1) != (ssize_t)k)
            return -1;
        done += k;
    }
    return 0;
}

static uintptr_t py_ptr_at(const uint8_t *b, unsigned off)
{
    uintptr_t v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

static int py_int_at(const uint8_t *b, unsigned off)
{
    int v;
    memcpy(&v, b + off, sizeof v);
    return v;
}

static void py_note(const char *msg)
{
    uint8_t buf[512];
    struct jst_rec r;
    jst_rec_begin(&r, buf, sizeof buf, JST_REC_NOTE);
    jst_rec_u64(&r, JST_F_LEVEL, 1);
    jst_rec_str(&r, JST_F_MESSAGE, msg);
    jst_emit(&r, 0);
    jst_dbg("%s", msg);
}

/* Says once per process that frames could not be read after all. */
static void py_note_bad(const char *what)
{
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
    if (!gv || py_read(s, (uintptr_t)gv(), sizeof s - 1) < 0)
        snprintf(s, sizeof s, "?");
    s[strcspn(s, " ")] = '\0';
    snprintf(ver, cap, "%s", s);
    const unsigned long *pv = jst_real_dlsym(RTLD_DEFAULT, "Py_Version");
    unsigned long v;
    if (pv && py_read(&v, (uintptr_t)pv, sizeof v) == 0)
        return (v >> 24) == 3 ? (int)((v >> 16) & 0xff) : -1;
    return s[0] == '3' && s[1] == '.' ? atoi(s + 2) : -1;
}

/* A type object CPython exports, checked to have the standard object header
 * (ob_type at offset 8 is &PyType_Type: not so in free-threaded builds). */
static uintptr_t py_type(const char *name, uintptr_t type_type)
{
    uintptr_t t = (uintptr_t)jst_real_dlsym(RTLD_DEFAULT, name), ob_type = 0;
    if (!t || py_read(&ob_type, t + 8, sizeof ob_type) < 0 || ob_type != type_type)
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
        py_eval_lo = (uintptr_t)f;
        py_eval_hi = (uintptr_t)f + sym->st_size;
    }
}

/* dl_iterate_phdr's count of objects ever loaded: Python can only appear
 * after it changes. */
static int py_adds_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    *(unsigned long long *)data = info->dlpi_adds;
    return 1;
}

static unsigned long long py_adds(void)
{
    unsigned long long adds = 0;
    dl_iterate_phdr(py_adds_cb, &adds);
    return adds;
}

/* From 3.13, CPython describes its own layout at the start of _PyRuntime
 * (_Py_DebugOffsets: the cookie "xdebugpy", then u64 fields). Our table is
 * used only where it agrees with it: a patch release that moved a field
 * then records nothing instead of garbage. 1 agrees, 0 not. */
static int py_offsets_agree(const struct py_layout *L)
{
    uint64_t d[44];
    const void *rt = jst_real_dlsym(RTLD_DEFAULT, "_PyRuntime");
    if (!rt || py_read(d, (uintptr_t)rt, sizeof d) < 0 || memcmp(d, "xdebugpy", 8) != 0)
        return 0;
    /* d[2] free_threaded; thread state from d[19], frame from d[28], code from d[34] */
    return d[2] == 0 && d[23] == L->ts_frame && d[24] == L->ts_thread_id && d[29] == L->fr_prev &&
           d[30] == L->fr_code && d[31] == L->fr_instr && d[33] == (uint64_t)L->fr_owner &&
           d[35] == L->co_filename && d[36] == L->co_name && d[37] == L->co_qualname &&
           d[38] == L->co_linetable && d[39] == L->co_firstlineno && d[43] == L->co_code;
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
    /* The pipe reads must work here (no descriptor left, a sandbox). */
    uint64_t probe = 1, copy = 0;
    if (py_read(&copy, (uintptr_t)&probe, sizeof probe) < 0 || copy != probe) {
        py_note("Python frames not recorded: memory cannot be read through a pipe here");
        atomic_store(&py_state, PY_OFF);
        return;
    }
    char msg[200], ver[16];
    int minor = py_minor(ver, sizeof ver);
    for (size_t i = 0; i < sizeof py_layouts / sizeof py_layouts[0]; i++)
        if ((int)py_layouts[i].minor == minor)
            py_lay = &py_layouts[i];
    if (!py_lay) {
        snprintf(msg, sizeof msg,
                 "Python frames not recorded: CPython %s's frame layout is unknown to jitstall "
                 "(it reads 3.10 to 3.13)",
                 ver);
        py_note(msg);
        atomic_store(&py_state, PY_OFF);
        return;
    }
    uintptr_t tt = (uintptr_t)jst_real_dlsym(RTLD_DEFAULT, "PyType_Type");
    py_code_type = py_type("PyCode_Type", tt);
    py_unicode_type = py_type("PyUnicode_Type", tt);
    py_bytes_type = py_type("PyBytes_Type", tt);
    py_frame_type = py_type("PyFrame_Type", tt);
    py_cur_tstate = (void *(*)(void))jst_real_dlsym(
        RTLD_DEFAULT, minor >= 13 ? "PyThreadState_GetUnchecked" : "_PyThreadState_UncheckedGet");
    py_gil_tstate = (void *(*)(void))jst_real_dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
    py_eval_range();
    if (!tt || !py_code_type || !py_unicode_type || !py_bytes_type || !py_frame_type ||
        !py_gil_tstate || (minor >= 13 && !py_offsets_agree(py_lay))) {
        snprintf(msg, sizeof msg,
                 "Python frames not recorded: CPython %s has an object layout jitstall does "
                 "not know (debug or free-threaded build?)",
                 ver);
        py_note(msg);
        atomic_store(&py_state, PY_OFF);
        return;
    }
    jst_dbg("python %s: frames readable, eval frame %#lx-%#lx", ver, (unsigned long)py_eval_lo,
            (unsigned long)py_eval_hi);
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
    if (st == PY_ABSENT && py_adds() == atomic_load(&py_absent_adds))
        return 0; /* no Python, and nothing loaded since we looked */
    return st != PY_OFF;
}

/* Does the thread state at ts belong to the calling thread? */
static int py_ts_mine(uintptr_t ts)
{
    unsigned long id;
    return ts && py_read(&id, ts + py_lay->ts_thread_id, sizeof id) == 0 &&
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
        py_note_bad("this thread's state does not name this thread");
    return 0;
}

/* Appends code point c to out as UTF-8; returns the bytes written. */
static size_t py_utf8(uint32_t c, char *out)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12);
        out[1] = (char)(0x80 | ((c >> 6) & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | ((c >> 18) & 0x07));
    out[1] = (char)(0x80 | ((c >> 12) & 0x3F));
    out[2] = (char)(0x80 | ((c >> 6) & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
}

/* Text of the str object at obj as UTF-8 into out (cap >= 8), tabs and
 * newlines made spaces. h holds the first have bytes of the object, already
 * read; whatever else is needed is read here. 0, or -1 when obj is no
 * compact str. */
static int py_str(uintptr_t obj, const uint8_t *h, size_t have, char *out, size_t cap)
{
    const struct py_layout *L = py_lay;
    uint8_t hb[80], raw[PY_FILE_MAX + 1];
    if (have < L->ascii_size) {
        if (py_read(hb, obj, L->ascii_size) < 0)
            return -1;
        h = hb;
        have = L->ascii_size;
    }
    uint64_t length;
    uint32_t state;
    memcpy(&length, h + 16, sizeof length);
    memcpy(&state, h + 32, sizeof state);
    unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
    if (py_ptr_at(h, 8) != py_unicode_type || !compact || (kind != 1 && kind != 2 && kind != 4))
        return -1;
    /* UTF-8 takes at most 1, 2, 3 or 4 bytes for ASCII, UCS1, UCS2, UCS4. */
    size_t room = (cap - 1) / (ascii ? 1 : kind == 1 ? 2 : kind == 2 ? 3 : 4);
    size_t n = length < room ? (size_t)length : room;
    size_t hdr = ascii ? L->ascii_size : L->compact_size;
    const uint8_t *d = h + hdr;
    if (n * kind > sizeof raw)
        return -1;
    if (hdr + n * kind > have) {
        if (n && py_read(raw, obj + hdr, n * kind) < 0)
            return -1;
        d = raw;
    }
    size_t o = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t c = kind == 1   ? d[i]
                     : kind == 2 ? (uint32_t)d[2 * i] | (uint32_t)d[2 * i + 1] << 8
                                 : (uint32_t)d[4 * i] | (uint32_t)d[4 * i + 1] << 8 |
                                       (uint32_t)d[4 * i + 2] << 16 | (uint32_t)d[4 * i + 3] << 24;
        if (c == '\t' || c == '\n' || c == '\r')
            c = ' ';
        if (o + 4 >= cap)
            break; /* only a string whose flags lie gets here */
        o += py_utf8(c, out + o);
    }
    out[o] = '\0';
    return 0;
}

/* Reads a code object's line table (a bytes object) piecewise. */
struct py_table {
    uintptr_t data;
    size_t size, pos, have, off;
    uint8_t win[PY_SPEC];
};

/* Opens the bytes object at obj; h holds its first have bytes, already read
 * (the header, then the start of the table). */
static int py_table_open(struct py_table *t, uintptr_t obj, const uint8_t *h, size_t have)
{
    uint8_t hb[32];
    memset(t, 0, sizeof *t);
    if (have < 32) {
        if (py_read(hb, obj, sizeof hb) < 0)
            return -1;
        h = hb;
        have = sizeof hb;
    }
    if (py_ptr_at(h, 8) != py_bytes_type)
        return -1;
    memcpy(&t->size, h + 16, sizeof t->size);
    t->data = obj + 32;
    t->have = have - 32 < sizeof t->win ? have - 32 : sizeof t->win;
    if (t->have > t->size)
        t->have = t->size;
    memcpy(t->win, h + 32, t->have);
    return t->size > (1u << 24) ? -1 : 0;
}

/* The next byte of the table; -1 at its end or when unreadable. */
static int py_table_byte(struct py_table *t)
{
    if (t->pos >= t->size)
        return -1;
    if (t->pos >= t->off + t->have) {
        size_t n = t->size - t->pos < sizeof t->win ? t->size - t->pos : sizeof t->win;
        if (py_read(t->win, t->data + t->pos, n) < 0)
            return -1;
        t->off = t->pos;
        t->have = n;
    }
    return t->win[t->pos++ - t->off];
}

/* 3.10 line table: (byte delta, signed line delta) pairs; -128: no line. */
static int py_line_310(struct py_table *t, int first, long addr)
{
    long end = 0;
    int line = first;
    for (;;) {
        int sd = py_table_byte(t), ld = py_table_byte(t);
        if (sd < 0 || ld < 0)
            return 0;
        long start = end;
        end += sd;
        int no_line = ld == 0x80;
        if (!no_line)
            line += (int8_t)ld;
        if (start <= addr && addr < end)
            return no_line ? 0 : line;
    }
}

/* A varint of the 3.11+ location table (6 bits per byte, bit 6: more). */
static unsigned py_varint(struct py_table *t)
{
    unsigned v = 0, shift = 0;
    for (int b; (b = py_table_byte(t)) >= 0 && shift < 32; shift += 6) {
        v |= (unsigned)(b & 63) << shift;
        if (!(b & 64))
            break;
    }
    return v;
}

/* 3.11+ location table: entries start with a byte with bit 7 set, code in
 * bits 3-6, length-1 (code units) in bits 0-2; codes 13 and 14 carry a
 * signed line delta, 11 and 12 mean +1 and +2, 15 no location. */
static int py_line_311(struct py_table *t, int first, long addr)
{
    long end = 0;
    int line = first;
    int b = py_table_byte(t);
    while (b >= 0) {
        if (!(b & 0x80))
            return 0;
        unsigned code = (b >> 3) & 15;
        long start = end;
        end += ((b & 7) + 1) * 2;
        if (code == 13 || code == 14) {
            unsigned u = py_varint(t);
            line += (u & 1) ? -(int)(u >> 1) : (int)(u >> 1);
        } else if (code == 11 || code == 12) {
            line += (int)code - 10;
        }
        if (start <= addr && addr < end)
            return code == 15 ? 0 : line;
        while ((b = py_table_byte(t)) >= 0 && !(b & 0x80))
            ;
    }
    return 0;
}

/* One walk over the frame chain. */
struct py_walk {
    struct jst_pyframes *out;
    uint32_t evals[PY_MAX_EVALS];
    size_t n_evals, n_ips;
    unsigned group;   /* eval invocation the next frame belongs to */
    int bad;          /* a check failed: stop */
    uintptr_t win_lo; /* frames read ahead (3.11+): win_len bytes from win_lo */
    size_t win_len;
    uint8_t win[4096];
};

/* The function ("Loader.load") and file of a code object as "func\tfile",
 * and its line table opened: the three objects in one read when possible. */
static int py_names(const uint8_t *co, char *text, size_t cap, struct py_table *t)
{
    const struct py_layout *L = py_lay;
    uintptr_t q = py_ptr_at(co, L->co_qualname), f = py_ptr_at(co, L->co_filename);
    uintptr_t lt = py_ptr_at(co, L->co_linetable);
    uint8_t bq[72 + PY_SPEC], bf[72 + PY_SPEC], bl[32 + PY_SPEC];
    size_t nq = L->compact_size + PY_SPEC, nf = nq, nl = 32 + PY_SPEC;
    struct iovec loc[3] = {{bq, nq}, {bf, nf}, {bl, nl}};
    struct iovec rem[3] = {{(void *)q, nq}, {(void *)f, nf}, {(void *)lt, nl}};
    if (!q || !f || !lt)
        return -1;
    /* Near the end of a mapping the speculative read fails: then each object
     * reads exactly what it needs. */
    if (py_copyv(loc, rem, 3) != (ssize_t)(nq + nf + nl))
        nq = nf = nl = 0;
    char func[PY_FUNC_MAX + 1], file[PY_FILE_MAX + 1];
    if (py_str(q, bq, nq, func, sizeof func) < 0 || py_str(f, bf, nf, file, sizeof file) < 0 ||
        py_table_open(t, lt, bl, nl) < 0)
        return -1;
    snprintf(text, cap, "%s\t%s", func, file);
    return 0;
}

/* Names and the line of one instruction per code object, kept across
 * captures, so that a stack seen again costs two reads per frame (the frame
 * and its code object) instead of four or more. An entry is used only while
 * the code object still points at the same name, file and table objects. */
struct py_cached {
    uintptr_t code, q, f, lt;
    long addr;
    int line;
    char text[PY_FUNC_MAX + PY_FILE_MAX + 2];
};
#define PY_CACHE 128
static struct py_cached py_cache[PY_CACHE];
static pthread_mutex_t py_cache_lock = PTHREAD_MUTEX_INITIALIZER;

/* Fills text and *line from the cache: 0 nothing, 1 text, 2 text and line.
 * A busy cache (another thread, or a lock a fork left held) is a miss. */
static int py_cache_get(const struct py_cached *k, char *text, size_t cap, int *line)
{
    int got = 0;
    if (pthread_mutex_trylock(&py_cache_lock) != 0)
        return 0;
    const struct py_cached *e = &py_cache[(k->code >> 4) % PY_CACHE];
    if (e->code == k->code && e->q == k->q && e->f == k->f && e->lt == k->lt) {
        snprintf(text, cap, "%s", e->text);
        got = 1;
        if (e->addr == k->addr) {
            *line = e->line;
            got = 2;
        }
    }
    pthread_mutex_unlock(&py_cache_lock);
    return got;
}

static void py_cache_put(const struct py_cached *k, const char *text, int line)
{
    if (pthread_mutex_trylock(&py_cache_lock) != 0)
        return;
    struct py_cached *e = &py_cache[(k->code >> 4) % PY_CACHE];
    *e = *k;
    e->line = line;
    snprintf(e->text, sizeof e->text, "%s", text);
    pthread_mutex_unlock(&py_cache_lock);
}

/* Appends one frame: code object at code (header in co), instruction offset
 * in bytes (-1: none). */
static void py_add(struct py_walk *w, uintptr_t code, const uint8_t *co, long addr)
{
    const struct py_layout *L = py_lay;
    struct py_cached k = {.code = code,
                          .q = py_ptr_at(co, L->co_qualname),
                          .f = py_ptr_at(co, L->co_filename),
                          .lt = py_ptr_at(co, L->co_linetable),
                          .addr = addr};
    char text[PY_FUNC_MAX + PY_FILE_MAX + 2];
    int line = 0, got = py_cache_get(&k, text, sizeof text, &line);
    if (got < 2) {
        struct py_table t;
        if (got ? py_table_open(&t, k.lt, NULL, 0) < 0 : py_names(co, text, sizeof text, &t) < 0) {
            w->bad = 1;
            return;
        }
        int first = py_int_at(co, L->co_firstlineno);
        line = addr < 0         ? first
               : L->minor == 10 ? py_line_310(&t, first, addr)
                                : py_line_311(&t, first, addr);
        py_cache_put(&k, text, line);
    }
    struct jst_pyframes *o = w->out;
    char full[PY_FUNC_MAX + PY_FILE_MAX + 32];
    int tl = snprintf(full, sizeof full, "%s\t%d", text, line > 0 ? line : 0);
    if (tl < 0 || o->n >= JST_PY_MAX_FRAMES || o->len + 6 + (size_t)tl > sizeof o->buf)
        return;
    uint32_t native = w->group < w->n_evals ? w->evals[w->group] : (uint32_t)w->n_ips;
    uint16_t len = (uint16_t)tl;
    memcpy(o->buf + o->len, &native, 4);
    memcpy(o->buf + o->len + 4, &len, 2);
    memcpy(o->buf + o->len + 6, full, (size_t)tl);
    o->len += 6 + (size_t)tl;
    o->n++;
}

/* Reads a code object's header into co; 0, or -1 when code is no code object. */
static int py_code(uintptr_t code, uint8_t *co, size_t cap)
{
    size_t n = py_lay->co_code ? py_lay->co_code : py_lay->co_linetable + 8;
    return n <= cap && py_read(co, code, n) == 0 && py_ptr_at(co, 8) == py_code_type ? 0 : -1;
}

/* 3.10: a chain of PyFrameObjects, one eval invocation each. */
static void py_walk_310(struct py_walk *w, uintptr_t f)
{
    const struct py_layout *L = py_lay;
    for (int steps = 0; f && steps < PY_MAX_WALK && !w->bad; steps++, w->group++) {
        uint8_t fr[112], co[256];
        if (py_read(fr, f, L->fr_instr + 4) < 0 || py_ptr_at(fr, 8) != py_frame_type) {
            w->bad = 1;
            return;
        }
        uintptr_t code = py_ptr_at(fr, L->fr_code);
        int lasti = py_int_at(fr, L->fr_instr);
        if (py_code(code, co, sizeof co) < 0) {
            w->bad = 1;
            return;
        }
        py_add(w, code, co, lasti < 0 ? -1 : (long)lasti * 2);
        f = py_ptr_at(fr, L->fr_prev);
    }
}

/* The 72 bytes of the _PyInterpreterFrame at f, or NULL when unreadable.
 * Frames lie on the thread's data stack, each older one below the newer, so
 * one read of the 4 KiB that end with a frame usually holds the next ones
 * too; when that read fails (the stack's start is near), the frame's own
 * page is read instead. */
static const uint8_t *py_frame_at(struct py_walk *w, uintptr_t f)
{
    if (f >= w->win_lo && f + 72 <= w->win_lo + w->win_len && f + 72 > f)
        return w->win + (f - w->win_lo);
    uintptr_t end = f + 72, lo = end - sizeof w->win, page = f & ~(uintptr_t)4095;
    if (end < f)
        return NULL;
    if (f < sizeof w->win || py_read(w->win, lo, sizeof w->win) < 0) {
        lo = page < f - (sizeof w->win - 72) ? f : page;
        if (py_read(w->win, lo, end - lo) < 0)
            return NULL;
    }
    w->win_lo = lo;
    w->win_len = end - lo;
    return w->win + (f - lo);
}

/* 3.11 to 3.13: _PyInterpreterFrames. One eval invocation runs the frames up
 * to the one marked is_entry (3.11), or up to the next C-stack shim frame
 * (3.12+). Frames still being set up ("incomplete") are skipped, as CPython
 * does. */
static void py_walk_311(struct py_walk *w, uintptr_t f)
{
    const struct py_layout *L = py_lay;
    for (int steps = 0; f && steps < PY_MAX_WALK && !w->bad; steps++) {
        uint8_t co[256];
        const uint8_t *fr = py_frame_at(w, f);
        if (!fr) {
            w->bad = 1;
            return;
        }
        uintptr_t code = py_ptr_at(fr, L->fr_code), instr = py_ptr_at(fr, L->fr_instr);
        int owner = fr[L->fr_owner];
        f = py_ptr_at(fr, L->fr_prev);
        if (L->minor >= 12 && owner == PY_OWNED_BY_CSTACK) {
            w->group++;
            continue;
        }
        if (py_code(code, co, sizeof co) < 0) {
            w->bad = 1;
            return;
        }
        uintptr_t start = code + L->co_code;
        uintptr_t first = start + 2 * (uintptr_t)(unsigned)py_int_at(co, L->co_firsttraceable);
        if (owner == PY_OWNED_BY_GENERATOR || instr >= first)
            py_add(w, code, co, instr >= start ? (long)(instr - start) : -1);
        if (L->fr_entry >= 0 && fr[L->fr_entry])
            w->group++;
    }
}

static void py_capture(const uint64_t *ips, size_t n_ips, struct jst_pyframes *py)
{
    if (!py_ready() || !py_is_init())
        return;
    uintptr_t ts = py_tstate();
    if (!ts)
        return;
    const struct py_layout *L = py_lay;
    uintptr_t f = 0;
    if (py_read(&f, ts + L->ts_frame, sizeof f) < 0)
        return;
    if (f && L->cf_current >= 0 && py_read(&f, f + (unsigned)L->cf_current, sizeof f) < 0)
        return;
    struct py_walk *w = calloc(1, sizeof *w);
    if (!w)
        return;
    w->out = py;
    w->n_ips = n_ips;
    for (size_t i = 0; i < n_ips && w->n_evals < PY_MAX_EVALS; i++)
        if (ips[i] > py_eval_lo && ips[i] <= py_eval_hi)
            w->evals[w->n_evals++] = (uint32_t)i;
    if (L->frame_object)
        py_walk_310(w, f);
    else
        py_walk_311(w, f);
    if (w->bad) {
        py->n = py->len = 0;
        py_note_bad("the frame chain did not check out");
    }
    free(w);
}

void jst_py_capture(const uint64_t *ips, size_t n_ips, struct jst_pyframes *py)
{
    py->n = py->len = 0;
    int saved = errno;
    if (pipe2(py_pfd, O_CLOEXEC | O_NONBLOCK) != 0) {
        py_pfd[0] = py_pfd[1] = -1;
        errno = saved;
        return; /* no descriptor to spare: no frames this time */
    }
    py_capture(ips, n_ips, py);
    close(py_pfd[0]);
    close(py_pfd[1]);
    py_pfd[0] = py_pfd[1] = -1;
    errno = saved;
}
