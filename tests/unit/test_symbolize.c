/*
 * Unit tests of the offline symbolizer (analyzer/symbolize.c): real return
 * addresses of this test program symbolize to the right function, file and
 * line; unknown, missing, changed, internal and Python modules are said so
 * plainly; the build-id debug directory is used when the file changed; the map
 * entry in effect at an event's sequence number is the one used; a module file
 * is read once for all the processes that map it.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <elfutils/libdwelf.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "symbolize.h"

/* ---- a small call chain whose return addresses and lines are known ---- */

static unsigned line_inner, line_outer;

__attribute__((noinline, noclone)) uint64_t tsym_ret_addr(void)
{
    return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

__attribute__((noinline, noclone)) void tsym_chain_inner(uint64_t *ips)
{
    line_inner = __LINE__ + 1;
    ips[0] = tsym_ret_addr();
    ips[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline, noclone)) void tsym_chain_outer(uint64_t *ips)
{
    line_outer = __LINE__ + 1;
    tsym_chain_inner(ips);
    __asm__ volatile("" ::: "memory"); /* not a tail call: the frame stays */
}

/* An inlined function: its frame exists only in the DWARF. */
static unsigned line_inl_body, line_inl_call;

static inline __attribute__((always_inline)) uint64_t tsym_inlined(void)
{
    line_inl_body = __LINE__ + 1;
    return tsym_ret_addr();
}

__attribute__((noinline, noclone)) uint64_t tsym_with_inline(void)
{
    line_inl_call = __LINE__ + 1;
    uint64_t r = tsym_inlined();
    __asm__ volatile("" ::: "memory");
    return r;
}

/* What a kernel launch through the CUDA runtime looks like (CUDA 13, static
 * cudart): the launch line calls the host stub named like the kernel, which
 * calls __device_stub_*, which calls into cudart (libcudart_static_<hash>). */
static unsigned line_launch;

__attribute__((noinline, noclone)) void
tsym_cudart(uint64_t *ips) __asm__("libcudart_static_0123abcd");
__attribute__((noinline, noclone)) void tsym_cudart(uint64_t *ips)
{
    ips[0] = tsym_ret_addr();
    ips[1] = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline, noclone)) void
tsym_device_stub(uint64_t *ips) __asm__("__device_stub__Z4kernPi");
__attribute__((noinline, noclone)) void tsym_device_stub(uint64_t *ips)
{
    tsym_cudart(ips);
    ips[2] = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline, noclone)) void tsym_kern(uint64_t *ips)
{
    tsym_device_stub(ips);
    ips[3] = (uint64_t)(uintptr_t)__builtin_return_address(0);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline, noclone)) void tsym_launch(uint64_t *ips)
{
    line_launch = __LINE__ + 1;
    tsym_kern(ips);
    __asm__ volatile("" ::: "memory");
}

/* A function whose symbol is a C++ mangled name: catalog::open(). */
__attribute__((noinline, noclone)) uint64_t tsym_cxx(void) __asm__("_ZN7catalog4openEv");
__attribute__((noinline, noclone)) uint64_t tsym_cxx(void)
{
    uint64_t r = tsym_ret_addr();
    __asm__ volatile("" ::: "memory");
    return r;
}

/* ---- the test's own module map entry ---- */

struct self_map {
    char path[PATH_MAX];
    uint64_t bias, start, end;
    uint8_t build_id[64];
    size_t build_id_len;
};
static struct self_map self;

static int self_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    (void)data;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uint64_t a = info->dlpi_addr + ph->p_vaddr;
        lo = a < lo ? a : lo;
        hi = a + ph->p_memsz > hi ? a + ph->p_memsz : hi;
    }
    self.bias = info->dlpi_addr;
    self.start = lo;
    self.end = hi;
    return 1; /* the first object is the program */
}

