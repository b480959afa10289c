/*
 * Kalman-bank detector, optimized CPU variant.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (equations 2-15).
 *
 * Formulation. Hypothesis k at sample j continues hypothesis k-1 at sample
 * j-1, so the filters form diagonals (one per onset sample s = j - k + 1)
 * whose gains K_k depend only on k and whose states depend only on the data.
 * With Lambda the prefix sum of L_X (eq. 9),
 *   d_k[j] = log(alpha) + sum_{i=1}^{k} q_i[s+i-1] - (Lambda[j] - Lambda[s-1]),
 *   L_X[j] = q_M[j] + log(1 - alpha + exp(d_{M-1}[j-1])),
 *   LLR[j] = LSE_{k=1..N_s} d_k[j] - LSE(0, d_{N_s+1..M-1}[j]),
 * the last being eq. 15 with norm_factor cancelled (eqs. 7, 11-13 only keep
 * exp() in range; log-sum-exp does that here). docs/kalman.md derives it and
 * states the blocked form the CUDA fast variant runs (all diagonals crossing
 * a block of samples in parallel, then the lag-M scalar recursion of L_X).
 *
 * On one core the same recursion is vectorised the other way: every sample
 * advances all M-1 diagonals by one step, 8 consecutive hypotheses per AVX2
 * vector (SIMD across diagonals, r broadcast). The registers are stored by
 * hypothesis (structure of arrays, z[c][k], d[k]) and hypothesis k's result is
 * written to slot k+1; walking the vectors from the highest k down makes this
 * shift in place. Per sample-hypothesis: the innovation, q_k, the update
 * z += K_k e and the companion-form prediction (2Q multiply-adds for the
 * update, 2Q for the two AR rows, the rest are moves): O(Q), not O(Q^2).
 * Kalman states, gains and the innovation term are float32; c_k, the
 * registers d_k, L_X, the noise-only filter and every log-sum-exp reference
 * are double, so that the long sums along the diagonals keep their precision.
 * The exponentials of the log-sum-exp are float32 after subtracting the
 * maximum (arguments <= 0). Output does not depend on the chunking.
 *
 * Kernels in the VOLK manner: a generic one (plain C, also the only one for a
 * model whose A is not block companion) beside an AVX2 one, chosen once at run
 * time. They agree to float rounding (about 1e-6 in the LLR), not bit for bit.
 */
#include "kalman/kalman_internal.h"

#include "common/simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LANES 8

struct tr_kalman_cpu {
    const tr_kalman_model *m;
    uint32_t M, Q, n;
    size_t S;   /* stride of one component row (hypothesis slots) */
    size_t top; /* lanes run k = 1..top (top = multiple of 8 >= M-1) */
    float *z;   /* n rows of S: z[c * S + k] = z_{k|k-1}{c} (slot 1: noise prediction) */
    float *K;   /* n rows of S: K_k{c}, 0 in the padding */
    float *Af;  /* n x n (dense kernel) */
    float axf[TR_KALMAN_MAX_Q], anf[TR_KALMAN_MAX_Q];
    float *h;                       /* S: 1/(2 Sigma_k), 0 in the padding */
    double *cq;                     /* S: -1/2 log(2 pi Sigma_k), 0 in the padding */
    double *d;                      /* S: d_k (slot 0: log alpha, padding -inf) */
    float *pm;                      /* S: 1 where 1 <= k <= N_s (present), else 0 */
    float *am;                      /* S: 1 where N_s < k < M (absent), else 0 */
    int64_t *pi;                    /* S: all ones where k <= N_s, else 0 (blend mask) */
    uint32_t mask_ns;               /* N_s the masks are built for (0: none) */
    double zM[2 * TR_KALMAN_MAX_Q]; /* noise-only prediction, double */
    double tmp[2 * TR_KALMAN_MAX_Q];
};

/* One sample's filters and registers; also the maxima of the new d_k over
 * the present (k <= Ns) and absent (Ns < k < M) hypotheses; the absent one
 * starts at 0 (hypothesis M). */
typedef void (*update_fn)(tr_kalman_cpu *c, float r, double LX, uint32_t Ns, double *maxp,
                          double *maxa);
