/*
 * S/N normalisation of the boxcar search, internal: the object's state and
 * what its parts share (robust.c: robust estimates; windows.c: window
 * summaries and the values in effect; baseline.c: running-median baselines;
 * norm.c: the object; stream.c: the streaming and its threads).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * eqs. 3-5 and section 4.6.2.
 */
#ifndef TRANSIENT_BOXCAR_NORM_INTERNAL_H
#define TRANSIENT_BOXCAR_NORM_INTERNAL_H

#include <transient/boxcar_norm.h>

#include "common/pool.h"

#include <stddef.h>
#include <stdint.h>

/* Floats between the windows of two channels in q->buf: W plus one cache
 * line, so that the channels of one position do not share a cache set. */
#define BUF_STRIDE(W) ((size_t)(W) + 16)

/* Entries of one running-median heap (half the window, plus one). */
#define BL_HEAP(M) ((size_t)(M) / 2 + 2)

/* Blocks of the block-median baseline. */
#define BB_BLOCKS 16

/* Chan et al. accumulator of the values kept by the robust estimate. */
typedef struct {
    double n;    /* count */
    double mean; /* mean */
    double m2;   /* sum of squared deviations from mean */
} acc_t;

/* Per-sample values in effect of one window, one channel, one level. */
typedef struct {
    double m; /* mean per sample (level mean / 2^k) */
    double v; /* variance per sample (level variance / 2^k) */
} lev_t;

struct tr_boxcar_norm {
    tr_boxcar_norm_config cfg;
    uint32_t nchan;
    uint32_t max_width;
    uint64_t lookback;
    uint32_t nlev;      /* levels measured (LEVELS: K + 1), else 1 */
    int measure;        /* WHITE or LEVELS */
    uint64_t position;  /* samples per channel consumed */
    uint64_t nonfinite; /* non-finite input samples */
    uint64_t rejected;  /* level-0 values dropped as outliers */
    uint64_t first_n;   /* samples window 0's own values were measured on (0: not yet) */
    int finished;       /* tr_boxcar_norm_finish was called */
    /* current window, channel-major: buf[c * BUF_STRIDE(W) + i]; NaN marks
     * non-finite */
    float *buf;
    /* summaries of the last H windows: sum[(slot * nchan + c) * nlev + k] */
    acc_t *sum;
    unsigned char *sum_valid; /* [slot]: window existed (since start/reset) */
    /* values in effect for the last E windows: eff[(slot * nchan + c) * nlev + k] */
    lev_t *eff;
    unsigned char *eff_ready; /* [slot * nchan + c] */
    uint32_t E;               /* window slots of values kept */
    /* scratch for the window statistics */
    double *scratch; /* W values */
    double *prefix;  /* W + 1 prefix sums */
    uint32_t *pbad;  /* W + 1 prefix counts of non-finite */
    uint32_t nthr;   /* threads for the channels (1: none) */
    tr_pool *pool;   /* nthr threads (NULL: the caller does all) */
    double *tmem;    /* scratch of jobs 1 .. nthr - 1 */
    /* FIXED mode */
    double *fmean;  /* nchan */
    double *fsigma; /* nchan */
    double *tmu;    /* table, fixed_table_len */
    double *tsig;
    /* baseline */
    float *bl_ring;    /* nchan * M: the last M samples (NaN: non-finite) */
    uint32_t *bl_lo;   /* nchan * H: max-heap of ring slots, the lower half */
    uint32_t *bl_hi;   /* nchan * H: min-heap of ring slots, the upper half */
    int32_t *bl_where; /* nchan * M: slot's heap index + 1 (lo), -(index + 1) (hi), 0 */
    uint32_t *bl_nlo;  /* per channel: size of the lower heap */
    uint32_t *bl_n;    /* per channel: finite values in the window */
    /* block-median baseline */
    float *bb_blk;          /* nchan * b: finite values of the current block */
    uint32_t *bb_n;         /* per channel: values in bb_blk */
    float *bb_med;          /* nchan * 16: medians of the last 16 blocks (NaN: none) */
    float *bb_base;         /* per channel: baseline of the current block */
    unsigned char *bb_have; /* per channel: 0 none, 2 warm-up value, 1 block median */
    tr_error err;
};

