/*
 * End-to-end program for the trace descriptor's identity: a daemon-like
 * program that, after its first load, closes every descriptor from 3 up,
 * opens its own file (which gets the lowest number) and puts that file on
 * every number it had open before (so whatever number the trace used now
 * holds the program's file), then loads and launches again and writes one
 * line into its file. test_closefds.sh checks that the file holds exactly
 * that line and that both loads are traced.
 *
 * usage: prog_closefds FIXTURES_DIR OWN_FILE
 */
#include <dirent.h>
#include <fcntl.h>
#include "e2e_common.h"

/* The descriptors from 3 up that are open now (at most max of them). */
static int open_fds(int *fds, int max)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return 0;
    int self = dirfd(d);
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd >= 3 && fd != self)
            fds[n++] = fd;
    }
    closedir(d);
    return n;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s FIXTURES_DIR OWN_FILE\n", argv[0]);
        return 2;
    }
    struct e2e_api a;
#define E2E_DIRECT(name) a.name = name;
    E2E_FUNCS(E2E_DIRECT)
#undef E2E_DIRECT
    CUdeviceptr buf = 0;
    if (e2e_setup(&a, &buf) != CUDA_SUCCESS)
        return 1;
    e2e_flow_module(&a, argv[1], "ptx75.fatbin", buf);

    int fds[256];
    int n = open_fds(fds, 256);
    for (int i = 0; i < n; i++)
        close(fds[i]);
    int own = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (own < 0) {
        printf("cannot open own file\n");
        return 3;
    }
    printf("own file on descriptor %d\n", own);
    for (int i = 0; i < n; i++)
        if (fds[i] != own)
            dup2(own, fds[i]);

    e2e_flow_module(&a, argv[1], "sm90.fatbin", buf);
    static const char line[] = "the program's own data\n";
    if (write(own, line, sizeof(line) - 1) != (ssize_t)sizeof(line) - 1)
        printf("cannot write own file\n");
    return 0;
}
