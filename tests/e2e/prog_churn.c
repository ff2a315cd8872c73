/*
 * End-to-end program for the first-launch set, linked with -lcuda: ROUNDS
 * times, load sm90.fatbin, launch its kernel twice, and unload it again
 * ("unload") or keep every module loaded ("keep"), as a service that loads
 * modules for hours does. Prints one summary line.
 * Usage: prog_churn FIXTURES_DIR ROUNDS unload|keep
 */
#include "e2e_common.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s FIXTURES_DIR ROUNDS unload|keep\n", argv[0]);
        return 2;
    }
    struct e2e_api a;
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    int rounds = atoi(argv[2]), unload = strcmp(argv[3], "unload") == 0, failed = 0;
    void *image = e2e_read(argv[1], "sm90.fatbin", NULL);
    CUdeviceptr buf = 0;
    if (e2e_setup(&a, &buf) != CUDA_SUCCESS)
        return 3;
    void *params[] = {&buf};
    for (int i = 0; i < rounds; i++) {
        CUmodule m = NULL;
        CUfunction f = NULL;
        if (cuModuleLoadData(&m, image) != CUDA_SUCCESS ||
            cuModuleGetFunction(&f, m, E2E_KERNEL) != CUDA_SUCCESS) {
            failed++;
            continue;
        }
        for (int k = 0; k < 2; k++)
            failed += cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, params, NULL) != CUDA_SUCCESS;
        if (unload)
            failed += cuModuleUnload(m) != CUDA_SUCCESS;
    }
    printf("%d rounds, %d failures\n", rounds, failed);
    return failed ? 1 : 0;
}
