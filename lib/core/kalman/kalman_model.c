/*
 * Kalman-bank detector: model design (the quantities A, K_k, Sigma_{r,k|k-1}
 * the paper assumes known), validation, model files.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (Table I, eqs. 2-5).
 *
 * Design (docs/kalman.md): state z = [x_t..x_{t-Q+1}, n_t..n_{t-Q+1}],
 * A = blkdiag(companion(a), companion(b)), h = e_1 + e_{Q+1}, R = meas_var.
 * Noise-only steady state: iterate P <- A (P - P h h' P / S) A' + G_n on the
 * noise block until it stops changing; it gives K_M and Sigma_M.
 * Hypotheses k = 1..M-1:
 *   P_{1|0}   = blkdiag(0, P_n) + target_var g[0] e_1 e_1'
 *   Sigma_k   = h' P_{k|k-1} h + R,   K_k = P_{k|k-1} h / Sigma_k
 *   P_{k|k}   = (I - K_k h') P_{k|k-1} (I - K_k h')' + R K_k K_k'   (Joseph)
 *   P_{k+1|k} = A P_{k|k} A' + target_var g[k] e_1 e_1' + noise_var e_{Q+1} e_{Q+1}'
 */
#include "common/core_util.h"
#include "common/file_open.h"
#include "kalman/kalman_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const double TWO_PI = 6.283185307179586476925286766559;

tr_kalman_design tr_kalman_design_default(void)
{
    tr_kalman_design d;
    memset(&d, 0, sizeof d);
    d.M = 92;
    d.noise_order = 1;
    d.noise_var = 1.0;
    d.meas_var = 0.0;
    d.target_order = 1;
    d.target_var = 1.0;
    d.envelope = TR_KALMAN_ENV_RECT;
    d.riccati_max_iter = 100000;
    d.riccati_tol = 1e-13;
    return d;
}

static tr_kalman_model *model_alloc(uint32_t Q, uint32_t M)
{
    tr_kalman_model *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    const size_t n = 2 * (size_t)Q;
    m->Q = Q;
    m->n = (uint32_t)n;
    m->M = M;
    m->A = calloc(n * n, sizeof(double));
    m->K = calloc((size_t)M * n, sizeof(double));
    m->sigma = calloc(M, sizeof(double));
    m->log_sigma = calloc(M, sizeof(double));
    m->inv_sigma = calloc(M, sizeof(double));
    m->c = calloc(M, sizeof(double));
    m->h = calloc(M, sizeof(double));
    m->ax = calloc(Q, sizeof(double));
    m->an = calloc(Q, sizeof(double));
    if (!m->A || !m->K || !m->sigma || !m->log_sigma || !m->inv_sigma || !m->c || !m->h ||
        !m->ax || !m->an) {
        tr_kalman_model_destroy(m);
        return NULL;
    }
    return m;
}

void tr_kalman_model_destroy(tr_kalman_model *m)
{
    if (!m) return;
    free(m->A);
    free(m->K);
    free(m->sigma);
    free(m->log_sigma);
    free(m->inv_sigma);
    free(m->c);
    free(m->h);
    free(m->ax);
    free(m->an);
    free(m);
}

void tr_kalman_model_finish(tr_kalman_model *m)
{
    const uint32_t Q = m->Q, n = m->n;
    for (uint32_t k = 0; k < m->M; k++) {
        m->log_sigma[k] = log(m->sigma[k]);
        m->inv_sigma[k] = 1.0 / m->sigma[k];
        m->c[k] = -0.5 * log(TWO_PI * m->sigma[k]);
        m->h[k] = 0.5 / m->sigma[k];
    }
    /* Block companion: row 0 and row Q free within their blocks, sub-diagonal
     * ones inside each block, zeros elsewhere. */
    int comp = 1;
    for (uint32_t i = 0; i < n && comp; i++) {
        for (uint32_t j = 0; j < n; j++) {
            const double a = m->A[(size_t)i * n + j];
            const int bi = i >= Q, bj = j >= Q;
            const uint32_t li = i - bi * Q, lj = j - bj * Q;
            double want;
            if (bi != bj)
                want = 0.0;
            else if (li == 0)
                continue;
            else
                want = (lj + 1 == li) ? 1.0 : 0.0;
            if (a != want) {
                comp = 0;
                break;
            }
        }
    }
    m->companion = comp;
    for (uint32_t i = 0; i < Q; i++) {
        m->ax[i] = comp ? m->A[i] : 0.0;
        m->an[i] = comp ? m->A[(size_t)Q * n + Q + i] : 0.0;
    }
}

