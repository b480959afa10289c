/*
 * The measurement helpers of bench_device.h on the CUDA runtime. Every CUDA
 * call is checked; nothing is printed: failures come back as tr_status codes,
 * with the reason in tr_bench_last_error().
 */
#include "bench_device.h"

#include "common/cuda_raii.cuh"
#include "common/cuda_status.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <vector>

namespace
{

char g_bench_error[256];

tr_status bench_fail(cudaError_t e, const char *what)
{
    snprintf(g_bench_error, sizeof g_bench_error, "%s: %s", what, cudaGetErrorString(e));
    (void)cudaGetLastError();
    return tr_cuda_status(e);
}

tr_status bench_invalid(const char *what)
{
    snprintf(g_bench_error, sizeof g_bench_error, "%s", what);
    return TR_ERR_INVALID;
}

/* Check one CUDA call; on failure record it and return its status. */
#define TR_BENCH_TRY(call)                                                               \
    do {                                                                                 \
        const cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess) return bench_fail(e_, #call);                             \
    } while (0)

double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    const size_t k = v.size() / 2;
    return v.size() % 2 ? v[k] : 0.5 * (v[k - 1] + v[k]);
}

tr_status select_device(int device)
{
    int n = 0;
    TR_BENCH_TRY(cudaGetDeviceCount(&n));
    if (device < 0 || device >= n) return bench_invalid("device index out of range");
    TR_BENCH_TRY(cudaSetDevice(device));
    return TR_OK;
}

int sm_count(int device)
{
    int v = 0;
    if (cudaDeviceGetAttribute(&v, cudaDevAttrMultiProcessorCount, device) !=
        cudaSuccess) {
        (void)cudaGetLastError();
        v = 0;
    }
    return v > 0 ? v : 1;
}

/* Read-only reduction: each thread keeps four 16-byte loads in flight and
 * folds them into a sum that one store per block keeps alive. */
constexpr int kReadBlock = 256;

__global__ void __launch_bounds__(kReadBlock)
    read_kernel(const float4 *__restrict__ in, size_t n4, float *__restrict__ sink)
{
    const size_t stride = (size_t)gridDim.x * kReadBlock;
    size_t i = (size_t)blockIdx.x * kReadBlock + threadIdx.x;
    float acc = 0.0f;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const float4 a = in[i], b = in[i + stride], c = in[i + 2 * stride],
                     d = in[i + 3 * stride];
        acc += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) +
               (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
    }
    for (; i < n4; i += stride) {
        const float4 a = in[i];
        acc += a.x + a.y + a.z + a.w;
    }
    __shared__ float part[kReadBlock];
    part[threadIdx.x] = acc;
    __syncthreads();
    for (int s = kReadBlock / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) part[threadIdx.x] += part[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) sink[blockIdx.x] = part[0];
}

/* Eight independent FMA chains per thread, all in registers. */
constexpr int kFmaBlock = 256;
constexpr int kFmaIters = 8192;

__global__ void __launch_bounds__(kFmaBlock) fma_kernel(float a, float b, float *out)
{
    float v[8];
#pragma unroll
    for (int k = 0; k < 8; k++)
        v[k] = (float)(threadIdx.x + k);
    for (int it = 0; it < kFmaIters; it++) {
#pragma unroll
        for (int k = 0; k < 8; k++)
            v[k] = fmaf(v[k], a, b);
    }
    float s = 0.0f;
#pragma unroll
    for (int k = 0; k < 8; k++)
        s += v[k];
    out[(size_t)blockIdx.x * kFmaBlock + threadIdx.x] = s;
}

/* Time `repeats` runs of op() (after one warm-up) on the default stream. */
template <class Op> tr_status time_median(int repeats, Op op, double *seconds)
{
    if (repeats < 1) repeats = 1;
    tr_cuda_event start, stop;
    TR_BENCH_TRY(start.create(cudaEventDefault));
    TR_BENCH_TRY(stop.create(cudaEventDefault));
    tr_status s = op();
    if (s != TR_OK) return s;
    TR_BENCH_TRY(cudaDeviceSynchronize());
    std::vector<double> t;
    for (int r = 0; r < repeats; r++) {
        TR_BENCH_TRY(cudaEventRecord(start, 0));
        if ((s = op()) != TR_OK) return s;
        TR_BENCH_TRY(cudaEventRecord(stop, 0));
        TR_BENCH_TRY(cudaEventSynchronize(stop));
        float ms = 0.0f;
        TR_BENCH_TRY(cudaEventElapsedTime(&ms, start, stop));
        t.push_back(1e-3 * (double)ms);
    }
    *seconds = median(t);
    return TR_OK;
}

} // namespace

extern "C" const char *tr_bench_last_error(void)
{
    return g_bench_error;
}