static int setup_self(void **state)
{
    (void)state;
    ssize_t k = readlink("/proc/self/exe", self.path, sizeof self.path - 1);
    if (k <= 0)
        return -1;
    self.path[k] = '\0';
    dl_iterate_phdr(self_cb, NULL);
    elf_version(EV_CURRENT);
    int fd = open(self.path, O_RDONLY);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    const void *id;
    ssize_t n = e ? dwelf_elf_gnu_build_id(e, &id) : -1;
    if (n > 0 && (size_t)n <= sizeof self.build_id) {
        memcpy(self.build_id, id, (size_t)n);
        self.build_id_len = (size_t)n;
    }
    if (e)
        elf_end(e);
    close(fd);
    return self.build_id_len ? 0 : -1;
}

/* ---- building a process by hand ---- */

static void add_mod(struct jst_process *p, unsigned event, uint64_t seq_after, const char *path,
                    uint64_t bias, uint64_t start, uint64_t end, const uint8_t *id, size_t id_len)
{
    p->mods = realloc(p->mods, (p->n_mods + 1) * sizeof *p->mods);
    struct jst_modmap *m = &p->mods[p->n_mods++];
    memset(m, 0, sizeof *m);
    m->event = event;
    m->seq_after = seq_after;
    m->path = strdup(path);
    m->bias = bias;
    m->start = start;
    m->end = end;
    if (id_len) {
        m->build_id = malloc(id_len);
        memcpy(m->build_id, id, id_len);
        m->build_id_len = id_len;
    }
}

static void add_self(struct jst_process *p, const char *path, const uint8_t *id, size_t id_len)
{
    add_mod(p, JST_MOD_INITIAL, 0, path, self.bias, self.start, self.end, id, id_len);
}

static void add_stack(struct jst_process *p, uint64_t id, const uint64_t *ips, size_t n)
{
    p->stacks = realloc(p->stacks, (p->n_stacks + 1) * sizeof *p->stacks);
    struct jst_stack *s = &p->stacks[p->n_stacks++];
    memset(s, 0, sizeof *s);
    s->id = id;
    s->n = n;
    s->ips = malloc(n * sizeof *ips);
    memcpy(s->ips, ips, n * sizeof *ips);
}

static void add_call(struct jst_process *p, uint64_t seq)
{
    p->calls = realloc(p->calls, (p->n_calls + 1) * sizeof *p->calls);
    memset(&p->calls[p->n_calls], 0, sizeof *p->calls);
    p->calls[p->n_calls++].seq = seq;
}

static void free_proc(struct jst_process *p)
{
    for (size_t i = 0; i < p->n_mods; i++) {
        free(p->mods[i].path);
        free(p->mods[i].build_id);
    }
    for (size_t i = 0; i < p->n_stacks; i++)
        free(p->stacks[i].ips);
    free(p->mods);
    free(p->stacks);
    free(p->calls);
    memset(p, 0, sizeof *p);
}

static int ends_with(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* ---- tests ---- */

static void test_own_frames_have_function_file_and_line(void **state)
{
    (void)state;
    uint64_t ips[2];
    tsym_chain_outer(ips);
    struct jst_process p = {0};
    add_self(&p, self.path, self.build_id, self.build_id_len);
    add_stack(&p, 1, ips, 2);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    assert_non_null(s);
    struct jst_frame f[4];
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 4), 2);

    assert_string_equal(f[0].func, "tsym_chain_inner");
    assert_true(ends_with(f[0].file, "/test_symbolize.c"));
    assert_int_equal(f[0].line, line_inner);
    assert_string_equal(f[0].module, self.path);
    assert_int_equal(f[0].offset, ips[0] - self.bias);
    assert_null(f[0].note);
    assert_false(f[0].internal);

    assert_string_equal(f[1].func, "tsym_chain_outer");
    assert_int_equal(f[1].line, line_outer);

    char buf[8192], want[8192];
    snprintf(want, sizeof want, "tsym_chain_inner (%s:%u) in %s", f[0].file, line_inner, self.path);
    assert_string_equal(jst_frame_str(&f[0], buf, sizeof buf), want);
    assert_int_equal(jst_call_site(f, 2), 0);
    jst_symbolizer_free(s);
    free_proc(&p);
}

static void test_cxx_names_are_demangled(void **state)
{
    (void)state;
    uint64_t ip = tsym_cxx();
    struct jst_process p = {0};
    add_self(&p, self.path, self.build_id, self.build_id_len);
    add_stack(&p, 7, &ip, 1);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f;
    assert_int_equal(jst_symbolize_stack(s, 7, 0, &f, 1), 1);
    assert_string_equal(f.func, "catalog::open()");
    jst_symbolizer_free(s);
    free_proc(&p);
}

