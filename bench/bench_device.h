/*
 * Device measurement helpers of the benchmarks and GPU tests of libtransient
 * (library transient_bench_device, not installed): the ceilings a detector is
 * judged against (device memory bandwidth, host/device transfer bandwidth,
 * FP32 FMA rate) and thin device-memory helpers, so that the C programs that
 * use them need no CUDA headers. bench_device.cu implements them on the CUDA
 * runtime, bench_device_nocuda.c for builds without CUDA.
 *
 * Every function returns TR_ERR_NO_DEVICE when CUDA was not built or no
 * device is usable. Rates are medians over `repeats` timed runs after one
 * untimed warm-up run, timed with CUDA events. Device memory is allocated with
 * plain cudaMalloc. These helpers make `device` the calling thread's current
 * CUDA device. They are meant for one benchmarking thread: the message of
 * tr_bench_last_error() is shared by all threads.
 */
#ifndef TRANSIENT_BENCH_DEVICE_H
#define TRANSIENT_BENCH_DEVICE_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Facts about one CUDA device. */
typedef struct {
    char name[256];          /* e.g. "NVIDIA H100 80GB HBM3" */
    int driver_version;      /* CUDA version the driver supports, e.g. 13000 */
    int runtime_version;     /* CUDA runtime the library uses, e.g. 13000 */
    int cc_major, cc_minor;  /* compute capability */
    int sm_count;            /* multiprocessors */
    size_t global_mem_bytes; /* device memory */
    size_t l2_bytes;         /* L2 cache */
} tr_bench_device_info;

tr_status tr_bench_device_info_get(int device, tr_bench_device_info *info);

/* Read-only reduction over `bytes` of device memory: bytes read per second. */
tr_status tr_bench_device_read_bw(int device, size_t bytes, int repeats,
                                  double *bytes_per_s);

/* Device-to-device copy of `bytes`: bytes read plus bytes written per second. */
tr_status tr_bench_device_copy_bw(int device, size_t bytes, int repeats,
                                  double *bytes_per_s);

/* Copies of `bytes` from pinned host memory to the device, and back. */
tr_status tr_bench_h2d_bw(int device, size_t bytes, int repeats, double *bytes_per_s);
tr_status tr_bench_d2h_bw(int device, size_t bytes, int repeats, double *bytes_per_s);

/* FP32 fused multiply-adds from registers, counted as 2 operations each. */
tr_status tr_bench_device_fma_rate(int device, int repeats, double *flop_per_s);

/* ---- device memory, so that callers need no CUDA headers ------------- */

tr_status tr_bench_dev_alloc(int device, size_t bytes, void **d_ptr);
tr_status tr_bench_dev_free(void *d_ptr); /* NULL is fine */
tr_status tr_bench_dev_upload(void *d_dst, const void *h_src, size_t bytes);
tr_status tr_bench_dev_download(void *h_dst, const void *d_src, size_t bytes);
tr_status tr_bench_dev_fill(void *d_dst, int byte_value, size_t bytes);
tr_status tr_bench_dev_sync(int device); /* wait for all work on the device */

/* ---- event timing ------------------------------------------------------
 * Events are recorded on the legacy default stream, which waits for work
 * already issued to blocking streams; calls that return only when their device
 * work is complete (tr_edges_process_device) are timed correctly in between. */
typedef struct tr_bench_timer tr_bench_timer;

tr_status tr_bench_timer_create(int device, tr_bench_timer **t);
void tr_bench_timer_destroy(tr_bench_timer *t);
tr_status tr_bench_timer_start(tr_bench_timer *t);
/* Record the stop event, wait for it, and return the seconds since start. */
tr_status tr_bench_timer_stop(tr_bench_timer *t, double *seconds);

/* Reason of the last failed tr_bench_* call ("" if none). */
const char *tr_bench_last_error(void);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_BENCH_DEVICE_H */
