/*
 * CUDA runtime program for tests/gpu/part_harden.sh: one kernel launch and a
 * copy back, then execv of argv[1] (with the rest as its arguments), so that
 * the trace must end with the exec. Without arguments it just exits 0.
 */
#include <cstdio>
#include <unistd.h>

__global__ void harden_fill(int *out)
{
    out[threadIdx.x] = (int)threadIdx.x * 2;
}

int main(int argc, char **argv)
{
    int *d = nullptr, h[32] = {0};
    if (cudaMalloc(&d, sizeof h) != cudaSuccess)
        return 3;
    harden_fill<<<1, 32>>>(d);
    if (cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost) != cudaSuccess)
        return 3;
    std::printf("sum %d\n", [&] { int s = 0; for (int v : h) s += v; return s; }());
    std::fflush(stdout);
    if (argc > 1) {
        execv(argv[1], argv + 1);
        std::printf("exec failed\n");
        return 4;
    }
    return 0;
}
