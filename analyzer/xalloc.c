/* The CLI's allocations that exit with one line instead of returning NULL. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "cli.h"
#include "xalloc.h"

static const char *xalloc_cmd = "";

void jst_xalloc_command(const char *cmd)
{
    xalloc_cmd = cmd ? cmd : "";
}

void jst_xalloc_die(void)
{
    fprintf(stderr, "jitstall%s%s: out of memory\n", *xalloc_cmd ? " " : "", xalloc_cmd);
    exit(JST_EXIT_USAGE);
}

void *jst_xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p)
        jst_xalloc_die();
    return p;
}

void *jst_xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size ? size : 1);
    if (!p)
        jst_xalloc_die();
    return p;
}

void *jst_xreallocarray(void *p, size_t n, size_t size)
{
    if (size && n > SIZE_MAX / size)
        jst_xalloc_die();
    size_t bytes = n * size;
    void *q = realloc(p, bytes ? bytes : 1);
    if (!q)
        jst_xalloc_die();
    return q;
}

char *jst_xstrdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        jst_xalloc_die();
    return d;
}
