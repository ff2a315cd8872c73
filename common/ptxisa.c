/*
 * PTX ISA versions against CUDA releases and driver branches: which toolkit a
 * PTX .version comes from, and the newest .version a driver can JIT. A driver
 * refuses newer PTX with CUDA_ERROR_UNSUPPORTED_PTX_VERSION (222). The tables
 * are NVIDIA's PTX ISA release history and the CUDA toolkit release notes'
 * minimum driver per toolkit (docs/DRIVER.md, "PTX ISA versions and
 * drivers"). Used by the analyzer and the simulated driver; the preload only
 * records the versions.
 */
#include <stdio.h>
#include <stdlib.h>
#include "image.h"

/* PTX ISA (major*10+minor) and the CUDA release that introduced it. */
static const struct {
    unsigned short isa, cuda;
} isa_rows[] = {
    {10, 1000},  {11, 1010},  {12, 2000},  {13, 2010},  {14, 2020},  {20, 3000},  {21, 3010},
    {22, 3020},  {23, 4000},  {30, 4010},  {31, 5000},  {32, 5050},  {40, 6000},  {41, 6050},
    {42, 7000},  {43, 7050},  {50, 8000},  {60, 9000},  {61, 9010},  {62, 9020},  {63, 10000},
    {64, 10010}, {65, 10020}, {70, 11000}, {71, 11010}, {72, 11020}, {73, 11030}, {74, 11040},
    {75, 11050}, {76, 11060}, {77, 11070}, {78, 11080}, {80, 12000}, {81, 12010}, {82, 12020},
    {83, 12030}, {84, 12040}, {85, 12050}, {86, 12070}, {87, 12080}, {88, 12090}, {90, 13000},
    {91, 13010},
};
#define N_ISA (sizeof(isa_rows) / sizeof(isa_rows[0]))

/* Driver branch (the first number of a release) and the CUDA version its
 * first release supports (the toolkit release notes' minimum driver). */
static const struct {
    unsigned short branch, cuda;
} drv_rows[] = {
    {384, 9000},  {387, 9010},  {396, 9020},  {410, 10000}, {418, 10010}, {440, 10020},
    {450, 11000}, {455, 11010}, {460, 11020}, {465, 11030}, {470, 11040}, {495, 11050},
    {510, 11060}, {515, 11070}, {520, 11080}, {525, 12000}, {530, 12010}, {535, 12020},
    {545, 12030}, {550, 12040}, {555, 12050}, {560, 12060}, {565, 12070}, {570, 12080},
    {575, 12090}, {580, 13000}, {590, 13010},
};
#define N_DRV (sizeof(drv_rows) / sizeof(drv_rows[0]))

unsigned jst_ptx_isa_cuda(unsigned isa)
{
    for (size_t i = 0; i < N_ISA; i++)
        if (isa_rows[i].isa == isa)
            return isa_rows[i].cuda;
    return 0;
}

unsigned jst_cuda_max_ptx_isa(unsigned cuda)
{
    unsigned best = 0;
    if (!cuda)
        return 0;
    for (size_t i = 0; i < N_ISA; i++)
        if (isa_rows[i].cuda <= cuda)
            best = isa_rows[i].isa;
    /* A driver newer than the table: at least the newest ISA known. */
    return best;
}

unsigned jst_driver_release_cuda(const char *release)
{
    if (!release || release[0] < '0' || release[0] > '9')
        return 0;
    char *end;
    unsigned long branch = strtoul(release, &end, 10);
    if (*end && *end != '.')
        return 0;
    unsigned cuda = 0;
    for (size_t i = 0; i < N_DRV; i++)
        if (drv_rows[i].branch <= branch)
            cuda = drv_rows[i].cuda;
    return cuda;
}

unsigned jst_cuda_min_driver(unsigned cuda)
{
    for (size_t i = 0; i < N_DRV; i++)
        if (drv_rows[i].cuda >= cuda)
            return drv_rows[i].branch;
    return 0;
}

/* All digits and dots, at most one dot per number, nothing else. */
static int numeric(const char *s)
{
    int dots = 0;
    if (!*s || *s == '.')
        return 0;
    for (; *s; s++) {
        if (*s == '.') {
            if (s[1] == '.' || !s[1])
                return 0;
            dots++;
        } else if (*s < '0' || *s > '9') {
            return 0;
        }
    }
    return dots <= 2;
}

unsigned jst_driver_arg_cuda(const char *s)
{
    if (!s || !numeric(s))
        return 0;
    char *end;
    unsigned long major = strtoul(s, &end, 10);
    if (major >= 300) { /* a driver release: 550.54, 580.95.05, 13000 is not one */
        if (major >= 1000 && !*end)
            return major < 100000 && major % 10 == 0 ? (unsigned)major : 0; /* 13000 */
        return jst_driver_release_cuda(s);
    }
    if (major < 1 || major > 99)
        return 0;
    unsigned long minor = 0;
    if (*end == '.') {
        const char *m = end + 1;
        minor = strtoul(m, &end, 10);
        if (*end || minor > 9 || end - m != 1)
            return 0;
    } else if (*end) {
        return 0;
    }
    return (unsigned)(major * 1000 + minor * 10);
}

const char *jst_cuda_str(char *buf, size_t n, unsigned cuda)
{
    snprintf(buf, n, "%u.%u", cuda / 1000, cuda % 1000 / 10);
    return buf;
}

const char *jst_arch_last_toolkit(unsigned sm)
{
    if (sm == 30 || sm == 32)
        return "CUDA 10.2";
    if (sm == 35 || sm == 37)
        return "CUDA 11.8";
    if (sm >= 50 && sm <= 72)
        return "CUDA 12.9";
    return NULL;
}
