/*
 * A program may exec, spawn or exit from a thread whose stack is tiny:
 * PTHREAD_STACK_MIN (16 KiB) holds the static TLS of every library the
 * program loaded too, and on some machines the dynamic linker's first
 * resolution of a symbol saves kilobytes of vector state on the stack. What
 * the preload does there (looking up the real function, rebuilding the
 * environment, writing the END record: cache state, compressor, Prometheus
 * file) must not need more than the program itself does. So a wrapper hands
 * that work to jst_big_stack_call, which runs it on the same thread (its
 * thread-locals, its signal mask, its errno) but on a stack of its own. The
 * switch's two contexts live in the mapping too, not on the small stack.
 *
 * A thread other than the main one always switches: finding how much stack
 * it has left means asking glibc for its bounds (pthread_getattr_np), which
 * allocates, and an exec may come from a signal handler that interrupted
 * malloc on that thread (a crash handler starting a reporter). Only a call
 * that captures the caller's stack (a compiler's posix_spawn: the unwinder
 * stops at the switch) asks, and stays on the thread's stack when it has at
 * least BIG_STACK_LEFT bytes left; so does any call when no stack can be
 * mapped.
 *
 * A vfork child is a single thread whose id is its pid, as a main thread:
 * it never switches, so it maps nothing that a successful exec would leave
 * in its parent's address space.
 *
 * The code runs in processes that never call the driver (a shell's exec),
 * so it lives in the start-up pages (state.h).
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "bigstack.h"
#include "state.h"

#define BIG_STACK_LEFT (64u << 10)
#define BIG_STACK_SIZE (512u << 10)

struct big_call {
    ucontext_t back, run;
    void (*fn)(void *);
    void *arg;
};

/* The call this thread is switching to (makecontext passes ints only), and
 * whether it runs on a mapped stack now (then the thread's own bounds say
 * nothing of where it is). */
static __thread struct big_call *big_pending __attribute__((tls_model("initial-exec")));
static __thread int big_depth __attribute__((tls_model("initial-exec")));

JST_IDLE_TEXT static void big_trampoline(void)
{
    struct big_call *c = big_pending;
    c->fn(c->arg);
    /* returns to c->back through uc_link */
}

/* Bytes of stack left below the caller, on a thread other than the main
 * one and not on a stack mapped here; 0 when unknown. */
JST_IDLE_TEXT static size_t stack_left(void)
{
    pthread_attr_t at;
    if (pthread_getattr_np(pthread_self(), &at) != 0)
        return 0;
    void *lo = NULL;
    size_t size = 0;
    int rc = pthread_attr_getstack(&at, &lo, &size);
    pthread_attr_destroy(&at);
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (rc != 0 || here < (uintptr_t)lo || here - (uintptr_t)lo > size)
        return 0;
    return here - (uintptr_t)lo;
}

JST_IDLE_TEXT int jst_big_stack_call(void (*fn)(void *), void *arg, int flags)
{
    if (big_depth || syscall(SYS_gettid) == getpid() ||
        ((flags & JST_BIG_OWN_STACK) && stack_left() >= BIG_STACK_LEFT)) {
        fn(arg);
        return 1;
    }
    void *m = mmap(NULL, BIG_STACK_SIZE, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    struct big_call *c = m;
    size_t head = (sizeof *c + 63) & ~(size_t)63;
    if (m == MAP_FAILED || getcontext(&c->run) != 0) {
        if (m != MAP_FAILED)
            munmap(m, BIG_STACK_SIZE);
        int run = (flags & JST_BIG_MUST_RUN) || stack_left() >= BIG_STACK_LEFT;
        if (run)
            fn(arg);
        return run;
    }
    c->fn = fn;
    c->arg = arg;
    c->run.uc_stack.ss_sp = (char *)m + head;
    c->run.uc_stack.ss_size = BIG_STACK_SIZE - head;
    c->run.uc_link = &c->back;
    makecontext(&c->run, big_trampoline, 0);
    struct big_call *outer = big_pending;
    big_pending = c;
    big_depth++;
    int ran = swapcontext(&c->back, &c->run) == 0;
    big_depth--;
    big_pending = outer;
    munmap(m, BIG_STACK_SIZE);
    if (!ran && (flags & JST_BIG_MUST_RUN))
        fn(arg);
    return ran || (flags & JST_BIG_MUST_RUN);
}