static void test_inlined_calls_become_frames_of_their_own(void **state)
{
    (void)state;
    uint64_t ips[2], chain[2];
    tsym_chain_outer(chain);
    ips[0] = tsym_with_inline();
    ips[1] = chain[1];
    struct jst_process p = {0};
    add_self(&p, self.path, self.build_id, self.build_id_len);
    add_stack(&p, 1, ips, 2);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f[4];
    /* ips[0]: tsym_inlined inside tsym_with_inline; ips[1]: tsym_chain_outer. */
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 4), 3);
    assert_string_equal(f[0].func, "tsym_inlined");
    assert_int_equal(f[0].line, line_inl_body);
    assert_string_equal(f[1].func, "tsym_with_inline");
    assert_int_equal(f[1].line, line_inl_call);
    assert_true(ends_with(f[1].file, "/test_symbolize.c"));
    assert_int_equal(f[0].ip, f[1].ip);
    assert_string_equal(f[2].func, "tsym_chain_outer");
    /* Room for one frame: the innermost. */
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 1), 1);
    assert_string_equal(f[0].func, "tsym_inlined");
    jst_symbolizer_free(s);
    free_proc(&p);
}

static void test_cudart_and_launch_stub_frames_are_internal(void **state)
{
    (void)state;
    uint64_t ips[4];
    tsym_launch(ips);
    struct jst_process p = {0};
    add_self(&p, self.path, self.build_id, self.build_id_len);
    add_stack(&p, 1, ips, 4);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f[4];
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 4), 4);
    assert_string_equal(f[0].func, "libcudart_static_0123abcd");
    assert_string_equal(f[1].func, "__device_stub__Z4kernPi");
    assert_string_equal(f[2].func, "tsym_kern");
    assert_true(f[0].internal && f[1].internal && f[2].internal);
    assert_int_equal(jst_call_site(f, 4), 3);
    assert_string_equal(f[3].func, "tsym_launch");
    assert_int_equal(f[3].line, line_launch);
    jst_symbolizer_free(s);
    free_proc(&p);
}

static void test_unknown_stack_and_unknown_module(void **state)
{
    (void)state;
    uint64_t ip = 0x40; /* in no module */
    struct jst_process p = {0};
    add_self(&p, self.path, self.build_id, self.build_id_len);
    add_stack(&p, 3, &ip, 1);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f;
    assert_int_equal(jst_symbolize_stack(s, 99, 0, &f, 1), 0);
    assert_int_equal(jst_symbolize_stack(s, 3, 0, &f, 1), 1);
    assert_null(f.module);
    assert_string_equal(f.func, "");
    assert_string_equal(f.note, "unknown module");
    char buf[128];
    assert_string_equal(jst_frame_str(&f, buf, sizeof buf), "0x40 (unknown module)");
    jst_symbolizer_free(s);
    free_proc(&p);
}

static void test_internal_frames_are_skipped_for_the_call_site(void **state)
{
    (void)state;
    uint64_t ips[4];
    tsym_chain_outer(ips + 2);
    ips[0] = 0x100500; /* the driver */
    ips[1] = 0x200500; /* jitstall */
    struct jst_process p = {0};
    add_mod(&p, JST_MOD_INITIAL, 0, "/nonexistent/libcuda.so.1", 0x100000, 0x100000, 0x101000, NULL,
            0);
    add_mod(&p, JST_MOD_INITIAL, 0, "/nonexistent/libjitstall.so", 0x200000, 0x200000, 0x201000,
            NULL, 0);
    add_self(&p, self.path, self.build_id, self.build_id_len);
    add_stack(&p, 1, ips, 4);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f[4];
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 4), 4);
    assert_true(f[0].internal);
    assert_true(f[1].internal);
    assert_false(f[2].internal);
    assert_string_equal(f[0].note, "module file not found");
    assert_int_equal(f[0].offset, 0x500);
    char buf[256];
    assert_string_equal(jst_frame_str(&f[0], buf, sizeof buf),
                        "/nonexistent/libcuda.so.1+0x500 (module file not found)");
    assert_int_equal(jst_call_site(f, 4), 2);
    assert_string_equal(f[jst_call_site(f, 4)].func, "tsym_chain_inner");
    assert_int_equal(jst_call_site(f, 2), -1);
    jst_symbolizer_free(s);
    free_proc(&p);
}

