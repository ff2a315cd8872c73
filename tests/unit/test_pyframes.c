/*
 * Unit tests of the preload's Python frame reader (interpose/pyframes.c,
 * pyread.c, pylayout.c and pycode.c, compiled in) against a hand-made
 * CPython 3.12 in memory: thread state, frames, code objects, strings and
 * line tables built byte by byte at the offsets jitstall reads. Checks the
 * frames, lines and eval-frame indexes it records, and that damaged chains
 * (unmapped pointers, wrong types, another thread's state, lying string
 * flags, an unknown version, reads a sandbox forbids, the reader's
 * descriptor taken by the program) give no frames and no crash, and that
 * lookups in a long line table start at a checkpoint or come from the cache.
 */
/* The pread that reads memory goes through a stand-in that can refuse. */
#define pread test_pread
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "../../interpose/pyread.c"
#include "../../interpose/pylayout.c"
#include "../../interpose/pycode.c"
#include "../../interpose/pyframes.c"

/* ---- the preload functions the frame reader uses, as stand-ins ---- */

void jst_dl_generation(unsigned long long g[2])
{
    g[0] = 1;
    g[1] = 0;
}

static int notes;
static char last_note[256];

void jst_note(int level, const char *msg)
{
    (void)level;
    notes++;
    snprintf(last_note, sizeof last_note, "%s", msg);
}

void jst_dbg(const char *fmt, ...)
{
    (void)fmt;
}

static int pvr_denied;

ssize_t test_pread(int fd, void *buf, size_t n, off_t off)
{
    if (pvr_denied) {
        errno = EPERM;
        return -1;
    }
    return syscall(SYS_pread64, fd, buf, n, off);
}

/* ---- a fake interpreter ---- */

static uint8_t arena[1 << 16] __attribute__((aligned(16)));
static size_t arena_used;
static uint8_t type_type[64], code_type[64], unicode_type[64], bytes_type[64], frame_type[64];
static unsigned long py_version_num = 0x030C01F0; /* 3.12.1 */
static const char *version_str = "3.12.1 (fake, for tests)";
static void *cur_ts, *gil_ts;

static int fake_init(void)
{
    return 1;
}
static const char *fake_version(void)
{
    return version_str;
}
static void *fake_cur(void)
{
    return cur_ts;
}
static void *fake_gil(void)
{
    return gil_ts;
}

/* Exported (the test links with -rdynamic) so that dladdr1 finds its size. */
__attribute__((visibility("default"), noinline)) void _PyEval_EvalFrameDefault(void)
{
    __asm__ volatile("nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop; nop");
}

void *jst_real_dlsym(void *handle, const char *name)
{
    (void)handle;
    static const struct {
        const char *name;
        void *p;
    } syms[] = {
        {"Py_IsInitialized", (void *)fake_init},
        {"Py_GetVersion", (void *)fake_version},
        {"Py_Version", &py_version_num},
        {"PyType_Type", type_type},
        {"PyCode_Type", code_type},
        {"PyUnicode_Type", unicode_type},
        {"PyBytes_Type", bytes_type},
        {"PyFrame_Type", frame_type},
        {"_PyThreadState_UncheckedGet", (void *)fake_cur},
        {"PyGILState_GetThisThreadState", (void *)fake_gil},
        {"_PyEval_EvalFrameDefault", (void *)_PyEval_EvalFrameDefault},
    };
    for (size_t i = 0; i < sizeof syms / sizeof syms[0]; i++)
        if (strcmp(syms[i].name, name) == 0)
            return syms[i].p;
    return NULL;
}

static uint8_t *fake_alloc(size_t n)
{
    uint8_t *p = arena + arena_used;
    arena_used += (n + 15) & ~(size_t)15;
    assert_true(arena_used + 1024 < sizeof arena); /* room for speculative reads */
    return p;
}

static void put_ptr(uint8_t *at, const void *p)
{
    memcpy(at, &p, sizeof p);
}

static void put_int(uint8_t *at, int v)
{
    memcpy(at, &v, sizeof v);
}

