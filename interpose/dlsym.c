/*
 * The dlsym route: programs (PyTorch, CuPy, hashcat, cudart for its first
 * lookup) dlopen libcuda and look functions up by name. dlsym itself is
 * interposed; a hooked name looked up in a libcuda handle (or resolving to the
 * real driver's symbol through any handle) returns our wrapper of that exact
 * variant, which calls what the real dlsym returned.
 *
 * The runtime compilers' functions (rtc.c) take the same route from a libnvrtc
 * or libnvJitLink handle.
 *
 * RTLD_NEXT depends on the caller: glibc searches after the object that called
 * dlsym, and that would now be libjitstall. It is resolved here by walking the
 * link map after the caller's object, so a library that wraps malloc with
 * dlsym(RTLD_NEXT, "malloc") still finds the next one and not its own.
 *
 * On x86-64 a lookup of a name jitstall never wraps is not emulated at all:
 * the exported dlsym is a few lines of assembly that jump into the real
 * dlsym, which then sees the program's own return address (for RTLD_NEXT it
 * searches after the right object). Elsewhere (and with JST_NO_ASM) the C
 * dlsym does only the lookup for such a name, and emulates RTLD_NEXT by
 * reading each object's own symbol table. Neither path calls anything a
 * sanitizer intercepts, nor dlopen: ASan and TSan look up libc functions
 * with dlsym(RTLD_NEXT) and dlsym(RTLD_DEFAULT) while their runtime starts
 * (from .preinit_array, before libc's own initialization), when their
 * dlopen interceptor is not set up and a dlopen would run constructors
 * without an environment.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>

#include "state.h"
#include "real.h"
#include "rtc.h"
#include "launch.h"
#include "pyevents.h"

/* The object that holds addr, or NULL. */
struct link_map *jst_object_of(const void *addr)
{
    Dl_info info;
    struct link_map *lm = NULL;
    if (!dladdr1(addr, &info, (void **)&lm, RTLD_DL_LINKMAP))
        return NULL;
    return lm;
}

/* Calls an IFUNC resolver the way the loader does on this architecture. */
static uintptr_t jst_ifunc_resolve(uintptr_t resolver)
{
#if defined(__aarch64__)
    /* hwcap | _IFUNC_ARG_HWCAP, then the __ifunc_arg_t that flag announces. */
    struct {
        unsigned long size, hwcap, hwcap2;
    } arg = {sizeof arg, getauxval(AT_HWCAP), getauxval(AT_HWCAP2)};
    return ((uintptr_t(*)(uint64_t, void *))resolver)(arg.hwcap | (1ULL << 62), &arg);
#else
    return ((uintptr_t(*)(void))resolver)();
#endif
}

/* What l's dynamic section says about its symbols. The loader has made
 * most of these addresses absolute; not all loaders do (nor the vDSO). */
struct dynsyms {
    const uint32_t *gnu_hash, *sysv_hash;
    const ElfW(Sym) * sym;
    const char *str;
    const ElfW(Half) * versym;
};

static int dynsyms_of(struct link_map *l, struct dynsyms *d)
{
    *d = (struct dynsyms){0};
    for (const ElfW(Dyn) *e = l->l_ld; e && e->d_tag != DT_NULL; e++) {
        uintptr_t v = e->d_un.d_ptr;
        if (v < l->l_addr)
            v += l->l_addr;
        if (e->d_tag == DT_GNU_HASH)
            d->gnu_hash = (const uint32_t *)v;
        else if (e->d_tag == DT_HASH)
            d->sysv_hash = (const uint32_t *)v;
        else if (e->d_tag == DT_SYMTAB)
            d->sym = (const ElfW(Sym) *)v;
        else if (e->d_tag == DT_STRTAB)
            d->str = (const char *)v;
        else if (e->d_tag == DT_VERSYM)
            d->versym = (const ElfW(Half) *)v;
    }
    if (d->gnu_hash && d->gnu_hash[0] == 0)
        d->gnu_hash = NULL;
    if (d->sysv_hash && d->sysv_hash[0] == 0)
        d->sysv_hash = NULL;
    return (d->gnu_hash || d->sysv_hash) && d->sym && d->str;
}

/* Symbol i of l if it is name's definition as dlsym gives it (defined,
 * global, not a hidden older version; an IFUNC resolved), else 0. */