static void test_python_interpreter_frames_are_named_as_such(void **state)
{
    (void)state;
    uint64_t ips[2] = {0x500100, 0x600100};
    struct jst_process p = {0};
    add_mod(&p, JST_MOD_INITIAL, 0, "/usr/bin/python3.12", 0x500000, 0x500000, 0x501000, NULL, 0);
    add_mod(&p, JST_MOD_INITIAL, 0, "/usr/lib/libpython3.12.so.1.0", 0x600000, 0x600000, 0x601000,
            NULL, 0);
    add_stack(&p, 1, ips, 2);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f[2];
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 2), 2);
    assert_string_equal(f[0].func, "[python interpreter]");
    assert_string_equal(f[1].func, "[python interpreter]");
    assert_false(f[0].internal);
    assert_int_equal(jst_call_site(f, 2), 0);
    jst_symbolizer_free(s);
    free_proc(&p);
}

/* A stack of a load from Python: the driver, libffi, then the interpreter,
 * whose eval frames (ips 2 and 4) run the recorded Python frames. */
static void py_process(struct jst_process *p, const char *caller, const char *const *py,
                       const uint64_t *native, size_t n_py)
{
    uint64_t ips[5] = {0x100100, 0x200100, 0x600100, 0x600200, 0x600300};
    memset(p, 0, sizeof *p);
    add_mod(p, JST_MOD_INITIAL, 0, "/usr/lib/libcuda.so.1", 0x100000, 0x100000, 0x101000, NULL, 0);
    add_mod(p, JST_MOD_INITIAL, 0, caller, 0x200000, 0x200000, 0x201000, NULL, 0);
    add_mod(p, JST_MOD_INITIAL, 0, "/usr/lib/libpython3.12.so.1.0", 0x600000, 0x600000, 0x601000,
            NULL, 0);
    add_stack(p, 1, ips, 5);
    struct jst_stack *st = &p->stacks[0];
    st->py_frames = calloc(n_py, sizeof(char *));
    st->py_native = calloc(n_py, sizeof(uint64_t));
    for (size_t i = 0; i < n_py; i++) {
        st->py_frames[i] = strdup(py[i]);
        st->py_native[i] = native[i];
    }
    st->n_py = n_py;
}

static void py_free(struct jst_process *p)
{
    for (size_t i = 0; i < p->stacks[0].n_py; i++)
        free(p->stacks[0].py_frames[i]);
    free(p->stacks[0].py_frames);
    free(p->stacks[0].py_native);
    free_proc(p);
}

static const char *const py_frames[] = {
    "load\t/usr/lib/python3/dist-packages/lib.py\t9",
    "query\t/home/u/app.py\t42",
    "<module>\t/home/u/app.py\t50",
    "_run_module_as_main\t<frozen runpy>\t88",
};
static const uint64_t py_native[] = {2, 2, 4, UINT64_MAX};

static void test_python_frames_take_the_place_of_their_eval_frames(void **state)
{
    (void)state;
    struct jst_process p;
    py_process(&p, "/usr/lib/x86_64-linux-gnu/libffi.so.8", py_frames, py_native, 4);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f[16];
    char buf[512];
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 16), 7);
    assert_true(f[0].internal);               /* libcuda */
    assert_true(f[1].pyglue && !f[1].python); /* libffi */
    assert_string_equal(f[2].func, "load");   /* eval frame 2 runs load, query */
    assert_true(f[2].python && f[2].pylib);
    assert_string_equal(f[3].func, "query");
    assert_true(f[3].python && !f[3].pylib);
    assert_string_equal(f[4].func, "[python interpreter]"); /* not an eval frame */
    assert_string_equal(f[5].func, "<module>");             /* eval frame 4 */
    assert_string_equal(f[6].func, "_run_module_as_main");  /* beyond the native stack */
    assert_true(f[6].pylib);
    assert_string_equal(f[5].module, "/usr/lib/libpython3.12.so.1.0");
    /* The native caller is libffi: the call site is the user's innermost line. */
    assert_int_equal(jst_call_site(f, 7), 3);
    assert_string_equal(jst_frame_str(&f[3], buf, sizeof buf),
                        "query (/home/u/app.py:42) in Python");
    /* Only library frames: the innermost Python frame. */
    assert_int_equal(jst_call_site(f, 3), 2);
    jst_symbolizer_free(s);
    py_free(&p);
}