/* The two sums of eq. 15 in log-sum-exp form over the registers d[1..M-1]:
 * *sp = sum_{k<=Ns} exp(d_k - mp), *sa = sum_{Ns<k<M} exp(d_k - ma). */
typedef void (*sumexp_fn)(const tr_kalman_cpu *c, uint32_t Ns, double mp, double ma,
                          double *sp, double *sa);

/* ---- generic kernel ------------------------------------------------------ */

/* One sample: hypotheses k = top..1 (descending, in place). */
static void update_generic(tr_kalman_cpu *c, float r, double LX, uint32_t Ns,
                           double *maxp, double *maxa)
{
    const uint32_t n = c->n, Q = c->Q;
    const size_t S = c->S;
    const int comp = c->m->companion;
    double mp = -INFINITY, ma = 0.0;
    *maxp = mp;
    *maxa = ma;
    if (n < 2) return;
    for (size_t k = c->top; k >= 1; k--) {
        float u[2 * TR_KALMAN_MAX_Q];
        for (uint32_t i = 0; i < n; i++)
            u[i] = c->z[i * S + k];
        const float e = r - (u[0] + u[Q]);
        const float hq = c->h[k] * (e * e);
        const double dk = c->d[k - 1] + (c->cq[k] - (double)hq) - LX;
        c->d[k] = dk;
        if (k <= Ns) {
            if (dk > mp) mp = dk;
        } else if (k < c->M) {
            if (dk > ma) ma = dk;
        }
        for (uint32_t i = 0; i < n; i++)
            u[i] = u[i] + c->K[i * S + k] * e;
        if (comp) {
            float x0 = 0.0f, n0 = 0.0f;
            for (uint32_t i = 0; i < Q; i++) {
                x0 += c->axf[i] * u[i];
                n0 += c->anf[i] * u[Q + i];
            }
            c->z[0 * S + k + 1] = x0;
            c->z[(size_t)Q * S + k + 1] = n0;
            for (uint32_t i = 1; i < Q; i++) {
                c->z[i * S + k + 1] = u[i - 1];
                c->z[(Q + i) * S + k + 1] = u[Q + i - 1];
            }
        } else {
            for (uint32_t i = 0; i < n; i++) {
                float s = 0.0f;
                for (uint32_t l = 0; l < n; l++)
                    s += c->Af[i * n + l] * u[l];
                c->z[i * S + k + 1] = s;
            }
        }
    }
    *maxp = mp;
    *maxa = ma;
}

static void sumexp_generic(const tr_kalman_cpu *c, uint32_t Ns, double mp, double ma,
                           double *sp, double *sa)
{
    double p = 0.0, a = 0.0;
    for (size_t k = 1; k <= Ns; k++)
        p += exp(c->d[k] - mp);
    for (size_t k = (size_t)Ns + 1; k < c->M; k++)
        a += exp(c->d[k] - ma);
    *sp = p;
    *sa = a;
}

/* ---- AVX2 kernel ---------------------------------------------------------- */
#ifdef TR_X86

