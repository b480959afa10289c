/*
 * CUDA backend of the SPIIR filter bank: C interface between lib/core and the
 * kernels in cuda/spiir/. The context owns the device copy of the bank, the
 * filter states, the delay line (the last max_delay input samples) and its
 * stream; every CUDA call is checked and reported through tr_error.
 */
#ifndef TRANSIENT_CUDA_SPIIR_CUDA_H
#define TRANSIENT_CUDA_SPIIR_CUDA_H

#include <transient/spiir.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A validated bank as the backend reads it (read at creation only): template
 * t is filters[first[t] .. first[t + 1]). */
typedef struct {
    uint32_t ntemplates;
    double dt;                      /* sampling interval */
    const uint64_t *first;          /* ntemplates + 1 offsets */
    const tr_spiir_filter *filters; /* all filters, template by template */
    uint64_t total;                 /* first[ntemplates] */
    int32_t max_delay;              /* largest delay */
    int whole_batches;              /* FAST: never segmented time (0: the context
                                       decides from the bank's size) */
} tr_cuda_spiir_bank;

typedef struct tr_cuda_spiir tr_cuda_spiir;

/* variant: TR_VARIANT_FAST (deterministic) or TR_VARIANT_PAPER (the paper's
 * warp-based kernel for templates of <= 32 filters and block-based kernel with
 * atomic cross-warp summation otherwise). batch: samples per launch (FAST on
 * small banks, which cuts time into segments, may use smaller launches).
 * Benchmark hooks read at creation (see spiir_cuda.cu): TR_SPIIR_CUDA_SHAPE
 * forces the FAST shape, TR_SPIIR_CUDA_SEGMENT=0 turns segmented time off. */
tr_status tr_cuda_spiir_create(int device, const tr_cuda_spiir_bank *bank,
                               int complex_input, tr_variant variant, size_t batch,
                               tr_cuda_spiir **ctx, tr_error *err);
void tr_cuda_spiir_destroy(tr_cuda_spiir *ctx);

/* Zero the filter states and the delay line. */
tr_status tr_cuda_spiir_reset(tr_cuda_spiir *ctx, tr_error *err);

/* Host samples in, host SNR out (layout of tr_spiir_process); *nonfinite is
 * increased by the number of non-finite input samples. */
tr_status tr_cuda_spiir_run_host(tr_cuda_spiir *ctx, const float *x, size_t n, float *snr,
                                 uint64_t *nonfinite, tr_error *err);

/* Device samples in, device SNR out. */
tr_status tr_cuda_spiir_run_device(tr_cuda_spiir *ctx, const float *d_x, size_t n,
                                   float *d_snr, uint64_t *nonfinite, tr_error *err);

/* For the multirate backend (cuda/spiir/spiir_mr_cuda.cu): enqueue n device samples
 * (any n, split into batches) on the context's own stream and return without
 * waiting; the non-finite count is not kept. */
tr_status tr_cuda_spiir_enqueue(tr_cuda_spiir *ctx, const float *d_x, size_t n,
                                float *d_snr, tr_error *err);
/* The context's stream (a cudaStream_t). */
void *tr_cuda_spiir_stream(tr_cuda_spiir *ctx);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_SPIIR_CUDA_H */
