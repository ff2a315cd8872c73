/*
 * A directory operand as the list of its *.jst files (see paths.h).
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "cli.h"
#include "paths.h"
#include "xalloc.h"

static void push(struct jst_paths *ps, char *p)
{
    ps->v = jst_xreallocarray(ps->v, ps->n + 1, sizeof(*ps->v));
    ps->v[ps->n++] = p;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int jst_expand_path(const char *path, struct jst_paths *ps)
{
    struct stat st;
    if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode)) {
        push(ps, jst_xstrdup(path)); /* the reader says what is wrong with it */
        return 0;
    }
    DIR *d = opendir(path);
    if (!d) {
        jst_errorf("dump", "%s: %s", path, strerror(errno));
        return -1;
    }
    size_t first = ps->n, plen = strlen(path);
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (de->d_name[0] == '.' || l < 4 || strcmp(de->d_name + l - 4, ".jst"))
            continue;
        char *full = jst_xmalloc(plen + l + 2);
        sprintf(full, "%s%s%s", path, plen && path[plen - 1] == '/' ? "" : "/", de->d_name);
        push(ps, full);
    }
    closedir(d);
    if (ps->n == first) {
        jst_errorf("dump", "%s: no *.jst traces in this directory", path);
        return -1;
    }
    qsort(ps->v + first, ps->n - first, sizeof(*ps->v), cmp_str);
    return 0;
}

void jst_paths_free(struct jst_paths *ps)
{
    for (size_t i = 0; i < ps->n; i++)
        free(ps->v[i]);
    free(ps->v);
    ps->v = NULL;
    ps->n = 0;
}