static uintptr_t sym_match(struct link_map *l, const struct dynsyms *d, uint32_t i,
                           const char *name)
{
    const ElfW(Sym) *s = &d->sym[i];
    int type = ELF64_ST_TYPE(s->st_info), bind = ELF64_ST_BIND(s->st_info);
    if (s->st_shndx == SHN_UNDEF || s->st_value == 0 ||
        !(bind == STB_GLOBAL || bind == STB_WEAK || bind == STB_GNU_UNIQUE) ||
        !(type == STT_FUNC || type == STT_OBJECT || type == STT_NOTYPE || type == STT_GNU_IFUNC) ||
        (d->versym && (d->versym[i] & 0x8000)))
        return 0;
    const char *a = d->str + s->st_name, *b = name;
    while (*a && *a == *b)
        a++, b++;
    if (*a != *b)
        return 0;
    uintptr_t v = l->l_addr + s->st_value;
    return type == STT_GNU_IFUNC ? jst_ifunc_resolve(v) : v;
}

/* The definition of name that object l itself exports, as dlsym would give
 * it: its default version (never a hidden, older one), an IFUNC's resolved
 * function. Read from l's hash table (GNU, else SysV) in memory: no dlopen,
 * which the sanitizers' runtimes make unsafe while they start (their dlopen
 * interceptor is not set up yet, and a dlopen before libc is initialized
 * runs constructors without an environment). NULL if absent. */
void *jst_object_sym(struct link_map *l, const char *name)
{
    uintptr_t vdso = (uintptr_t)getauxval(AT_SYSINFO_EHDR);
    struct dynsyms d;
    if (!l->l_name || !l->l_name[0] ||
        (vdso && (uintptr_t)l->l_ld >= vdso && (uintptr_t)l->l_ld - vdso < 65536) ||
        !dynsyms_of(l, &d))
        return NULL;
    if (!d.gnu_hash) {
        uint32_t h = 0;
        for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
            h = (h << 4) + *c;
            h ^= (h >> 24) & 0xf0;
        }
        h &= 0x0fffffff;
        uint32_t nbucket = d.sysv_hash[0], nchain = d.sysv_hash[1];
        const uint32_t *bucket = d.sysv_hash + 2, *chain = bucket + nbucket;
        for (uint32_t i = bucket[h % nbucket], n = 0; i != 0 && i < nchain && n < nchain;
             i = chain[i], n++) {
            uintptr_t v = sym_match(l, &d, i, name);
            if (v)
                return (void *)v;
        }
        return NULL;
    }
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    const uint32_t *gh = d.gnu_hash;
    uint32_t nbuckets = gh[0], symoffset = gh[1], bloom_words = gh[2];
    const uint32_t *buckets = (const uint32_t *)((const ElfW(Addr) *)(gh + 4) + bloom_words);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return NULL;
    for (;; i++) {
        uint32_t h2 = chain[i - symoffset];
        if ((h | 1) == (h2 | 1)) {
            uintptr_t v = sym_match(l, &d, i, name);
            if (v)
                return (void *)v;
        }
        if (h2 & 1)
            return NULL;
    }
}

/* dlsym(RTLD_NEXT, name) as seen from the object holding caller. */
static void *next_after(const void *caller, const char *name)
{
    struct link_map *me = jst_object_of(caller);
    if (!me)
        return jst_real_dlsym(RTLD_NEXT, name);
    /* The order of the walk does the rest: the first object after the
     * caller that defines name. */
    for (struct link_map *l = me->l_next; l; l = l->l_next) {
        void *p = jst_object_sym(l, name);
        if (p)
            return p;
    }
    /* Not found after the caller: a failing lookup lets dlerror() say so. A
     * definition the loader finds after libjitstall but not after the caller
     * lies before the caller, where RTLD_NEXT must not look. */
    (void)jst_real_dlsym(RTLD_NEXT, name);
    return NULL;
}

/* Our dlsym-route wrapper for what the real lookup found, or p itself. */
static void *map_dlsym(struct jst_hook *h, void *handle, void *p)
{
    void *real = atomic_load(&h->real);
    void *target = p;
    if (p == h->wrap[JST_ROUTE_DIRECT]) /* RTLD_DEFAULT finds our export first */
        target = real;
    if (!target)
        return p;
    if (target != real && !jst_is_libcuda_handle(handle))
        return p; /* some other library's function of that name */
    void *expected = NULL;
    if (!atomic_compare_exchange_strong(&h->real_dl, &expected, target) && expected != target) {
        jst_dbg("dlsym(%s): a second real function %p; not wrapped", h->name, target);
        return p;
    }
    jst_launch_sync();
    jst_dbg("dlsym(%s) -> wrapped", h->name);
    return h->wrap[JST_ROUTE_DLSYM];
}

