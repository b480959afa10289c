/*
 * Host emulation of the CUDA subset that the boxcar CUDA code (cuda/boxcar/)
 * uses, so that all of it (kernels, launches and the streaming context) can
 * be compiled as C++ and checked on a machine without a GPU
 * (tests/core/boxcar/test_boxcar_cuda_host.cpp). Not used by the library.
 * The includer provides tr_fail and tr_clear, which common/cuda_check.h
 * brings in the CUDA build.
 *
 * Every block runs on the calling thread: its threads are cooperative
 * contexts (ucontext) that switch at __syncthreads (block barrier) and at the
 * warp exchanges of __shfl_down_sync, __shfl_xor_sync and __syncwarp (warp barrier), so
 * the kernels' barrier structure is exercised as written; a barrier that not every thread
 * reaches aborts. Device memory is host memory filled with NaN bytes on allocation, so
 * reads of never-written memory show up in the results. Static __shared__ variables
 * become function statics (blocks run one after another).
 */
#ifndef TRANSIENT_CUDA_BOXCAR_EMU_H
#define TRANSIENT_CUDA_BOXCAR_EMU_H

#include <ucontext.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __shared__ static

struct dim3 {
    unsigned x, y, z;
    dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1) : x(a), y(b), z(c) {}
};
struct uint3 {
    unsigned x, y, z;
};
struct float2 {
    float x, y;
};
struct float4 {
    float x, y, z, w;
};
struct double3 {
    double x, y, z;
};
inline float2 make_float2(float a, float b)
{
    return float2{a, b};
}
inline double3 make_double3(double a, double b, double c)
{
    return double3{a, b, c};
}

inline float __fadd_rn(float a, float b)
{
    return a + b;
}
inline float __fsub_rn(float a, float b)
{
    return a - b;
}
inline float __fmul_rn(float a, float b)
{
    return a * b;
}
inline float __fdiv_rn(float a, float b)
{
    return a / b;
}
inline float __fmaf_rn(float a, float b, float c)
{
    return std::fma(a, b, c);
}
inline int __float_as_int(float f)
{
    int i;
    std::memcpy(&i, &f, sizeof i);
    return i;
}
inline float __int_as_float(int i)
{
    float f;
    std::memcpy(&f, &i, sizeof f);
    return f;
}
inline int min(int a, int b)
{
    return a < b ? a : b;
}
inline int max(int a, int b)
{
    return a > b ? a : b;
}
inline int64_t min(int64_t a, int64_t b)
{
    return a < b ? a : b;
}
inline int64_t max(int64_t a, int64_t b)
{
    return a > b ? a : b;
}
inline unsigned long long atomicAdd(unsigned long long *p, unsigned long long v)
{
    const unsigned long long o = *p;
    *p += v;
    return o;
}

