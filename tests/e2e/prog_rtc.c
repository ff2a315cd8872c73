/*
 * End-to-end program for the runtime compilers: one nvrtcCreateProgram (named
 * kernels.cu), its nvrtcCompileProgram (with -arch=sm_90) and one
 * nvJitLinkComplete, then the driver scenario of
 * e2e_common.h (linked with -lcuda). Built twice: prog_rtc_direct links the
 * (fake) libnvrtc and libnvJitLink and calls them as nvrtc.h and nvJitLink.h
 * make a program do; prog_rtc_dlsym (E2E_RTC_DLSYM) dlopens them and looks the
 * functions up with dlsym, as CuPy does. Prints each result as a number.
 * Usage: as e2e_common.h.
 */
#include <dlfcn.h>
#include <nvJitLink.h>
#include <nvrtc.h>

#include "e2e_common.h"

int main(int argc, char **argv)
{
    static const char *const opts[] = {"-arch=sm_90", "-default-device", "--std=c++17"};
    nvrtcProgram prog = NULL;
#ifdef E2E_RTC_DLSYM
    void *hr = dlopen("libnvrtc.so.13", RTLD_NOW | RTLD_LOCAL);
    void *hl = dlopen("libnvJitLink.so.13", RTLD_NOW | RTLD_LOCAL);
    if (!hr || !hl) {
        printf("dlopen failed: %s\n", dlerror());
        return 93;
    }
    __typeof__(&nvrtcCompileProgram) compile =
        (__typeof__(&nvrtcCompileProgram))dlsym(hr, "nvrtcCompileProgram");
    __typeof__(&nvrtcCreateProgram) create =
        (__typeof__(&nvrtcCreateProgram))dlsym(hr, "nvrtcCreateProgram");
    __typeof__(&__nvJitLinkComplete_13_0) link =
        (__typeof__(&__nvJitLinkComplete_13_0))dlsym(hl, "__nvJitLinkComplete_13_0");
    if (!compile || !link || !create) {
        printf("dlsym failed\n");
        return 94;
    }
    printf("nvrtcCreateProgram: %d\n", (int)create(&prog, "", "kernels.cu", 0, NULL, NULL));
    printf("nvrtcCompileProgram: %d\n", (int)compile(prog, 3, opts));
    printf("nvJitLinkComplete: %d\n", (int)link((nvJitLinkHandle)0x5678));
    /* RTLD_DEFAULT cannot see RTLD_LOCAL libraries: still NULL under the preload. */
    printf("RTLD_DEFAULT nvrtcCompileProgram: %s\n",
           dlsym(RTLD_DEFAULT, "nvrtcCompileProgram") ? "found" : "absent");
#else
    printf("nvrtcCreateProgram: %d\n",
           (int)nvrtcCreateProgram(&prog, "", "kernels.cu", 0, NULL, NULL));
    printf("nvrtcCompileProgram: %d\n", (int)nvrtcCompileProgram(prog, 3, opts));
    printf("nvJitLinkComplete: %d\n", (int)nvJitLinkComplete((nvJitLinkHandle)0x5678));
#endif
    fflush(stdout);
    struct e2e_api a;
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    return e2e_run(&a, argc, argv);
}
