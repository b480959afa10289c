/*
 * Boxcar search, optimized CPU variant (float32).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020):
 * BoxDIT with decimation by 2 (eqs. 13-15, Algorithm 1) and IGRID built from
 * layers of decimated sums (eq. 18, Figure 5).
 *
 * Every stage of the plan is one pass over a few streamed series per channel:
 *   base[n]  partial sum of width `base` that starts at n * stride
 *            (BoxDIT: X^{i-1}, the end values of iteration i-1 at even starts;
 *             IGRID: the layer Z_i, width 2^i at stride s_i; IDEAL: none)
 *   blk[k]   sums of width `block` (BoxDIT: the decimated series x^i of eq. 13,
 *            x^i[n] = x^{i-1}[2n + B^{i-1}] + x^{i-1}[2n + B^{i-1} + 1];
 *            IGRID: the layer Z_{i-d}, taken at the stride min(s_i, 2^{i-d}))
 * and the boxcar of width number m at start n is
 *   base[n] + blk[n a + c] + blk[n a + c + e] + ... (k0 + m terms, eq. 15),
 * accumulated in that order into one float, so the work per sample is the sum
 * over stages of nwidths / stride (BoxDIT about sum_i B^i / 2^i) plus one add
 * per decimated value. Its S/N is X * (1/sigma_L) - mu_L/sigma_L (two float
 * operations, no fused multiply-add). IGRID layers: Z_i[n] = Z_{i-1}[n r] +
 * Z_{i-1}[n r + 2^{i-1}/s_{i-1}] with r = s_i / s_{i-1}.
 *
 * Streaming: each series is produced as far as the data allow and each start
 * is evaluated as soon as all its sums exist; every value is one fixed
 * sequence of float operations on the cleaned input, so the output does not
 * depend on the chunking, and the AVX2 kernel (8 consecutive starts per
 * vector, 4 vectors interleaved to overlap the dependency chains of the sums
 * and of the running maximum, when a = 1) gives the same bits as the generic
 * one. Values are kept
 * while a start that may still use them has not been evaluated.
 *
 * Precision against the double reference: see TR_BOXCAR_FAST_TOL in
 * <transient/boxcar.h>.
 */
#include "boxcar/boxcar_variants.h"

#include "common/simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Channels moved between the interleaved input/output and the per-channel
 * series together (16 floats: one cache line). */
#define GROUP 16

/* A streamed series: values of indices [first, first + len); index k is the
 * sum that starts at position k * g + o. */
typedef struct {
    float *v;
    size_t off, len, cap;
    uint64_t first;
    uint64_t g, o;
} series;

static inline uint64_t ser_end(const series *s)
{
    return s->first + s->len;
}
static inline float *ser_at(const series *s, uint64_t k)
{
    return s->v + s->off + (size_t)(k - s->first);
}
/* Room for `extra` more values at the end; 0 when out of memory. */
static int ser_reserve(series *s, size_t extra)
{
    if (s->off + s->len + extra <= s->cap) return 1;
    /* Slide to the front only when that frees at least half the buffer, so that
     * each value is moved about once at most; grow otherwise. */
    if (s->off > 0) {
        memmove(s->v, s->v + s->off, s->len * sizeof(float));
        s->off = 0;
    }
    if (s->len + extra <= s->cap / 2) return 1;
    size_t cap = s->cap ? s->cap : 64;
    while (cap < 2 * (s->len + extra))
        cap *= 2;
    float *v = realloc(s->v, cap * sizeof(float));
    if (!v) return 0;
    s->v = v;
    s->cap = cap;
    return 1;
}
/* Forget the values that start before position `pos`. */
static void ser_drop(series *s, uint64_t pos)
{
    if (pos <= s->o) return;
    const uint64_t k = (pos - s->o) / s->g; /* indices < k start before pos */
    if (k <= s->first) return;
    uint64_t d = k - s->first;
    if (d > s->len) d = s->len;
    s->off += (size_t)d;
    s->len -= (size_t)d;
    s->first += d;
}
static void ser_clear(series *s)
{
    s->off = s->len = 0;
    s->first = 0;
}

/* Per stage constants (from the plan). */
typedef struct {
    uint32_t s, nw, k0;   /* stride, widths, blocks in the first width */
    uint64_t a, c0, e;    /* block j of start n is blk[n a + c0 + j e] */
    uint32_t first, step; /* widths first + m * step */
    int base_kind;        /* 0 none, 1 own series, 2 the input x */
    int blk_kind;         /* 0 none, 1 own series, 2 the input x, 3 another
                             stage's base (IGRID layer) */
    uint32_t blk_src;     /* stage whose base is the block series (kind 3) or
                             the source layer to subsample (kind 1, IGRID) */
    uint64_t sub;         /* IGRID own blk: blk[k] = Z_src[k * sub] */
    uint32_t *widths;     /* nw widths */
} stage_k;