extern "C" tr_status tr_bench_device_info_get(int device, tr_bench_device_info *info)
{
    if (info == NULL) return bench_invalid("info is NULL");
    memset(info, 0, sizeof *info);
    tr_status s = select_device(device);
    if (s != TR_OK) return s;
    cudaDeviceProp p;
    TR_BENCH_TRY(cudaGetDeviceProperties(&p, device));
    TR_BENCH_TRY(cudaDriverGetVersion(&info->driver_version));
    TR_BENCH_TRY(cudaRuntimeGetVersion(&info->runtime_version));
    snprintf(info->name, sizeof info->name, "%s", p.name);
    info->cc_major = p.major;
    info->cc_minor = p.minor;
    info->sm_count = p.multiProcessorCount;
    info->global_mem_bytes = p.totalGlobalMem;
    info->l2_bytes = (size_t)p.l2CacheSize;
    return TR_OK;
}

extern "C" tr_status tr_bench_device_read_bw(int device, size_t bytes, int repeats,
                                             double *bytes_per_s)
{
    if (bytes_per_s == NULL || bytes < 16)
        return bench_invalid("bad read-bandwidth arguments");
    tr_status s = select_device(device);
    if (s != TR_OK) return s;
    const size_t n4 = bytes / 16;
    /* Enough blocks to fill every multiprocessor several times over. */
    const int blocks = 8 * sm_count(device);
    tr_device_buffer<float4> in;
    tr_device_buffer<float> sink;
    TR_BENCH_TRY(in.alloc(n4));
    TR_BENCH_TRY(sink.alloc((size_t)blocks));
    TR_BENCH_TRY(cudaMemset(in, 0x3c, n4 * 16)); /* small finite floats, not zeros */
    double sec = 0.0;
    s = time_median(
        repeats,
        [&]() -> tr_status {
            read_kernel<<<blocks, kReadBlock>>>(in, n4, sink);
            TR_BENCH_TRY(cudaGetLastError());
            return TR_OK;
        },
        &sec);
    if (s != TR_OK) return s;
    *bytes_per_s = (double)(n4 * 16) / sec;
    return TR_OK;
}

extern "C" tr_status tr_bench_device_copy_bw(int device, size_t bytes, int repeats,
                                             double *bytes_per_s)
{
    if (bytes_per_s == NULL || bytes == 0)
        return bench_invalid("bad copy-bandwidth arguments");
    tr_status s = select_device(device);
    if (s != TR_OK) return s;
    tr_device_buffer<unsigned char> a, b;
    TR_BENCH_TRY(a.alloc(bytes));
    TR_BENCH_TRY(b.alloc(bytes));
    TR_BENCH_TRY(cudaMemset(a, 0x3c, bytes));
    double sec = 0.0;
    s = time_median(
        repeats,
        [&]() -> tr_status {
            TR_BENCH_TRY(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, 0));
            return TR_OK;
        },
        &sec);
    if (s != TR_OK) return s;
    *bytes_per_s = 2.0 * (double)bytes / sec;
    return TR_OK;
}

static tr_status transfer_bw(int device, size_t bytes, int repeats, bool to_device,
                             double *bytes_per_s)
{
    if (bytes_per_s == NULL || bytes == 0)
        return bench_invalid("bad transfer-bandwidth arguments");
    tr_status s = select_device(device);
    if (s != TR_OK) return s;
    tr_device_buffer<unsigned char> d;
    tr_pinned_buffer<unsigned char> h;
    TR_BENCH_TRY(d.alloc(bytes));
    TR_BENCH_TRY(h.alloc(bytes));
    memset(h, 0x3c, bytes); /* touch every page before timing */
    TR_BENCH_TRY(cudaMemset(d, 0x3c, bytes));
    double sec = 0.0;
    s = time_median(
        repeats,
        [&]() -> tr_status {
            if (to_device)
                TR_BENCH_TRY(cudaMemcpyAsync(d, h, bytes, cudaMemcpyHostToDevice, 0));
            else
                TR_BENCH_TRY(cudaMemcpyAsync(h, d, bytes, cudaMemcpyDeviceToHost, 0));
            return TR_OK;
        },
        &sec);
    if (s != TR_OK) return s;
    *bytes_per_s = (double)bytes / sec;
    return TR_OK;
}

extern "C" tr_status tr_bench_h2d_bw(int device, size_t bytes, int repeats,
                                     double *bytes_per_s)
{
    return transfer_bw(device, bytes, repeats, true, bytes_per_s);
}

extern "C" tr_status tr_bench_d2h_bw(int device, size_t bytes, int repeats,
                                     double *bytes_per_s)
{
    return transfer_bw(device, bytes, repeats, false, bytes_per_s);
}