static void test_python_caller_only_replaces_python_machinery(void **state)
{
    (void)state;
    struct jst_process p;
    /* The driver is called by the user's own C library, not Python's. */
    py_process(&p, "/home/u/libmine.so", py_frames, py_native, 4);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f[16];
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 16), 7);
    assert_false(f[1].pyglue);
    assert_int_equal(jst_call_site(f, 7), 1);
    jst_symbolizer_free(s);
    py_free(&p);
    /* An extension module of a package is Python's machinery. */
    py_process(&p, "/venv/lib/python3.12/site-packages/cupy/_core.cpython-312-x86_64-linux-gnu.so",
               py_frames, py_native, 4);
    s = jst_symbolizer_new(&p);
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 16), 7);
    assert_int_equal(jst_call_site(f, 7), 3);
    jst_symbolizer_free(s);
    py_free(&p);
}

static void test_changed_module_is_not_trusted(void **state)
{
    (void)state;
    uint64_t ips[2];
    tsym_chain_outer(ips);
    uint8_t other[20];
    memset(other, 0xab, sizeof other);
    struct jst_process p = {0};
    add_self(&p, self.path, other, sizeof other);
    add_stack(&p, 1, ips, 1);
    setenv("JITSTALL_DEBUG_DIR", "/nonexistent-debug-root", 1);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f;
    assert_int_equal(jst_symbolize_stack(s, 1, 0, &f, 1), 1);
    assert_string_equal(f.func, "");
    assert_string_equal(f.file, "");
    assert_string_equal(f.note, "module changed since the trace");
    assert_string_equal(f.module, self.path);
    char buf[8192], want[8192];
    snprintf(want, sizeof want, "%s+0x%llx (module changed since the trace)", self.path,
             (unsigned long long)(ips[0] - self.bias));
    assert_string_equal(jst_frame_str(&f, buf, sizeof buf), want);
    jst_symbolizer_free(s);
    unsetenv("JITSTALL_DEBUG_DIR");
    free_proc(&p);
}

static void test_debug_file_found_by_build_id(void **state)
{
    (void)state;
    char root[] = "/tmp/jst-symdbg-XXXXXX";
    assert_non_null(mkdtemp(root));
    char sub[64], dir[80], file[256];
    snprintf(sub, sizeof sub, "%s/.build-id", root);
    assert_int_equal(mkdir(sub, 0700), 0);
    snprintf(dir, sizeof dir, "%s/%02x", sub, self.build_id[0]);
    assert_int_equal(mkdir(dir, 0700), 0);
    int k = snprintf(file, sizeof file, "%s/", dir);
    for (size_t i = 1; i < self.build_id_len; i++)
        k += snprintf(file + k, sizeof file - (size_t)k, "%02x", self.build_id[i]);
    snprintf(file + k, sizeof file - (size_t)k, ".debug");
    assert_int_equal(symlink(self.path, file), 0);

    uint64_t ips[2];
    tsym_chain_outer(ips);
    struct jst_process p = {0};
    /* The program moved away since the trace; its build-id names the debug file. */
    add_self(&p, "/nonexistent/moved-away/prog", self.build_id, self.build_id_len);
    add_stack(&p, 1, ips, 2);
    setenv("JITSTALL_DEBUG_DIR", root, 1);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f[2];
    assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 2), 2);
    assert_string_equal(f[0].func, "tsym_chain_inner");
    assert_int_equal(f[0].line, line_inner);
    assert_string_equal(f[1].func, "tsym_chain_outer");
    assert_null(f[0].note);
    jst_symbolizer_free(s);
    unsetenv("JITSTALL_DEBUG_DIR");
    free_proc(&p);

    /* Without the debug file the frame says the file is gone. */
    unlink(file);
    rmdir(dir);
    rmdir(sub);
    rmdir(root);
}

