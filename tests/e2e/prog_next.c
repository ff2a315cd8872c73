/*
 * End-to-end program: the executable itself calls dlsym(RTLD_NEXT, ...), as
 * programs that wrap a libc function do. Prints what it found, so that the
 * run with the preload can be compared with the run without.
 */
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
    return 0;
}
