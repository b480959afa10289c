/*
 * Edge localizer, optimized CPU variant.
 *
 * Same state machine as edges_ref.c, but samples are classified 64 at a time
 * into bit masks (low, high, at-or-above mid, below mid) with SIMD compares, and
 * the state machine then jumps from event to event with bit scans instead of
 * visiting every sample. Between transitions only two facts matter: where the
 * signal was last in the old state, and the first crossing after that; both are
 * one bit scan each. Results are identical to the reference (same formula for
 * the crossing time, evaluated for the same pair of samples).
 *
 * Kernels in the VOLK manner: a generic classifier beside SSE2 and AVX2 ones,
 * chosen once at run time, all tested against the reference variant.
 */
#include "edges/edges_internal.h"

#include "common/simd.h"

#include <math.h>
#include <string.h>

/* Masks of 64 consecutive samples; bit i describes sample i. */
typedef struct {
    uint64_t fin; /* finite */
    uint64_t le;  /* x <= low */
    uint64_t ge;  /* x >= high */
    uint64_t lt;  /* x < mid */
} masks64;

typedef void (*classify_fn)(const float *x, tr_edges_lv lv, masks64 *m);

static void classify_generic(const float *x, tr_edges_lv lv, masks64 *m)
{
    uint64_t fin = 0, le = 0, ge = 0, lt = 0;
    for (int i = 0; i < 64; i++) {
        const float v = x[i];
        fin |= (uint64_t)tr_edges_finite(v) << i;
        le |= (uint64_t)(v <= lv.low) << i;
        ge |= (uint64_t)(v >= lv.high) << i;
        lt |= (uint64_t)(v < lv.mid) << i;
    }
    m->fin = fin;
    m->le = le;
    m->ge = ge;
    m->lt = lt;
}

#ifdef TR_X86
static void classify_sse2(const float *x, tr_edges_lv lv, masks64 *m)
{
    const __m128 lo = _mm_set1_ps(lv.low), hi = _mm_set1_ps(lv.high);
    const __m128 mid = _mm_set1_ps(lv.mid), inf = _mm_set1_ps(INFINITY);
    const __m128 absmask = _mm_castsi128_ps(_mm_set1_epi32(0x7fffffff));
    uint64_t fin = 0, le = 0, ge = 0, lt = 0;
    for (int j = 0; j < 16; j++) {
        const __m128 v = _mm_loadu_ps(x + 4 * j);
        const int s = 4 * j;
        fin |= (uint64_t)_mm_movemask_ps(_mm_cmplt_ps(_mm_and_ps(v, absmask), inf)) << s;
        le |= (uint64_t)_mm_movemask_ps(_mm_cmple_ps(v, lo)) << s;
        ge |= (uint64_t)_mm_movemask_ps(_mm_cmpge_ps(v, hi)) << s;
        lt |= (uint64_t)_mm_movemask_ps(_mm_cmplt_ps(v, mid)) << s;
    }
    m->fin = fin;
    m->le = le;
    m->ge = ge;
    m->lt = lt;
}

TR_AVX2 static void classify_avx2(const float *x, tr_edges_lv lv, masks64 *m)
{
    const __m256 lo = _mm256_set1_ps(lv.low), hi = _mm256_set1_ps(lv.high);
    const __m256 mid = _mm256_set1_ps(lv.mid), inf = _mm256_set1_ps(INFINITY);
    const __m256 absmask = _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff));
    uint64_t fin = 0, le = 0, ge = 0, lt = 0;
    for (int j = 0; j < 8; j++) {
        const __m256 v = _mm256_loadu_ps(x + 8 * j);
        const int s = 8 * j;
        fin |= (uint64_t)_mm256_movemask_ps(
                   _mm256_cmp_ps(_mm256_and_ps(v, absmask), inf, _CMP_LT_OQ))
               << s;
        le |= (uint64_t)_mm256_movemask_ps(_mm256_cmp_ps(v, lo, _CMP_LE_OQ)) << s;
        ge |= (uint64_t)_mm256_movemask_ps(_mm256_cmp_ps(v, hi, _CMP_GE_OQ)) << s;
        lt |= (uint64_t)_mm256_movemask_ps(_mm256_cmp_ps(v, mid, _CMP_LT_OQ)) << s;
    }
    m->fin = fin;
    m->le = le;
    m->ge = ge;
    m->lt = lt;
}
#endif

/* Bits at positions >= p (p may be 64). */
static inline uint64_t bits_from(int p)
{
    return p >= 64 ? 0 : ~0ULL << p;
}
/* Bits at positions < p (p may be 64). */
static inline uint64_t bits_below(int p)
{
    return p >= 64 ? ~0ULL : (1ULL << p) - 1;
}

static inline int lowest(uint64_t v)
{
    return __builtin_ctzll(v);
}
static inline int highest(uint64_t v)
{
    return 63 - __builtin_clzll(v);
}

/* The event loop, inlined into one runner per classifier so that the SIMD
 * classifier is inlined too (no indirect call per 64 samples). */