/* Schur-Cohn (step-down) test: 1 when 1 - sum a_i z^-i has every root strictly
 * inside the unit circle. */
static int ar_stable(const double *a, uint32_t p)
{
    double c[TR_KALMAN_MAX_Q + 1], t[TR_KALMAN_MAX_Q + 1];
    /* Polynomial 1 + c_1 z^-1 + ... + c_p z^-p with c_i = -a_i. */
    for (uint32_t i = 1; i <= p; i++)
        c[i] = -a[i - 1];
    for (uint32_t m = p; m >= 1; m--) {
        const double km = c[m];
        if (!(fabs(km) < 1.0)) return 0;
        const double den = 1.0 - km * km;
        for (uint32_t i = 1; i < m; i++)
            t[i] = (c[i] - km * c[m - i]) / den;
        for (uint32_t i = 1; i < m; i++)
            c[i] = t[i];
    }
    return 1;
}

static int all_finite(const double *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i])) return 0;
    return 1;
}

static tr_status check_ar(const char *what, const double *a, uint32_t p, tr_error *err)
{
    if (p < 1 || p > TR_KALMAN_MAX_Q)
        return tr_fail(err, TR_ERR_INVALID, "kalman: %s AR order must be 1..%d, got %u",
                       what, TR_KALMAN_MAX_Q, p);
    if (!a) return tr_fail(err, TR_ERR_INVALID, "kalman: NULL %s AR coefficients", what);
    if (!all_finite(a, p))
        return tr_fail(err, TR_ERR_INVALID, "kalman: non-finite %s AR coefficient", what);
    if (!ar_stable(a, p))
        return tr_fail(err, TR_ERR_INVALID,
                       "kalman: %s AR model is not stable (a root of 1 - sum a_i z^-i "
                       "lies on or outside the unit circle)",
                       what);
    return TR_OK;
}

/* Envelope g[0..M-2]; TR_OK or an error. */
static tr_status make_envelope(const tr_kalman_design *d, double *g, tr_error *err)
{
    const uint32_t L = d->M - 1;
    const double p = d->env_param;
    switch (d->envelope) {
    case TR_KALMAN_ENV_RECT:
        for (uint32_t i = 0; i < L; i++)
            g[i] = 1.0;
        break;
    case TR_KALMAN_ENV_EXP:
    case TR_KALMAN_ENV_GAUSS:
        if (!(p > 0.0) || !isfinite(p))
            return tr_fail(err, TR_ERR_INVALID,
                           "kalman: env_param must be a finite number > 0 for the %s "
                           "envelope, got %g",
                           d->envelope == TR_KALMAN_ENV_EXP ? "exponential" : "Gaussian",
                           p);
        for (uint32_t i = 0; i < L; i++) {
            if (d->envelope == TR_KALMAN_ENV_EXP) {
                g[i] = exp(-(double)i / p);
            } else {
                const double u = ((double)i - 0.5 * (double)(L - 1)) / p;
                g[i] = exp(-0.5 * u * u);
            }
        }
        break;
    case TR_KALMAN_ENV_RAISED_COSINE:
        for (uint32_t i = 0; i < L; i++)
            g[i] = 0.5 * (1.0 - cos(TWO_PI * (double)(i + 1) / (double)d->M));
        break;
    case TR_KALMAN_ENV_USER: {
        if (!d->env_user)
            return tr_fail(err, TR_ERR_INVALID,
                           "kalman: NULL env_user with the user envelope (M-1 values)");
        int pos = 0;
        for (uint32_t i = 0; i < L; i++) {
            const double v = d->env_user[i];
            if (!isfinite(v) || v < 0.0)
                return tr_fail(err, TR_ERR_INVALID,
                               "kalman: env_user[%u] = %g must be finite and >= 0", i, v);
            g[i] = v;
            pos |= v > 0.0;
        }
        if (!pos)
            return tr_fail(err, TR_ERR_INVALID,
                           "kalman: the user envelope is zero everywhere (no target)");
        break;
    }
    default:
        return tr_fail(err, TR_ERR_INVALID, "kalman: unknown envelope %d",
                       (int)d->envelope);
    }
    for (uint32_t i = 0; i < L; i++)
        if (!isfinite(g[i]) || g[i] < 0.0)
            return tr_fail(err, TR_ERR_INVALID, "kalman: envelope value %u is invalid",
                           i);
    return TR_OK;
}

