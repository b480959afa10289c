/*
 * SPIIR filter bank, optimized CPU variant (float32).
 *
 * Layout: the filters of each template are cut into groups of 8 (one vector
 * lane per filter, structure of arrays); a template whose filter count is not
 * a multiple of 8 is padded with silent filters (a1 = b0 = 0, delay 0), whose
 * state stays exactly 0. Samples are processed in blocks of BLOCK: each group
 * runs its 8 recurrences over the block with the state in registers and adds
 * its outputs to a per-template accumulator of 8 lanes per sample (the AVX2
 * kernel first lines up the delayed inputs x[k - d] of its lanes with 8x8
 * transposes of contiguous loads, which costs less than a gather per sample).
 * Up to WINDOW templates share a pass, so that small templates interleave too.
 * At the end of the block the 8 lanes of each sample are summed in a fixed
 * tree and scaled by 2 dt.
 *
 * Determinism: every output sample is the same sequence of float operations
 * whatever the block, the chunking or the kernel: per lane the groups of a
 * template are accumulated in increasing order, the lanes are reduced as
 * ((l0 + l1) + (l2 + l3)) + ((l4 + l5) + (l6 + l7)), and the kernels use the
 * same fused multiply-adds (fmaf in the generic kernel, vfmadd in the AVX2
 * one; the library is built with -ffp-contract=off so that the compiler adds
 * no others).
 *
 * Precision: a pole stored in float moves by up to 2^-25 relative, which
 * changes the gain of a filter with 1 - |a1| = 1e-4 by some 1e-4 relative. The
 * pole is therefore kept as a float pair a1 = hi + lo (lo = the rounding error
 * of hi) and the recurrence is y = hi y + (lo y + b0 x); the state itself is
 * float and loses about 2^-24 per step, which a pole at 1 - |a1| = 1e-4
 * integrates to some 1e-6 relative. A bank none of whose poles moves by more
 * than 1e-4 (1 - |a1|) when rounded (so every gain stays within 1e-4; the
 * CUDA backend's rule, e.g. every 1 - |a1| >= 1e-3) runs without the lo part:
 * 4 fused multiply-adds fewer per update.
 *
 * Kernels in the VOLK manner: a generic one beside an AVX2/FMA one, chosen
 * once at run time; the AVX2 kernel interleaves NQ groups per sample so that
 * the latency of the recurrence is hidden.
 */
#include "spiir/spiir_variants.h"

#include "common/simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LANES  8  /* filters per group */
#define BLOCK  32 /* samples per block */
#define WINDOW 8  /* templates sharing one pass (small templates interleave) */
#define NQ     4  /* groups interleaved by the AVX2 kernel */

/* One group of 8 filters, coefficients and state side by side (288 bytes). */
typedef struct {
    float ahr[LANES], ahi[LANES]; /* a1, high part */
    float alr[LANES], ali[LANES]; /* a1 - high part, rounded */
    float br[LANES], bi[LANES];   /* b0 */
    int32_t d[LANES];             /* delay */
    float yr[LANES], yi[LANES];   /* state */
} group;

struct tr_spiir_cpu {
    uint32_t ntemplates;
    uint64_t ngroups;
    uint64_t *gfirst; /* ntemplates + 1: template t owns groups gfirst[t]..[t+1] */
    uint32_t *gtmpl;  /* template of each group */
    group *groups;    /* 32-byte aligned view into mem */
    void *mem;
    float *scratch; /* one pass_scratch, 32-byte aligned in mem */
    float scale;    /* 2 dt */
    int lo;         /* 1: poles kept as hi + lo (see the precision note) */
};

/* Working memory of one pass over a window of templates and a block. */
typedef struct {
    /* Sums of the groups: [template in window][sample in block][re 8, im 8]. */
    float acc[WINDOW][BLOCK][2 * LANES];
    /* AVX2: delayed inputs of NQ groups in lane order: [group][sample][lane]. */
    float xt_re[NQ][BLOCK][LANES];
    float xt_im[NQ][BLOCK][LANES];
} pass_scratch;

