/*
 * jst_mem_readable: may [p, p+n) of this process be read without a fault?
 *
 * An image handed to cuModuleLoadData or cuLibraryLoadData has no size: its
 * extent comes from its own headers, and a malformed header can point past
 * the memory the program owns. Reading there would crash the program inside
 * our hook, before the driver could return an error. So before following a
 * header-derived offset into unsized memory, the inspection asks:
 *
 * 1. Images compiled into the program or its libraries lie in a readable
 *    PT_LOAD segment of a loaded object (dl_iterate_phdr): no system call.
 * 2. Otherwise (a buffer the program filled), /proc/self/maps must show the
 *    range covered by readable mappings, without a gap (PROT_NONE guard and
 *    reserve pages count as unreadable).
 * 3. Where /proc/self/maps cannot be read, nothing can be told and the memory
 *    is assumed readable, as before this check existed.
 *
 * Only plain open/read/close: a probe through process_vm_readv would be
 * cheaper to write but is refused by common seccomp filters (systemd's
 * @system-service), some of which kill the process instead of failing.
 */
#include <errno.h>
#include <link.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "image_int.h"

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

/* Parses one "start-end perms ..." line of /proc/self/maps. */
static int maps_line(const char *l, uintptr_t *start, uintptr_t *end, char *perm)
{
    char *e;
    unsigned long long a = strtoull(l, &e, 16), b;
    if (*e != '-')
        return -1;
    b = strtoull(e + 1, &e, 16);
    if (*e != ' ' || !e[1])
        return -1;
    *start = (uintptr_t)a;
    *end = (uintptr_t)b;
    *perm = e[1];
    return 0;
}

#define MAPS_BUF (4096 + 1)

/* Is [a, last] covered by readable mappings? 1 yes, 0 no, -1 unknown.
 * The lines are in address order; `need` is the lowest address not yet
 * shown readable. The buffer is on the heap: this runs inside a driver hook,
 * which may be on a thread with a small stack. */
static int maps_readable(uintptr_t a, uintptr_t last)
{
    char *buf = malloc(MAPS_BUF);
    if (!buf)
        return -1;
    int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        free(buf);
        return -1;
    }
    size_t have = 0;
    uintptr_t need = a;
    int verdict = 0, eof = 0;
    while (!eof) {
        ssize_t k = read(fd, buf + have, MAPS_BUF - 1 - have);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0) {
            verdict = -1;
            break;
        }
        eof = k == 0;
        have += (size_t)k;
        buf[have] = 0;
        char *line = buf, *nl;
        while ((nl = memchr(line, '\n', have - (size_t)(line - buf))) || (eof && *line)) {
            if (nl)
                *nl = 0;
            uintptr_t s0, e0;
            char perm;
            if (maps_line(line, &s0, &e0, &perm) == 0 && e0 > need) {
                if (s0 > need || perm != 'r')
                    goto done; /* a gap or an unreadable mapping */
                need = e0;
                if (need == 0 || need > last) {
                    verdict = 1;
                    goto done;
                }
            }
            if (!nl)
                break;
            line = nl + 1;
        }
        have -= (size_t)(line - buf);
        memmove(buf, line, have);
        if (have == MAPS_BUF - 1)
            have = 0; /* a line longer than the buffer: not a mapping we need */
    }
done:
    close(fd);
    free(buf);
    return verdict;
}

int jst_mem_readable(const void *p, size_t n)
{
    if (!n)
        return 1;
    uintptr_t a = (uintptr_t)p, last;
    if (!p || __builtin_add_overflow(a, n - 1, &last))
        return 0;
    int saved = errno;
    struct seg_find f = {a, last, 0};
    dl_iterate_phdr(seg_cb, &f);
    int r = f.inside ? 1 : maps_readable(a, last);
    errno = saved;
    return r != 0;
}
