/*
 * The host side of every CUDA context's data path: whether a caller's buffer is
 * page-locked (then the GPU copies it directly), how many staging threads to
 * use, and the parallel copy of pageable host memory into pinned staging
 * buffers (rows with pitches for time-major multi-channel data).
 *
 * One thread cannot fill PCIe from pageable memory (docs/architecture.md, data
 * path): the calling thread copies one slice itself and `threads - 1` workers
 * copy the others.
 */
#ifndef TRANSIENT_CUDA_HOST_STAGER_CUH
#define TRANSIENT_CUDA_HOST_STAGER_CUH

/* The boxcar host emulation (boxcar/boxcar_emu.h) provides the runtime calls used here.
 */
#ifndef TR_BOXCAR_HOST_EMU
#include <cuda_runtime.h>
#endif

#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

/* True when host pointer p is page-locked (cudaHostAlloc, cudaHostRegister). */
static inline bool tr_host_is_pinned(const void *p)
{
    cudaPointerAttributes a;
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return a.type == cudaMemoryTypeHost;
}

/* Staging threads: half the cores, 1 to 4. */
static inline int tr_host_stager_threads()
{
    const unsigned t = std::thread::hardware_concurrency() / 2;
    return t < 1 ? 1 : (t > 4 ? 4 : (int)t);
}

class tr_host_stager
{
  public:
    /* threads >= 1; threads - 1 workers are started. */
    explicit tr_host_stager(int threads) : nthreads_(threads < 1 ? 1 : threads)
    {
        for (int i = 1; i < nthreads_; i++)
            workers_.emplace_back([this, i] { work(i); });
    }

    ~tr_host_stager()
    {
        {
            std::lock_guard<std::mutex> lk(m_);
            stop_ = true;
        }
        cv_.notify_all();
        for (auto &t : workers_)
            t.join();
    }

    tr_host_stager(const tr_host_stager &) = delete;
    tr_host_stager &operator=(const tr_host_stager &) = delete;

    /* Copy bytes from src to dst using all threads; returns when done. */
    void copy(void *dst, const void *src, size_t bytes)
    {
        /* Small copies are not worth waking anyone. */
        if (nthreads_ == 1 || bytes < ((size_t)1 << 20)) {
            std::memcpy(dst, src, bytes);
            return;
        }
        {
            std::lock_guard<std::mutex> lk(m_);
            dst_ = static_cast<char *>(dst);
            src_ = static_cast<const char *>(src);
            bytes_ = bytes;
            pending_ = nthreads_ - 1;
            generation_++;
        }
        cv_.notify_all();
        slice(0);
        std::unique_lock<std::mutex> lk(m_);
        done_.wait(lk, [this] { return pending_ == 0; });
    }

    /* Copy rows (rows x bytes, pitches in bytes) using all threads. */
    void copy_rows(void *dst, size_t dpitch, const void *src, size_t spitch, size_t bytes,
                   size_t rows)
    {
        if (dpitch == bytes && spitch == bytes) {
            copy(dst, src, bytes * rows);
            return;
        }
        for (size_t r = 0; r < rows; r++)
            copy((char *)dst + r * dpitch, (const char *)src + r * spitch, bytes);
    }

  private:
    /* Slice i of the current copy, 64-byte aligned boundaries. */
    void slice(int i)
    {
        const size_t per = (bytes_ / nthreads_ + 63) & ~(size_t)63;
        const size_t a = per * i < bytes_ ? per * i : bytes_;
        const size_t b = per * (i + 1) < bytes_ ? per * (i + 1) : bytes_;
        if (b > a) std::memcpy(dst_ + a, src_ + a, b - a);
    }

    void work(int i)
    {
        unsigned long seen = 0;
        for (;;) {
            {
                std::unique_lock<std::mutex> lk(m_);
                cv_.wait(lk, [&] { return stop_ || generation_ != seen; });
                if (stop_) return;
                seen = generation_;
            }
            slice(i);
            std::lock_guard<std::mutex> lk(m_);
            if (--pending_ == 0) done_.notify_one();
        }
    }

    const int nthreads_;
    std::vector<std::thread> workers_;
    std::mutex m_;
    std::condition_variable cv_, done_;
    char *dst_ = nullptr;
    const char *src_ = nullptr;
    size_t bytes_ = 0;
    int pending_ = 0;
    unsigned long generation_ = 0;
    bool stop_ = false;
};

#endif /* TRANSIENT_CUDA_HOST_STAGER_CUH */
