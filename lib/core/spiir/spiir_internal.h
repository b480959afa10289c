/*
 * Internal contract of the SPIIR filter bank: the bank's layout, shared by the
 * object (spiir.c), its levels (spiir_level.c) and CPU variants. The CUDA
 * backend reads a plain view of it (tr_cuda_spiir_bank, cuda/spiir/spiir_cuda.h).
 */
#ifndef TRANSIENT_SPIIR_INTERNAL_H
#define TRANSIENT_SPIIR_INTERNAL_H

#include <transient/spiir.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tr_spiir_bank {
    uint32_t ntemplates; /* templates */
    double dt;           /* sampling interval of the full rate */
    uint64_t
        *first; /* ntemplates + 1 offsets: template t is filters[first[t]..first[t+1]) */
    tr_spiir_filter *filters; /* all filters, template by template */
    uint64_t total;           /* first[ntemplates] */
    int32_t max_delay;        /* largest delay */
};

/* Deep copy of a validated bank (NULL if out of memory). */
tr_spiir_bank *tr_spiir_bank_copy(const tr_spiir_bank *bank);

/* A sample as every variant reads it: non-finite samples are zero. */
static inline float tr_spiir_clean(float v)
{
    return (v - v) == 0.0f ? v : 0.0f;
}

/* tr_spiir_clean(v), counting a non-finite v in *bad. */
static inline float tr_spiir_take(float v, uint64_t *bad)
{
    const float c = tr_spiir_clean(v);
    *bad += c != v; /* true for NaN (0 != NaN) and +-Inf, false for finite v */
    return c;
}

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_SPIIR_INTERNAL_H */
