/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: |z|^2 on the GPU for power_cf. Compiled with --fmad=false so
 * that re*re + im*im rounds as on the CPU.
 */

#include "power/power_cuda.h"

#include <cuda_runtime.h>

namespace gr
{
namespace transient
{
namespace detail
{

struct power_cuda {
    int device;
    std::size_t max_values;
    cudaStream_t stream;
    float2 *in; // staging of the input
    float *out; // staging of a host output
};

namespace
{

__global__ void power_kernel(const float2 *__restrict__ in, float *__restrict__ out,
                             std::size_t n)
{
    const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
    for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
         i < n; i += stride) {
        const float2 z = in[i];
        out[i] = z.x * z.x + z.y * z.y;
    }
}

bool fail(std::string *err, const char *call, cudaError_t e)
{
    if (err)
        *err = std::string("power_cf: ") + call + " failed: " + cudaGetErrorString(e) +
               " (" + cudaGetErrorName(e) + ")";
    return false;
}

} // namespace

#define TR_POW_TRY(call)                                                                 \
    do {                                                                                 \
        const cudaError_t tr_e_ = (call);                                                \
        if (tr_e_ != cudaSuccess) return fail(err, #call, tr_e_);                        \
    } while (0)

static bool power_cuda_init(power_cuda *p, std::string *err)
{
    TR_POW_TRY(cudaSetDevice(p->device));
    TR_POW_TRY(cudaStreamCreateWithFlags(&p->stream, cudaStreamNonBlocking));
    TR_POW_TRY(
        cudaMalloc(reinterpret_cast<void **>(&p->in), p->max_values * sizeof(float2)));
    TR_POW_TRY(
        cudaMalloc(reinterpret_cast<void **>(&p->out), p->max_values * sizeof(float)));
    return true;
}

power_cuda *power_cuda_create(int device, std::size_t max_values, std::string *err)
{
    power_cuda *p = new power_cuda{device, max_values, nullptr, nullptr, nullptr};
    if (!power_cuda_init(p, err)) {
        power_cuda_destroy(p);
        return nullptr;
    }
    return p;
}

void power_cuda_destroy(power_cuda *p)
{
    if (!p) return;
    if (cudaSetDevice(p->device) == cudaSuccess) {
        if (p->in) cudaFree(p->in);
        if (p->out) cudaFree(p->out);
        if (p->stream) cudaStreamDestroy(p->stream);
    }
    delete p;
}

bool power_cuda_run(power_cuda *p, const float *in, std::size_t n, float *out,
                    bool out_on_device, std::string *err)
{
    TR_POW_TRY(cudaSetDevice(p->device));
    std::size_t done = 0;
    while (done < n) {
        const std::size_t m = n - done < p->max_values ? n - done : p->max_values;
        TR_POW_TRY(cudaMemcpyAsync(p->in, in + 2 * done, m * sizeof(float2),
                                   cudaMemcpyHostToDevice, p->stream));
        float *dst = out_on_device ? out + done : p->out;
        const unsigned int threads = 256;
        std::size_t blocks = (m + threads - 1) / threads;
        if (blocks > 65535) blocks = 65535;
        power_kernel<<<static_cast<unsigned int>(blocks), threads, 0, p->stream>>>(
            p->in, dst, m);
        TR_POW_TRY(cudaGetLastError());
        if (!out_on_device)
            TR_POW_TRY(cudaMemcpyAsync(out + done, p->out, m * sizeof(float),
                                       cudaMemcpyDeviceToHost, p->stream));
        // The staging is reused by the next piece, and out must be complete
        // when the block returns from work().
        TR_POW_TRY(cudaStreamSynchronize(p->stream));
        done += m;
    }
    return true;
}

} // namespace detail
} // namespace transient
} // namespace gr
