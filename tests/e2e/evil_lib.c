/*
 * A library that must never be loaded by test_secure.sh: named by
 * JITSTALL_REAL_LIBCUDA in a setgid program, it announces itself on stderr.
 */
#include <unistd.h>

__attribute__((constructor)) static void evil_ctor(void)
{
    static const char msg[] = "evil library loaded\n";
    ssize_t n = write(2, msg, sizeof msg - 1);
    (void)n;
}
