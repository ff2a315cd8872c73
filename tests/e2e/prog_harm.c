/*
 * End-to-end program for the ways a preload could harm the program it lives
 * in (test_smallstack.sh, test_limits.sh, test_stderr.sh), linked with -lcuda.
 * Each mode prints what it saw; the test compares runs with and without the
 * preload.
 *   exec SIZE           a thread of SIZE bytes of stack calls execv(/bin/echo)
 *   spawn SIZE          a thread of SIZE bytes of stack posix_spawn()s
 *                       /bin/echo and waits for it
 *   load SIZE           a thread of SIZE bytes of stack JIT-loads ptx75.fatbin
 *                       and launches its kernel
 *   load-exec SIZE      the load on the main thread, then exec from a thread
 *                       of SIZE bytes of stack
 *   load-exec-left N    the load on the main thread, then exec from a thread
 *                       with only N bytes of its stack left (the rest taken
 *                       as the static TLS of a large library would take it)
 *   open FILE           a load, then open(FILE) for writing and one line into
 *                       it (ulimit -n 4 leaves exactly one descriptor for it)
 *   loads N             N loads, each printing a line (a long trace)
 *   daemon FILE         closes 0-2, opens /dev/null twice and FILE (which gets
 *                       descriptor 2), then a load, and one line into FILE
 *   missing SIZE        a thread of SIZE bytes of stack (0: the default)
 *                       execs, then posix_spawn()s, a program that does not
 *                       exist; both fail with ENOENT (alloc_shim.c counts what
 *                       they allocate)
 * Usage: prog_harm FIXTURES_DIR MODE ARG
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>

#include "e2e_common.h"

extern char **environ;

static struct e2e_api a;
static const char *dir;

static void load_once(const char *img)
{
    CUdeviceptr buf = 0;
    if (e2e_setup(&a, &buf) != CUDA_SUCCESS) {
        printf("setup failed\n");
        return;
    }
    e2e_flow_module(&a, dir, img, buf);
}

static void *do_exec(void *arg)
{
    (void)arg;
    fflush(stdout);
    char *argv[] = {"/bin/echo", "exec from a small stack", NULL};
    execv(argv[0], argv);
    printf("exec failed: %d\n", errno);
    return NULL;
}

static void *do_spawn(void *arg)
{
    (void)arg;
    fflush(stdout);
    char *argv[] = {"/bin/echo", "spawned from a small stack", NULL};
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc != 0) {
        printf("spawn failed: %d\n", rc);
        return NULL;
    }
    int st = 0;
    waitpid(pid, &st, 0);
    printf("child exited %d\n", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return NULL;
}

static void *do_load(void *arg)
{
    (void)arg;
    load_once("ptx75.fatbin");
    return NULL;
}

static void *do_missing(void *arg)
{
    (void)arg;
    char *argv[] = {"/nonexistent/jitstall-test", NULL};
    execv(argv[0], argv);
    printf("exec: %s\n", strerror(errno));
    pid_t pid;
    int rc = posix_spawn(&pid, argv[0], NULL, NULL, argv, environ);
    if (rc == 0)
        waitpid(pid, NULL, 0);
    printf("spawn: %s\n", rc ? strerror(rc) : "started");
    return NULL;
}

/* exec with only exec_left bytes of the thread's stack below this frame. */
static size_t exec_left;

static __attribute__((noinline)) void exec_below(volatile char *burnt)
{
    burnt[0] = 1;
    do_exec(NULL);
}

static void *do_exec_left(void *arg)
{
    (void)arg;
    pthread_attr_t at;
    void *lo = NULL;
    size_t size = 0;
    if (pthread_getattr_np(pthread_self(), &at) != 0 || pthread_attr_getstack(&at, &lo, &size)) {
        printf("cannot read the thread's stack\n");
        return NULL;
    }
    pthread_attr_destroy(&at);
    size_t left = (size_t)((char *)__builtin_frame_address(0) - (char *)lo);
    if (left <= exec_left + 512) {
        printf("stack too small for %zu bytes left\n", exec_left);
        return NULL;
    }
    volatile char burn[left - exec_left - 256];
    burn[sizeof burn - 1] = 0;
    exec_below(burn);
    return NULL;
}

/* Runs fn on a thread whose stack is size bytes (0: the default). */
static int on_small_stack(void *(*fn)(void *), size_t size)
{
    pthread_attr_t at;
    pthread_attr_init(&at);
    if (size && size < (size_t)PTHREAD_STACK_MIN)
        size = PTHREAD_STACK_MIN;
    int rc = size ? pthread_attr_setstacksize(&at, size) : 0;
    pthread_t t;
    if (rc == 0)
        rc = pthread_create(&t, &at, fn, NULL);
    if (rc != 0) {
        printf("thread: %s\n", strerror(rc));
        return 1;
    }
    pthread_join(t, NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FIXTURES_DIR MODE ARG\n", argv[0]);
        return 2;
    }
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    dir = argv[1];
    const char *mode = argv[2], *arg = argv[3];
    size_t size = strtoul(arg, NULL, 0);
    if (strcmp(mode, "exec") == 0)
        return on_small_stack(do_exec, size);
    if (strcmp(mode, "spawn") == 0)
        return on_small_stack(do_spawn, size);
    if (strcmp(mode, "load") == 0)
        return on_small_stack(do_load, size);
    if (strcmp(mode, "missing") == 0)
        return on_small_stack(do_missing, size);
    if (strcmp(mode, "load-exec") == 0) {
        load_once("ptx75.fatbin");
        return on_small_stack(do_exec, size);
    }
    if (strcmp(mode, "load-exec-left") == 0) {
        load_once("ptx75.fatbin");
        exec_left = size;
        return on_small_stack(do_exec_left, 256 << 10);
    }
    if (strcmp(mode, "open") == 0) {
        load_once("ptx75.fatbin");
        int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (fd < 0) {
            printf("open failed: %s\n", strerror(errno));
            return 1;
        }
        dprintf(fd, "the program's own line\n");
        close(fd);
        printf("opened and wrote\n");
        return 0;
    }
    if (strcmp(mode, "loads") == 0) {
        for (long i = 0; i < (long)size; i++) {
            load_once(i % 2 ? "k75.ptx" : "ptx75.fatbin");
            printf("load %ld\n", i);
        }
        return 0;
    }
    if (strcmp(mode, "daemon") == 0) {
        close(0);
        close(1);
        close(2);
        int n0 = open("/dev/null", O_RDWR), n1 = open("/dev/null", O_RDWR);
        int fd = open(arg, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (n0 != 0 || n1 != 1 || fd != 2)
            return 9;
        load_once("ptx75.fatbin");
        dprintf(fd, "the daemon's own line\n");
        return 0;
    }
    return 2;
}