/* Q is a compile-time constant at every call, so u[] lives in registers. */
static inline __attribute__((always_inline)) TR_AVX2_FMA void
update_avx2_q(tr_kalman_cpu *c, float r, double LX, uint32_t Ns, double *maxp,
              double *maxa, const uint32_t Q)
{
    const uint32_t n = 2 * Q;
    const size_t S = c->S;
    float *z = c->z;
    const float *K = c->K;
    const __m256 vr = _mm256_set1_ps(r);
    const __m256d vLX = _mm256_set1_pd(LX);
    /* The AR coefficients are broadcast from memory where they are used
     * (fewer live registers than keeping 2Q broadcasts). */
    const float *ax = c->axf, *an = c->anf;
    __m256d vmp = _mm256_set1_pd(-INFINITY), vma = _mm256_setzero_pd();
    const size_t M1 = c->M - 1;
    for (size_t k = c->top + 1 - LANES; k >= 1; k -= LANES) {
        __m256 u[2 * TR_KALMAN_MAX_Q];
        for (uint32_t i = 0; i < n; i++)
            u[i] = _mm256_loadu_ps(z + i * S + k);
        const __m256 e = _mm256_sub_ps(vr, _mm256_add_ps(u[0], u[Q]));
        const __m256 hq = _mm256_mul_ps(_mm256_loadu_ps(c->h + k), _mm256_mul_ps(e, e));
        const __m256d hlo = _mm256_cvtps_pd(_mm256_castps256_ps128(hq));
        const __m256d hhi = _mm256_cvtps_pd(_mm256_extractf128_ps(hq, 1));
        const __m256d dlo =
            _mm256_sub_pd(_mm256_add_pd(_mm256_loadu_pd(c->d + k - 1),
                                        _mm256_sub_pd(_mm256_loadu_pd(c->cq + k), hlo)),
                          vLX);
        const __m256d dhi = _mm256_sub_pd(
            _mm256_add_pd(_mm256_loadu_pd(c->d + k + 3),
                          _mm256_sub_pd(_mm256_loadu_pd(c->cq + k + 4), hhi)),
            vLX);
        _mm256_storeu_pd(c->d + k, dlo);
        _mm256_storeu_pd(c->d + k + 4, dhi);
        /* maxima of whole blocks; the block across N_s and the one with
         * padding lanes are done after the loop */
        if (k + LANES - 1 <= Ns)
            vmp = _mm256_max_pd(vmp, _mm256_max_pd(dlo, dhi));
        else if (k > Ns && k + LANES - 1 <= M1)
            vma = _mm256_max_pd(vma, _mm256_max_pd(dlo, dhi));
        for (uint32_t i = 0; i < n; i++)
            u[i] = _mm256_fmadd_ps(_mm256_loadu_ps(K + i * S + k), e, u[i]);
        __m256 x0 = _mm256_mul_ps(_mm256_broadcast_ss(ax), u[0]);
        __m256 n0 = _mm256_mul_ps(_mm256_broadcast_ss(an), u[Q]);
        for (uint32_t i = 1; i < Q; i++) {
            x0 = _mm256_fmadd_ps(_mm256_broadcast_ss(ax + i), u[i], x0);
            n0 = _mm256_fmadd_ps(_mm256_broadcast_ss(an + i), u[Q + i], n0);
        }
        _mm256_storeu_ps(z + k + 1, x0);
        _mm256_storeu_ps(z + (size_t)Q * S + k + 1, n0);
        for (uint32_t i = 1; i < Q; i++) {
            _mm256_storeu_ps(z + i * S + k + 1, u[i - 1]);
            _mm256_storeu_ps(z + (Q + i) * S + k + 1, u[Q + i - 1]);
        }
        if (k < LANES) break; /* k is unsigned: stop after the block at k = 1 */
    }
    double t[4], mp = -INFINITY, ma = 0.0;
    _mm256_storeu_pd(t, vmp);
    for (int i = 0; i < 4; i++)
        mp = t[i] > mp ? t[i] : mp;
    _mm256_storeu_pd(t, vma);
    for (int i = 0; i < 4; i++)
        ma = t[i] > ma ? t[i] : ma;
    const size_t edge[2] = {(Ns - 1) / LANES * LANES + 1, c->top + 1 - LANES};
    for (int b = 0; b < 2; b++)
        for (size_t k = edge[b]; k < edge[b] + LANES && k <= M1; k++) {
            if (k <= Ns)
                mp = c->d[k] > mp ? c->d[k] : mp;
            else
                ma = c->d[k] > ma ? c->d[k] : ma;
        }
    *maxp = mp;
    *maxa = ma;
}

#define UPD(QQ)                                                                          \
    TR_AVX2_FMA static void update_avx2_##QQ(tr_kalman_cpu *c, float r, double LX,       \
                                             uint32_t Ns, double *mp, double *ma)        \
    {                                                                                    \
        update_avx2_q(c, r, LX, Ns, mp, ma, QQ);                                         \
    }
UPD(1)
UPD(2)
UPD(3)
UPD(4)
UPD(5)
UPD(6)
TR_AVX2_FMA static void update_avx2_any(tr_kalman_cpu *c, float r, double LX, uint32_t Ns,
                                        double *mp, double *ma)
{
    update_avx2_q(c, r, LX, Ns, mp, ma, c->Q);
}

/* exp(x) for x <= 0 in float (Cephes polynomial, about 2 ulp); x below -87
 * gives about 1e-38 instead of 0, negligible beside the maximum's 1. */
