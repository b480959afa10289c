/*
 * Owners of CUDA resources for the contexts in cuda/: device and pinned
 * buffers, streams and events, each released by its destructor, so that a
 * failing call can simply return (TR_CUDA_CHECK) and a context is torn down by
 * destroying it. Each owner converts to the raw handle it holds, so kernels
 * and runtime calls take it as they would the handle. Release errors are
 * ignored: they are not the caller's and leave nothing to undo.
 */
#ifndef TRANSIENT_CUDA_RAII_CUH
#define TRANSIENT_CUDA_RAII_CUH

/* The boxcar host emulation (boxcar/boxcar_emu.h) provides the runtime calls
 * used here. */
#ifndef TR_BOXCAR_HOST_EMU
#include <cuda_runtime.h>
#endif

#include <algorithm>
#include <cstddef>

/* Global memory (cudaMalloc). */
struct tr_cuda_device_memory {
    static cudaError_t alloc(void **p, size_t bytes) { return cudaMalloc(p, bytes); }
    static void release(void *p) { (void)cudaFree(p); }
};

/* Page-locked host memory (cudaMallocHost). */
struct tr_cuda_pinned_memory {
    static cudaError_t alloc(void **p, size_t bytes) { return cudaMallocHost(p, bytes); }
    static void release(void *p) { (void)cudaFreeHost(p); }
};

/* An array of T in the memory of Mem, owned; empty until alloc(). */
template <typename T, typename Mem> class tr_cuda_buffer
{
  public:
    tr_cuda_buffer() = default;
    tr_cuda_buffer(const tr_cuda_buffer &) = delete;
    tr_cuda_buffer &operator=(const tr_cuda_buffer &) = delete;
    ~tr_cuda_buffer() { reset(); }

    /* Allocate count elements (at least one), releasing what was held. */
    cudaError_t alloc(size_t count)
    {
        reset();
        void *p = nullptr;
        const cudaError_t e = Mem::alloc(&p, std::max<size_t>(count, 1) * sizeof(T));
        if (e == cudaSuccess) p_ = (T *)p;
        return e;
    }
    void reset()
    {
        if (p_) Mem::release(p_);
        p_ = nullptr;
    }
    T *get() const { return p_; }
    operator T *() const { return p_; }
    T *operator->() const { return p_; }

  private:
    T *p_ = nullptr;
};

template <typename T> using tr_device_buffer = tr_cuda_buffer<T, tr_cuda_device_memory>;
template <typename T> using tr_pinned_buffer = tr_cuda_buffer<T, tr_cuda_pinned_memory>;

/* A runtime handle (stream, event), owned; null until create(). */
template <typename H, cudaError_t (*Create)(H *, unsigned), cudaError_t (*Destroy)(H)>
class tr_cuda_handle
{
  public:
    tr_cuda_handle() = default;
    tr_cuda_handle(const tr_cuda_handle &) = delete;
    tr_cuda_handle &operator=(const tr_cuda_handle &) = delete;
    ~tr_cuda_handle()
    {
        if (h_) (void)Destroy(h_);
    }
    cudaError_t create(unsigned flags) { return Create(&h_, flags); }
    operator H() const { return h_; }
    /* Give the handle up to a new owner. */
    H release()
    {
        H h = h_;
        h_ = nullptr;
        return h;
    }

  private:
    H h_ = nullptr;
};

/* A stream (null: the default stream until created) and an event. */
using tr_cuda_stream =
    tr_cuda_handle<cudaStream_t, cudaStreamCreateWithFlags, cudaStreamDestroy>;
using tr_cuda_event =
    tr_cuda_handle<cudaEvent_t, cudaEventCreateWithFlags, cudaEventDestroy>;

#endif /* TRANSIENT_CUDA_RAII_CUH */