/* Per channel, per stage state. */
typedef struct {
    series base, blk, ys, ms; /* own series; ys/ms: best S/N and width index */
    uint64_t next_eval;       /* first start not evaluated */
    uint64_t win;             /* window of the loaded S/N table */
    int have_win;
    float *A, *B; /* 1/sigma_L and mu_L/sigma_L of the stage's widths */
} stage_st;

typedef struct {
    series x; /* cleaned input, index = position */
    stage_st *st;
} chan_st;

typedef struct boxcar_kernel boxcar_kernel;

struct tr_boxcar_cpu {
    const boxcar_kernel *kern; /* the kernel of the current call */
    const tr_boxcar_plan *plan;
    const tr_boxcar_norm *norm;
    tr_boxcar_algorithm alg;
    uint32_t nchan, nst, lend, latency;
    stage_k *sk;
    chan_st *ch;
    uint64_t pos;   /* samples per channel received */
    float *scratch; /* end values of one evaluation range */
    size_t scratch_cap;
    float *yo;   /* outputs of GROUP channels of a call: yo[g * ocap + k] */
    int32_t *wo; /* their widths */
    size_t ocap; /* positions per channel in yo, wo */
    int oom;
};

/* ---- kernels ------------------------------------------------------------- */

typedef struct {
    const float *base; /* base[j] for start n0 + j, or NULL */
    const float *blk;  /* blk + (n0 a + c0): block 0 of start n0 */
    uint64_t a, e;
    uint32_t k0, nw;
    const float *A, *B;
    size_t n;       /* starts */
    float *ys, *ms; /* best S/N, width index (as float) */
    float *endv;    /* the full sum of every start */
} eval_args;

static void eval_generic(const eval_args *g)
{
    for (size_t j = 0; j < g->n; j++) {
        const float *b = g->blk ? g->blk + j * g->a : NULL;
        float acc = g->base ? g->base[j] : 0.0f;
        size_t t = 0;
        if (g->k0) acc += b[t++ * g->e];
        float best = acc * g->A[0] - g->B[0];
        float bm = 0.0f;
        if (!(best > -INFINITY)) best = -INFINITY; /* NaN never wins */
        for (uint32_t m = 1; m < g->nw; m++) {
            acc += b[t++ * g->e];
            const float snr = acc * g->A[m] - g->B[m];
            if (snr > best) {
                best = snr;
                bm = (float)m;
            }
        }
        g->ys[j] = best;
        g->ms[j] = bm;
        g->endv[j] = acc;
    }
}

#ifdef TR_X86
/* NV vectors of 8 consecutive starts from start j, interleaved so that the
 * dependency chains of the sums and of the running maximum overlap. */
static inline __attribute__((always_inline)) TR_AVX2_FMA void
eval_avx2_block(const eval_args *g, size_t j, const int NV)
{
    const __m256 ninf = _mm256_set1_ps(-INFINITY);
    __m256 acc[4], best[4], bm[4];
    const float *b = g->blk ? g->blk + j : NULL;
    size_t t = 0;
    for (int v = 0; v < NV; v++)
        acc[v] = g->base ? _mm256_loadu_ps(g->base + j + 8 * v) : _mm256_setzero_ps();
    if (g->k0) {
        for (int v = 0; v < NV; v++)
            acc[v] = _mm256_add_ps(acc[v], _mm256_loadu_ps(b + 8 * v));
        t++;
    }
    {
        const __m256 a0 = _mm256_broadcast_ss(&g->A[0]),
                     b0 = _mm256_broadcast_ss(&g->B[0]);
        for (int v = 0; v < NV; v++) {
            const __m256 snr = _mm256_sub_ps(_mm256_mul_ps(acc[v], a0), b0);
            best[v] = _mm256_blendv_ps(ninf, snr, _mm256_cmp_ps(snr, ninf, _CMP_GT_OQ));
            bm[v] = _mm256_setzero_ps();
        }
    }
    for (uint32_t m = 1; m < g->nw; m++, t++) {
        const __m256 am = _mm256_broadcast_ss(&g->A[m]),
                     bb = _mm256_broadcast_ss(&g->B[m]);
        const __m256 mv = _mm256_set1_ps((float)m);
        const float *bt = b + t * g->e;
        for (int v = 0; v < NV; v++) {
            acc[v] = _mm256_add_ps(acc[v], _mm256_loadu_ps(bt + 8 * v));
            const __m256 snr = _mm256_sub_ps(_mm256_mul_ps(acc[v], am), bb);
            const __m256 gt = _mm256_cmp_ps(snr, best[v], _CMP_GT_OQ);
            best[v] = _mm256_blendv_ps(best[v], snr, gt);
            bm[v] = _mm256_blendv_ps(bm[v], mv, gt);
        }
    }
    for (int v = 0; v < NV; v++) {
        _mm256_storeu_ps(g->ys + j + 8 * v, best[v]);
        _mm256_storeu_ps(g->ms + j + 8 * v, bm[v]);
        _mm256_storeu_ps(g->endv + j + 8 * v, acc[v]);
    }
}