/* One pass: templates t0..t0+tw-1, nb samples starting at line index p. */
typedef struct {
    group *gs;
    const uint32_t *gtmpl;
    uint64_t g0, g1; /* the window's groups */
    uint32_t t0, tw, nt;
    const float *xr, *xi;
    size_t p, nb;
    float scale;
    int lo; /* the recurrence uses the poles' lo parts */
    pass_scratch *s;
    float *snr; /* output row of the block's first sample */
} pass;

tr_spiir_cpu *tr_spiir_cpu_create(const tr_spiir_bank *bank)
{
    tr_spiir_cpu *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->ntemplates = bank->ntemplates;
    c->scale = (float)(2.0 * bank->dt);
    c->lo = 0;
    for (uint64_t i = 0; i < bank->total; i++) {
        const tr_spiir_filter *f = &bank->filters[i];
        const double lr = f->a1_re - (double)(float)f->a1_re;
        const double li = f->a1_im - (double)(float)f->a1_im;
        const double gap = 1.0 - hypot(f->a1_re, f->a1_im);
        if (hypot(lr, li) > 1e-4 * gap) c->lo = 1;
    }
    c->gfirst = malloc(((size_t)bank->ntemplates + 1) * sizeof *c->gfirst);
    if (!c->gfirst) goto fail;
    c->gfirst[0] = 0;
    for (uint32_t t = 0; t < bank->ntemplates; t++) {
        const uint64_t nf = bank->first[t + 1] - bank->first[t];
        c->gfirst[t + 1] = c->gfirst[t] + (nf + LANES - 1) / LANES;
    }
    c->ngroups = c->gfirst[bank->ntemplates];
    if (c->ngroups > (SIZE_MAX - sizeof(pass_scratch) - 32) / sizeof(group)) goto fail;
    c->gtmpl = malloc((size_t)c->ngroups * sizeof *c->gtmpl);
    /* Groups and the scratch in one allocation, both 32-byte aligned. */
    c->mem = calloc((size_t)c->ngroups * sizeof(group) + sizeof(pass_scratch) + 32, 1);
    if (!c->gtmpl || !c->mem) goto fail;
    c->groups = (group *)(((uintptr_t)c->mem + 31) & ~(uintptr_t)31);
    c->scratch = (float *)(c->groups + c->ngroups);
    for (uint32_t t = 0; t < bank->ntemplates; t++) {
        for (uint64_t g = c->gfirst[t]; g < c->gfirst[t + 1]; g++)
            c->gtmpl[g] = t;
        for (uint64_t l = bank->first[t]; l < bank->first[t + 1]; l++) {
            const tr_spiir_filter *f = &bank->filters[l];
            const uint64_t i = l - bank->first[t];
            group *gr = &c->groups[c->gfirst[t] + i / LANES];
            const int lane = (int)(i % LANES);
            gr->ahr[lane] = (float)f->a1_re;
            gr->ahi[lane] = (float)f->a1_im;
            gr->alr[lane] = (float)(f->a1_re - (double)gr->ahr[lane]);
            gr->ali[lane] = (float)(f->a1_im - (double)gr->ahi[lane]);
            gr->br[lane] = (float)f->b0_re;
            gr->bi[lane] = (float)f->b0_im;
            gr->d[lane] = f->delay;
        }
    }
    return c;
fail:
    tr_spiir_cpu_destroy(c);
    return NULL;
}

void tr_spiir_cpu_destroy(tr_spiir_cpu *c)
{
    if (!c) return;
    free(c->gfirst);
    free(c->gtmpl);
    free(c->mem);
    free(c);
}

void tr_spiir_cpu_reset(tr_spiir_cpu *c)
{
    for (uint64_t g = 0; g < c->ngroups; g++) {
        memset(c->groups[g].yr, 0, sizeof c->groups[g].yr);
        memset(c->groups[g].yi, 0, sizeof c->groups[g].yi);
    }
}

/* ---- generic kernel ------------------------------------------------------ */

/* The fixed lane tree of every kernel (the AVX2 one forms it with hadd). */
static inline float reduce_lanes(const float *v)
{
    return ((v[0] + v[1]) + (v[2] + v[3])) + ((v[4] + v[5]) + (v[6] + v[7]));
}

/* Sums of the window's templates, scaled, into the output rows of samples
 * j0..nb-1 of the block. */