static inline __attribute__((always_inline)) size_t
run_impl(tr_edges_lv lv, tr_edges_carry *c, const float *x, size_t n, tr_edge *out,
         size_t cap, size_t *consumed, classify_fn classify)
{
    const int64_t pos0 = c->pos;
    int state = c->state, has_cand = c->has_cand;
    double cand = c->cand;
    /* Crossing bit 0 of a block pairs its first sample with the one before. */
    uint64_t prev_lt = 0, prev_ge = 0;
    if (c->has_prev && tr_edges_finite(c->x_prev)) {
        prev_lt = c->x_prev < lv.mid;
        prev_ge = !prev_lt;
    }
    size_t nout = 0;
    float tail[64];

    for (size_t base = 0; base < n; base += 64) {
        const size_t len = n - base < 64 ? n - base : 64;
        const float *xb = x + base;
        if (len < 64) {
            /* NaN padding is intermediate and forms no crossing. */
            memcpy(tail, xb, len * sizeof(float));
            for (size_t i = len; i < 64; i++)
                tail[i] = NAN;
            xb = tail;
        }
        masks64 m;
        classify(xb, lv, &m);
        const uint64_t lo = m.le & m.fin, hi = m.ge & m.fin;
        const uint64_t lt = m.lt & m.fin, ge = ~m.lt & m.fin;
        const uint64_t rise = ge & ((lt << 1) | prev_lt); /* x[i-1] < mid <= x[i] */
        const uint64_t fall = lt & ((ge << 1) | prev_ge); /* x[i] < mid <= x[i-1] */
        prev_lt = lt >> 63;
        prev_ge = ge >> 63;

        int p0 = 0; /* first bit not yet accounted for */
        while (p0 < 64) {
            if (state == TR_STATE_NONE) {
                const uint64_t s = (lo | hi) & bits_from(p0);
                if (!s) break;
                const int p = lowest(s);
                state = (lo >> p) & 1 ? TR_STATE_LOW : TR_STATE_HIGH;
                has_cand = 0;
                p0 = p + 1;
                continue;
            }
            const uint64_t old_s = state == TR_STATE_LOW ? lo : hi;
            const uint64_t new_s = state == TR_STATE_LOW ? hi : lo;
            const uint64_t cross = state == TR_STATE_LOW ? rise : fall;
            const uint64_t nxt = new_s & bits_from(p0);
            const int end = nxt ? lowest(nxt) : 64;
            /* Crossings count only after the last old-state sample before end. */
            uint64_t window = bits_from(p0);
            const uint64_t olds = old_s & window & bits_below(end);
            if (olds) {
                has_cand = 0;
                window = bits_from(highest(olds) + 1);
            }
            if (!has_cand) {
                const uint64_t cr = cross & window & bits_below(end + 1);
                if (cr) {
                    const int k = lowest(cr);
                    const int64_t i1 = (int64_t)base + k; /* pair (i1-1, i1) */
                    const float xa = i1 > 0 ? x[i1 - 1] : c->x_prev;
                    cand = tr_edges_cross_time(pos0 + i1 - 1, xa, x[i1], lv.mid);
                    has_cand = 1;
                }
            }
            if (!nxt) break;
            const int64_t at = (int64_t)base + end;
            if (nout == cap) {
                /* Stop before the sample whose transition does not fit. */
                c->state = state;
                c->has_cand = has_cand;
                c->cand = cand;
                if (at > 0) {
                    c->x_prev = x[at - 1];
                    c->has_prev = 1;
                }
                c->pos = pos0 + at;
                *consumed = (size_t)at;
                return nout;
            }
            tr_edge *e = &out[nout++];
            e->time = has_cand ? cand : NAN;
            e->sample = pos0 + at;
            e->polarity = state == TR_STATE_LOW ? 1 : -1;
            e->reserved = 0;
            state = state == TR_STATE_LOW ? TR_STATE_HIGH : TR_STATE_LOW;
            has_cand = 0;
            p0 = end + 1;
        }
    }
    c->state = state;
    c->has_cand = has_cand;
    c->cand = cand;
    if (n > 0) {
        c->x_prev = x[n - 1];
        c->has_prev = 1;
    }
    c->pos = pos0 + (int64_t)n;
    *consumed = n;
    return nout;
}

static size_t run_generic(tr_edges_lv lv, tr_edges_carry *c, const float *x, size_t n,
                          tr_edge *out, size_t cap, size_t *consumed)
{
    return run_impl(lv, c, x, n, out, cap, consumed, classify_generic);
}

#ifdef TR_X86
static size_t run_sse2(tr_edges_lv lv, tr_edges_carry *c, const float *x, size_t n,
                       tr_edge *out, size_t cap, size_t *consumed)
{
    return run_impl(lv, c, x, n, out, cap, consumed, classify_sse2);
}

TR_AVX2 static size_t run_avx2(tr_edges_lv lv, tr_edges_carry *c, const float *x,
                               size_t n, tr_edge *out, size_t cap, size_t *consumed)
{
    return run_impl(lv, c, x, n, out, cap, consumed, classify_avx2);
}
#endif

typedef struct {
    tr_simd_kernel info;
    tr_edges_run_fn run;
} edges_kernel;

static const edges_kernel kernels[] = {
    {{"generic", 0, 0}, run_generic},
#ifdef TR_X86
    {{"sse2", TR_CPU_SSE2, 0}, run_sse2},
    {{"avx2", TR_CPU_AVX2, 0}, run_avx2},
#endif
};
static tr_simd_table table = TR_SIMD_TABLE(kernels);

int tr_edges_cpu_select(const char *kernel)
{
    return tr_simd_select(&table, kernel);
}

size_t tr_edges_run_cpu(tr_edges_lv lv, tr_edges_carry *c, const float *x, size_t n,
                        tr_edge *out, size_t cap, size_t *consumed)
{
    const edges_kernel *k = tr_simd_get(&table);
    return k->run(lv, c, x, n, out, cap, consumed);
}