/* Scratch of one thread for the window statistics. */
typedef struct {
    double *scratch; /* W values */
    double *prefix;  /* W + 1 prefix sums */
    uint32_t *pbad;  /* W + 1 prefix counts of non-finite */
} tr_norm_scratch;

/* ---- robust.c */

/* Robust estimate of the n finite values v: mean and M2 of the values kept
 * by rejection at k sigma (corrected sigma when `correct`), repeated at most
 * max_iter times. */
void tr_norm_robust(const double *v, size_t n, double k, uint32_t max_iter, int correct,
                    acc_t *out);

/* ---- windows.c */

/* Values slot of window j. */
static inline size_t tr_norm_eff_slot(const tr_boxcar_norm *q, uint64_t j)
{
    return (size_t)(j % q->E);
}

/* Values slot of position p, or -1 when its window is not kept. */
long tr_norm_slot_of(const tr_boxcar_norm *q, uint64_t p);

/* Mean and sigma of width L at position p, channel c; TR_ERR_INVALID when p's
 * window is not kept. */
tr_status tr_norm_stats_at(const tr_boxcar_norm *q, uint64_t p, uint32_t c, uint32_t L,
                           double *mu, double *sigma);

/* Input mean in effect at position p of channel c, for the current window
 * (whose values are fixed; NaN in window 0 with first_own, whose values are
 * fixed only at its end); reads q only. */
double tr_norm_mean_at(const tr_boxcar_norm *q, uint64_t p, uint32_t c);

/* The values in effect for window j from the summaries of j-H .. j-1: all
 * channels, or channels c0 .. c1 - 1. */
void tr_norm_compute_effect(tr_boxcar_norm *q, uint64_t j);
void tr_norm_compute_effect_ch(tr_boxcar_norm *q, uint64_t j, uint32_t c0, uint32_t c1);

/* What the end of the summarised window j changes for channels c0 .. c1 - 1:
 * window 0's own values (first_own, j = 0), then the values of window j + 1. */
void tr_norm_window_end_ch(tr_boxcar_norm *q, uint64_t j, uint32_t c0, uint32_t c1);

/* Summary s[0 .. nlev-1] of one channel's window: values b[i * stride], i < n
 * (n = W, or fewer for the part of window 0 a short stream has; non-finite
 * ones left out); adds the level-0 values rejected. */
void tr_norm_summarise_one(tr_boxcar_norm *q, const float *b, size_t stride, uint32_t n,
                           acc_t *s, const tr_norm_scratch *sc, uint64_t *rejected);

/* Summaries of channels c0 .. c1 - 1 of the first n samples of window j in
 * buf into slot j % H (sum_valid is set by the caller). */
void tr_norm_summarise_ch(tr_boxcar_norm *q, uint64_t j, uint32_t n, uint32_t c0,
                          uint32_t c1, const tr_norm_scratch *sc, uint64_t *rejected);

/* Summaries of the first n samples of window j (in buf) into slot j % H. */
void tr_norm_summarise_window(tr_boxcar_norm *q, uint64_t j, uint32_t n);

/* ---- baseline.c */

/* Running-median baseline of channel c after the sample x (NaN: non-finite)
 * at position p. */
float tr_norm_median_push(tr_boxcar_norm *q, uint32_t c, uint64_t p, float x);

/* Block-median baseline of channel c for the sample x at position p; bend:
 * p ends a block. */
float tr_norm_block_median_push(tr_boxcar_norm *q, uint32_t c, uint64_t p, int bend,
                                float x);

#endif /* TRANSIENT_BOXCAR_NORM_INTERNAL_H */