static void write_sums(const pass *ps, size_t j0)
{
    for (uint32_t w = 0; w < ps->tw; w++) {
        for (size_t j = j0; j < ps->nb; j++) {
            const float *a = ps->s->acc[w][j];
            float *z = &ps->snr[(j * ps->nt + ps->t0 + w) * 2];
            z[0] = reduce_lanes(a) * ps->scale;
            z[1] = reduce_lanes(a + LANES) * ps->scale;
        }
    }
}

/*
 * The arithmetic of one lane and sample, which the AVX2 kernel repeats
 * operation for operation:
 *   u  = b0 x          (real x: 2 products; complex x: 2 products + 2 fma)
 *   p  = lo y + u      (4 fma)
 *   h  = hi y          (2 products + 2 fma)
 *   y' = h + p         (h and p are independent: the recurrence's latency is
 *   acc += y'           two fma and an add, not four fma)
 * and without the lo parts (c->lo = 0):
 *   y' = hi y + u      (4 fma: fma(hr, yr, fma(-hi, yi, ur)) and the like)
 *   acc += y'
 * Groups go one after the other, so each template's groups add in order.
 */
static inline __attribute__((always_inline)) void
pass_generic_impl(const pass *ps, const int cplx, const int lo)
{
    memset(ps->s->acc, 0, ps->tw * sizeof ps->s->acc[0]);
    for (uint64_t g = ps->g0; g < ps->g1; g++) {
        group *gr = &ps->gs[g];
        float(*a)[2 * LANES] = ps->s->acc[ps->gtmpl[g] - ps->t0];
        for (int l = 0; l < LANES; l++) {
            const float ahr = gr->ahr[l], ahi = gr->ahi[l];
            const float alr = gr->alr[l], ali = gr->ali[l];
            const float br = gr->br[l], bi = gr->bi[l];
            const float *xr = ps->xr + ps->p - (size_t)gr->d[l];
            const float *xi = cplx ? ps->xi + ps->p - (size_t)gr->d[l] : NULL;
            float yr = gr->yr[l], yi = gr->yi[l];
            for (size_t j = 0; j < ps->nb; j++) {
                float ur, ui;
                if (cplx) {
                    ur = fmaf(-bi, xi[j], br * xr[j]);
                    ui = fmaf(bi, xr[j], br * xi[j]);
                } else {
                    ur = br * xr[j];
                    ui = bi * xr[j];
                }
                float nr, ni;
                if (lo) {
                    float pr = fmaf(alr, yr, ur);
                    pr = fmaf(-ali, yi, pr);
                    float pi = fmaf(alr, yi, ui);
                    pi = fmaf(ali, yr, pi);
                    float hr = ahr * yr;
                    hr = fmaf(-ahi, yi, hr);
                    float hi = ahr * yi;
                    hi = fmaf(ahi, yr, hi);
                    nr = hr + pr;
                    ni = hi + pi;
                } else {
                    nr = fmaf(ahr, yr, fmaf(-ahi, yi, ur));
                    ni = fmaf(ahr, yi, fmaf(ahi, yr, ui));
                }
                yr = nr;
                yi = ni;
                a[j][l] += nr;
                a[j][LANES + l] += ni;
            }
            gr->yr[l] = yr;
            gr->yi[l] = yi;
        }
    }
    write_sums(ps, 0);
}

static void pass_generic(const pass *ps)
{
    if (ps->xi)
        ps->lo ? pass_generic_impl(ps, 1, 1) : pass_generic_impl(ps, 1, 0);
    else
        ps->lo ? pass_generic_impl(ps, 0, 1) : pass_generic_impl(ps, 0, 0);
}

/* ---- AVX2 + FMA kernel --------------------------------------------------- */

#ifdef TR_X86

