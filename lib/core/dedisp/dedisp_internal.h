/* Internals of tr_dedisp shared by the object and its variants (not installed). */
#ifndef TRANSIENT_DEDISP_INTERNAL_H
#define TRANSIENT_DEDISP_INTERNAL_H

#include <transient/dedisp.h>

#include "common/pool.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Plan config checks (messages start with "dedisp: "). */
tr_status tr_dedisp_plan_validate(const tr_dedisp_plan_config *cfg, tr_error *err);

/* Highest channel centre frequency in MHz. */
double tr_dedisp_fref(const tr_dedisp_plan_config *cfg);

/* round(K_DM dm (f_c^-2 - f_ref^-2) / (s tsamp)): channel c's delay in samples
 * of s tsamp (tr_dedisp_delay is s = 1). */
uint32_t tr_dedisp_coarse_delay(const tr_dedisp_plan_config *cfg, double dm, uint32_t s,
                                uint32_t c);

/* dedisp's scrunch factors of the ndm trials dms into out (all 1 when
 * cfg->scrunch = 0). */
tr_status tr_dedisp_scrunch_list(const tr_dedisp_plan_config *cfg, const double *dms,
                                 size_t ndm, uint32_t *out, tr_error *err);

/*
 * Delay table out[d * nused + j] = delay of channel chans[j] for trial d in
 * samples of factors[d] tsamp (malloc'ed), every trial's latency
 * trial_lat[d] = (D_d + 1) s_d - 1 (D_d its largest delay, masked channels
 * included) and their largest, the plan's latency.
 */
tr_status tr_dedisp_build_delays(const tr_dedisp_plan_config *cfg, const double *dms,
                                 const uint32_t *factors, uint32_t ndm,
                                 const uint32_t *chans, uint32_t nused, uint32_t **out,
                                 uint32_t *trial_lat, uint32_t *latency, tr_error *err);

/*
 * What a CPU variant sums: the history buffer is channel-major, row j (used
 * channel j) holding `cap` spectra; output k of the block reads
 * buf[j * cap + k + delays[d * nused + j]].
 */
typedef struct {
    const float *buf;
    size_t cap; /* floats per row */
    uint32_t nused, ndm;
    const uint32_t *delays; /* ndm x nused */
    size_t n;               /* outputs of the block */
    int mean;               /* divide by nused */
    float *y;               /* n x ndm, sample-major: y[k * ystride + d] */
    size_t ystride;         /* floats from one output position to the next */
    tr_pool *pool;          /* FAST: threads (NULL = caller only) */
} tr_dedisp_sum_args;

/* The literal sum (dedisp_ref.c). */
void tr_dedisp_sum_ref(const tr_dedisp_sum_args *a);

/* Cache-blocked SIMD sum (dedisp_cpu.c), same bits as the reference. */
void tr_dedisp_sum_fast(const tr_dedisp_sum_args *a);

/*
 * Time scrunching (dedisp_scrunch.c). The history rows hold spectra at
 * absolute positions first .. first + cols - 1 (columns 0 .. cols - 1;
 * first may be negative: zeros before the stream); a group is the trials
 * d0 .. d0 + ndm - 1, all of factor s, with coarse delays.
 */
typedef struct {
    const float *buf;
    size_t cap; /* floats per row */
    uint32_t nused;
    int64_t first; /* absolute position of column 0 */
    size_t cols;   /* columns holding spectra */
} tr_dedisp_rows;

/* The reference: Y[p][d] for positions p0 .. p0 + n - 1 of the group's
 * trials, the block means computed literally from the full-rate rows;
 * y[k * ystride + d]. */
void tr_dedisp_scrunch_ref(const tr_dedisp_rows *r, uint32_t s, uint32_t ndm,
                           const uint32_t *delays, int64_t p0, size_t n, int mean,
                           float *y, size_t ystride);

/* The fast path's coarse rows: X_2s of every block whose halves lie in
 * prev (X_s, indices in blocks of s; the full-rate rows when s = 1) into dst
 * (nused rows of dst_cap floats); out describes them (first: a block index). */
void tr_dedisp_scrunch_level(const tr_dedisp_rows *prev, tr_dedisp_rows *out, float *dst,
                             size_t dst_cap);

/* The fast sum of the group over `level` (X_s) for positions p0 .. p0 + n - 1:
 * coarse outputs into tmp (blocks of p0 .. p0 + n - 1, x ndm), then each
 * to the positions of its block, y[k * ystride + d]. */
void tr_dedisp_scrunch_fast(const tr_dedisp_rows *level, uint32_t s, uint32_t ndm,
                            const uint32_t *delays, int64_t p0, size_t n, int mean,
                            tr_pool *pool, float *tmp, float *y, size_t ystride);

/* Name of the SIMD kernel the fast sum uses, and a forced choice (tests). */
const char *tr_dedisp_cpu_kernel(void);
int tr_dedisp_cpu_select(const char *name);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_DEDISP_INTERNAL_H */
