/*
 * Fuzz target for CUDA image inspection: inspects the input with its real
 * size, decides it for several GPUs and environments, and extracts the data
 * and kernel names of every entry. Then once more without a size, as
 * cuModuleLoadData gets it, with the input (and a NUL, where PTX text ends)
 * placed right before an inaccessible page: a read past it faults. Replayed
 * over tests/fuzz/corpus/image/ by regression_driver.c under ctest.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "image.h"

/* Inspects a copy of the input that ends at a PROT_NONE page, without a size. */
static void inspect_unsized(const uint8_t *data, size_t size)
{
    /* A fatbin wrapper holds a pointer the program put there (cudart); from
     * fuzzed bytes it can point anywhere, even into ASan's own shadow, which
     * is mapped readable but faults when instrumented code reads it. */
    static const uint8_t wrapper[4] = {0xB1, 0x43, 0x62, 0x46};
    if (size >= 4 && !memcmp(data, wrapper, 4))
        return;
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    size_t len = (size + 1 + pg - 1) / pg * pg;
    uint8_t *m = mmap(NULL, len + pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED)
        return;
    if (mprotect(m + len, pg, PROT_NONE) == 0) {
        uint8_t *p = m + len - size - 1;
        memcpy(p, data, size);
        p[size] = 0;
        struct jst_image img;
        jst_image_inspect(p, 0, &img);
        if (!img.damaged && img.base == p && img.size > size + 1)
            abort(); /* an extent past the bytes there, not reported */
        jst_image_free(&img);
    }
    munmap(m, len + pg);
}

static void name_cb(void *ctx, const char *name, size_t len)
{
    char buf[256], out[512];
    size_t n = len < sizeof(buf) - 1 ? len : sizeof(buf) - 1;
    memcpy(buf, name, n);
    buf[n] = 0;
    jst_demangle(buf, out, sizeof(out));
    *(size_t *)ctx += strlen(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0; /* known_size 0 means "derive from headers", not "empty" */
    /* A private exact-size copy, so any read past the end is caught. */
    uint8_t *buf = malloc(size);
    if (!buf)
        return 0;
    memcpy(buf, data, size);
    struct jst_image img;
    jst_image_inspect(buf, size, &img);
    static const unsigned ccs[] = {75, 86, 89, 90, 100, 103, 120};
    for (size_t i = 0; i < sizeof(ccs) / sizeof(ccs[0]); i++)
        for (int env = 0; env < 4; env++) {
            struct jst_decision d;
            jst_image_decide(&img, ccs[i], env, &d);
            if (d.verdict > JST_V_DAMAGED)
                abort();
        }
    size_t total = 0;
    for (size_t k = 0; k < img.n_entries; k++) {
        const struct jst_entry *e = &img.entries[k];
        if (e->payload < buf || e->payload_size > size ||
            (size_t)(e->payload - buf) > size - e->payload_size)
            abort(); /* an entry outside the input is a bug */
        size_t len;
        free(jst_entry_data(e, &len));
        jst_entry_kernels(e, name_cb, &total);
    }
    (void)jst_fatbin_size(buf, size);
    (void)jst_hash64(buf, size);
    jst_image_free(&img);
    free(buf);
    inspect_unsized(data, size);
    return 0;
}