static inline __attribute__((always_inline)) TR_AVX2_FMA __m256 exp_avx2(__m256 x)
{
    x = _mm256_max_ps(x, _mm256_set1_ps(-87.0f));
    const __m256 fx =
        _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    x = _mm256_sub_ps(x, _mm256_mul_ps(fx, _mm256_set1_ps(0.693359375f)));
    x = _mm256_sub_ps(x, _mm256_mul_ps(fx, _mm256_set1_ps(-2.12194440e-4f)));
    __m256 y = _mm256_set1_ps(1.9875691500E-4f);
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(1.3981999507E-3f));
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(8.3334519073E-3f));
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(4.1665795894E-2f));
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(1.6666665459E-1f));
    y = _mm256_add_ps(_mm256_mul_ps(y, x), _mm256_set1_ps(5.0000001201E-1f));
    y = _mm256_add_ps(_mm256_mul_ps(y, _mm256_mul_ps(x, x)), x);
    y = _mm256_add_ps(y, _mm256_set1_ps(1.0f));
    __m256i e = _mm256_add_epi32(_mm256_cvttps_epi32(fx), _mm256_set1_epi32(127));
    e = _mm256_slli_epi32(e, 23);
    return _mm256_mul_ps(y, _mm256_castsi256_ps(e));
}

/* exp(d[k..k+7] - ref) in float */
static inline __attribute__((always_inline)) TR_AVX2_FMA __m256 exp8_avx2(const double *d,
                                                                          __m256d lo,
                                                                          __m256d hi)
{
    const __m256d xlo = _mm256_sub_pd(_mm256_loadu_pd(d), lo);
    const __m256d xhi = _mm256_sub_pd(_mm256_loadu_pd(d + 4), hi);
    return exp_avx2(_mm256_set_m128(_mm256_cvtpd_ps(xhi), _mm256_cvtpd_ps(xlo)));
}

/* One pass over the blocks of 8 registers into two float accumulators; the
 * block across N_s and the block with padding lanes (k > M-1) go lane by
 * lane through masks. */
TR_AVX2_FMA static void sumexp_avx2(const tr_kalman_cpu *c, uint32_t Ns, double mp,
                                    double ma, double *sp, double *sa)
{
    const __m256d vmp = _mm256_set1_pd(mp), vma = _mm256_set1_pd(ma);
    const size_t M1 = c->M - 1;
    __m256 accp = _mm256_setzero_ps(), acca = _mm256_setzero_ps();
    for (size_t k = 1; k <= c->top; k += LANES) {
        if (k + LANES - 1 <= Ns) {
            accp = _mm256_add_ps(accp, exp8_avx2(c->d + k, vmp, vmp));
        } else if (k > Ns && k + LANES - 1 <= M1) {
            acca = _mm256_add_ps(acca, exp8_avx2(c->d + k, vma, vma));
        } else {
            const __m256d plo =
                _mm256_castsi256_pd(_mm256_loadu_si256((const __m256i *)(c->pi + k)));
            const __m256d phi =
                _mm256_castsi256_pd(_mm256_loadu_si256((const __m256i *)(c->pi + k + 4)));
            const __m256 e = exp8_avx2(c->d + k, _mm256_blendv_pd(vma, vmp, plo),
                                       _mm256_blendv_pd(vma, vmp, phi));
            accp = _mm256_fmadd_ps(e, _mm256_loadu_ps(c->pm + k), accp);
            acca = _mm256_fmadd_ps(e, _mm256_loadu_ps(c->am + k), acca);
        }
    }
    float f[8], g[8];
    _mm256_storeu_ps(f, accp);
    _mm256_storeu_ps(g, acca);
    double p = 0.0, a = 0.0;
    for (int i = 0; i < 8; i++) {
        p += (double)f[i];
        a += (double)g[i];
    }
    *sp = p;
    *sa = a;
}
#endif

/* A kernel: the update for a model (an AVX2 one only for block companion
 * models) and the sums of eq. 15. */
typedef struct {
    tr_simd_kernel info;
    update_fn (*update)(const tr_kalman_cpu *c);
    sumexp_fn sumexp;
} kalman_kernel;

static update_fn update_generic_for(const tr_kalman_cpu *c)
{
    (void)c;
    return update_generic;
}