/* A compact str: ASCII (state 0x64) or, with flags, anything else. */
static uint8_t *fake_str(const char *s, uint32_t state)
{
    size_t n = strlen(s);
    uint8_t *o = fake_alloc(40 + n + 1);
    put_ptr(o + 8, unicode_type);
    uint64_t len = n;
    memcpy(o + 16, &len, 8);
    memcpy(o + 32, &state, 4);
    memcpy(o + 40, s, n + 1);
    return o;
}

/* A code object at lines first.., with a 3.11+ location table: units 0-3 at
 * first+2, units 4-5 at first+3. */
static uint8_t *fake_code(const char *qualname, const char *file, int first)
{
    static const uint8_t table[] = {0x80 | 13 << 3 | 3, 4, 0x80 | 11 << 3 | 1, 0, 0};
    uint8_t *lt = fake_alloc(32 + sizeof table);
    put_ptr(lt + 8, bytes_type);
    uint64_t n = sizeof table;
    memcpy(lt + 16, &n, 8);
    memcpy(lt + 32, table, sizeof table);
    uint8_t *co = fake_alloc(192 + 16);
    put_ptr(co + 8, code_type);
    put_ptr(co + 112, fake_str(file, 0x64));
    put_ptr(co + 120, fake_str("name", 0x64));
    put_ptr(co + 128, fake_str(qualname, 0x64));
    put_ptr(co + 136, lt);
    put_int(co + 68, first);
    put_int(co + 176, 0);
    return co;
}

/* A 3.12 _PyInterpreterFrame running code at instruction unit. */
static uint8_t *fake_frame(uint8_t *code, int unit, uint8_t *previous, int owner)
{
    uint8_t *f = fake_alloc(80);
    put_ptr(f + 0, code);
    put_ptr(f + 8, previous);
    put_ptr(f + 56, code ? code + 192 + 2 * unit : NULL);
    f[70] = (uint8_t)owner;
    return f;
}

/* A thread state of this thread whose innermost frame is top. */
static uint8_t *fake_tstate(uint8_t *top)
{
    uint8_t *cf = fake_alloc(16);
    put_ptr(cf, top);
    uint8_t *ts = fake_alloc(256);
    unsigned long me = (unsigned long)pthread_self();
    memcpy(ts + 136, &me, sizeof me);
    put_ptr(ts + 56, cf);
    return ts;
}

static int reset(void **state)
{
    (void)state;
    memset(arena, 0, sizeof arena);
    arena_used = 0;
    put_ptr(code_type + 8, type_type);
    put_ptr(unicode_type + 8, type_type);
    put_ptr(bytes_type + 8, type_type);
    put_ptr(frame_type + 8, type_type);
    py_version_num = 0x030C01F0;
    version_str = "3.12.1 (fake, for tests)";
    atomic_store(&py_state, PY_UNRESOLVED);
    atomic_store(&py_bad_noted, 0);
    jst_py.lay = NULL;
    memset(py_cache, 0, sizeof py_cache);
    memset(py_lines, 0, sizeof py_lines);
    for (int i = 0; i < PY_INDEXES; i++)
        if (py_idx[i])
            py_idx[i]->code = 0;
    notes = 0;
    last_note[0] = '\0';
    cur_ts = gil_ts = NULL;
    pvr_denied = 0;
    return 0;
}

/* The i-th recorded frame: its text and native index. */
static const char *frame_text(const struct jst_pyframes *py, size_t i, uint32_t *native)
{
    static char out[1024];
    size_t o = 0;
    for (size_t k = 0; o + 6 <= py->len; k++) {
        uint16_t len;
        memcpy(native, py->buf + o, 4);
        memcpy(&len, py->buf + o + 4, 2);
        if (k == i) {
            snprintf(out, sizeof out, "%.*s", (int)len, (const char *)py->buf + o + 6);
            return out;
        }
        o += 6 + (size_t)len;
    }
    return NULL;
}

static struct jst_pyframes pyf;

/* ---- tests ---- */

