/*
 * Middle of the chain program: reads the PTX file, makes a context current
 * and hands the image to open_shard.
 */
#include <stdio.h>
#include <stdlib.h>

#include "chain.h"

int load_catalog(const char *ptx_path)
{
    char *image = chain_read_file(ptx_path);
    if (!image) {
        fprintf(stderr, "chain: cannot read %s\n", ptx_path);
        return 1;
    }
    if (chain_driver_setup() != 0) {
        fprintf(stderr, "chain: no device\n");
        free(image);
        return 1;
    }
    int rc = open_shard(image); /* chain-call */
    free(image);
    return rc;
}
