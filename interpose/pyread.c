/*
 * Every read of the Python interpreter's memory by the frame reader goes
 * through here: pread(2) of /proc/self/mem, which copies inside the kernel
 * and fails instead of faulting on an unmapped address (docs/DRIVER.md,
 * "Python callers").
 *
 * One descriptor per process, taken at the first read (inside the first
 * recorded call that reads Python frames), moved high like the trace's
 * (jst_fd_raise: close-on-exec, above the numbers programs use, without
 * growing the table), and then never closed, never reused and never written:
 * the sampler thread and the hooks only pread it. Before every read, fstat
 * says whether the number still holds that file; a program may have closed
 * it and opened or dup2'd its own file onto it. Then the reader stops for
 * good (one note) and never touches that number again. A forked child's copy
 * still reads the parent's memory: its first read puts its own file under
 * the same number (dup3 onto a descriptor that is still ours).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "pyframes.h"
#include "pyint.h"
#include "state.h"

enum { MEM_NONE = 0, MEM_OPEN, MEM_STALE, MEM_GONE };
static _Atomic int mem_state;
static int mem_fd = -1;
static dev_t mem_dev;
static ino_t mem_ino;
static pthread_mutex_t mem_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic unsigned long long mem_reads;

/* Is fd the file whose identity is dev, ino? */
static int mem_is(int fd, dev_t dev, ino_t ino)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

/* Opens this process's /proc/self/mem under a high number; after a fork,
 * onto the number the parent's copy had when that is still ours. Under
 * mem_lock. */
static void mem_open(void)
{
    int stale = atomic_load(&mem_state) == MEM_STALE;
    int fd = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) != 0) {
        close(fd);
        fd = -1;
    }
    if (fd < 0) {
        atomic_store(&mem_state, MEM_GONE);
        return;
    }
    if (stale && mem_is(mem_fd, mem_dev, mem_ino) && dup3(fd, mem_fd, O_CLOEXEC) == mem_fd) {
        close(fd);
    } else {
        mem_fd = jst_fd_raise(fd); /* closes fd */
        if (mem_fd < 0) {
            atomic_store(&mem_state, MEM_GONE);
            return;
        }
    }
    mem_dev = st.st_dev;
    mem_ino = st.st_ino;
    atomic_store(&mem_state, MEM_OPEN);
}

/* The descriptor, checked to still be ours; -1 when there is none. */
static int mem_get(void)
{
    int st = atomic_load(&mem_state);
    if (st == MEM_GONE)
        return -1;
    if (st != MEM_OPEN) {
        /* Another thread may be opening it: wait a little, not forever (a
         * child forked while the lock was held just reads nothing). */
        int tries = 0;
        while (pthread_mutex_trylock(&mem_lock) != 0) {
            if (++tries > 200)
                return -1;
            struct timespec ts = {0, 50000};
            nanosleep(&ts, NULL);
        }
        if (atomic_load(&mem_state) == MEM_NONE || atomic_load(&mem_state) == MEM_STALE)
            mem_open();
        pthread_mutex_unlock(&mem_lock);
        if (atomic_load(&mem_state) != MEM_OPEN)
            return -1;
    }
    if (!mem_is(mem_fd, mem_dev, mem_ino)) {
        int was = MEM_OPEN;
        if (atomic_compare_exchange_strong(&mem_state, &was, MEM_GONE)) {
            static const char msg[] = "Python frames no longer recorded: the program closed or "
                                      "replaced the descriptor jitstall read them through";
            jst_note(1, msg);
            jst_dbg("%s", msg);
        }
        return -1;
    }
    return mem_fd;
}

/* process_vm_readv would read without a descriptor, but seccomp profiles
 * refuse it, and a filter such as systemd's SystemCallFilter kills the
 * process for a call it does not allow, before any error could be seen.
 * open(2) and pread(2) are what every program is allowed. */
ssize_t jst_py_copyv(const struct iovec *loc, const struct iovec *rem, int n)
{
    int fd = mem_get();
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    ssize_t done = 0;
    for (int i = 0; i < n; i++) {
        size_t got = 0, want = loc[i].iov_len < rem[i].iov_len ? loc[i].iov_len : rem[i].iov_len;
        uintptr_t from = (uintptr_t)rem[i].iov_base;
        while (got < want) {
            atomic_fetch_add_explicit(&mem_reads, 1, memory_order_relaxed);
            /* The offset is the address (unsigned in this file: any value is taken). */
            ssize_t r =
                pread(fd, (uint8_t *)loc[i].iov_base + got, want - got, (off_t)(from + got));
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                return done + (ssize_t)got > 0 ? done + (ssize_t)got : -1;
            got += (size_t)r;
        }
        done += (ssize_t)got;
    }
    return done;
}

int jst_py_read(void *dst, uintptr_t addr, size_t n)
{
    if (!addr || n == 0 || addr + n < addr)
        return -1;
    struct iovec local = {dst, n}, remote = {(void *)addr, n};
    return jst_py_copyv(&local, &remote, 1) == (ssize_t)n ? 0 : -1;
}

int jst_py_read_ok(void)
{
    return atomic_load(&mem_state) != MEM_GONE;
}

unsigned long long jst_py_reads(void)
{
    return atomic_load(&mem_reads);
}

void jst_py_read_atfork_child(void)
{
    pthread_mutex_init(&mem_lock, NULL);
    if (atomic_load(&mem_state) == MEM_OPEN)
        atomic_store(&mem_state, MEM_STALE);
}