/* ---- small dense helpers (n <= 2 * TR_KALMAN_MAX_Q) ------------------- */

/* P <- A P A' (n x n), work of n*n. */
static void apat(const double *A, double *P, double *W, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            double s = 0.0;
            for (uint32_t l = 0; l < n; l++)
                s += A[i * n + l] * P[l * n + j];
            W[i * n + j] = s;
        }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            double s = 0.0;
            for (uint32_t l = 0; l < n; l++)
                s += W[i * n + l] * A[j * n + l];
            P[i * n + j] = s;
        }
    /* Keep it exactly symmetric. */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < i; j++) {
            const double v = 0.5 * (P[i * n + j] + P[j * n + i]);
            P[i * n + j] = P[j * n + i] = v;
        }
}

/* Measurement update in Joseph form with h = e_a + e_b (b < 0: h = e_a).
 * Writes the gain to K, returns S = h'Ph + R. W: n*n work. */
static double joseph(double *P, double *K, double *W, uint32_t n, int a, int b, double R)
{
    double ph[2 * TR_KALMAN_MAX_Q] = {0};
    for (uint32_t i = 0; i < n; i++)
        ph[i] = P[i * n + a] + (b >= 0 ? P[i * n + b] : 0.0);
    const double S = ph[a] + (b >= 0 ? ph[b] : 0.0) + R;
    for (uint32_t i = 0; i < n; i++)
        K[i] = ph[i] / S;
    /* W = (I - K h') P */
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < n; j++) {
            const double hp =
                P[(size_t)a * n + j] + (b >= 0 ? P[(size_t)b * n + j] : 0.0);
            W[i * n + j] = P[i * n + j] - K[i] * hp;
        }
    /* P = W (I - K h')' + R K K' = W - (W h) K' + R K K' */
    for (uint32_t i = 0; i < n; i++) {
        const double wh = W[i * n + a] + (b >= 0 ? W[i * n + b] : 0.0);
        for (uint32_t j = 0; j < n; j++)
            P[i * n + j] = W[i * n + j] - wh * K[j] + R * K[i] * K[j];
    }
    for (uint32_t i = 0; i < n; i++)
        for (uint32_t j = 0; j < i; j++) {
            const double v = 0.5 * (P[i * n + j] + P[j * n + i]);
            P[i * n + j] = P[j * n + i] = v;
        }
    return S;
}

