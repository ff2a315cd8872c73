/*
 * Fuzz target for the architecture rules (common/arch.c): parsing of
 * "sm_90a" / "9.0" / "compute_75" strings from the command line, and the
 * names printed back, which must round-trip.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "image.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char s[64];
    size_t n = size < sizeof(s) - 1 ? size : sizeof(s) - 1;
    memcpy(s, data, n);
    s[n] = 0;
    unsigned variant = 0;
    unsigned cc = jst_arch_parse(s, &variant);
    if (!cc)
        return 0;
    char buf[32];
    for (int ptx = 0; ptx < 2; ptx++) {
        jst_arch_str(buf, sizeof(buf), ptx, cc, variant);
        unsigned v2 = 0;
        if (jst_arch_parse(buf, &v2) != cc || v2 != variant)
            abort(); /* what we print must read back the same */
        (void)jst_sass_runs_on(cc, variant, 90);
        (void)jst_ptx_jits_to(cc, variant, 90);
    }
    return 0;
}
