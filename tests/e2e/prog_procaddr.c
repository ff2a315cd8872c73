/*
 * End-to-end program, route 3: cuGetProcAddress_v2 with the nested
 * self-lookup, exactly like cudart (e2e_procaddr.h). The steps are in
 * e2e_common.h.
 */
#include "e2e_procaddr.h"

int main(int argc, char **argv)
{
    struct e2e_api a;
    int rc = e2e_resolve_procaddr(&a);
    if (rc)
        return rc;
    return e2e_run(&a, argc, argv);
}