TR_AVX2_FMA static void eval_avx2(const eval_args *g)
{
    if (g->a != 1) {
        eval_generic(g);
        return;
    }
    size_t j = 0;
    for (; j + 32 <= g->n; j += 32)
        eval_avx2_block(g, j, 4);
    for (; j + 8 <= g->n; j += 8)
        eval_avx2_block(g, j, 1);
    if (j < g->n) {
        eval_args r = *g;
        r.base = g->base ? g->base + j : NULL;
        r.blk = g->blk ? g->blk + j : NULL;
        r.n = g->n - j;
        r.ys = g->ys + j;
        r.ms = g->ms + j;
        r.endv = g->endv + j;
        eval_generic(&r);
    }
}

/* 8x8 transpose of floats: rows r[0..7] -> columns. */
static inline __attribute__((always_inline)) TR_AVX2_FMA void tr8x8(__m256 r[8])
{
    const __m256 t0 = _mm256_unpacklo_ps(r[0], r[1]), t1 = _mm256_unpackhi_ps(r[0], r[1]);
    const __m256 t2 = _mm256_unpacklo_ps(r[2], r[3]), t3 = _mm256_unpackhi_ps(r[2], r[3]);
    const __m256 t4 = _mm256_unpacklo_ps(r[4], r[5]), t5 = _mm256_unpackhi_ps(r[4], r[5]);
    const __m256 t6 = _mm256_unpacklo_ps(r[6], r[7]), t7 = _mm256_unpackhi_ps(r[6], r[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44),
                 u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44),
                 u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44),
                 u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44),
                 u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
    r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
    r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
    r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
    r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
    r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* dst[j][k] = src[k * stride + j] for j < 8, k < n (n a multiple of 8). */
TR_AVX2_FMA static void gather8_avx2(float *const *dst, const float *src, size_t stride,
                                     size_t n)
{
    for (size_t k = 0; k < n; k += 8) {
        __m256 r[8];
        for (int i = 0; i < 8; i++)
            r[i] = _mm256_loadu_ps(src + (k + (size_t)i) * stride);
        tr8x8(r);
        for (int j = 0; j < 8; j++)
            _mm256_storeu_ps(dst[j] + k, r[j]);
    }
}

/* dst[k * stride + j] = src[j * ld + k] for j < 8, k < n (n a multiple of 8);
 * 32-bit elements moved as they are. */
TR_AVX2_FMA static void scatter8_avx2(float *dst, size_t stride, const float *src,
                                      size_t ld, size_t n)
{
    for (size_t k = 0; k < n; k += 8) {
        __m256 r[8];
        for (int j = 0; j < 8; j++)
            r[j] = _mm256_loadu_ps(src + (size_t)j * ld + k);
        tr8x8(r);
        for (int i = 0; i < 8; i++)
            _mm256_storeu_ps(dst + (k + (size_t)i) * stride, r[i]);
    }
}
#endif

/* A kernel: the evaluation of a range of starts and, where it has them, the
 * 8 x 8 transposes between the interleaved input/output and the channels'
 * series (NULL: element by element). */
struct boxcar_kernel {
    tr_simd_kernel info;
    void (*eval)(const eval_args *);
    void (*gather8)(float *const *dst, const float *src, size_t stride, size_t n);
    void (*scatter8)(float *dst, size_t stride, const float *src, size_t ld, size_t n);
};

static const boxcar_kernel kernels[] = {
    {{"generic", 0, 0}, eval_generic, NULL, NULL},
#ifdef TR_X86
    {{"avx2", TR_CPU_AVX2, 0}, eval_avx2, gather8_avx2, scatter8_avx2},
#endif
};
static tr_simd_table table = TR_SIMD_TABLE(kernels);

int tr_boxcar_cpu_select(const char *name)
{
    return tr_simd_select(&table, name);
}

/* ---- set-up -------------------------------------------------------------- */