tr_kalman_model *tr_kalman_model_design(const tr_kalman_design *d, tr_error *err)
{
    if (!d) {
        tr_fail(err, TR_ERR_INVALID, "kalman: NULL design");
        return NULL;
    }
    if (d->M < 3 || d->M > TR_KALMAN_MAX_M) {
        tr_fail(err, TR_ERR_INVALID, "kalman: M must be 3..%u, got %u", TR_KALMAN_MAX_M,
                d->M);
        return NULL;
    }
    if (check_ar("noise", d->noise_ar, d->noise_order, err) != TR_OK) return NULL;
    if (check_ar("target", d->target_ar, d->target_order, err) != TR_OK) return NULL;
    if (!(d->noise_var > 0.0) || !isfinite(d->noise_var)) {
        tr_fail(err, TR_ERR_INVALID, "kalman: noise_var must be finite and > 0, got %g",
                d->noise_var);
        return NULL;
    }
    if (!(d->target_var > 0.0) || !isfinite(d->target_var)) {
        tr_fail(err, TR_ERR_INVALID, "kalman: target_var must be finite and > 0, got %g",
                d->target_var);
        return NULL;
    }
    if (!(d->meas_var >= 0.0) || !isfinite(d->meas_var)) {
        tr_fail(err, TR_ERR_INVALID, "kalman: meas_var must be finite and >= 0, got %g",
                d->meas_var);
        return NULL;
    }
    if (d->riccati_max_iter < 1 || !(d->riccati_tol > 0.0) || !(d->riccati_tol < 1.0)) {
        tr_fail(err, TR_ERR_INVALID,
                "kalman: riccati_max_iter must be >= 1 and 0 < riccati_tol < 1");
        return NULL;
    }
    const uint32_t Q =
        d->noise_order > d->target_order ? d->noise_order : d->target_order;
    const uint32_t n = 2 * Q, M = d->M;
    double *g = malloc((size_t)(M - 1) * sizeof(double));
    double *P = calloc((size_t)n * n, sizeof(double));
    double *W = calloc((size_t)n * n, sizeof(double));
    double *Pn = calloc((size_t)Q * Q, sizeof(double));
    double *Pold = calloc((size_t)Q * Q, sizeof(double));
    double *An = calloc((size_t)Q * Q, sizeof(double));
    double *Wn = calloc((size_t)Q * Q, sizeof(double));
    tr_kalman_model *m = model_alloc(Q, M);
    if (!g || !P || !W || !Pn || !Pold || !An || !Wn || !m) {
        tr_fail(err, TR_ERR_NOMEM, "kalman: cannot allocate a model of M = %u", M);
        goto fail;
    }
    if (make_envelope(d, g, err) != TR_OK) goto fail;

    /* A = blkdiag(companion(target), companion(noise)). */
    for (uint32_t i = 0; i < d->target_order; i++)
        m->A[i] = d->target_ar[i];
    for (uint32_t i = 0; i < d->noise_order; i++)
        m->A[(size_t)Q * n + Q + i] = d->noise_ar[i];
    for (uint32_t i = 1; i < Q; i++) {
        m->A[(size_t)i * n + i - 1] = 1.0;
        m->A[(size_t)(Q + i) * n + Q + i - 1] = 1.0;
    }
    for (uint32_t i = 0; i < Q; i++)
        for (uint32_t j = 0; j < Q; j++)
            An[i * Q + j] = m->A[(size_t)(Q + i) * n + Q + j];

    /* Noise-only steady state: prediction covariance Pn of the noise block. */
    {
        double Kn[TR_KALMAN_MAX_Q];
        Pn[0] = d->noise_var;
        uint32_t it;
        int done = 0;
        for (it = 0; it < d->riccati_max_iter; it++) {
            memcpy(Pold, Pn, (size_t)Q * Q * sizeof(double));
            joseph(Pn, Kn, Wn, Q, 0, -1, d->meas_var);
            apat(An, Pn, Wn, Q);
            Pn[0] += d->noise_var;
            double dmax = 0.0, pmax = 0.0;
            for (uint32_t i = 0; i < Q * Q; i++) {
                const double dv = fabs(Pn[i] - Pold[i]);
                if (dv > dmax) dmax = dv;
                if (fabs(Pn[i]) > pmax) pmax = fabs(Pn[i]);
            }
            if (!isfinite(dmax)) break;
            if (dmax <= d->riccati_tol * pmax) {
                done = 1;
                break;
            }
        }
        if (!done) {
            tr_fail(err, TR_ERR_INVALID,
                    "kalman: the noise-only Riccati equation did not converge in %u "
                    "iterations (noise AR too close to instability?)",
                    d->riccati_max_iter);
            goto fail;
        }
    }
    /* Hypothesis M: gain and innovation variance of the embedded steady state. */
    memset(P, 0, (size_t)n * n * sizeof(double));
    for (uint32_t i = 0; i < Q; i++)
        for (uint32_t j = 0; j < Q; j++)
            P[(size_t)(Q + i) * n + Q + j] = Pn[i * Q + j];
    {
        double *Pm = W; /* scratch copy: the update must not touch P */
        double *W2 = malloc((size_t)n * n * sizeof(double));
        if (!W2) {
            tr_fail(err, TR_ERR_NOMEM, "kalman: cannot allocate the design work space");
            goto fail;
        }
        memcpy(Pm, P, (size_t)n * n * sizeof(double));
        m->sigma[M - 1] =
            joseph(Pm, m->K + (size_t)(M - 1) * n, W2, n, 0, (int)Q, d->meas_var);
        free(W2);
    }
    /* Hypotheses 1..M-1 (P holds blkdiag(0, Pn)). */
    P[0] += d->target_var * g[0];
    for (uint32_t k = 1; k <= M - 1; k++) {
        m->sigma[k - 1] =
            joseph(P, m->K + (size_t)(k - 1) * n, W, n, 0, (int)Q, d->meas_var);
        if (k == M - 1) break;
        apat(m->A, P, W, n);
        P[0] += d->target_var * g[k];
        P[(size_t)Q * n + Q] += d->noise_var;
    }
    for (uint32_t k = 0; k < M; k++) {
        if (!(m->sigma[k] > 0.0) || !isfinite(m->sigma[k]) ||
            !all_finite(m->K + (size_t)k * n, n)) {
            tr_fail(err, TR_ERR_INVALID,
                    "kalman: the design gave a non-positive or non-finite innovation "
                    "variance at hypothesis %u",
                    k + 1);
            goto fail;
        }
    }
    tr_kalman_model_finish(m);
    free(g);
    free(P);
    free(W);
    free(Pn);
    free(Pold);
    free(An);
    free(Wn);
    tr_clear(err);
    return m;
fail:
    free(g);
    free(P);
    free(W);
    free(Pn);
    free(Pold);
    free(An);
    free(Wn);
    tr_kalman_model_destroy(m);
    return NULL;
}