/* Rows r[l] (8 samples of lane l) to columns c[j] (lane values of sample j). */
static inline __attribute__((always_inline)) TR_AVX2_FMA void
transpose8(const __m256 r[8], __m256 c[8])
{
    __m256 t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_ps(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm256_unpackhi_ps(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 2; i++) {
        u[4 * i + 0] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0x44);
        u[4 * i + 1] = _mm256_shuffle_ps(t[4 * i], t[4 * i + 2], 0xEE);
        u[4 * i + 2] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0x44);
        u[4 * i + 3] = _mm256_shuffle_ps(t[4 * i + 1], t[4 * i + 3], 0xEE);
    }
    for (int i = 0; i < 4; i++) {
        c[i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x20);
        c[4 + i] = _mm256_permute2f128_ps(u[i], u[4 + i], 0x31);
    }
}

/* xt[j][l] = x[p + j - d[l]] for j < nb: 8x8 transposes of contiguous loads
 * (much cheaper than a gather per sample), scalar for the last nb % 8. */
static inline __attribute__((always_inline)) TR_AVX2_FMA void
delayed_inputs(const float *x, size_t p, const int32_t *d, size_t nb, float (*xt)[LANES])
{
    const float *row[LANES];
    for (int l = 0; l < LANES; l++)
        row[l] = x + p - (size_t)d[l];
    size_t j = 0;
    for (; j + 8 <= nb; j += 8) {
        __m256 r[8], c[8];
        for (int l = 0; l < LANES; l++)
            r[l] = _mm256_loadu_ps(row[l] + j);
        transpose8(r, c);
        for (int i = 0; i < 8; i++)
            _mm256_store_ps(xt[j + i], c[i]);
    }
    for (; j < nb; j++)
        for (int l = 0; l < LANES; l++)
            xt[j][l] = row[l][j];
}

/* One sample of group Q of the batch: the generic lane arithmetic on 8 lanes. */
#define STEP(Q)                                                                          \
    do {                                                                                 \
        const group *gq = &gs[g + (Q)];                                                  \
        const __m256 xr8 = _mm256_load_ps(s->xt_re[Q][j]);                               \
        const __m256 br = _mm256_load_ps(gq->br), bi = _mm256_load_ps(gq->bi);           \
        __m256 ur, ui;                                                                   \
        if (cplx) {                                                                      \
            const __m256 xi8 = _mm256_load_ps(s->xt_im[Q][j]);                           \
            ur = _mm256_fnmadd_ps(bi, xi8, _mm256_mul_ps(br, xr8));                      \
            ui = _mm256_fmadd_ps(bi, xr8, _mm256_mul_ps(br, xi8));                       \
        } else {                                                                         \
            ur = _mm256_mul_ps(br, xr8);                                                 \
            ui = _mm256_mul_ps(bi, xr8);                                                 \
        }                                                                                \
        const __m256 ahr = _mm256_load_ps(gq->ahr), ahi = _mm256_load_ps(gq->ahi);       \
        __m256 nr, ni;                                                                   \
        if (lo) {                                                                        \
            const __m256 alr = _mm256_load_ps(gq->alr), ali = _mm256_load_ps(gq->ali);   \
            __m256 pr = _mm256_fmadd_ps(alr, yr[Q], ur);                                 \
            pr = _mm256_fnmadd_ps(ali, yi[Q], pr);                                       \
            __m256 pi = _mm256_fmadd_ps(alr, yi[Q], ui);                                 \
            pi = _mm256_fmadd_ps(ali, yr[Q], pi);                                        \
            __m256 hr = _mm256_mul_ps(ahr, yr[Q]);                                       \
            hr = _mm256_fnmadd_ps(ahi, yi[Q], hr);                                       \
            __m256 hi = _mm256_mul_ps(ahr, yi[Q]);                                       \
            hi = _mm256_fmadd_ps(ahi, yr[Q], hi);                                        \
            nr = _mm256_add_ps(hr, pr);                                                  \
            ni = _mm256_add_ps(hi, pi);                                                  \
        } else {                                                                         \
            nr = _mm256_fmadd_ps(ahr, yr[Q], _mm256_fnmadd_ps(ahi, yi[Q], ur));          \
            ni = _mm256_fmadd_ps(ahr, yi[Q], _mm256_fmadd_ps(ahi, yr[Q], ui));           \
        }                                                                                \
        yr[Q] = nr;                                                                      \
        yi[Q] = ni;                                                                      \
    } while (0)

