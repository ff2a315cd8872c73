/*
 * jst_mem_readable: may [p, p+n) of this process be read without a fault?
 *
 * An image handed to cuModuleLoadData or cuLibraryLoadData has no size: its
 * extent comes from its own headers, and a malformed header can point past
 * the memory the program owns. Reading there would crash the program inside
 * our hook, before the driver could return an error. So before following a
 * header-derived offset into unsized memory, the inspection asks the kernel:
 * process_vm_readv on our own process reads one byte of every page and fails
 * with EFAULT, instead of faulting, where a page is unmapped or unreadable
 * (PROT_NONE guard and reserve pages included). Where the call itself is not
 * available (old kernel, seccomp), nothing can be told and the memory is
 * assumed readable, as before this check existed.
 *
 * That costs about 0.5 us per page, so the common case goes first and costs
 * no system call: images compiled into the program or its libraries lie in a
 * readable PT_LOAD segment of a loaded object, found with dl_iterate_phdr.
 */
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <sys/uio.h>
#include <unistd.h>
#include "image_int.h"

#define PROBE_BATCH 256 /* pages per system call */

struct seg_find {
    uintptr_t first, last; /* the range asked about */
    int inside;
};

static int seg_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct seg_find *f = data;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R) || !ph->p_memsz)
            continue;
        uintptr_t s = (uintptr_t)info->dlpi_addr + (uintptr_t)ph->p_vaddr;
        if (f->first >= s && f->last - s < (uintptr_t)ph->p_memsz) {
            f->inside = 1;
            return 1;
        }
    }
    return 0;
}

int jst_mem_readable(const void *p, size_t n)
{
    if (!n)
        return 1;
    uintptr_t a = (uintptr_t)p, last;
    if (!p || __builtin_add_overflow(a, n - 1, &last))
        return 0;
    struct seg_find f = {a, last, 0};
    dl_iterate_phdr(seg_cb, &f);
    if (f.inside)
        return 1;
    long pg = sysconf(_SC_PAGESIZE);
    uintptr_t page = (uintptr_t)(pg > 0 ? pg : 4096);
    uintptr_t at = a;
    char sink[PROBE_BATCH];
    struct iovec remote[PROBE_BATCH];
    int saved = errno;
    for (;;) {
        int k = 0;
        for (; k < PROBE_BATCH; k++) {
            remote[k].iov_base = (void *)at;
            remote[k].iov_len = 1;
            uintptr_t next = (at & ~(page - 1)) + page;
            if (next <= at || next > last) { /* the page holding the last byte is probed */
                k++;
                at = 0;
                break;
            }
            at = next;
        }
        struct iovec local = {sink, (size_t)k};
        ssize_t r = process_vm_readv(getpid(), &local, 1, remote, (unsigned long)k, 0);
        if (r < 0 && (errno == ENOSYS || errno == EPERM)) {
            errno = saved;
            return 1; /* cannot tell */
        }
        if (r != k) {
            errno = saved;
            return 0;
        }
        if (!at)
            break;
    }
    errno = saved;
    return 1;
}
