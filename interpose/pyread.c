/*
 * Every read of the Python interpreter's memory by the frame reader goes
 * through here: a pipe made for the capture, into which write(2) copies from
 * the address inside the kernel and fails with EFAULT instead of faulting on
 * an unmapped address (docs/DRIVER.md, "Python callers").
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "pyint.h"

/* The capture's pipe (jst_py_capture makes it and closes it): no descriptor
 * of ours outlives the hook, so a program that closes every descriptor can
 * never have one of its own files written by us. */
static __thread int py_pfd[2] __attribute__((tls_model("initial-exec"))) = {-1, -1};

int jst_py_pipe_open(void)
{
    if (pipe2(py_pfd, O_CLOEXEC | O_NONBLOCK) == 0)
        return 0;
    py_pfd[0] = py_pfd[1] = -1;
    return -1;
}

void jst_py_pipe_close(void)
{
    close(py_pfd[0]);
    close(py_pfd[1]);
    py_pfd[0] = py_pfd[1] = -1;
}

/* process_vm_readv would do it in one call, but seccomp profiles refuse it,
 * and a filter such as systemd's SystemCallFilter kills the process for a
 * call it does not allow, before any error could be seen. A pipe, write(2)
 * and read(2) are what every program is allowed. One batch stays below the
 * pipe's capacity (PY_PIPE_MAX): the write end is non-blocking. */
#define PY_PIPE_MAX 16384
ssize_t jst_py_copyv(const struct iovec *loc, const struct iovec *rem, int n)
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

int jst_py_read(void *dst, uintptr_t addr, size_t n)
{
    if (!addr || n == 0)
        return -1;
    for (size_t done = 0; done < n;) {
        size_t k = n - done < PY_PIPE_MAX ? n - done : PY_PIPE_MAX;
        struct iovec local = {(uint8_t *)dst + done, k}, remote = {(void *)(addr + done), k};
        if (jst_py_copyv(&local, &remote, 1) != (ssize_t)k)
            return -1;
        done += k;
    }
    return 0;
}
