// The "first query" of the example: (a + b) * 2 on the GPU through two
// libraries, checked on the host. Exits 0 when the result is right.
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>

extern "C" cudaError_t kernels_add(const float *a, const float *b, float *c, int n);
extern "C" cudaError_t extra_scale(float *x, int n, float k);

static int check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        std::fprintf(stderr, "query: %s: %s\n", what, cudaGetErrorString(e));
        return 1;
    }
    return 0;
}

int main()
{
    const int n = 1 << 16;
    std::vector<float> a(n), b(n), c(n);
    for (int i = 0; i < n; i++) {
        a[i] = float(i);
        b[i] = 1.0f;
    }
    float *da, *db, *dc;
    size_t bytes = n * sizeof(float);
    if (check(cudaMalloc(&da, bytes), "cudaMalloc") || check(cudaMalloc(&db, bytes), "cudaMalloc") ||
        check(cudaMalloc(&dc, bytes), "cudaMalloc") ||
        check(cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy") ||
        check(cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice), "cudaMemcpy") ||
        check(kernels_add(da, db, dc, n), "add") || check(extra_scale(dc, n, 2.0f), "scale") ||
        check(cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy"))
        return 1;
    for (int i = 0; i < n; i++)
        if (c[i] != (a[i] + b[i]) * 2.0f) {
            std::fprintf(stderr, "query: wrong result at %d: %g\n", i, c[i]);
            return 1;
        }
    cudaFree(da);
    cudaFree(db);
    cudaFree(dc);
    std::printf("query: ok (%d elements)\n", n);
    return 0;
}