tr_kalman_model *tr_kalman_model_from_arrays(uint32_t Q, uint32_t M, const double *A,
                                             const double *K, const double *sigma,
                                             tr_error *err)
{
    if (Q < 1 || Q > TR_KALMAN_MAX_Q) {
        tr_fail(err, TR_ERR_INVALID, "kalman: Q must be 1..%d, got %u", TR_KALMAN_MAX_Q,
                Q);
        return NULL;
    }
    if (M < 3 || M > TR_KALMAN_MAX_M) {
        tr_fail(err, TR_ERR_INVALID, "kalman: M must be 3..%u, got %u", TR_KALMAN_MAX_M,
                M);
        return NULL;
    }
    if (!A || !K || !sigma) {
        tr_fail(err, TR_ERR_INVALID, "kalman: NULL %s", !A ? "A" : !K ? "K" : "sigma");
        return NULL;
    }
    const size_t n = 2 * (size_t)Q;
    if (!all_finite(A, n * n) || !all_finite(K, (size_t)M * n)) {
        tr_fail(err, TR_ERR_INVALID, "kalman: non-finite value in A or K");
        return NULL;
    }
    for (uint32_t k = 0; k < M; k++)
        if (!(sigma[k] > 0.0) || !isfinite(sigma[k])) {
            tr_fail(err, TR_ERR_INVALID, "kalman: Sigma_%u = %g must be finite and > 0",
                    k + 1, sigma[k]);
            return NULL;
        }
    tr_kalman_model *m = model_alloc(Q, M);
    if (!m) {
        tr_fail(err, TR_ERR_NOMEM, "kalman: cannot allocate a model of M = %u", M);
        return NULL;
    }
    memcpy(m->A, A, n * n * sizeof(double));
    memcpy(m->K, K, (size_t)M * n * sizeof(double));
    memcpy(m->sigma, sigma, M * sizeof(double));
    tr_kalman_model_finish(m);
    tr_clear(err);
    return m;
}

tr_kalman_model *tr_kalman_model_copy(const tr_kalman_model *m, tr_error *err)
{
    if (!m) {
        tr_fail(err, TR_ERR_INVALID, "kalman: NULL model");
        return NULL;
    }
    return tr_kalman_model_from_arrays(m->Q, m->M, m->A, m->K, m->sigma, err);
}

/* ---- files -------------------------------------------------------------- */

static const char MAGIC[8] = {'T', 'R', 'K', 'A', 'L', 'M', '0', '1'};

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get_u32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}
static void put_f64(unsigned char *p, double d)
{
    uint64_t v;
    memcpy(&v, &d, 8);
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}
static double get_f64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    double d;
    memcpy(&d, &v, 8);
    return d;
}

tr_status tr_kalman_model_save(const tr_kalman_model *m, const char *path, tr_error *err)
{
    if (!m || !path) return tr_fail(err, TR_ERR_INVALID, "kalman: NULL model or path");
    const size_t n = m->n, cnt = n * n + (size_t)m->M * n + m->M;
    const size_t bytes = 16 + 8 * cnt;
    unsigned char *buf = malloc(bytes);
    if (!buf)
        return tr_fail(err, TR_ERR_NOMEM, "kalman: cannot allocate %zu bytes", bytes);
    memcpy(buf, MAGIC, 8);
    put_u32(buf + 8, m->Q);
    put_u32(buf + 12, m->M);
    unsigned char *p = buf + 16;
    for (size_t i = 0; i < n * n; i++, p += 8)
        put_f64(p, m->A[i]);
    for (size_t i = 0; i < (size_t)m->M * n; i++, p += 8)
        put_f64(p, m->K[i]);
    for (size_t i = 0; i < m->M; i++, p += 8)
        put_f64(p, m->sigma[i]);
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(buf);
        return tr_fail(err, TR_ERR_IO, "kalman: cannot open %s for writing", path);
    }
    const size_t w = fwrite(buf, 1, bytes, f);
    const int c = fclose(f);
    free(buf);
    if (w != bytes || c != 0)
        return tr_fail(err, TR_ERR_IO, "kalman: cannot write %s", path);
    tr_clear(err);
    return TR_OK;
}