tr_boxcar_cpu *tr_boxcar_cpu_create(const tr_boxcar_plan *plan, uint32_t nchan,
                                    const tr_boxcar_norm *norm)
{
    tr_boxcar_cpu *q = calloc(1, sizeof *q);
    if (!q) return NULL;
    q->plan = plan;
    q->norm = norm;
    q->alg = plan->algorithm;
    q->nchan = nchan;
    q->nst = plan->nstages;
    q->lend = plan->lend;
    q->latency = plan->lend - 1;
    q->sk = calloc(q->nst, sizeof *q->sk);
    q->ch = calloc(nchan, sizeof *q->ch);
    q->scratch_cap = TR_BOXCAR_SUBCHUNK + 64;
    q->scratch = malloc(q->scratch_cap * sizeof(float));
    q->ocap = (size_t)q->latency + TR_BOXCAR_SUBCHUNK;
    q->yo = malloc(q->ocap * GROUP * sizeof(float));
    q->wo = malloc(q->ocap * GROUP * sizeof(int32_t));
    if (!q->sk || !q->ch || !q->scratch || !q->yo || !q->wo) goto fail;
    const uint32_t d = plan->depth;
    for (uint32_t i = 0; i < q->nst; i++) {
        const tr_boxcar_stage *s = &plan->stages[i];
        stage_k *k = &q->sk[i];
        k->s = s->stride;
        k->nw = s->nwidths;
        k->first = s->width_first;
        k->step = s->width_step;
        k->k0 = (s->width_first - s->base) / s->block;
        k->widths = malloc(k->nw * sizeof(uint32_t));
        if (!k->widths) goto fail;
        for (uint32_t m = 0; m < k->nw; m++)
            k->widths[m] = s->width_first + m * s->width_step;
        if (q->alg == TR_BOXCAR_IGRID) {
            /* base = Z_i (x for i = 0), blocks of width q from Z_{i-d} at g */
            k->base_kind = i == 0 ? 2 : 1;
            const uint64_t qw = s->block;
            const uint64_t g = k->s < qw ? k->s : qw;
            k->a = k->s / g;
            k->c0 = s->base / g;
            k->e = qw / g;
            const uint32_t src = i > d ? i - d : 0; /* layer of width q */
            const uint64_t src_stride = plan->stages[src].stride;
            if (k->k0 + k->nw - 1 == 0) {
                k->blk_kind = 0;
            } else if (g == src_stride) {
                k->blk_kind = src == 0 ? 2 : 3;
                k->blk_src = src;
            } else {
                k->blk_kind = 1;
                k->blk_src = src;
                k->sub = g / src_stride;
            }
        } else {
            k->base_kind = i == 0 ? 0 : 1;
            k->blk_kind = i == 0 ? 2 : 1;
            k->a = 1;
            k->c0 = 0;
            k->e = 1;
        }
    }
    for (uint32_t c = 0; c < nchan; c++) {
        chan_st *h = &q->ch[c];
        h->x.g = 1;
        h->st = calloc(q->nst, sizeof *h->st);
        if (!h->st) goto fail;
        for (uint32_t i = 0; i < q->nst; i++) {
            const tr_boxcar_stage *s = &plan->stages[i];
            stage_st *t = &h->st[i];
            t->A = malloc(s->nwidths * sizeof(float));
            t->B = malloc(s->nwidths * sizeof(float));
            if (!t->A || !t->B) goto fail;
            t->ys.g = t->ms.g = s->stride;
            t->base.g = t->blk.g = 1;
            if (q->alg == TR_BOXCAR_IGRID) {
                t->base.g = s->stride; /* Z_i */
                if (q->sk[i].blk_kind == 1)
                    t->blk.g = q->sk[i].sub * plan->stages[q->sk[i].blk_src].stride;
            } else {
                t->base.g = s->stride; /* X^{i-1} at starts n 2^i */
                t->blk.g = s->stride;  /* x^i */
                t->blk.o = s->base;
            }
        }
    }
    return q;
fail:
    tr_boxcar_cpu_destroy(q);
    return NULL;
}

void tr_boxcar_cpu_destroy(tr_boxcar_cpu *q)
{
    if (!q) return;
    if (q->ch)
        for (uint32_t c = 0; c < q->nchan; c++) {
            chan_st *h = &q->ch[c];
            free(h->x.v);
            if (!h->st) continue;
            for (uint32_t i = 0; i < q->nst; i++) {
                stage_st *t = &h->st[i];
                free(t->base.v);
                free(t->blk.v);
                free(t->ys.v);
                free(t->ms.v);
                free(t->A);
                free(t->B);
            }
            free(h->st);
        }
    if (q->sk)
        for (uint32_t i = 0; i < q->nst; i++)
            free(q->sk[i].widths);
    free(q->sk);
    free(q->ch);
    free(q->scratch);
    free(q->yo);
    free(q->wo);
    free(q);
}

void tr_boxcar_cpu_reset(tr_boxcar_cpu *q)
{
    q->pos = 0;
    q->oom = 0;
    for (uint32_t c = 0; c < q->nchan; c++) {
        chan_st *h = &q->ch[c];
        ser_clear(&h->x);
        for (uint32_t i = 0; i < q->nst; i++) {
            stage_st *t = &h->st[i];
            ser_clear(&t->base);
            ser_clear(&t->blk);
            ser_clear(&t->ys);
            ser_clear(&t->ms);
            t->next_eval = 0;
            t->have_win = 0;
        }
    }
}

/* ---- streaming ----------------------------------------------------------- */

/* The series holding stage i's base / blocks for channel h. */
static series *base_of(tr_boxcar_cpu *q, chan_st *h, uint32_t i)
{
    switch (q->sk[i].base_kind) {
    case 1:
        return &h->st[i].base;
    case 2:
        return &h->x;
    default:
        return NULL;
    }
}
static series *blk_of(tr_boxcar_cpu *q, chan_st *h, uint32_t i)
{
    switch (q->sk[i].blk_kind) {
    case 1:
        return &h->st[i].blk;
    case 2:
        return &h->x;
    case 3:
        return base_of(q, h, q->sk[i].blk_src);
    default:
        return NULL;
    }
}