namespace tr_emu
{
struct ethread {
    ucontext_t ctx;
    uint3 tidx;
    int lin;
    int state; /* 0 runnable, 1 block barrier, 2 warp barrier, 3 done */
    std::vector<char> stack;
};
inline ucontext_t g_sched;
inline std::vector<ethread> g_threads;
inline ethread *g_cur = nullptr;
inline std::function<void()> g_body;
inline dim3 g_bdim, g_gdim;
inline uint3 g_bidx;
inline std::vector<char> g_dyn;
inline float g_xbuf[1024];

inline void entry()
{
    g_body();
    g_cur->state = 3;
    swapcontext(&g_cur->ctx, &g_sched);
}

inline void wait_state(int s)
{
    g_cur->state = s;
    swapcontext(&g_cur->ctx, &g_sched);
}

inline void run_block()
{
    const int nt = (int)(g_bdim.x * g_bdim.y * g_bdim.z);
    if (g_threads.size() < (size_t)nt) g_threads.resize(nt);
    for (int i = 0; i < nt; i++) {
        ethread &t = g_threads[i];
        t.lin = i;
        t.tidx =
            uint3{i % g_bdim.x, (i / g_bdim.x) % g_bdim.y, i / (g_bdim.x * g_bdim.y)};
        t.state = 0;
        if (t.stack.empty()) t.stack.resize(256 * 1024);
        getcontext(&t.ctx);
        t.ctx.uc_stack.ss_sp = t.stack.data();
        t.ctx.uc_stack.ss_size = t.stack.size();
        t.ctx.uc_link = nullptr;
        makecontext(&t.ctx, entry, 0);
    }
    for (;;) {
        for (int i = 0; i < nt; i++) {
            if (g_threads[i].state != 0) continue;
            g_cur = &g_threads[i];
            swapcontext(&g_sched, &g_threads[i].ctx);
        }
        int done = 0, atb = 0, atw = 0;
        for (int i = 0; i < nt; i++) {
            done += g_threads[i].state == 3;
            atb += g_threads[i].state == 1;
            atw += g_threads[i].state == 2;
        }
        if (done == nt) break;
        bool released = false;
        for (int w = 0; w * 32 < nt; w++) { /* warps whose live lanes all wait */
            int live = 0, waiting = 0;
            for (int l = w * 32; l < nt && l < w * 32 + 32; l++) {
                live += g_threads[l].state != 3;
                waiting += g_threads[l].state == 2;
            }
            if (live > 0 && waiting == live) {
                for (int l = w * 32; l < nt && l < w * 32 + 32; l++)
                    if (g_threads[l].state == 2) g_threads[l].state = 0;
                released = true;
            }
        }
        if (released) continue;
        if (atw == 0 && atb + done == nt) {
            for (int i = 0; i < nt; i++)
                if (g_threads[i].state == 1) g_threads[i].state = 0;
            continue;
        }
        fprintf(stderr,
                "emu: deadlock: %d at the block barrier, %d at warp barriers, %d done\n",
                atb, atw, done);
        abort();
    }
}

inline void launch(dim3 grid, dim3 block, size_t smem, std::function<void()> body)
{
    g_gdim = grid;
    g_bdim = block;
    g_body = std::move(body);
    g_dyn.assign(smem ? smem : 1, (char)0xff); /* exact: overruns show under ASan */
    for (unsigned z = 0; z < grid.z; z++)
        for (unsigned y = 0; y < grid.y; y++)
            for (unsigned x = 0; x < grid.x; x++) {
                g_bidx = uint3{x, y, z};
                run_block();
            }
}
} // namespace tr_emu

#define threadIdx (tr_emu::g_cur->tidx)
#define blockIdx  (tr_emu::g_bidx)
#define blockDim  (tr_emu::g_bdim)
#define gridDim   (tr_emu::g_gdim)

inline void __syncthreads()
{
    tr_emu::wait_state(1);
}

inline float __shfl_down_sync(unsigned, float v, int d)
{
    const int lin = tr_emu::g_cur->lin;
    tr_emu::g_xbuf[lin] = v;
    tr_emu::wait_state(2);
    const int lane = lin & 31;
    const float r = lane + d < 32 ? tr_emu::g_xbuf[lin + d] : v;
    tr_emu::wait_state(2);
    return r;
}

template <typename T> inline T __shfl_xor_sync(unsigned, T v, int d)
{
    static_assert(sizeof(T) == 4, "4-byte values");
    const int lin = tr_emu::g_cur->lin;
    std::memcpy(&tr_emu::g_xbuf[lin], &v, 4);
    tr_emu::wait_state(2);
    const int other = (lin & ~31) | ((lin & 31) ^ d);
    T r;
    std::memcpy(&r, &tr_emu::g_xbuf[other], 4);
    tr_emu::wait_state(2);
    return r;
}

/* Every lane's predicate as a bit of its warp (all 32 lanes take part). */
inline unsigned __ballot_sync(unsigned, int pred)
{
    const int lin = tr_emu::g_cur->lin;
    const unsigned b = pred ? 1u : 0u;
    std::memcpy(&tr_emu::g_xbuf[lin], &b, 4);
    tr_emu::wait_state(2);
    unsigned m = 0;
    for (int l = 0; l < 32; l++) {
        unsigned x;
        std::memcpy(&x, &tr_emu::g_xbuf[(lin & ~31) + l], 4);
        m |= x << l;
    }
    tr_emu::wait_state(2);
    return m;
}

