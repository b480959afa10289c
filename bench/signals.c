/*
 * Synthetic pulsed test signals (see signals.h).
 *
 * The signal is built pulse by pulse. Each pulse starts with an event at a
 * fractional time t0 (so that mid crossings fall anywhere between samples):
 *   edge         linear ramp from the old level to the new one over `rise`
 *                samples, then damped ringing around the new level;
 *   oscillation  ramp to mid, a few samples dithering around mid, then the rest
 *                of the ramp: several crossings of mid, one transition;
 *   runt         ramp toward the other level to between 55 % and 80 % of the
 *                amplitude, a short top, and back: crossings, no transition.
 * Bounded noise is added to every sample, and NaN/Inf bursts replace samples
 * at random. Only +, -, * and / are used per sample, in a fixed order, so the
 * output is the same on every IEEE 754 machine; the few constants that need
 * exp and sin/cos come from short series evaluated the same way.
 */
#include "signals.h"

#include <math.h>
#include <string.h>

tr_sig_config tr_sig_config_default(void)
{
    tr_sig_config c;
    memset(&c, 0, sizeof c);
    c.low_level = 0.0f;
    c.high_level = 1.0f;
    c.min_width = 24.0;
    c.max_width = 200.0;
    c.rise = 3.0;
    c.noise_rms = 0.02;
    c.ring_amp = 0.08;
    c.ring_period = 7.0;
    c.ring_decay = 4.0;
    c.runt_prob = 0.05;
    c.osc_prob = 0.05;
    c.drop_prob = 0.0;
    c.seed = 1;
    return c;
}

/* ---- deterministic random numbers ------------------------------------- */

/* xorshift64* (Vigna), seeded through splitmix64 so that any seed works. */
typedef struct {
    uint64_t s;
} sig_rng;

static void rng_seed(sig_rng *r, uint64_t seed)
{
    uint64_t z = seed + 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    r->s = z ? z : 0x2545f4914f6cdd1dull;
}

static uint64_t rng_next(sig_rng *r)
{
    uint64_t x = r->s;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    r->s = x;
    return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, 1) with 53 random bits. */