/* yb = max(yb, ys) with the width of the winner (strictly greater wins);
 * branch-free so that it vectorizes. */
static void merge1(float *restrict yb, int32_t *restrict wb, const float *restrict ys,
                   const float *restrict ms, size_t cnt, int32_t f, int32_t stp)
{
    for (size_t j = 0; j < cnt; j++) {
        const float v = ys[j], o = yb[j];
        const int32_t m = -(int32_t)(v > o); /* all ones where v wins */
        const int32_t wv = f + (int32_t)ms[j] * stp;
        yb[j] = v > o ? v : o;
        wb[j] = (wv & m) | (wb[j] & ~m);
    }
}

/* out[n] = z[n r] + z[n r + h], specialised for r = 1, 2 (vectorizable). */
static void pair_sums(float *restrict out, const float *restrict z, uint64_t cnt,
                      uint64_t r, uint64_t h)
{
    if (r == 1)
        for (uint64_t n = 0; n < cnt; n++)
            out[n] = z[n] + z[n + h];
    else if (r == 2)
        for (uint64_t n = 0; n < cnt; n++)
            out[n] = z[2 * n] + z[2 * n + h];
    else
        for (uint64_t n = 0; n < cnt; n++)
            out[n] = z[n * r] + z[n * r + h];
}

/* Produce stage i's own derived series as far as the data allow. */
static void produce(tr_boxcar_cpu *q, chan_st *h, uint32_t i)
{
    const stage_k *k = &q->sk[i];
    stage_st *t = &h->st[i];
    if (q->alg == TR_BOXCAR_IGRID) {
        if (i > 0) { /* Z_i from Z_{i-1} */
            series *src = base_of(q, h, i - 1);
            const uint64_t r = k->s / q->sk[i - 1].s;
            const uint64_t half = ((uint64_t)1 << (i - 1)) / q->sk[i - 1].s;
            const uint64_t n0 = ser_end(&t->base);
            const uint64_t se = ser_end(src);
            if (se > half) {
                const uint64_t n1 = (se - 1 - half) / r + 1; /* n r + half < se */
                if (n1 > n0) {
                    if (!ser_reserve(&t->base, (size_t)(n1 - n0))) {
                        q->oom = 1;
                        return;
                    }
                    float *out = ser_at(&t->base, n0);
                    const float *z = ser_at(src, n0 * r);
                    pair_sums(out, z, n1 - n0, r, half);
                    t->base.len += (size_t)(n1 - n0);
                }
            }
        }
        if (k->blk_kind == 1) { /* blk[k] = Z_src[k * sub] */
            series *src = base_of(q, h, k->blk_src);
            const uint64_t n0 = ser_end(&t->blk);
            const uint64_t se = ser_end(src);
            const uint64_t n1 = se == 0 ? 0 : (se - 1) / k->sub + 1;
            if (n1 > n0) {
                if (!ser_reserve(&t->blk, (size_t)(n1 - n0))) {
                    q->oom = 1;
                    return;
                }
                float *out = ser_at(&t->blk, n0);
                const float *z = ser_at(src, n0 * k->sub);
                for (uint64_t n = 0; n < n1 - n0; n++)
                    out[n] = z[n * k->sub];
                t->blk.len += (size_t)(n1 - n0);
            }
        }
    } else if (i > 0) { /* x^i[n] = x^{i-1}[2n + B] + x^{i-1}[2n + B + 1] (eq. 13) */
        series *src = blk_of(q, h, i - 1);
        const uint64_t B = q->sk[i - 1].nw;
        const uint64_t n0 = ser_end(&t->blk);
        const uint64_t se = ser_end(src);
        if (se >= B + 2) {
            const uint64_t n1 = (se - B - 2) / 2 + 1; /* 2n + B + 1 < se */
            if (n1 > n0) {
                if (!ser_reserve(&t->blk, (size_t)(n1 - n0))) {
                    q->oom = 1;
                    return;
                }
                float *out = ser_at(&t->blk, n0);
                const float *z = ser_at(src, 2 * n0 + B);
                pair_sums(out, z, n1 - n0, 2, 1);
                t->blk.len += (size_t)(n1 - n0);
            }
        }
    }
}

/* Load the S/N table of stage i, channel c, for the window of position p. */
static void load_table(tr_boxcar_cpu *q, stage_st *t, uint32_t i, uint32_t c, uint64_t p)
{
    const uint64_t w = tr_boxcar_norm_window_of(q->norm, p);
    if (t->have_win && t->win == w) return;
    const stage_k *k = &q->sk[i];
    /* in double, each coefficient rounded to float once */
    for (uint32_t m = 0; m < k->nw; m++) {
        double mu = 0.0, sigma = 1.0;
        tr_boxcar_norm_stats(q->norm, p, c, k->widths[m], &mu, &sigma);
        t->A[m] = (float)(1.0 / sigma);
        t->B[m] = (float)(mu / sigma);
    }
    t->win = w;
    t->have_win = 1;
}

