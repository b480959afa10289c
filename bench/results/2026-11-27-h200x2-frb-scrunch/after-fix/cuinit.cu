// How long the CUDA runtime takes to make its first context on this host.
#include <chrono>
#include <cstdio>
#include <cuda_runtime.h>
int main()
{
    auto t0 = std::chrono::steady_clock::now();
    cudaError_t e = cudaFree(0);
    auto t1 = std::chrono::steady_clock::now();
    void *p = nullptr;
    cudaError_t e2 = cudaMalloc(&p, 256 << 20);
    auto t2 = std::chrono::steady_clock::now();
    void *h = nullptr;
    cudaError_t e3 = cudaMallocHost(&h, 64 << 20);
    auto t3 = std::chrono::steady_clock::now();
    std::printf("{\"context_s\":%.4f,\"malloc_256MiB_s\":%.4f,\"mallochost_64MiB_s\":%."
                "4f,\"ok\":%d}\n",
                std::chrono::duration<double>(t1 - t0).count(),
                std::chrono::duration<double>(t2 - t1).count(),
                std::chrono::duration<double>(t3 - t2).count(),
                e == cudaSuccess && e2 == cudaSuccess && e3 == cudaSuccess);
    return 0;
}
