/*
 * jst_demangle: C++ kernel names for humans, through libstdc++'s
 * __cxa_demangle. Kept in its own file so that libjitstall.so, which never
 * calls it, does not pull in libstdc++.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "image.h"

/* From libstdc++ (the C++ ABI); declared here so that this stays C. */
extern char *__cxa_demangle(const char *mangled, char *out, size_t *len, int *status);

const char *jst_demangle(const char *name, char *buf, size_t n)
{
    if (!buf || !n)
        return buf;
    if (!name) {
        buf[0] = 0;
        return buf;
    }
    if (name[0] == '_' && name[1] == 'Z') {
        int status = -1;
        char *d = __cxa_demangle(name, NULL, NULL, &status);
        if (d && status == 0) {
            snprintf(buf, n, "%s", d);
            free(d);
            return buf;
        }
        free(d);
    }
    snprintf(buf, n, "%s", name);
    return buf;
}

char *jst_demangle_dup(const char *name)
{
    if (!name)
        return NULL;
    if (name[0] == '_' && name[1] == 'Z') {
        int status = -1;
        char *d = __cxa_demangle(name, NULL, NULL, &status);
        if (d && status == 0)
            return d;
        free(d);
    }
    size_t n = strlen(name) + 1;
    char *c = malloc(n);
    if (c)
        memcpy(c, name, n);
    return c;
}