/* Last start + 1 whose window is the one of start n0 (or n1). */
static uint64_t window_end(tr_boxcar_cpu *q, uint64_t n0, uint64_t n1, uint64_t s)
{
    const uint64_t w0 = tr_boxcar_norm_window_of(q->norm, n0 * s);
    if (tr_boxcar_norm_window_of(q->norm, (n1 - 1) * s) == w0) return n1;
    const uint64_t W = tr_boxcar_norm_window(q->norm);
    const uint64_t pb = (w0 + 1) * W; /* first position of the next window */
    const uint64_t nb = (pb + s - 1) / s;
    return nb < n1 ? nb : n1;
}

/* Pass the end value of every even start of stage i to stage i + 1 (BoxDIT). */
static int push_ends(tr_boxcar_cpu *q, chan_st *h, uint32_t i, uint64_t n0, size_t n,
                     const float *endv)
{
    if (q->alg != TR_BOXCAR_BOXDIT || i + 1 >= q->nst) return 1;
    series *nb = &h->st[i + 1].base;
    const uint64_t j0 = (n0 + 1) / 2; /* first even start >= n0, halved */
    const uint64_t j1 = (n0 + n + 1) / 2;
    if (j1 <= j0) return 1;
    if (!ser_reserve(nb, (size_t)(j1 - j0))) return 0;
    float *out = ser_at(nb, j0);
    for (uint64_t j = j0; j < j1; j++)
        out[j - j0] = endv[2 * j - n0];
    nb->len += (size_t)(j1 - j0);
    return 1;
}

/* Evaluate every start of stage i whose sums all exist. */
static void evaluate(tr_boxcar_cpu *q, chan_st *h, uint32_t c, uint32_t i)
{
    const stage_k *k = &q->sk[i];
    stage_st *t = &h->st[i];
    series *bs = base_of(q, h, i), *bk = blk_of(q, h, i);
    uint64_t n1 = UINT64_MAX;
    if (bs) n1 = ser_end(bs);
    const uint64_t last = k->k0 + k->nw - 1; /* blocks of the widest boxcar */
    if (bk && last > 0) {
        const uint64_t need = k->c0 + (last - 1) * k->e; /* + n a < end */
        const uint64_t be = ser_end(bk);
        const uint64_t nb = be > need ? (be - need - 1) / k->a + 1 : 0;
        if (nb < n1) n1 = nb;
    }
    if (n1 == UINT64_MAX) n1 = ser_end(&h->x); /* cannot happen: x bounds all */
    uint64_t n0 = t->next_eval;
    if (n1 <= n0) return;
    if (!ser_reserve(&t->ys, (size_t)(n1 - n0)) ||
        !ser_reserve(&t->ms, (size_t)(n1 - n0))) {
        q->oom = 1;
        return;
    }
    while (n0 < n1) {
        uint64_t ne = window_end(q, n0, n1, k->s);
        if (ne - n0 > q->scratch_cap) ne = n0 + q->scratch_cap;
        load_table(q, t, i, c, n0 * k->s);
        eval_args g;
        g.base = bs ? ser_at(bs, n0) : NULL;
        g.blk = bk && last > 0 ? ser_at(bk, n0 * k->a + k->c0) : NULL;
        g.a = k->a;
        g.e = k->e;
        g.k0 = k->k0;
        g.nw = k->nw;
        g.A = t->A;
        g.B = t->B;
        g.n = (size_t)(ne - n0);
        g.ys = ser_at(&t->ys, n0);
        g.ms = ser_at(&t->ms, n0);
        g.endv = q->scratch;
        q->kern->eval(&g);
        t->ys.len += g.n;
        t->ms.len += g.n;
        if (!push_ends(q, h, i, n0, g.n, q->scratch)) {
            q->oom = 1;
            return;
        }
        n0 = ne;
    }
    t->next_eval = n1;
}

/* At the end of the data: the remaining starts, with the boxcars inside it. */
static void evaluate_tail(tr_boxcar_cpu *q, chan_st *h, uint32_t c, uint32_t i)
{
    const stage_k *k = &q->sk[i];
    stage_st *t = &h->st[i];
    series *bs = base_of(q, h, i), *bk = blk_of(q, h, i);
    const uint64_t end = q->pos;
    for (uint64_t n = t->next_eval; n * k->s < end; n++) {
        const uint64_t p = n * k->s;
        if (!ser_reserve(&t->ys, 1) || !ser_reserve(&t->ms, 1)) {
            q->oom = 1;
            return;
        }
        float best = -INFINITY, bm = 0.0f, acc = 0.0f;
        uint32_t done = 0;
        if (!bs || n < ser_end(bs)) {
            load_table(q, t, i, c, p);
            acc = bs ? *ser_at(bs, n) : 0.0f;
            uint64_t tt = 0;
            for (uint32_t m = 0; m < k->nw; m++) {
                if (p + k->widths[m] > end) break;
                if (m > 0 || k->k0) acc += *ser_at(bk, n * k->a + k->c0 + tt++ * k->e);
                const float snr = acc * t->A[m] - t->B[m];
                if (snr > best) {
                    best = snr;
                    bm = (float)m;
                }
                done++;
            }
        }
        *ser_at(&t->ys, n) = best;
        *ser_at(&t->ms, n) = done ? bm : -1.0f;
        t->ys.len++;
        t->ms.len++;
        if (done == k->nw && !push_ends(q, h, i, n, 1, &acc)) {
            q->oom = 1;
            return;
        }
        t->next_eval = n + 1;
    }
}

