/*
 * An idle process (it never calls the driver) that checks, first thing in
 * main, what the preload's constructor left behind: no heap set up on its
 * behalf, NVTX_INJECTION64_PATH naming an absolute path when preloaded, and
 * an environment the program can still change as usual (setenv, unsetenv,
 * putenv, clearenv). Prints nothing and exits 0 when all hold; otherwise one
 * line on stderr and exit 1.
 *
 * usage: prog_idle plain|preloaded
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

static int bad(const char *what)
{
    fprintf(stderr, "prog_idle: %s\n", what);
    return 1;
}

int main(int argc, char **argv)
{
    /* Before anything of ours allocates: sbrk'd heap bytes so far. */
    size_t arena = mallinfo2().arena;
    if (argc != 2)
        return bad("usage: prog_idle plain|preloaded");
    int preloaded = strcmp(argv[1], "preloaded") == 0;
    if (arena != 0)
        return bad("the heap was set up before main");
    const char *nvtx = getenv("NVTX_INJECTION64_PATH");
    if (preloaded && (!nvtx || nvtx[0] != '/' || !strstr(nvtx, "libjitstall")))
        return bad("NVTX_INJECTION64_PATH does not name libjitstall.so by an absolute path");
    if (!preloaded && nvtx)
        return bad("NVTX_INJECTION64_PATH is set without the preload");
    size_t n = 0;
    while (environ[n])
        n++;
    if (setenv("JST_IDLE_A", "1", 1) != 0 || strcmp(getenv("JST_IDLE_A"), "1") != 0)
        return bad("setenv after the constructor failed");
    if (unsetenv("NVTX_INJECTION64_PATH") != 0 || getenv("NVTX_INJECTION64_PATH"))
        return bad("unsetenv after the constructor failed");
    static char b[] = "JST_IDLE_B=2";
    if (putenv(b) != 0 || strcmp(getenv("JST_IDLE_B"), "2") != 0)
        return bad("putenv after the constructor failed");
    size_t m = 0;
    while (environ[m])
        m++;
    if (m != n - (size_t)preloaded + 2)
        return bad("the environment lost or gained an entry");
    if (clearenv() != 0 || getenv("JST_IDLE_A") || (environ && environ[0]))
        return bad("clearenv after the constructor failed");
    if (setenv("JST_IDLE_C", "3", 1) != 0 || strcmp(getenv("JST_IDLE_C"), "3") != 0)
        return bad("setenv after clearenv failed");
    return 0;
}