extern "C" tr_status tr_bench_device_fma_rate(int device, int repeats, double *flop_per_s)
{
    if (flop_per_s == NULL) return bench_invalid("flop_per_s is NULL");
    tr_status s = select_device(device);
    if (s != TR_OK) return s;
    const int blocks = 32 * sm_count(device);
    const size_t threads = (size_t)blocks * kFmaBlock;
    tr_device_buffer<float> out;
    TR_BENCH_TRY(out.alloc(threads));
    double sec = 0.0;
    s = time_median(
        repeats,
        [&]() -> tr_status {
            /* a < 1 keeps the chains finite and data-dependent. */
            fma_kernel<<<blocks, kFmaBlock>>>(0.999f, 0.001f, out);
            TR_BENCH_TRY(cudaGetLastError());
            return TR_OK;
        },
        &sec);
    if (s != TR_OK) return s;
    *flop_per_s = 2.0 * 8.0 * kFmaIters * (double)threads / sec;
    return TR_OK;
}

extern "C" tr_status tr_bench_dev_alloc(int device, size_t bytes, void **d_ptr)
{
    if (d_ptr == NULL) return bench_invalid("d_ptr is NULL");
    *d_ptr = NULL;
    tr_status s = select_device(device);
    if (s != TR_OK) return s;
    TR_BENCH_TRY(cudaMalloc(d_ptr, bytes > 0 ? bytes : 1));
    return TR_OK;
}

extern "C" tr_status tr_bench_dev_free(void *d_ptr)
{
    if (d_ptr) TR_BENCH_TRY(cudaFree(d_ptr));
    return TR_OK;
}

extern "C" tr_status tr_bench_dev_upload(void *d_dst, const void *h_src, size_t bytes)
{
    if (bytes == 0) return TR_OK;
    if (d_dst == NULL || h_src == NULL) return bench_invalid("NULL buffer");
    TR_BENCH_TRY(cudaMemcpy(d_dst, h_src, bytes, cudaMemcpyHostToDevice));
    return TR_OK;
}

extern "C" tr_status tr_bench_dev_download(void *h_dst, const void *d_src, size_t bytes)
{
    if (bytes == 0) return TR_OK;
    if (h_dst == NULL || d_src == NULL) return bench_invalid("NULL buffer");
    TR_BENCH_TRY(cudaMemcpy(h_dst, d_src, bytes, cudaMemcpyDeviceToHost));
    return TR_OK;
}

extern "C" tr_status tr_bench_dev_fill(void *d_dst, int byte_value, size_t bytes)
{
    if (bytes == 0) return TR_OK;
    if (d_dst == NULL) return bench_invalid("NULL buffer");
    TR_BENCH_TRY(cudaMemset(d_dst, byte_value, bytes));
    TR_BENCH_TRY(cudaDeviceSynchronize());
    return TR_OK;
}

extern "C" tr_status tr_bench_dev_sync(int device)
{
    tr_status s = select_device(device);
    if (s != TR_OK) return s;
    TR_BENCH_TRY(cudaDeviceSynchronize());
    return TR_OK;
}

struct tr_bench_timer {
    int device;
    cudaEvent_t start, stop;
};

extern "C" tr_status tr_bench_timer_create(int device, tr_bench_timer **t)
{
    if (t == NULL) return bench_invalid("t is NULL");
    *t = NULL;
    tr_status s = select_device(device);
    if (s != TR_OK) return s;
    tr_cuda_event start, stop;
    TR_BENCH_TRY(start.create(cudaEventDefault));
    TR_BENCH_TRY(stop.create(cudaEventDefault));
    tr_bench_timer *q = new (std::nothrow) tr_bench_timer;
    if (q == NULL) {
        snprintf(g_bench_error, sizeof g_bench_error, "out of host memory");
        return TR_ERR_NOMEM;
    }
    q->device = device;
    q->start = start.release(); /* now owned by q */
    q->stop = stop.release();
    *t = q;
    return TR_OK;
}

extern "C" void tr_bench_timer_destroy(tr_bench_timer *t)
{
    if (t == NULL) return;
    (void)cudaEventDestroy(t->start);
    (void)cudaEventDestroy(t->stop);
    delete t;
}

extern "C" tr_status tr_bench_timer_start(tr_bench_timer *t)
{
    if (t == NULL) return bench_invalid("t is NULL");
    TR_BENCH_TRY(cudaSetDevice(t->device));
    TR_BENCH_TRY(cudaEventRecord(t->start, 0));
    return TR_OK;
}

extern "C" tr_status tr_bench_timer_stop(tr_bench_timer *t, double *seconds)
{
    if (t == NULL || seconds == NULL) return bench_invalid("NULL argument");
    TR_BENCH_TRY(cudaSetDevice(t->device));
    TR_BENCH_TRY(cudaEventRecord(t->stop, 0));
    TR_BENCH_TRY(cudaEventSynchronize(t->stop));
    float ms = 0.0f;
    TR_BENCH_TRY(cudaEventElapsedTime(&ms, t->start, t->stop));
    *seconds = 1e-3 * (double)ms;
    return TR_OK;
}
