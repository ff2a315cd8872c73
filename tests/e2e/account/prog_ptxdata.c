/*
 * A program carrying PTX text in its own data (embedded.c) and loading it
 * with cuModuleLoadData. Prints the load's result. Usage: prog_ptxdata
 */
#include <stdio.h>
#include "embedded.h"

int main(void)
{
    int r = acct_load_embedded();
    printf("cuModuleLoadData: %d\n", r);
    return r == 0 ? 0 : 1;
}
