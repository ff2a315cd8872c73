/*
 * End-to-end program, route 1: linked with -lcuda, so every driver call goes
 * through the exported symbols (what driver-API programs do). The steps are in
 * e2e_common.h.
 */
#include "e2e_common.h"

int main(int argc, char **argv)
{
    struct e2e_api a;
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    return e2e_run(&a, argc, argv);
}
