/* Output files of the CLI, replaced whole or not at all (see outfile.h). */
#include "outfile.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

int jst_outfile_open(struct jst_outfile *o, const char *cmd, const char *path)
{
    o->f = stdout;
    o->path = NULL;
    o->tmp[0] = '\0';
    if (!path || !strcmp(path, "-"))
        return 0;
    if ((size_t)snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid()) >=
        sizeof o->tmp) {
        jst_errorf(cmd, "%s: path too long", path);
        return -1;
    }
    if (!(o->f = fopen(o->tmp, "w"))) {
        jst_errorf(cmd, "%s: %s", path, strerror(errno));
        return -1;
    }
    o->path = path;
    return 0;
}

int jst_outfile_commit(struct jst_outfile *o, const char *cmd, int werr)
{
    if (!o->path) {
        if (werr || fflush(stdout) != 0) {
            jst_errorf(cmd, "cannot write to standard output");
            return -1;
        }
        return 0;
    }
    werr |= fclose(o->f) != 0 ? -1 : 0;
    if (!werr && rename(o->tmp, o->path) != 0)
        werr = -1;
    if (werr) {
        jst_errorf(cmd, "%s: cannot write: %s", o->path, strerror(errno));
        remove(o->tmp);
        return -1;
    }
    return 0;
}