inline int __popc(unsigned x)
{
    return __builtin_popcount(x);
}

inline void __syncwarp(unsigned = 0xffffffffu)
{
    tr_emu::wait_state(2);
}

/* Block-wide sums in place of CUB (every thread gets the result). */
template <int NT> struct block_ops {
    struct storage {
        float f[NT];
        unsigned u[NT];
        double d[NT];
        double3 d3[NT];
    };
    static float sum(storage &s, float v)
    {
        const int lin = tr_emu::g_cur->lin;
        s.f[lin] = v;
        __syncthreads();
        float r = 0.0f;
        for (int i = 0; i < NT; i++)
            r += s.f[i];
        __syncthreads();
        return r;
    }
    static unsigned usum(storage &s, unsigned v)
    {
        const int lin = tr_emu::g_cur->lin;
        s.u[lin] = v;
        __syncthreads();
        unsigned r = 0;
        for (int i = 0; i < NT; i++)
            r += s.u[i];
        __syncthreads();
        return r;
    }
    static double dsum(storage &s, double v)
    {
        const int lin = tr_emu::g_cur->lin;
        s.d[lin] = v;
        __syncthreads();
        double r = 0.0;
        for (int i = 0; i < NT; i++)
            r += s.d[i];
        __syncthreads();
        return r;
    }
    static double3 d3sum(storage &s, double3 v)
    {
        const int lin = tr_emu::g_cur->lin;
        s.d3[lin] = v;
        __syncthreads();
        double3 r{0.0, 0.0, 0.0};
        for (int i = 0; i < NT; i++) {
            r.x += s.d3[i].x;
            r.y += s.d3[i].y;
            r.z += s.d3[i].z;
        }
        __syncthreads();
        return r;
    }
    static float exclusive_sum(storage &s, float v)
    {
        const int lin = tr_emu::g_cur->lin;
        s.f[lin] = v;
        __syncthreads();
        float r = 0.0f;
        for (int i = 0; i < lin; i++)
            r += s.f[i];
        __syncthreads();
        return r;
    }
};

#define TR_DYN_SHARED(type, name)                                                        \
    type *name = reinterpret_cast<type *>(tr_emu::g_dyn.data())
#define TR_LAUNCH(kern, grid, block, smem, stream, ...)                                  \
    tr_emu::launch(dim3(grid), dim3(block), (smem), [&]() { kern(__VA_ARGS__); })

/* ---- runtime ------------------------------------------------------------ */

typedef int cudaError_t;
typedef int cudaStream_t_;
typedef cudaStream_t_ *cudaStream_t;
enum { cudaSuccess = 0, cudaErrorMemoryAllocation = 2 };
enum cudaMemcpyKind {
    cudaMemcpyHostToDevice,
    cudaMemcpyDeviceToHost,
    cudaMemcpyDeviceToDevice
};
enum { cudaStreamNonBlocking = 1 };
enum cudaDeviceAttr {
    cudaDevAttrMaxSharedMemoryPerBlockOptin,
    cudaDevAttrMultiProcessorCount
};
enum cudaFuncAttribute { cudaFuncAttributeMaxDynamicSharedMemorySize };
struct cudaFuncAttributes {
    size_t sharedSizeBytes;
};