/*
 * Final outputs of channel h for positions [first, first + n) (first may be
 * negative) into q->yo, q->wo, and the per-stage entries into st.
 */
static void assemble(tr_boxcar_cpu *q, chan_st *h, uint32_t c, int64_t first, size_t n,
                     tr_boxcar_stage_buf *st)
{
    float *yo = q->yo + (c % GROUP) * q->ocap;
    int32_t *wo = q->wo + (c % GROUP) * q->ocap;
    size_t k = 0;
    for (; k < n && first + (int64_t)k < 0; k++) {
        yo[k] = 0.0f;
        wo[k] = 0;
    }
    if (k == n) return;
    const uint64_t p0 = (uint64_t)(first + (int64_t)k); /* first position >= 0 */
    const uint64_t p1 = (uint64_t)(first + (int64_t)n);
    for (uint32_t i = 0; i < q->nst; i++) {
        const stage_k *sk = &q->sk[i];
        const stage_st *t = &h->st[i];
        const uint64_t n0 = (p0 + sk->s - 1) / sk->s, ne = (p1 + sk->s - 1) / sk->s;
        if (ne <= n0) continue;
        const float *ys = ser_at(&t->ys, n0), *ms = ser_at(&t->ms, n0);
        if (i == 0) { /* stride 1: every position */
            const int32_t f = (int32_t)sk->first, st = (int32_t)sk->step;
            const size_t cnt = (size_t)(ne - n0);
            float *yk = yo + k;
            int32_t *wk = wo + k;
            for (size_t j = 0; j < cnt; j++) {
                yk[j] = ys[j];
                wk[j] = f + (int32_t)ms[j] * st;
            }
        } else {
            const int32_t f = (int32_t)sk->first, stp = (int32_t)sk->step;
            const size_t cnt = (size_t)(ne - n0), s = sk->s;
            float *yb = yo + k + (size_t)(n0 * sk->s - p0);
            int32_t *wb = wo + k + (size_t)(n0 * sk->s - p0);
            if (s == 1) {
                merge1(yb, wb, ys, ms, cnt, f, stp);
            } else {
                for (size_t j = 0; j < cnt; j++)
                    if (ys[j] > yb[j * s]) {
                        yb[j * s] = ys[j];
                        wb[j * s] = f + (int32_t)ms[j] * stp;
                    }
            }
        }
        if (st) {
            tr_boxcar_stage_buf *b = &st[i];
            if (b->count == 0) b->first = n0;
            for (uint64_t j = 0; j < ne - n0; j++) {
                const size_t e = (b->count + (size_t)j) * q->nchan + c;
                b->snr[e] = ys[j];
                b->width[e] = ms[j] < 0.0f ? 0
                                           : (int32_t)sk->first +
                                                 (int32_t)ms[j] * (int32_t)sk->step;
            }
        }
    }
}

/* Count the per-stage entries of positions [first, first + n) once for all channels. */
static void count_stage(tr_boxcar_cpu *q, int64_t first, size_t n,
                        tr_boxcar_stage_buf *st)
{
    if (!st) return;
    const int64_t last = first + (int64_t)n;
    if (last <= 0) return;
    const uint64_t p0 = first > 0 ? (uint64_t)first : 0, p1 = (uint64_t)last;
    for (uint32_t i = 0; i < q->nst; i++) {
        const uint64_t s = q->sk[i].s;
        const uint64_t n0 = (p0 + s - 1) / s, ne = (p1 + s - 1) / s;
        if (ne > n0) st[i].count += (size_t)(ne - n0);
    }
}