/* Group Q's new outputs into its template's accumulator of sample j. */
#define ACC(Q)                                                                           \
    do {                                                                                 \
        float *aq = acc[Q][j];                                                           \
        _mm256_store_ps(aq, _mm256_add_ps(_mm256_load_ps(aq), yr[Q]));                   \
        _mm256_store_ps(aq + LANES, _mm256_add_ps(_mm256_load_ps(aq + LANES), yi[Q]));   \
    } while (0)

/* NG groups from g on, interleaved per sample to hide the recurrence latency.
 * Within a sample they add to the accumulators in increasing order (a load
 * after a store to the same template row sees it), as in the generic kernel;
 * when all NG groups belong to one template the chain of adds stays in
 * registers (one load and store per sample instead of NG, the same sums). */
#define GROUPS_AVX2(NG)                                                                  \
    do {                                                                                 \
        __m256 yr[NG], yi[NG];                                                           \
        float(*acc[NG])[2 * LANES];                                                      \
        for (int q = 0; q < (NG); q++) {                                                 \
            yr[q] = _mm256_load_ps(gs[g + q].yr);                                        \
            yi[q] = _mm256_load_ps(gs[g + q].yi);                                        \
            acc[q] = s->acc[ps->gtmpl[g + q] - ps->t0];                                  \
            delayed_inputs(ps->xr, ps->p, gs[g + q].d, nb, s->xt_re[q]);                 \
            if (cplx) delayed_inputs(ps->xi, ps->p, gs[g + q].d, nb, s->xt_im[q]);       \
        }                                                                                \
        int same = 1;                                                                    \
        for (int q = 1; q < (NG); q++)                                                   \
            same &= acc[q] == acc[0];                                                    \
        for (size_t j = 0; j < nb; j++) {                                                \
            STEP(0);                                                                     \
            if ((NG) > 1) STEP(1);                                                       \
            if ((NG) > 2) STEP(2);                                                       \
            if ((NG) > 3) STEP(3);                                                       \
            if (same) {                                                                  \
                float *a0 = acc[0][j];                                                   \
                __m256 tr = _mm256_load_ps(a0), ti = _mm256_load_ps(a0 + LANES);         \
                for (int q = 0; q < (NG); q++) {                                         \
                    tr = _mm256_add_ps(tr, yr[q]);                                       \
                    ti = _mm256_add_ps(ti, yi[q]);                                       \
                }                                                                        \
                _mm256_store_ps(a0, tr);                                                 \
                _mm256_store_ps(a0 + LANES, ti);                                         \
            } else {                                                                     \
                ACC(0);                                                                  \
                if ((NG) > 1) ACC(1);                                                    \
                if ((NG) > 2) ACC(2);                                                    \
                if ((NG) > 3) ACC(3);                                                    \
            }                                                                            \
        }                                                                                \
        for (int q = 0; q < (NG); q++) {                                                 \
            _mm256_store_ps(gs[g + q].yr, yr[q]);                                        \
            _mm256_store_ps(gs[g + q].yi, yi[q]);                                        \
        }                                                                                \
    } while (0)

/* Lane sums of 8 rows (the tree of reduce_lanes), sample i in lane i. */
static inline __attribute__((always_inline)) TR_AVX2_FMA __m256 reduce8(const float *rows,
                                                                        size_t stride)
{
    __m256 h[4];
    for (int i = 0; i < 4; i++)
        h[i] = _mm256_hadd_ps(_mm256_load_ps(rows + (2 * i) * stride),
                              _mm256_load_ps(rows + (2 * i + 1) * stride));
    const __m256 u0 = _mm256_hadd_ps(h[0], h[1]), u1 = _mm256_hadd_ps(h[2], h[3]);
    return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20),
                         _mm256_permute2f128_ps(u0, u1, 0x31));
}

