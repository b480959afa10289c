// Ways to move pageable host memory to the device (bench/results/*/h2d_options.txt).
// Not part of the build; on a GPU host: nvcc -O2 -std=c++17 -arch=sm_90 h2d_options.cu -o
// h2d_options
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
static double now()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}
int main()
{
    size_t total = (size_t)1 << 30, batch = (size_t)16 << 20; // 1 GiB in 16 MiB batches
    char *src = (char *)malloc(total);
    memset(src, 1, total);
    char *pin[2];
    cudaMallocHost(&pin[0], batch);
    cudaMallocHost(&pin[1], batch);
    char *dev[2];
    cudaMalloc(&dev[0], batch);
    cudaMalloc(&dev[1], batch);
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    cudaEvent_t ev[2];
    cudaEventCreate(&ev[0]);
    cudaEventCreate(&ev[1]);
    for (int rep = 0; rep < 2; rep++) {
        double t = now();
        for (size_t o = 0; o < total; o += batch)
            memcpy(pin[0], src + o, batch);
        printf("memcpy to pinned, 1 thread: %.1f GB/s\n", total / (now() - t) / 1e9);
        t = now();
        for (size_t o = 0; o < total; o += batch)
            cudaMemcpy(dev[0], src + o, batch, cudaMemcpyHostToDevice);
        printf("cudaMemcpy from pageable: %.1f GB/s\n", total / (now() - t) / 1e9);
        t = now();
        for (size_t o = 0, k = 0; o < total; o += batch, k++) {
            cudaEventSynchronize(ev[k % 2]);
            memcpy(pin[k % 2], src + o, batch);
            cudaMemcpyAsync(dev[k % 2], pin[k % 2], batch, cudaMemcpyHostToDevice, s);
            cudaEventRecord(ev[k % 2], s);
        }
        cudaStreamSynchronize(s);
        printf("double-buffered staging, 1 thread: %.1f GB/s\n",
               total / (now() - t) / 1e9);
        for (int nt : {2, 4, 8}) {
            t = now();
            for (size_t o = 0, k = 0; o < total; o += batch, k++) {
                cudaEventSynchronize(ev[k % 2]);
                std::vector<std::thread> th;
                for (int i = 0; i < nt; i++)
                    th.emplace_back([&, i] {
                        memcpy(pin[k % 2] + i * batch / nt, src + o + i * batch / nt,
                               batch / nt);
                    });
                for (auto &x : th)
                    x.join();
                cudaMemcpyAsync(dev[k % 2], pin[k % 2], batch, cudaMemcpyHostToDevice, s);
                cudaEventRecord(ev[k % 2], s);
            }
            cudaStreamSynchronize(s);
            printf("double-buffered staging, %d threads: %.1f GB/s\n", nt,
                   total / (now() - t) / 1e9);
        }
        t = now();
        cudaError_t e = cudaHostRegister(src, total, cudaHostRegisterDefault);
        double treg = now() - t;
        t = now();
        for (size_t o = 0; o < total; o += batch)
            cudaMemcpyAsync(dev[(o / batch) % 2], src + o, batch, cudaMemcpyHostToDevice,
                            s);
        cudaStreamSynchronize(s);
        printf("registered 1 GiB (%s, %.1f ms): %.1f GB/s\n", cudaGetErrorString(e),
               treg * 1e3, total / (now() - t) / 1e9);
        cudaHostUnregister(src);
    }
    return 0;
}
