/*
 * End-to-end program: the executable itself calls dlsym(RTLD_NEXT, ...), as
 * programs that wrap a libc function do, for a libc function and for a
 * driver function (the preload wraps the second: it must find the same
 * definition after the program, then hand out its dlsym-route wrapper).
 * Prints what it found and what the driver function returned, so that the
 * run with the preload can be compared with the run without.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    int (*p)(const char *) = (int (*)(const char *))dlsym(RTLD_NEXT, "puts");
    if (!p)
        return 3;
    p("puts found after the program");
    void *none = dlsym(RTLD_NEXT, "jst_no_such_symbol_anywhere");
    printf("missing symbol: %s, dlerror %s\n", none ? "found" : "NULL",
           dlerror() ? "set" : "empty");
    /* A call into the driver, so that the program keeps its link to it. */
    int version = 0;
    cuDriverGetVersion(&version);
    CUresult (*init)(unsigned int) = (CUresult(*)(unsigned int))dlsym(RTLD_NEXT, "cuInit");
    if (init)
        printf("cuInit after the program: found, result %d\n", (int)init(0));
    else
        printf("cuInit after the program: NULL\n");
    return 0;
}
