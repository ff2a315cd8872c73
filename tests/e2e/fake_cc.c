/*
 * A stand-in compiler for the compiler-child tests: installed under the names
 * ptxas, nvcc, gcc... (symlinks in a temporary directory), it takes
 * FAKE_CC_MS milliseconds (default 30), writes 100 bytes to the file named by
 * -o (if any) and exits with FAKE_CC_RC (default 0). A real compiler is not
 * needed: what the preload records is the spawn, the arguments and the wait.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    const char *ms = getenv("FAKE_CC_MS");
    long n = ms ? atol(ms) : 30;
    struct timespec ts = {n / 1000, (n % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], "-o") == 0) {
            FILE *f = fopen(argv[i + 1], "w");
            if (f) {
                for (int k = 0; k < 100; k++)
                    fputc('x', f);
                fclose(f);
            }
        }
    const char *rc = getenv("FAKE_CC_RC");
    return rc ? atoi(rc) : 0;
}
