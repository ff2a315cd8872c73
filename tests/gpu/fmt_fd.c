/*
 * GPU test program for tests/gpu/part_format.sh: the trace descriptor on the
 * real driver. Loads an image, finds the descriptor of the trace file (a
 * *.jst in /proc/self/fd) and reports its number on stderr, then puts its own
 * file on that number (as a daemon reusing descriptors would), loads again
 * and writes one line into its file. stdout is the same with and without the
 * preload. Exit: 0 ok, 3 a driver call failed.
 */
#include <cuda.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = calloc(1, (size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    fclose(f);
    return buf;
}

/* The descriptor open on a *.jst file, or -1. */
static int trace_fd(void)
{
    int found = -1;
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    struct dirent *e;
    while ((e = readdir(d))) {
        char link[64], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n > 4) {
            target[n] = 0;
            if (!strcmp(target + n - 4, ".jst"))
                found = atoi(e->d_name);
        }
    }
    closedir(d);
    return found;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: fmt_fd IMAGE OWN_FILE\n");
        return 2;
    }
    void *img = read_file(argv[1]);
    CUdevice dev;
    CUcontext ctx;
    CUmodule m1, m2;
    if (!img || cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev) ||
        cuCtxSetCurrent(ctx))
        return 3;
    printf("load 1: %d\n", (int)cuModuleLoadData(&m1, img));
    int tfd = trace_fd();
    fprintf(stderr, "fmt_fd: trace descriptor %d\n", tfd);
    int own = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0600);
    if (own < 0)
        return 3;
    if (tfd >= 0)
        dup2(own, tfd);
    printf("load 2: %d\n", (int)cuModuleLoadData(&m2, img));
    if (write(own, "own\n", 4) != 4)
        return 3;
    return 0;
}
