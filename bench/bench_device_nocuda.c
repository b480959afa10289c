/*
 * The measurement helpers of bench_device.h for builds without CUDA: every one
 * reports TR_ERR_NO_DEVICE, so that benchmark programs build and run their
 * CPU variants everywhere (with CUDA, bench_device.cu provides them).
 */
#include "bench_device.h"

#include <string.h>

static const char k_why[] = "libtransient was built without CUDA";

const char *tr_bench_last_error(void)
{
    return k_why;
}

tr_status tr_bench_device_info_get(int device, tr_bench_device_info *info)
{
    (void)device;
    if (info) memset(info, 0, sizeof *info);
    return TR_ERR_NO_DEVICE;
}

tr_status tr_bench_device_read_bw(int device, size_t bytes, int repeats,
                                  double *bytes_per_s)
{
    (void)device, (void)bytes, (void)repeats;
    if (bytes_per_s) *bytes_per_s = 0.0;
    return TR_ERR_NO_DEVICE;
}

tr_status tr_bench_device_copy_bw(int device, size_t bytes, int repeats,
                                  double *bytes_per_s)
{
    return tr_bench_device_read_bw(device, bytes, repeats, bytes_per_s);
}

tr_status tr_bench_h2d_bw(int device, size_t bytes, int repeats, double *bytes_per_s)
{
    return tr_bench_device_read_bw(device, bytes, repeats, bytes_per_s);
}

tr_status tr_bench_d2h_bw(int device, size_t bytes, int repeats, double *bytes_per_s)
{
    return tr_bench_device_read_bw(device, bytes, repeats, bytes_per_s);
}

tr_status tr_bench_device_fma_rate(int device, int repeats, double *flop_per_s)
{
    return tr_bench_device_read_bw(device, 0, repeats, flop_per_s);
}

tr_status tr_bench_dev_alloc(int device, size_t bytes, void **d_ptr)
{
    (void)device, (void)bytes;
    if (d_ptr) *d_ptr = NULL;
    return TR_ERR_NO_DEVICE;
}

tr_status tr_bench_dev_free(void *d_ptr)
{
    /* Nothing can have been allocated: freeing NULL succeeds as documented. */
    return d_ptr ? TR_ERR_NO_DEVICE : TR_OK;
}

tr_status tr_bench_dev_upload(void *d_dst, const void *h_src, size_t bytes)
{
    (void)d_dst, (void)h_src, (void)bytes;
    return TR_ERR_NO_DEVICE;
}

tr_status tr_bench_dev_download(void *h_dst, const void *d_src, size_t bytes)
{
    (void)h_dst, (void)d_src, (void)bytes;
    return TR_ERR_NO_DEVICE;
}

tr_status tr_bench_dev_fill(void *d_dst, int byte_value, size_t bytes)
{
    (void)d_dst, (void)byte_value, (void)bytes;
    return TR_ERR_NO_DEVICE;
}

tr_status tr_bench_dev_sync(int device)
{
    (void)device;
    return TR_ERR_NO_DEVICE;
}

tr_status tr_bench_timer_create(int device, tr_bench_timer **t)
{
    (void)device;
    if (t) *t = NULL;
    return TR_ERR_NO_DEVICE;
}

void tr_bench_timer_destroy(tr_bench_timer *t)
{
    (void)t;
}

tr_status tr_bench_timer_start(tr_bench_timer *t)
{
    (void)t;
    return TR_ERR_NO_DEVICE;
}

tr_status tr_bench_timer_stop(tr_bench_timer *t, double *seconds)
{
    (void)t;
    if (seconds) *seconds = 0.0;
    return TR_ERR_NO_DEVICE;
}