#ifdef TR_X86
static update_fn update_avx2_for(const tr_kalman_cpu *c)
{
    if (!c->m->companion) return update_generic;
    switch (c->Q) {
    case 1:
        return update_avx2_1;
    case 2:
        return update_avx2_2;
    case 3:
        return update_avx2_3;
    case 4:
        return update_avx2_4;
    case 5:
        return update_avx2_5;
    case 6:
        return update_avx2_6;
    default:
        return update_avx2_any;
    }
}
#endif

static const kalman_kernel kernels[] = {
    {{"generic", 0, 0}, update_generic_for, sumexp_generic},
#ifdef TR_X86
    {{"avx2", TR_CPU_AVX2 | TR_CPU_FMA, 0}, update_avx2_for, sumexp_avx2},
#endif
};
static tr_simd_table table = TR_SIMD_TABLE(kernels);

int tr_kalman_cpu_select(const char *kernel)
{
    return tr_simd_select(&table, kernel);
}

/* ---- object ------------------------------------------------------------------ */

tr_kalman_cpu *tr_kalman_cpu_create(const tr_kalman_model *m)
{
    tr_kalman_cpu *c = calloc(1, sizeof *c);
    if (!c) return NULL;
    c->m = m;
    c->M = m->M;
    c->Q = m->Q;
    c->n = m->n;
    c->top = ((size_t)(m->M - 1) + LANES - 1) / LANES * LANES;
    c->S = c->top + LANES + 1;
    const size_t n = c->n, S = c->S;
    c->z = calloc(n * S, sizeof(float));
    c->K = calloc(n * S, sizeof(float));
    c->Af = calloc(n * n, sizeof(float));
    c->h = calloc(S, sizeof(float));
    c->cq = calloc(S, sizeof(double));
    c->d = calloc(S, sizeof(double));
    c->pm = calloc(S, sizeof(float));
    c->am = calloc(S, sizeof(float));
    c->pi = calloc(S, sizeof(int64_t));
    if (!c->z || !c->K || !c->Af || !c->h || !c->cq || !c->d || !c->pm || !c->am ||
        !c->pi) {
        tr_kalman_cpu_destroy(c);
        return NULL;
    }
    for (size_t k = 1; k <= m->M - 1; k++) {
        for (size_t i = 0; i < n; i++)
            c->K[i * S + k] = (float)m->K[(k - 1) * n + i];
        c->h[k] = (float)m->h[k - 1];
        c->cq[k] = m->c[k - 1];
    }
    for (size_t i = 0; i < n * n; i++)
        c->Af[i] = (float)m->A[i];
    for (uint32_t i = 0; i < m->Q; i++) {
        c->axf[i] = (float)m->ax[i];
        c->anf[i] = (float)m->an[i];
    }
    tr_kalman_cpu_reset(c);
    return c;
}

void tr_kalman_cpu_destroy(tr_kalman_cpu *c)
{
    if (!c) return;
    free(c->z);
    free(c->K);
    free(c->Af);
    free(c->h);
    free(c->cq);
    free(c->d);
    free(c->pm);
    free(c->am);
    free(c->pi);
    free(c);
}

void tr_kalman_cpu_reset(tr_kalman_cpu *c)
{
    memset(c->z, 0, (size_t)c->n * c->S * sizeof(float));
    for (size_t k = 0; k < c->S; k++)
        c->d[k] = -INFINITY;
    memset(c->zM, 0, sizeof c->zM);
}

/* Noise-only filter #M in double (eqs. 2-5): returns q_M, advances zM. */
static double noise_step(tr_kalman_cpu *c, double r, int missing)
{
    const tr_kalman_model *m = c->m;
    const uint32_t n = c->n, Q = c->Q, M = c->M;
    const double *K = m->K + (size_t)(M - 1) * n;
    const double e = missing ? 0.0 : r - (c->zM[0] + c->zM[Q]);
    for (uint32_t i = 0; i < n; i++)
        c->tmp[i] = c->zM[i] + K[i] * e;
    if (m->companion) {
        double x0 = 0.0, n0 = 0.0;
        for (uint32_t i = 0; i < Q; i++) {
            x0 += m->ax[i] * c->tmp[i];
            n0 += m->an[i] * c->tmp[Q + i];
        }
        for (uint32_t i = Q - 1; i >= 1; i--) {
            c->zM[i] = c->tmp[i - 1];
            c->zM[Q + i] = c->tmp[Q + i - 1];
        }
        c->zM[0] = x0;
        c->zM[Q] = n0;
    } else {
        for (uint32_t i = 0; i < n; i++) {
            double s = 0.0;
            for (uint32_t l = 0; l < n; l++)
                s += m->A[(size_t)i * n + l] * c->tmp[l];
            c->zM[i] = s;
        }
    }
    return missing ? 0.0 : m->c[M - 1] - m->h[M - 1] * e * e;
}