static inline __attribute__((always_inline)) TR_AVX2_FMA void
pass_avx2_impl(const pass *ps, const int cplx, const int lo)
{
    pass_scratch *s = ps->s;
    group *gs = ps->gs;
    const size_t nb = ps->nb;
    memset(s->acc, 0, ps->tw * sizeof s->acc[0]);
    uint64_t g = ps->g0;
    for (; g + NQ <= ps->g1; g += NQ)
        GROUPS_AVX2(NQ);
    for (; g < ps->g1; g++)
        GROUPS_AVX2(1);

    /* Eight samples at a time: the lane sums come out as a vector of samples,
     * stored as (re, im) pairs into their strided output rows. */
    const __m256 scale = _mm256_set1_ps(ps->scale);
    const size_t nb8 = nb & ~(size_t)7;
    for (uint32_t w = 0; w < ps->tw; w++) {
        for (size_t j = 0; j < nb8; j += 8) {
            const float *a = s->acc[w][j];
            const __m256 re = _mm256_mul_ps(reduce8(a, 2 * LANES), scale);
            const __m256 im = _mm256_mul_ps(reduce8(a + LANES, 2 * LANES), scale);
            const __m256 lo = _mm256_unpacklo_ps(re, im); /* samples 0 1 | 4 5 */
            const __m256 hi = _mm256_unpackhi_ps(re, im); /* samples 2 3 | 6 7 */
            const size_t st = (size_t)ps->nt * 2;
            float *z = &ps->snr[(j * ps->nt + ps->t0 + w) * 2];
            const __m128 l0 = _mm256_castps256_ps128(lo),
                         l1 = _mm256_extractf128_ps(lo, 1);
            const __m128 h0 = _mm256_castps256_ps128(hi),
                         h1 = _mm256_extractf128_ps(hi, 1);
            _mm_storel_pi((__m64 *)(z + 0 * st), l0);
            _mm_storeh_pi((__m64 *)(z + 1 * st), l0);
            _mm_storel_pi((__m64 *)(z + 2 * st), h0);
            _mm_storeh_pi((__m64 *)(z + 3 * st), h0);
            _mm_storel_pi((__m64 *)(z + 4 * st), l1);
            _mm_storeh_pi((__m64 *)(z + 5 * st), l1);
            _mm_storel_pi((__m64 *)(z + 6 * st), h1);
            _mm_storeh_pi((__m64 *)(z + 7 * st), h1);
        }
    }
    write_sums(ps, nb8);
}

TR_AVX2_FMA static void pass_avx2(const pass *ps)
{
    if (ps->xi)
        ps->lo ? pass_avx2_impl(ps, 1, 1) : pass_avx2_impl(ps, 1, 0);
    else
        ps->lo ? pass_avx2_impl(ps, 0, 1) : pass_avx2_impl(ps, 0, 0);
}
#endif

/* ---- driver -------------------------------------------------------------- */

typedef struct {
    tr_simd_kernel info;
    void (*pass)(const pass *);
} spiir_kernel;

static const spiir_kernel kernels[] = {
    {{"generic", 0, 0}, pass_generic},
#ifdef TR_X86
    {{"avx2", TR_CPU_AVX2 | TR_CPU_FMA, 0}, pass_avx2},
#endif
};
static tr_simd_table table = TR_SIMD_TABLE(kernels);

int tr_spiir_cpu_select(const char *name)
{
    return tr_simd_select(&table, name);
}

void tr_spiir_cpu_run(tr_spiir_cpu *c, const float *xr, const float *xi, size_t pos,
                      size_t n, float *snr)
{
    const spiir_kernel *k = tr_simd_get(&table);
    pass ps;
    ps.gs = c->groups;
    ps.gtmpl = c->gtmpl;
    ps.nt = c->ntemplates;
    ps.xr = xr;
    ps.xi = xi;
    ps.scale = c->scale;
    ps.lo = c->lo;
    ps.s = (pass_scratch *)c->scratch;
    for (size_t k0 = 0; k0 < n; k0 += BLOCK) {
        ps.p = pos + k0;
        ps.nb = n - k0 < BLOCK ? n - k0 : BLOCK;
        ps.snr = snr + k0 * (size_t)c->ntemplates * 2;
        for (uint32_t t0 = 0; t0 < c->ntemplates; t0 += WINDOW) {
            ps.t0 = t0;
            ps.tw = c->ntemplates - t0 < WINDOW ? c->ntemplates - t0 : WINDOW;
            ps.g0 = c->gfirst[t0];
            ps.g1 = c->gfirst[t0 + ps.tw];
            k->pass(&ps);
        }
    }
}