/* The names whose lookups may be wrapped: the driver's (cu...) and the
 * runtime compilers' (nvrtc..., nvJitLink..., __nvJitLink..., nvvm...,
 * nvPTXCompiler...). Plain byte
 * compares: no libc function, which a sanitizer might intercept. */
JST_START_RODATA static const char pre_cu[] = "cu";
JST_START_RODATA static const char pre_nvrtc[] = "nvrtc";
JST_START_RODATA static const char pre_link[] = "nvJitLink";
JST_START_RODATA static const char pre_link2[] = "__nvJitLink";
JST_START_RODATA static const char pre_nvvm[] = "nvvmCompile";
JST_START_RODATA static const char pre_ptxc[] = "nvPTXCompilerCompile";
/* Python's lookup of an extension module's init function (pyevents.c) */
JST_START_RODATA static const char pre_py[] = "PyInit_";

/* Every dlsym of every process (Python's, for each extension module) comes
 * here: in the start-up pages, with its strings (state.h). */
JST_NO_SANITIZE JST_IDLE_TEXT static int maybe_hooked(const char *name)
{
    const char *const pre[] = {pre_cu, pre_nvrtc, pre_link, pre_link2, pre_nvvm, pre_ptxc, pre_py};
    for (size_t i = 0; i < sizeof pre / sizeof pre[0]; i++) {
        const char *p = pre[i], *n = name;
        while (*p && *n == *p)
            p++, n++;
        if (!*p)
            return 1;
    }
    return 0;
}

/* Called by the assembly entry of dlsym: the real dlsym to jump into, or NULL
 * to take jst_dlsym_c. */
void *jst_dlsym_target(const char *name);
JST_NO_SANITIZE JST_IDLE_TEXT void *jst_dlsym_target(const char *name)
{
    if (!name || maybe_hooked(name))
        return NULL;
    return jst_real_dlsym_fn();
}

#if defined(__x86_64__) && !defined(JST_NO_ASM)
/* dlsym: a name we never wrap jumps into the real dlsym with the caller's
 * return address in place; the others go to jst_dlsym_c. */
__asm__(".section .text.startup.jst_idle,\"ax\",@progbits\n"
        ".globl dlsym\n"
        ".type dlsym, @function\n"
        ".p2align 4\n"
        "dlsym:\n"
        ".cfi_startproc\n"
        "    pushq %rdi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    pushq %rsi\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    subq $8, %rsp\n"
        ".cfi_adjust_cfa_offset 8\n"
        "    movq %rsi, %rdi\n"
        "    call jst_dlsym_target\n"
        "    addq $8, %rsp\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    popq %rsi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    popq %rdi\n"
        ".cfi_adjust_cfa_offset -8\n"
        "    testq %rax, %rax\n"
        "    jz jst_dlsym_c\n"
        "    jmp *%rax\n"
        ".cfi_endproc\n"
        ".size dlsym, .-dlsym\n"
        ".previous\n");
#define JST_DLSYM_C jst_dlsym_c
void *jst_dlsym_c(void *handle, const char *name);
#else
#define JST_DLSYM_C dlsym
JST_EXPORT
#endif
void *JST_DLSYM_C(void *handle, const char *name)
{
    /* A name we never wrap: the lookup alone, as the assembly entry does. A
     * sanitizer's runtime asks for its libc functions here before its own
     * interceptors (strcmp, dlopen) work. */
    if (!maybe_hooked(name))
        return handle == RTLD_NEXT ? next_after(__builtin_return_address(0), name)
                                   : jst_real_dlsym(handle, name);
    struct jst_hook *h = NULL;
    if (!jst_guard && name[0] == 'c' && name[1] == 'u' && jst_config()) {
        h = jst_hook_by_name(name);
        /* Open the driver before the program's lookup, so that what dlerror()
         * says afterwards is about the program's own call. */
        if (h) {
            int saved = errno;
            jst_driver();
            errno = saved;
        }
    }
    void *p = handle == RTLD_NEXT ? next_after(__builtin_return_address(0), name)
                                  : jst_real_dlsym(handle, name);
    if (p && name[0] == 'P') {
        int saved = errno;
        jst_pyevents_arm();
        errno = saved;
        return p;
    }
    if (p && !h && (name[0] == 'n' || name[0] == '_')) {
        struct jst_hook *rh = jst_rtc_by_name(name);
        if (rh) {
            int saved = errno;
            void *r = jst_rtc_dlsym(rh, handle, p, !jst_guard && jst_config());
            errno = saved;
            return r;
        }
    }
    if (!h || !p)
        return p;
    int saved = errno;
    void *r = map_dlsym(h, handle, p);
    errno = saved;
    return r;
}