static double rng_uniform(sig_rng *r)
{
    return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

static double rng_range(sig_rng *r, double a, double b)
{
    return a + (b - a) * rng_uniform(r);
}

/* Unit-variance noise bounded by +-2*sqrt(3): the sum of four 16-bit uniforms
 * (Irwin-Hall), one PRNG draw per sample. */
static double rng_noise(sig_rng *r)
{
    const uint64_t u = rng_next(r);
    const double s = (double)(u & 0xffff) + (double)((u >> 16) & 0xffff) +
                     (double)((u >> 32) & 0xffff) + (double)(u >> 48);
    return (s * (1.0 / 65536.0) - 2.0) * 1.7320508075688772;
}

/* ---- series for the constants ----------------------------------------- */

static double series_exp(double x)
{
    int halvings = 0;
    while (x > 0.5 || x < -0.5) {
        x *= 0.5;
        halvings++;
    }
    double term = 1.0, sum = 1.0;
    for (int k = 1; k < 24; k++) {
        term *= x / k;
        sum += term;
    }
    while (halvings-- > 0)
        sum *= sum;
    return sum;
}

static void series_sincos(double w, double *s, double *c)
{
    const double two_pi = 6.283185307179586;
    while (w > 3.141592653589793)
        w -= two_pi;
    while (w < -3.141592653589793)
        w += two_pi;
    double ts = w, tc = 1.0, ss = w, cc = 1.0;
    for (int k = 1; k < 20; k++) {
        ts *= -w * w / ((2.0 * k) * (2.0 * k + 1.0));
        tc *= -w * w / ((2.0 * k - 1.0) * (2.0 * k));
        ss += ts;
        cc += tc;
    }
    *s = ss;
    *c = cc;
}

/* ---- generator -------------------------------------------------------- */

static int level_of(float f, float low, float high)
{
    if ((f - f) != 0.0f) return 0; /* NaN and Inf are intermediate */
    return f <= low ? 1 : (f >= high ? 2 : 0);
}

size_t tr_sig_count_transitions(const float *x, size_t n, float low, float high)
{
    size_t edges = 0;
    int state = 0;
    for (size_t k = 0; k < n; k++) {
        const int level = level_of(x[k], low, high);
        if (level != 0) {
            if (state != 0 && level != state) edges++;
            state = level;
        }
    }
    return edges;
}

typedef struct {
    const tr_sig_config *cfg;
    sig_rng rng;
    float *x;
    size_t n;
    double amp;     /* high_level - low_level */
    double noise;   /* noise scale, signal units */
    double ring_c;  /* ringing step: decay * cos(w) */
    double ring_s;  /* decay * sin(w) */
    double ring_re; /* current ringing phasor (real part is added) */
    double ring_im;
    float low, high; /* state boundaries, for counting transitions */
    int state;       /* 0 none yet, 1 low, 2 high: as a detector sees the samples */
    tr_sig_info info;
} sig_gen;

/* Count state changes as the definition of edges.h does (non-finite samples
 * are intermediate). */
static void count_state(sig_gen *g, float f)
{
    const int level = level_of(f, g->low, g->high);
    if (level != 0) {
        if (g->state != 0 && level != g->state) g->info.edges++;
        g->state = level;
    }
}

/* Write sample i = clean value + ringing + noise; count state changes. */
static void put(sig_gen *g, size_t i, double clean, int ringing)
{
    double v = clean + g->noise * rng_noise(&g->rng);
    if (ringing) {
        v += g->ring_re;
        const double re = g->ring_re * g->ring_c - g->ring_im * g->ring_s;
        const double im = g->ring_re * g->ring_s + g->ring_im * g->ring_c;
        g->ring_re = re;
        g->ring_im = im;
    }
    g->x[i] = (float)v;
    count_state(g, (float)v);
}

/* Piecewise-linear value at time t of a path through (t_k, v_k), k < m. */
static double path_at(const double *t, const double *v, int m, double tt)
{
    if (tt <= t[0]) return v[0];
    for (int k = 1; k < m; k++) {
        if (tt < t[k])
            return v[k - 1] + (v[k] - v[k - 1]) * ((tt - t[k - 1]) / (t[k] - t[k - 1]));
    }
    return v[m - 1];
}

int tr_sig_generate(const tr_sig_config *cfg, float *x, size_t n, tr_sig_info *info)
{
    if (cfg == NULL || (x == NULL && n > 0) || !(cfg->high_level > cfg->low_level) ||
        !(cfg->min_width >= 1.0) || !(cfg->max_width >= cfg->min_width) ||
        !(cfg->rise > 0.0) || !(cfg->rise < cfg->min_width) || !(cfg->noise_rms >= 0.0) ||
        !(cfg->ring_amp >= 0.0) || !(cfg->ring_period > 0.0) ||
        !(cfg->ring_decay > 0.0) || !(cfg->runt_prob >= 0.0) || !(cfg->osc_prob >= 0.0) ||
        !(cfg->drop_prob >= 0.0))
        return -1;

    sig_gen g;
    memset(&g, 0, sizeof g);
    g.cfg = cfg;
    rng_seed(&g.rng, cfg->seed);
    g.x = x;
    g.n = n;
    const double lo = cfg->low_level, hi = cfg->high_level;
    g.amp = hi - lo;
    g.noise = cfg->noise_rms * g.amp;
    double ws, wc;
    series_sincos(6.283185307179586 / cfg->ring_period, &ws, &wc);
    const double decay = series_exp(-1.0 / cfg->ring_decay);
    g.ring_c = decay * wc;
    g.ring_s = decay * ws;
    g.info.low_level = cfg->low_level;
    g.info.high_level = cfg->high_level;
    g.info.low = (float)(lo + 0.1 * g.amp);
    g.info.mid = (float)(lo + 0.5 * g.amp);
    g.info.high = (float)(lo + 0.9 * g.amp);
    g.low = g.info.low;
    g.high = g.info.high;

    const double mid = lo + 0.5 * g.amp;
    double level = (rng_next(&g.rng) & 1) ? hi : lo; /* the level being held */
    size_t i = 0;
    /* Time of the next event: a settled stretch first. */
    double t0 = rng_range(&g.rng, cfg->min_width, cfg->max_width);
    int ringing = 0;

    while (i < n) {
        /* Hold (with the ringing of the last edge) until the event. */
        const size_t pulse_start = i;
        for (; i < n && (double)i < t0; i++)
            put(&g, i, level, ringing);
        if (i >= n) break;

        const double other = level == hi ? lo : hi;
        const double u = rng_uniform(&g.rng);
        const double r = cfg->rise;
        double pt[8], pv[8];
        int m = 0, changes;
        pt[m] = t0, pv[m++] = level;
        if (u < cfg->runt_prob) {
            const double peak = level + (other - level) * rng_range(&g.rng, 0.55, 0.80);
            const double top = rng_range(&g.rng, 1.0, 8.0);
            pt[m] = t0 + r, pv[m++] = peak;
            pt[m] = t0 + r + top, pv[m++] = peak;
            pt[m] = t0 + 2.0 * r + top, pv[m++] = level;
            changes = 0;
            g.info.runts++;
        } else if (u < cfg->runt_prob + cfg->osc_prob) {
            /* Back and forth across mid 2 to 4 times, then on to the new level. */
            const double d = (0.04 + 0.06 * rng_uniform(&g.rng)) * (other - level);
            const int k = 2 + (int)(rng_next(&g.rng) % 3);
            const double step = rng_range(&g.rng, 1.0, 2.5);
            double t = t0 + 0.5 * r;
            pt[m] = t, pv[m++] = mid;
            for (int j = 0; j < k; j++) {
                t += step;
                pt[m] = t, pv[m++] = mid + ((j & 1) ? d : -d);
            }
            pt[m] = t + 0.5 * r, pv[m++] = other;
            changes = 1;
            g.info.oscillations++;
        } else {
            pt[m] = t0 + r, pv[m++] = other;
            changes = 1;
        }

        /* The event itself; the old ringing stops when it begins. */
        ringing = 0;
        for (; i < n && (double)i < pt[m - 1]; i++)
            put(&g, i, path_at(pt, pv, m, (double)i), 0);

        if (changes) {
            /* Overshoot past the new level, then damped oscillation. */
            level = other;
            g.ring_re = cfg->ring_amp * (other - pv[0]);
            g.ring_im = 0.0;
            ringing = 1;
        }

        /* A burst of NaN or Inf somewhere in this pulse (the edge included),
         * over samples already written. */
        if (cfg->drop_prob > 0.0 && rng_uniform(&g.rng) < cfg->drop_prob &&
            i > pulse_start) {
            const size_t at =
                pulse_start + (size_t)((double)(i - pulse_start) * rng_uniform(&g.rng));
            const size_t len = 1 + (size_t)(rng_next(&g.rng) % 4);
            const uint64_t kind = rng_next(&g.rng) % 3;
            for (size_t j = at; j < at + len && j < i; j++) {
                x[j] = kind == 0 ? NAN : (kind == 1 ? INFINITY : -INFINITY);
                g.info.drops++;
            }
        }
        t0 = pt[m - 1] + rng_range(&g.rng, cfg->min_width, cfg->max_width);
    }

    if (info) {
        /* A drop can delay a state change (or hide one at the very end):
         * count again over the final samples. */
        if (g.info.drops > 0)
            g.info.edges = tr_sig_count_transitions(x, n, g.low, g.high);
        *info = g.info;
    }
    return 0;
}