static void test_frames_lines_and_their_eval_frames(void **state)
{
    (void)state;
    uint8_t *outer = fake_frame(fake_code("<module>", "/app/main.py", 10), 1, NULL, 0);
    uint8_t *shim = fake_frame(NULL, 0, outer, PY_OWNED_BY_CSTACK);
    uint8_t *mid = fake_frame(fake_code("run", "/app/main.py", 20), 5, shim, 0);
    uint8_t *inner = fake_frame(fake_code("Loader.load", "/app/lib.py", 30), 4, mid, 0);
    gil_ts = fake_tstate(inner); /* the GIL is released: no "current" state */
    uintptr_t ev = (uintptr_t)_PyEval_EvalFrameDefault;
    uint64_t ips[5] = {0x1000, ev + 5, 0x2000, ev + 9, 0x3000};
    jst_py_capture(ips, 5, &pyf);
    uint32_t nat;
    assert_int_equal(pyf.n, 3);
    assert_string_equal(frame_text(&pyf, 0, &nat), "Loader.load\t/app/lib.py\t33");
    assert_int_equal(nat, 1); /* the innermost eval invocation runs both */
    assert_string_equal(frame_text(&pyf, 1, &nat), "run\t/app/main.py\t23");
    assert_int_equal(nat, 1);
    assert_string_equal(frame_text(&pyf, 2, &nat), "<module>\t/app/main.py\t12");
    assert_int_equal(nat, 3); /* after the C-stack shim: the next eval frame */
    assert_int_equal(notes, 0);
    /* Again, now from the cache: the same frames. */
    struct jst_pyframes *again = malloc(sizeof *again);
    jst_py_capture(ips, 5, again);
    assert_int_equal(again->len, pyf.len);
    assert_memory_equal(again->buf, pyf.buf, pyf.len);
    free(again);
}

static void test_beyond_the_native_stack(void **state)
{
    (void)state;
    cur_ts = fake_tstate(fake_frame(fake_code("f", "/a.py", 1), 0, NULL, 0));
    uint64_t ips[2] = {0x1000, 0x2000};
    jst_py_capture(ips, 2, &pyf);
    uint32_t nat;
    assert_int_equal(pyf.n, 1);
    assert_string_equal(frame_text(&pyf, 0, &nat), "f\t/a.py\t3");
    assert_int_equal(nat, 2); /* no eval frame captured: the number of ips */
}

static void test_unmapped_pointer_gives_no_frames_and_one_note(void **state)
{
    (void)state;
    uint8_t *gone = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(gone != MAP_FAILED);
    munmap(gone, 4096);
    uint8_t *inner = fake_frame(fake_code("f", "/a.py", 1), 0, gone, 0);
    gil_ts = fake_tstate(inner);
    uint64_t ips[1] = {0x1000};
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 0);
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 0);
    assert_int_equal(notes, 1);
    assert_non_null(strstr(last_note, "did not check out"));
}

static void test_wrong_type_gives_no_frames(void **state)
{
    (void)state;
    uint8_t *code = fake_code("f", "/a.py", 1);
    put_ptr(code + 8, bytes_type); /* not a code object */
    gil_ts = fake_tstate(fake_frame(code, 0, NULL, 0));
    uint64_t ips[1] = {0x1000};
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 0);
    assert_int_equal(notes, 1);
}

static void test_another_threads_state_is_not_read(void **state)
{
    (void)state;
    /* 3.10, 3.11: the "current" state is the GIL holder's, another thread's. */
    uint8_t *ts = fake_tstate(fake_frame(fake_code("spin", "/a.py", 1), 0, NULL, 0));
    unsigned long other = (unsigned long)pthread_self() + 1;
    memcpy(ts + 136, &other, sizeof other);
    cur_ts = ts;
    gil_ts = fake_tstate(fake_frame(fake_code("mine", "/a.py", 1), 0, NULL, 0));
    uint64_t ips[1] = {0x1000};
    jst_py_capture(ips, 1, &pyf);
    uint32_t nat;
    assert_int_equal(pyf.n, 1);
    assert_string_equal(frame_text(&pyf, 0, &nat), "mine\t/a.py\t3");
    assert_int_equal(notes, 0);
}

