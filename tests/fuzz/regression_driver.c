/*
 * Replays a fuzz target over a corpus without libFuzzer: calls
 * LLVMFuzzerTestOneInput on every regular file of the directory given as
 * argv[1]. Fails when the directory cannot be read or holds no inputs, so a
 * misplaced corpus cannot pass silently.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    for (size_t k; buf && (k = fread(buf + n, 1, cap - n, f)) > 0;) {
        n += k;
        if (n == cap) {
            uint8_t *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = p;
            cap *= 2;
        }
    }
    int bad = !buf || ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: cannot read\n", path);
        free(buf);
        return -1;
    }
    LLVMFuzzerTestOneInput(buf, n);
    free(buf);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    DIR *d = opendir(argv[1]);
    if (!d) {
        perror(argv[1]);
        return 1;
    }
    unsigned runs = 0, failed = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        char path[4096];
        struct stat st;
        if (e->d_name[0] == '.')
            continue;
        snprintf(path, sizeof(path), "%s/%s", argv[1], e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (run_file(path) < 0)
            failed++;
        else
            runs++;
    }
    closedir(d);
    if (failed)
        return 1;
    if (!runs) {
        fprintf(stderr, "%s: no inputs in corpus\n", argv[1]);
        return 1;
    }
    printf("%u inputs ran\n", runs);
    return 0;
}