inline const char *cudaGetErrorString(cudaError_t e)
{
    return e ? "emulated error" : "no error";
}
inline const char *cudaGetErrorName(cudaError_t e)
{
    return e ? "cudaErrorEmulated" : "cudaSuccess";
}
inline cudaError_t cudaGetLastError()
{
    return cudaSuccess;
}
inline cudaError_t cudaSetDevice(int)
{
    return cudaSuccess;
}
inline cudaError_t cudaGetDeviceCount(int *n)
{
    *n = 1;
    return cudaSuccess;
}
inline cudaError_t cudaDeviceGetAttribute(int *v, cudaDeviceAttr a, int)
{
    *v = a == cudaDevAttrMaxSharedMemoryPerBlockOptin ? 232448 : 132;
    return cudaSuccess;
}
inline cudaError_t cudaStreamCreateWithFlags(cudaStream_t *s, unsigned)
{
    static cudaStream_t_ dummy;
    *s = &dummy;
    return cudaSuccess;
}
inline cudaError_t cudaStreamDestroy(cudaStream_t)
{
    return cudaSuccess;
}
inline cudaError_t cudaStreamSynchronize(cudaStream_t)
{
    return cudaSuccess;
}
/* Every operation completes when issued: the caller's buffers are ready. */
inline cudaError_t tr_cuda_caller_ready()
{
    return cudaSuccess;
}
/* Events: every operation completes when issued, so there is nothing to wait for. */
typedef int cudaEvent_t_;
typedef cudaEvent_t_ *cudaEvent_t;
enum { cudaEventDisableTiming = 2 };
inline cudaError_t cudaEventCreateWithFlags(cudaEvent_t *e, unsigned)
{
    static cudaEvent_t_ dummy;
    *e = &dummy;
    return cudaSuccess;
}
inline cudaError_t cudaEventDestroy(cudaEvent_t)
{
    return cudaSuccess;
}
inline cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t)
{
    return cudaSuccess;
}
inline cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned)
{
    return cudaSuccess;
}
inline cudaError_t cudaEventSynchronize(cudaEvent_t)
{
    return cudaSuccess;
}
/* Every host buffer counts as pageable, so the staging path is the one run. */
enum cudaMemoryType { cudaMemoryTypeUnregistered = 0, cudaMemoryTypeHost = 1 };
struct cudaPointerAttributes {
    cudaMemoryType type;
};
inline cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *a, const void *)
{
    a->type = cudaMemoryTypeUnregistered;
    return cudaSuccess;
}
template <typename F> inline cudaError_t cudaFuncSetAttribute(F, cudaFuncAttribute, int v)
{
    return v <= 232448 ? cudaSuccess : 1;
}
template <typename F> inline cudaError_t cudaFuncGetAttributes(cudaFuncAttributes *a, F)
{
    a->sharedSizeBytes = 4096;
    return cudaSuccess;
}
inline cudaError_t cudaMalloc(void **p, size_t bytes)
{
    *p = malloc(bytes);
    if (!*p) return cudaErrorMemoryAllocation;
    memset(*p, 0xff, bytes); /* NaN floats: unwritten memory shows */
    return cudaSuccess;
}
inline cudaError_t cudaFree(void *p)
{
    free(p);
    return cudaSuccess;
}
inline cudaError_t cudaMallocHost(void **p, size_t bytes)
{
    *p = malloc(bytes);
    return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
inline cudaError_t cudaFreeHost(void *p)
{
    free(p);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpy(void *d, const void *s, size_t n, cudaMemcpyKind)
{
    memcpy(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpyAsync(void *d, const void *s, size_t n, cudaMemcpyKind,
                                   cudaStream_t)
{
    memcpy(d, s, n);
    return cudaSuccess;
}
inline cudaError_t cudaMemcpy2DAsync(void *d, size_t dp, const void *s, size_t sp,
                                     size_t w, size_t h, cudaMemcpyKind, cudaStream_t)
{
    for (size_t r = 0; r < h; r++)
        memcpy((char *)d + r * dp, (const char *)s + r * sp, w);
    return cudaSuccess;
}
inline cudaError_t cudaMemsetAsync(void *d, int v, size_t n, cudaStream_t)
{
    memset(d, v, n);
    return cudaSuccess;
}

#define TR_CUDA_TRY(call, err, what, label)                                              \
    do {                                                                                 \
        cudaError_t tr_e_ = (call);                                                      \
        if (tr_e_ != cudaSuccess) {                                                      \
            tr_fail((err), TR_ERR_CUDA, "%s: %s (%s)", (what),                           \
                    cudaGetErrorString(tr_e_), cudaGetErrorName(tr_e_));                 \
            goto label;                                                                  \
        }                                                                                \
    } while (0)

#endif /* TRANSIENT_CUDA_BOXCAR_EMU_H */