static void test_own_state_naming_another_thread_says_so(void **state)
{
    (void)state;
    uint8_t *ts = fake_tstate(fake_frame(fake_code("f", "/a.py", 1), 0, NULL, 0));
    unsigned long other = (unsigned long)pthread_self() + 1;
    memcpy(ts + 136, &other, sizeof other);
    gil_ts = ts;
    uint64_t ips[1] = {0x1000};
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 0);
    assert_int_equal(notes, 1);
    assert_non_null(strstr(last_note, "does not name this thread"));
}

static void test_lying_string_flags_stay_in_bounds(void **state)
{
    (void)state;
    char name[400];
    memset(name, 0xE9, sizeof name - 1); /* not ASCII, though the flags say so */
    name[sizeof name - 1] = '\0';
    uint8_t *code = fake_code("f", "/a.py", 1);
    put_ptr(code + 128, fake_str(name, 0x64));
    gil_ts = fake_tstate(fake_frame(code, 0, NULL, 0));
    uint64_t ips[1] = {0x1000};
    jst_py_capture(ips, 1, &pyf);
    uint32_t nat;
    assert_int_equal(pyf.n, 1);
    const char *t = frame_text(&pyf, 0, &nat);
    assert_true(strchr(t, '\t') - t <= PY_FUNC_MAX);
}

static void test_huge_line_table_is_refused(void **state)
{
    (void)state;
    uint8_t *code = fake_code("f", "/a.py", 1);
    uint8_t *lt;
    memcpy(&lt, code + 136, sizeof lt);
    uint64_t huge = 1ull << 40;
    memcpy(lt + 16, &huge, 8);
    gil_ts = fake_tstate(fake_frame(code, 0, NULL, 0));
    uint64_t ips[1] = {0x1000};
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 0);
}

/* A code object at lines first.. whose 3.11+ location table has n entries
 * of one code unit each, every one a line further (unit u is at line
 * first + u + 1): a table of n bytes, outside the arena. */
static uint8_t *fake_long_code(size_t n, int first)
{
    uint8_t *lt = malloc(32 + n);
    assert_non_null(lt);
    put_ptr(lt + 8, bytes_type);
    uint64_t size = n;
    memcpy(lt + 16, &size, 8);
    memset(lt + 32, 0x80 | 11 << 3, n);
    uint8_t *co = fake_alloc(192 + 16);
    put_ptr(co + 8, code_type);
    put_ptr(co + 112, fake_str("/long.py", 0x64));
    put_ptr(co + 120, fake_str("f", 0x64));
    put_ptr(co + 128, fake_str("f", 0x64));
    put_ptr(co + 136, lt);
    put_int(co + 68, first);
    put_int(co + 176, 0);
    return co;
}

/* Captures the frame of co at unit u; its line, and the reads it took. */
static int line_at(uint8_t *co, int u, unsigned long long *reads)
{
    gil_ts = fake_tstate(fake_frame(co, u, NULL, 0));
    uint64_t ips[1] = {0x1000};
    unsigned long long r0 = jst_py_reads();
    jst_py_capture(ips, 1, &pyf);
    *reads = jst_py_reads() - r0;
    assert_int_equal(pyf.n, 1);
    uint32_t nat;
    const char *t = frame_text(&pyf, 0, &nat);
    assert_non_null(t);
    assert_memory_equal(t, "f\t/long.py\t", 11);
    return atoi(t + 11);
}

static void test_long_table_lookups_start_at_a_checkpoint(void **state)
{
    (void)state;
    enum { n = 400000 };
    uint8_t *co = fake_long_code(n, 100);
    unsigned long long first, near, later, again;
    /* The first lookup walks the table up to its unit: 300,000 bytes, in
     * 64 KiB reads (at least 4 of them). */
    assert_int_equal(line_at(co, 300000, &first), 100 + 300000 + 1);
    /* Another line of the same function: from the checkpoint before it, one
     * read of the table; before or after where the walk stopped. */
    assert_int_equal(line_at(co, 123457, &near), 100 + 123457 + 1);
    assert_int_equal(line_at(co, 399999, &later), 100 + 399999 + 1);
    assert_true(near + 3 <= first);
    assert_true(later + 3 <= first);
    /* The same line again: from the cache, no table read at all. */
    assert_int_equal(line_at(co, 123457, &again), 100 + 123457 + 1);
    assert_true(again < near);
    /* Three lines of one function, over and over: each stays cached. */
    for (int k = 0; k < 3; k++) {
        unsigned long long r[3];
        assert_int_equal(line_at(co, 300000, &r[0]), 100 + 300000 + 1);
        assert_int_equal(line_at(co, 123457, &r[1]), 100 + 123457 + 1);
        assert_int_equal(line_at(co, 399999, &r[2]), 100 + 399999 + 1);
        assert_true(r[0] == again && r[1] == again && r[2] == again);
    }
    free((void *)py_ptr_at(co, 136));
}

