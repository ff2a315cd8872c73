/*
 * GPU test program of tests/gpu/part_account.sh (the call chain): a cudart
 * program shipped as PTX only whose first launch (and so the JIT inside
 * cuLibraryLoadData, under lazy loading) is reached through
 * main -> load_catalog -> open_shard. Built with -g and host -O0 so that each
 * function keeps its frame. Prints a checksum; exit 0 ok, 1 a CUDA error.
 */
#include <cstdio>

__global__ void shard_scan(int *out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        out[i] = i * 3 + 1;
}

__attribute__((noinline)) int open_shard(int *d, int n)
{
    shard_scan<<<(n + 127) / 128, 128>>>(d, n); /* account-call */
    return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}

__attribute__((noinline)) int load_catalog(int n)
{
    int *d = nullptr;
    if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess)
        return 1;
    int rc = open_shard(d, n); /* account-call */
    long sum = 0;
    int *h = new int[n];
    if (rc == 0 && cudaMemcpy(h, d, n * sizeof(int), cudaMemcpyDeviceToHost) == cudaSuccess)
        for (int i = 0; i < n; i++)
            sum += h[i];
    delete[] h;
    cudaFree(d);
    std::printf("checksum %ld\n", sum);
    return rc;
}

int main()
{
    return load_catalog(4096) == 0 ? 0 : 1; /* account-call */
}