tr_kalman_model *tr_kalman_model_load(const char *path, tr_error *err)
{
    uint64_t size = 0;
    FILE *f = tr_open_regular("kalman", path, &size, err);
    if (!f) return NULL;
    unsigned char head[16];
    tr_kalman_model *m = NULL;
    unsigned char *buf = NULL;
    if (fread(head, 1, 16, f) != 16 || memcmp(head, MAGIC, 8) != 0) {
        tr_fail(err, TR_ERR_IO, "kalman: %s is not a model file (magic TRKALM01)", path);
        goto done;
    }
    const uint32_t Q = get_u32(head + 8), M = get_u32(head + 12);
    if (Q < 1 || Q > TR_KALMAN_MAX_Q || M < 3 || M > TR_KALMAN_MAX_M) {
        tr_fail(err, TR_ERR_IO, "kalman: %s: Q = %u or M = %u out of range", path, Q, M);
        goto done;
    }
    const size_t n = 2 * (size_t)Q, cnt = n * n + (size_t)M * n + M;
    /* The header's sizes must match the file before they size any buffer. */
    if (size != 16 + 8 * (uint64_t)cnt) {
        tr_fail(err, TR_ERR_IO,
                "kalman: %s holds %llu bytes; Q = %u, M = %u need %llu (%s)", path,
                (unsigned long long)size, Q, M,
                (unsigned long long)(16 + 8 * (uint64_t)cnt),
                size < 16 + 8 * (uint64_t)cnt ? "truncated" : "trailing data");
        goto done;
    }
    buf = malloc(8 * cnt);
    double *v = malloc(cnt * sizeof(double));
    if (!buf || !v) {
        free(v);
        tr_fail(err, TR_ERR_NOMEM, "kalman: cannot allocate a model of M = %u", M);
        goto done;
    }
    if (fread(buf, 8, cnt, f) != cnt) {
        free(v);
        tr_fail(err, TR_ERR_IO, "kalman: %s: read error", path);
        goto done;
    }
    for (size_t i = 0; i < cnt; i++)
        v[i] = get_f64(buf + 8 * i);
    m = tr_kalman_model_from_arrays(Q, M, v, v + n * n, v + n * n + (size_t)M * n, err);
    free(v);
done:
    free(buf);
    fclose(f);
    return m;
}

/* ---- accessors ------------------------------------------------------------ */

uint32_t tr_kalman_model_Q(const tr_kalman_model *m)
{
    return m ? m->Q : 0;
}
uint32_t tr_kalman_model_M(const tr_kalman_model *m)
{
    return m ? m->M : 0;
}
const double *tr_kalman_model_A(const tr_kalman_model *m)
{
    return m ? m->A : NULL;
}
const double *tr_kalman_model_gain(const tr_kalman_model *m, uint32_t k)
{
    return (m && k >= 1 && k <= m->M) ? m->K + (size_t)(k - 1) * m->n : NULL;
}
double tr_kalman_model_sigma(const tr_kalman_model *m, uint32_t k)
{
    return (m && k >= 1 && k <= m->M) ? m->sigma[k - 1] : NAN;
}
double tr_kalman_model_log_sigma(const tr_kalman_model *m, uint32_t k)
{
    return (m && k >= 1 && k <= m->M) ? m->log_sigma[k - 1] : NAN;
}
double tr_kalman_model_inv_sigma(const tr_kalman_model *m, uint32_t k)
{
    return (m && k >= 1 && k <= m->M) ? m->inv_sigma[k - 1] : NAN;
}
int tr_kalman_model_is_companion(const tr_kalman_model *m)
{
    return m ? m->companion : 0;
}
