/*
 * End-to-end program that behaves like cudart: it reaches the driver through
 * cuGetProcAddress (with the self-lookup) and loads each fatbin with
 * cuLibraryLoadData, passing a pointer to a __fatBinC_Wrapper_t rather than to
 * the fatbin. Usage: prog_cudart_like FIXTURES_DIR EXIT_CODE FATBIN... [--hold]
 */
#include "e2e_procaddr.h"

int main(int argc, char **argv)
{
    struct e2e_api a;
    int rc = e2e_resolve_procaddr(&a);
    if (rc)
        return rc;
    /* Insert the flow: cudart always loads through cuLibraryLoadData. */
    char **args = calloc((size_t)argc + 2, sizeof *args);
    int n = 0;
    for (int i = 0; i < argc; i++) {
        args[n++] = argv[i];
        if (i == 2)
            args[n++] = "library";
    }
    if (argc < 3) {
        fprintf(stderr, "usage: %s FIXTURES_DIR EXIT_CODE FATBIN... [--hold]\n", argv[0]);
        return 2;
    }
    return e2e_run(&a, n, args);
}
