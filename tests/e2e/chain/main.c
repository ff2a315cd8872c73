/*
 * Entry of the chain program (tests/e2e/chain): main calls load_catalog,
 * which calls open_shard, which calls cuModuleLoadData on a PTX-only image,
 * so the JIT event's stack has a known shape. Usage: chain PTX_FILE.
 */
#include <stdio.h>

#include "chain.h"

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: chain PTX_FILE\n");
        return 2;
    }
    int rc = load_catalog(argv[1]); /* chain-call */
    printf("load_catalog: %d\n", rc);
    return rc == 0 ? 0 : 1;
}
