/*
 * End-to-end program for a runtime compiler reached only from a library
 * loaded RTLD_LOCAL (rtc_local_plugin.c): dlopens the plugin named by
 * argv[1], calls its nvrtcCompileProgram and prints the result, so that the
 * run with the preload can be compared with the run without.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        printf("dlopen failed: %s\n", argc > 1 ? dlerror() : "usage: prog_rtc_local PLUGIN");
        return 93;
    }
    int (*compile)(void) = (int (*)(void))dlsym(h, "rtc_local_compile");
    if (!compile)
        return 94;
    printf("nvrtcCompileProgram from a RTLD_LOCAL plugin: %d\n", compile());
    return 0;
}