/* A missing sample: every filter predicts without update, q_k = 0. */
static void update_missing(tr_kalman_cpu *c, double LX)
{
    const uint32_t n = c->n;
    const size_t S = c->S;
    for (size_t k = c->top; k >= 1; k--) {
        float u[2 * TR_KALMAN_MAX_Q];
        for (uint32_t i = 0; i < n; i++)
            u[i] = c->z[i * S + k];
        c->d[k] = c->d[k - 1] - LX;
        for (uint32_t i = 0; i < n; i++) {
            float s = 0.0f;
            for (uint32_t l = 0; l < n; l++)
                s += c->Af[i * n + l] * u[l];
            c->z[i * S + k + 1] = s;
        }
    }
}

static inline double logaddexp(double a, double b)
{
    const double mx = a > b ? a : b;
    if (mx == -INFINITY) return -INFINITY;
    return mx + log(exp(a - mx) + exp(b - mx));
}

uint64_t tr_kalman_cpu_run(tr_kalman_cpu *c, const tr_kalman_params *p, const float *x,
                           size_t nsamp, double *llr, uint32_t *kmax, double kmax_above)
{
    const kalman_kernel *kern = tr_simd_get(&table);
    const update_fn upd = kern->update(c);
    const sumexp_fn sumexp = kern->sumexp;
    const uint32_t M = c->M, n = c->n, Ns = p->Ns;
    const size_t S = c->S;
    if (c->mask_ns != Ns) {
        for (size_t k = 0; k < S; k++) {
            c->pm[k] = k >= 1 && k <= Ns ? 1.0f : 0.0f;
            c->am[k] = k > Ns && k < M ? 1.0f : 0.0f;
            c->pi[k] = k <= Ns ? -1 : 0;
        }
        c->mask_ns = Ns;
    }
    uint64_t bad = 0;
    for (size_t j = 0; j < nsamp; j++) {
        const float r = x[j];
        const int missing = !isfinite(r);
        bad += (uint64_t)missing;
        /* eq. 9 from d_{M-1}[j-1], filter #M first */
        const double qM = noise_step(c, (double)r, missing);
        const double LX = qM + logaddexp(p->log1m_alpha, c->d[M - 1]);
        c->d[0] = p->log_alpha;          /* eq. 10 as eq. 6 with d_0 = log(alpha) */
        double mp = -INFINITY, ma = 0.0; /* maxima of present and absent d_k */
        if (missing) {
            update_missing(c, LX);
            for (uint32_t k = 1; k <= M - 1; k++) {
                if (k <= Ns)
                    mp = c->d[k] > mp ? c->d[k] : mp;
                else
                    ma = c->d[k] > ma ? c->d[k] : ma;
            }
        } else {
            upd(c, r, LX, Ns, &mp, &ma);
        }
        for (size_t k = M; k <= c->top; k++)
            c->d[k] = -INFINITY; /* padding */
        /* z_{1|0} of the next sample: the noise-only prediction */
        for (uint32_t i = 0; i < n; i++)
            c->z[i * S + 1] = (float)c->zM[i];
        /* eq. 15 as log-sum-exp */
        double sp, sa;
        sumexp(c, Ns, mp, ma, &sp, &sa);
        sa += exp(-ma); /* hypothesis M: d_M = 0 */
        const double L = (mp - ma) + log(sp / sa);
        if (llr) llr[j] = L;
        if (kmax && L > kmax_above) {
            uint32_t best = 1;
            for (uint32_t k = 2; k <= M - 1; k++)
                if (c->d[k] > c->d[best]) best = k;
            kmax[j] = best;
        }
    }
    return bad;
}