/* Forget what no start that is still to be evaluated or output can use. */
static void trim(tr_boxcar_cpu *q, chan_st *h)
{
    const int64_t f = (int64_t)q->pos - (int64_t)q->latency;
    uint64_t pmin = f > 0 ? (uint64_t)f : 0;
    for (uint32_t i = 0; i < q->nst; i++) {
        const uint64_t p = h->st[i].next_eval * q->sk[i].s;
        if (p < pmin) pmin = p;
    }
    /* Every value still to be read starts at or after pmin: evaluations read
     * sums that start at their start (>= pmin); a producer reads values that
     * start where the value it makes starts, and the first value not yet made
     * of stage i + 1 starts after P - 2^{i+1} >= P - L_end + 1 >= pmin (a
     * stage of width 2^{i+1} exists only when 2^{i+1} <= L_end). */
    const uint64_t drop = pmin;
    ser_drop(&h->x, drop);
    for (uint32_t i = 0; i < q->nst; i++) {
        stage_st *t = &h->st[i];
        ser_drop(&t->base, drop);
        ser_drop(&t->blk, drop);
        ser_drop(&t->ys, pmin);
        ser_drop(&t->ms, pmin);
    }
}

/* Outputs of channels [c0, c0 + g) from q->yo, q->wo into the interleaved buffers. */
static void write_out(tr_boxcar_cpu *q, uint32_t c0, uint32_t g, size_t n, float *snr,
                      int32_t *width)
{
    const uint32_t C = q->nchan;
    uint32_t g8 = 0;
    size_t n8 = 0;
    if (q->kern->scatter8) { /* 8 x 8 blocks by transposes */
        g8 = g / 8 * 8;
        n8 = n / 8 * 8;
        for (uint32_t j = 0; j < g8; j += 8) {
            q->kern->scatter8(snr + c0 + j, C, q->yo + j * q->ocap, q->ocap, n8);
            if (width)
                q->kern->scatter8((float *)(width + c0 + j), C,
                                  (const float *)q->wo + j * q->ocap, q->ocap, n8);
        }
    }
    for (size_t k = 0; k < n; k++) {
        float *so = snr + k * C + c0;
        int32_t *wo = width ? width + k * C + c0 : NULL;
        for (uint32_t j = k < n8 ? g8 : 0; j < g; j++) {
            so[j] = q->yo[j * q->ocap + k];
            if (wo) wo[j] = q->wo[j * q->ocap + k];
        }
    }
}

void tr_boxcar_cpu_run(tr_boxcar_cpu *q, const float *y, size_t n, float *snr,
                       int32_t *width, tr_boxcar_stage_buf *st)
{
    q->kern = tr_simd_get(&table);
    const uint32_t C = q->nchan;
    const int64_t first = (int64_t)q->pos - (int64_t)q->latency;
    for (uint32_t c0 = 0; c0 < C && !q->oom; c0 += GROUP) {
        const uint32_t g = C - c0 < GROUP ? C - c0 : GROUP;
        float *xv[GROUP];
        for (uint32_t j = 0; j < g; j++) {
            chan_st *h = &q->ch[c0 + j];
            if (!ser_reserve(&h->x, n)) {
                q->oom = 1;
                return;
            }
            xv[j] = ser_at(&h->x, ser_end(&h->x));
            h->x.len += n;
        }
        uint32_t g8 = 0;
        size_t n8 = 0;
        if (q->kern->gather8) { /* 8 x 8 blocks by transposes */
            g8 = g / 8 * 8;
            n8 = n / 8 * 8;
            for (uint32_t j = 0; j < g8; j += 8)
                q->kern->gather8(xv + j, y + c0 + j, C, n8);
        }
        for (size_t k = 0; k < n; k++) {
            const float *yk = y + k * C + c0;
            for (uint32_t j = k < n8 ? g8 : 0; j < g; j++)
                xv[j][k] = yk[j];
        }
        for (uint32_t j = 0; j < g; j++) {
            chan_st *h = &q->ch[c0 + j];
            for (uint32_t i = 0; i < q->nst; i++) {
                produce(q, h, i);
                evaluate(q, h, c0 + j, i);
            }
            assemble(q, h, c0 + j, first, n, st);
        }
        write_out(q, c0, g, n, snr, width);
    }
    count_stage(q, first, n, st);
    q->pos += n;
    for (uint32_t c = 0; c < C; c++)
        trim(q, &q->ch[c]);
}

void tr_boxcar_cpu_flush(tr_boxcar_cpu *q, float *snr, int32_t *width,
                         tr_boxcar_stage_buf *st)
{
    q->kern = tr_simd_get(&table);
    const int64_t first = (int64_t)q->pos - (int64_t)q->latency;
    for (uint32_t c0 = 0; c0 < q->nchan; c0 += GROUP) {
        const uint32_t g = q->nchan - c0 < GROUP ? q->nchan - c0 : GROUP;
        for (uint32_t j = 0; j < g; j++) {
            chan_st *h = &q->ch[c0 + j];
            for (uint32_t i = 0; i < q->nst; i++) {
                produce(q, h, i);
                evaluate(q, h, c0 + j, i);
                evaluate_tail(q, h, c0 + j, i);
            }
            assemble(q, h, c0 + j, first, q->latency, st);
        }
        write_out(q, c0, g, q->latency, snr, width);
    }
    count_stage(q, first, q->latency, st);
}

int tr_boxcar_cpu_failed(const tr_boxcar_cpu *q)
{
    return q->oom;
}
