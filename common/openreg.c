/* Opening an input only when it is a regular file (see openreg.h). */
#include "openreg.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int jst_open_regular(const char *path)
{
    /* A device is not even opened (opening some has effects); the fstat
     * below catches a file swapped for a FIFO in between. */
    struct stat pre;
    if (stat(path, &pre) == 0 && !S_ISREG(pre.st_mode)) {
        errno = JST_ENOTREG;
        return -1;
    }
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    int fl, e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    else if (!S_ISREG(st.st_mode))
        e = JST_ENOTREG;
    else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) != 0)
        e = errno;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    return fd;
}

const char *jst_open_strerror(int e)
{
    return e == JST_ENOTREG ? "not a regular file" : strerror(e);
}

FILE *jst_fopen_regular(const char *path)
{
    int fd = jst_open_regular(path);
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "r");
    if (!f) {
        int e = errno;
        close(fd);
        errno = e;
    }
    return f;
}
