/*
 * End-to-end program for the recorded command line, linked with -lcuda: one
 * SASS load and launch, whatever its arguments; it prints how many it got.
 * Usage: prog_args FIXTURES_DIR [ANY...]
 */
#include "e2e_common.h"

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    struct e2e_api a;
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    CUdeviceptr buf = 0;
    if (e2e_setup(&a, &buf) != CUDA_SUCCESS)
        return 3;
    e2e_flow_module(&a, argv[1], "sm90.fatbin", buf);
    printf("%d arguments\n", argc - 1);
    return 0;
}