static void test_map_entry_in_effect_at_the_event(void **state)
{
    (void)state;
    uint64_t ip = 0x700100;
    struct jst_process p = {0};
    add_call(&p, 10);
    add_call(&p, 11);
    add_call(&p, 12);
    add_mod(&p, JST_MOD_INITIAL, 0, "/nonexistent/libold.so", 0x700000, 0x700000, 0x701000, NULL,
            0);
    add_mod(&p, JST_MOD_DLCLOSE, 1, "/nonexistent/libold.so", 0x700000, 0x700000, 0x701000, NULL,
            0);
    add_mod(&p, JST_MOD_DLOPEN, 2, "/nonexistent/libnew.so", 0x700000, 0x700000, 0x701000, NULL, 0);
    add_stack(&p, 1, &ip, 1);
    struct jst_symbolizer *s = jst_symbolizer_new(&p);
    struct jst_frame f;
    assert_int_equal(jst_symbolize_stack(s, 1, 10, &f, 1), 1);
    assert_string_equal(f.module, "/nonexistent/libold.so");
    assert_int_equal(jst_symbolize_stack(s, 1, 12, &f, 1), 1);
    assert_string_equal(f.module, "/nonexistent/libnew.so");
    jst_symbolizer_free(s);
    free_proc(&p);
}

/* A directory of thousands of traces of one program: its file is opened and
 * its debug sections read once, whatever each process's load bias, and each
 * process still gets its own offsets. */
static void test_module_file_read_once_for_many_processes(void **state)
{
    (void)state;
    uint64_t ips[2];
    tsym_chain_outer(ips);
    jst_symbolize_cache_clear();
    for (uint64_t k = 0; k < 3; k++) {
        uint64_t shift = k * 0x10000000ull;
        uint64_t moved[2] = {ips[0] + shift, ips[1] + shift};
        struct jst_process p = {0};
        add_mod(&p, JST_MOD_INITIAL, 0, self.path, self.bias + shift, self.start + shift,
                self.end + shift, self.build_id, self.build_id_len);
        add_stack(&p, 1, moved, 2);
        struct jst_symbolizer *s = jst_symbolizer_new(&p);
        struct jst_frame f[4];
        assert_int_equal(jst_symbolize_stack(s, 1, 0, f, 4), 2);
        assert_string_equal(f[0].func, "tsym_chain_inner");
        assert_int_equal(f[0].line, line_inner);
        assert_int_equal(f[0].offset, ips[0] - self.bias);
        assert_string_equal(f[1].func, "tsym_chain_outer");
        jst_symbolizer_free(s);
        free_proc(&p);
    }
    assert_int_equal(jst_symbolize_files_opened(), 1);
    jst_symbolize_cache_clear();
    assert_int_equal(jst_symbolize_files_opened(), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_own_frames_have_function_file_and_line),
        cmocka_unit_test(test_cxx_names_are_demangled),
        cmocka_unit_test(test_inlined_calls_become_frames_of_their_own),
        cmocka_unit_test(test_cudart_and_launch_stub_frames_are_internal),
        cmocka_unit_test(test_unknown_stack_and_unknown_module),
        cmocka_unit_test(test_internal_frames_are_skipped_for_the_call_site),
        cmocka_unit_test(test_python_interpreter_frames_are_named_as_such),
        cmocka_unit_test(test_python_frames_take_the_place_of_their_eval_frames),
        cmocka_unit_test(test_python_caller_only_replaces_python_machinery),
        cmocka_unit_test(test_changed_module_is_not_trusted),
        cmocka_unit_test(test_debug_file_found_by_build_id),
        cmocka_unit_test(test_map_entry_in_effect_at_the_event),
        cmocka_unit_test(test_module_file_read_once_for_many_processes),
    };
    return cmocka_run_group_tests(tests, setup_self, NULL);
}
