/*
 * CUDA graph capture as an inference server does it at start, for
 * tests/gpu/part_graphs.sh: 64 graphs, one per "batch size", each captured
 * with cudaStreamBeginCapture / cudaStreamEndCapture on a stream of its own
 * and instantiated with cudaGraphInstantiate, then one kernel launched for
 * the first time. Built PTX-only and run with CUDA_MODULE_LOADING=EAGER, the
 * driver JITs the kernel when the context is made, so the kernel's first
 * call spans the JIT and the 64 captures. The graphs hold memsets only: a
 * kernel launched inside a capture would be that kernel's first launch.
 * Prints the graphs made and a checksum; timings go to stderr.
 * Exit: 0 ok, 3 a CUDA call failed (its name on stdout).
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <time.h>

#define N_GRAPHS 64

__global__ void graphs_fill(int *out, int v)
{
    out[threadIdx.x] = v + (int)threadIdx.x;
}

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e_ = (x);                                                                      \
        if (e_ != cudaSuccess) {                                                                   \
            printf("%s failed: %s\n", #x, cudaGetErrorName(e_));                                   \
            return 3;                                                                              \
        }                                                                                          \
    } while (0)

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(void)
{
    int *buf = NULL, host[32];
    cudaStream_t s;
    cudaGraph_t g[N_GRAPHS];
    cudaGraphExec_t x[N_GRAPHS];
    CHECK(cudaFree(0));
    CHECK(cudaMalloc(&buf, 1 << 20));
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    double t0 = now_ms();
    for (int b = 0; b < N_GRAPHS; b++) {
        CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        for (int k = 0; k < 8; k++)
            CHECK(cudaMemsetAsync(buf + k * 1024, b + k, (size_t)(b + 1) * 64, s));
        CHECK(cudaStreamEndCapture(s, &g[b]));
        CHECK(cudaGraphInstantiate(&x[b], g[b], 0));
    }
    double t1 = now_ms();
    graphs_fill<<<1, 32, 0, s>>>(buf, 7);
    CHECK(cudaGetLastError());
    CHECK(cudaGraphLaunch(x[N_GRAPHS - 1], s));
    CHECK(cudaStreamSynchronize(s));
    graphs_fill<<<1, 32, 0, s>>>(buf, 7);
    CHECK(cudaMemcpy(host, buf, sizeof host, cudaMemcpyDeviceToHost));
    long sum = 0;
    for (int i = 0; i < 32; i++)
        sum += host[i];
    printf("graphs %d, checksum %ld\n", N_GRAPHS, sum);
    fprintf(stderr, "capture and instantiate of %d graphs: %.1f ms\n", N_GRAPHS, t1 - t0);
    for (int b = 0; b < N_GRAPHS; b++) {
        cudaGraphExecDestroy(x[b]);
        cudaGraphDestroy(g[b]);
    }
    return 0;
}