static void test_reader_descriptor_taken_by_the_program(void **state)
{
    (void)state;
    gil_ts = fake_tstate(fake_frame(fake_code("f", "/a.py", 1), 0, NULL, 0));
    uint64_t ips[1] = {0x1000};
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 1);
    /* One descriptor, high above the numbers programs take, kept. */
    int fd = mem_fd;
    assert_true(fd >= 16);
    assert_true(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(mem_fd, fd);
    /* The program closes it and puts its own file there. */
    char path[] = "/tmp/jst_pyread_XXXXXX";
    int own = mkstemp(path);
    assert_true(own >= 0);
    assert_int_equal(write(own, "data", 4), 4);
    assert_int_equal(dup2(own, fd), fd);
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 0);
    assert_int_equal(notes, 1);
    assert_non_null(strstr(last_note, "no longer recorded"));
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 0);
    assert_int_equal(notes, 1);
    /* Its file: untouched, its offset where the program left it. */
    char back[8] = {0};
    assert_int_equal(lseek(own, 0, SEEK_CUR), 4);
    assert_int_equal(pread(own, back, sizeof back, 0), 4);
    assert_memory_equal(back, "data", 4);
    close(fd);
    close(own);
    unlink(path);
    atomic_store(&mem_state, MEM_NONE);
    mem_fd = -1;
}

static void test_unknown_version_says_so_once(void **state)
{
    (void)state;
    py_version_num = 0x030E00F0; /* 3.14 */
    version_str = "3.14.0 (fake, for tests)";
    gil_ts = fake_tstate(fake_frame(fake_code("f", "/a.py", 1), 0, NULL, 0));
    uint64_t ips[1] = {0x1000};
    jst_py_capture(ips, 1, &pyf);
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 0);
    assert_int_equal(notes, 1);
    assert_non_null(strstr(last_note, "frame layout is unknown"));
    assert_false(jst_py_maybe());
}

static void test_forbidden_reads_say_so(void **state)
{
    (void)state;
    pvr_denied = 1;
    gil_ts = fake_tstate(fake_frame(fake_code("f", "/a.py", 1), 0, NULL, 0));
    uint64_t ips[1] = {0x1000};
    jst_py_capture(ips, 1, &pyf);
    jst_py_capture(ips, 1, &pyf);
    assert_int_equal(pyf.n, 0);
    assert_int_equal(notes, 1);
    assert_non_null(strstr(last_note, "memory cannot be read through /proc/self/mem"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_frames_lines_and_their_eval_frames, reset),
        cmocka_unit_test_setup(test_beyond_the_native_stack, reset),
        cmocka_unit_test_setup(test_unmapped_pointer_gives_no_frames_and_one_note, reset),
        cmocka_unit_test_setup(test_wrong_type_gives_no_frames, reset),
        cmocka_unit_test_setup(test_another_threads_state_is_not_read, reset),
        cmocka_unit_test_setup(test_own_state_naming_another_thread_says_so, reset),
        cmocka_unit_test_setup(test_lying_string_flags_stay_in_bounds, reset),
        cmocka_unit_test_setup(test_huge_line_table_is_refused, reset),
        cmocka_unit_test_setup(test_long_table_lookups_start_at_a_checkpoint, reset),
        cmocka_unit_test_setup(test_reader_descriptor_taken_by_the_program, reset),
        cmocka_unit_test_setup(test_unknown_version_says_so_once, reset),
        cmocka_unit_test_setup(test_forbidden_reads_say_so, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
