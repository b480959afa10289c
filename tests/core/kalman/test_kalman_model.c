/*
 * Kalman-bank detector: model design against a brute-force covariance
 * computation of the same Gaussian process, validation, model files.
 *
 * Brute force: every variable of the model (noise n_t, target x_t, the
 * samples r_t) is written as a linear combination of the independent
 * innovations (noise u_t, measurement v_t, target w_t) over a long window
 * (burn-in of the noise, then a long noise-only past, then the target's
 * onset). The joint covariance of r over the window gives the conditional
 * variance of the sample at offset k given all earlier samples (Sigma_k) and
 * the conditional covariance of the state with it (Sigma_k K_k).
 */
#include <math.h>
#include <stdlib.h>

#include "common/test_util.h"
#include "kalman_test_models.h"

#include <transient/kalman.h>

#define LB 300 /* unobserved noise burn-in */
#define L0 250 /* observed noise-only past before the onset */

/* Cholesky of the leading P x P block of G (ld = ldg) into L; 0 on failure. */
static int cholesky(const double *G, size_t ldg, size_t P, double *L)
{
    for (size_t i = 0; i < P; i++)
        for (size_t j = 0; j <= i; j++) {
            double s = G[i * ldg + j];
            for (size_t l = 0; l < j; l++)
                s -= L[i * P + l] * L[j * P + l];
            if (i == j) {
                if (!(s > 0.0)) return 0;
                L[i * P + i] = sqrt(s);
            } else {
                L[i * P + j] = s / L[j * P + j];
            }
        }
    return 1;
}

/* y = L^-1 b */
static void fsolve(const double *L, size_t P, const double *b, double *y)
{
    for (size_t i = 0; i < P; i++) {
        double s = b[i];
        for (size_t l = 0; l < i; l++)
            s -= L[i * P + l] * y[l];
        y[i] = s / L[i * P + i];
    }
}

typedef struct {
    size_t T, NI;
    double *N, *X, *D; /* coefficient rows over NI innovations; D = variances */
} brute;

static double cov(const brute *b, const double *u, const double *v)
{
    double s = 0.0;
    for (size_t i = 0; i < b->NI; i++)
        s += u[i] * v[i] * b->D[i];
    return s;
}

/* Compare a designed model with the brute force; returns the worst relative error. */
static double check_design(const tr_kalman_design *d, const tr_kalman_model *m)
{
    const uint32_t M = d->M, Q = tr_kalman_model_Q(m);
    brute b;
    b.T = LB + L0 + M;
    b.NI = 3 * b.T;
    const size_t T = b.T, NI = b.NI, t0 = LB + L0;
    b.N = calloc(T * NI, sizeof(double));
    b.X = calloc(T * NI, sizeof(double));
    b.D = calloc(NI, sizeof(double));
    double *R = calloc(T * NI, sizeof(double));
    for (size_t t = 0; t < T; t++) {
        b.D[t] = d->noise_var;
        b.D[T + t] = d->meas_var;
        b.D[2 * T + t] = t >= t0 && t - t0 < M - 1 ? d->target_var * 1.0 : 0.0;
    }
    /* envelope from the library's definition for RECT/USER only (tests use those) */
    if (d->envelope == TR_KALMAN_ENV_USER)
        for (size_t i = 0; i + 1 < M; i++)
            b.D[2 * T + t0 + i] = d->target_var * d->env_user[i];
    for (size_t t = 0; t < T; t++) {
        double *n = b.N + t * NI, *x = b.X + t * NI;
        n[t] = 1.0;
        for (uint32_t i = 1; i <= d->noise_order && i <= t; i++)
            for (size_t l = 0; l < NI; l++)
                n[l] += d->noise_ar[i - 1] * b.N[(t - i) * NI + l];
        if (t >= t0) {
            x[2 * T + t] = 1.0;
            for (uint32_t i = 1; i <= d->target_order && t - i >= t0; i++)
                for (size_t l = 0; l < NI; l++)
                    x[l] += d->target_ar[i - 1] * b.X[(t - i) * NI + l];
        }
        for (size_t l = 0; l < NI; l++)
            R[t * NI + l] = n[l] + x[l];
        R[t * NI + T + t] += 1.0;
    }
    /* covariance of the observed samples t = LB..T-1 */
    const size_t NO = T - LB;
    double *G = calloc(NO * NO, sizeof(double));
    for (size_t i = 0; i < NO; i++)
        for (size_t j = 0; j <= i; j++)
            G[i * NO + j] = G[j * NO + i] = cov(&b, R + (LB + i) * NI, R + (LB + j) * NI);
    double *L = malloc(NO * NO * sizeof(double));
    double *y = malloc(NO * sizeof(double)), *c = malloc(NO * sizeof(double));
    double *cz = malloc(NO * sizeof(double)), *yz = malloc(NO * sizeof(double));
    double worst = 0.0;
    /* k = 0 stands for the noise-only hypothesis M (sample t0 - 1) */
    for (uint32_t k = 0; k <= M - 1; k++) {
        const size_t t = k == 0 ? t0 - 1 : t0 + k - 1;
        const size_t P = t - LB;
        if (!cholesky(G, NO, P, L)) {
            worst = INFINITY;
            break;
        }
        for (size_t i = 0; i < P; i++)
            c[i] = G[i * NO + P];
        fsolve(L, P, c, y);
        double S = G[P * NO + P];
        for (size_t i = 0; i < P; i++)
            S -= y[i] * y[i];
        const uint32_t kk = k == 0 ? M : k;
        const double Sd = tr_kalman_model_sigma(m, kk);
        double err = fabs(S - Sd) / S;
        const double *Kd = tr_kalman_model_gain(m, kk);
        for (uint32_t comp = 0; comp < 2 * Q; comp++) {
            const int isn = comp >= Q;
            const uint32_t lag = comp - (isn ? Q : 0);
            double cvz = 0.0;
            const double *zrow = NULL;
            if (lag <= t) zrow = (isn ? b.N : b.X) + (t - lag) * NI;
            if (zrow) {
                cvz = cov(&b, zrow, R + t * NI);
                for (size_t i = 0; i < P; i++)
                    cz[i] = cov(&b, zrow, R + (LB + i) * NI);
                fsolve(L, P, cz, yz);
                for (size_t i = 0; i < P; i++)
                    cvz -= yz[i] * y[i];
            }
            const double Kb = cvz / S;
            const double e = fabs(Kb - Kd[comp]) / (1.0 + fabs(Kb));
            if (e > err) err = e;
        }
        if (err > worst) worst = err;
    }
    free(b.N);
    free(b.X);
    free(b.D);
    free(R);
    free(G);
    free(L);
    free(y);
    free(c);
    free(cz);
    free(yz);
    return worst;
}

static void test_brute_force(void)
{
    tu_rng g = {20261122};
    for (int trial = 0; trial < 12; trial++) {
        double a[8], bb[8], env[16];
        tr_kalman_design d = tr_kalman_design_default();
        d.M = (uint32_t)tu_range(&g, 3, 10);
        d.noise_order = (uint32_t)tu_range(&g, 1, 4);
        d.target_order = (uint32_t)tu_range(&g, 1, 4);
        random_ar(&g, d.noise_order, 0.8, bb);
        random_ar(&g, d.target_order, 0.9, a);
        d.noise_ar = bb;
        d.target_ar = a;
        d.noise_var = 0.5 + tu_uniform(&g);
        d.target_var = 0.5 + 3.0 * tu_uniform(&g);
        d.meas_var = trial % 3 == 0 ? 0.0 : 0.3 * tu_uniform(&g);
        if (trial % 2) {
            d.envelope = TR_KALMAN_ENV_USER;
            for (uint32_t i = 0; i + 1 < d.M; i++)
                env[i] = tu_uniform(&g) * 2.0;
            d.env_user = env;
        }
        tr_error err;
        tr_kalman_model *m = tr_kalman_model_design(&d, &err);
        CHECK(m != NULL, "design failed: %s", err.message);
        if (!m) continue;
        CHECK(tr_kalman_model_is_companion(m), "designed A must be block companion");
        const double w = check_design(&d, m);
        CHECK(w < 1e-7, "trial %d (M=%u pn=%u px=%u R=%g): worst relative error %g",
              trial, d.M, d.noise_order, d.target_order, d.meas_var, w);
        tr_kalman_model_destroy(m);
    }
}

static void test_envelopes(void)
{
    double a[1] = {0.5}, b[1] = {0.3};
    tr_kalman_design d = tr_kalman_design_default();
    d.M = 50;
    d.noise_ar = b;
    d.target_ar = a;
    tr_error err;
    const tr_kalman_envelope kinds[] = {TR_KALMAN_ENV_RECT, TR_KALMAN_ENV_EXP,
                                        TR_KALMAN_ENV_GAUSS, TR_KALMAN_ENV_RAISED_COSINE};
    for (int i = 0; i < 4; i++) {
        d.envelope = kinds[i];
        d.env_param = 10.0;
        tr_kalman_model *m = tr_kalman_model_design(&d, &err);
        CHECK(m != NULL, "envelope %d: %s", i, err.message);
        if (!m) continue;
        /* RECT: the first sample of the target has the largest innovation variance
         * over the noise-only one; every Sigma_k >= Sigma_M - tiny. */
        for (uint32_t k = 1; k <= d.M; k++)
            CHECK(tr_kalman_model_sigma(m, k) >=
                      tr_kalman_model_sigma(m, d.M) * (1 - 1e-12),
                  "envelope %d: Sigma_%u below the noise-only one", i, k);
        tr_kalman_model_destroy(m);
    }
}

static void expect_fail(tr_kalman_design d, const char *what)
{
    tr_error err;
    tr_kalman_model *m = tr_kalman_model_design(&d, &err);
    CHECK(m == NULL && err.code == TR_ERR_INVALID && err.message[0],
          "%s must be rejected", what);
    tr_kalman_model_destroy(m);
}

static void test_invalid(void)
{
    double a[2] = {0.5, 0.2}, b[1] = {0.3}, unstable1[1] = {1.0},
           unstable2[2] = {0.5, 0.6}, nanar[1] = {NAN}, env[4] = {0, 0, 0, 0},
           envneg[4] = {1, -1, 1, 1};
    tr_kalman_design d = tr_kalman_design_default();
    d.noise_ar = b;
    d.target_ar = a;
    d.target_order = 2;
    tr_error err;
    tr_kalman_model *ok = tr_kalman_model_design(&d, &err);
    CHECK(ok != NULL, "valid design rejected: %s", err.message);
    tr_kalman_model_destroy(ok);
    expect_fail((tr_kalman_design){0}, "an all-zero design");
    tr_kalman_design t = d;
    t.M = 2;
    expect_fail(t, "M = 2");
    t = d;
    t.noise_ar = unstable1;
    expect_fail(t, "a unit-root noise AR");
    t = d;
    t.target_ar = unstable2;
    expect_fail(t, "an explosive target AR");
    t = d;
    t.noise_ar = nanar;
    expect_fail(t, "a NaN AR coefficient");
    t = d;
    t.noise_ar = NULL;
    expect_fail(t, "NULL AR coefficients");
    t = d;
    t.noise_var = 0.0;
    expect_fail(t, "zero noise variance");
    t = d;
    t.target_var = -1.0;
    expect_fail(t, "negative target variance");
    t = d;
    t.meas_var = -1e-3;
    expect_fail(t, "negative measurement variance");
    t = d;
    t.noise_order = 0;
    expect_fail(t, "AR order 0");
    t = d;
    t.envelope = TR_KALMAN_ENV_EXP;
    t.env_param = 0.0;
    expect_fail(t, "exponential envelope without a decay constant");
    t = d;
    t.M = 5;
    t.envelope = TR_KALMAN_ENV_USER;
    t.env_user = env;
    expect_fail(t, "an all-zero user envelope");
    t.env_user = envneg;
    expect_fail(t, "a negative user envelope");
    t.env_user = NULL;
    expect_fail(t, "a NULL user envelope");
    t = d;
    t.envelope = (tr_kalman_envelope)99;
    expect_fail(t, "an unknown envelope");
    /* Schur-Cohn against known roots: poles 0.99 e^{+-i} (stable), 1.01 (not) */
    double st[2] = {2 * 0.99 * cos(1.0), -0.99 * 0.99},
           un[2] = {2 * 1.01 * cos(1.0), -1.01 * 1.01};
    t = d;
    t.target_ar = st;
    tr_kalman_model *m = tr_kalman_model_design(&t, &err);
    CHECK(m != NULL, "poles of radius 0.99 are stable: %s", err.message);
    tr_kalman_model_destroy(m);
    t.target_ar = un;
    expect_fail(t, "poles of radius 1.01");
    /* from arrays */
    double A[4] = {0.5, 0, 0, 0.3}, K[6] = {1, 0, 1, 0, 0, 1}, sg[3] = {1, 1, 0};
    m = tr_kalman_model_from_arrays(1, 3, A, K, sg, &err);
    CHECK(m == NULL && err.code == TR_ERR_INVALID, "Sigma = 0 must be rejected");
    sg[2] = 1.0;
    m = tr_kalman_model_from_arrays(1, 3, A, K, sg, &err);
    CHECK(m != NULL && tr_kalman_model_is_companion(m), "from arrays: %s", err.message);
    tr_kalman_model_destroy(m);
    A[1] = 0.1; /* not block companion: still a valid model */
    m = tr_kalman_model_from_arrays(1, 3, A, K, sg, &err);
    CHECK(m != NULL && !tr_kalman_model_is_companion(m), "dense A must be accepted");
    tr_kalman_model_destroy(m);
}

static void test_files(void)
{
    double a[3] = {0.4, -0.2, 0.1}, b[2] = {0.6, -0.3};
    tr_kalman_design d = tr_kalman_design_default();
    d.M = 40;
    d.noise_order = 2;
    d.noise_ar = b;
    d.target_order = 3;
    d.target_ar = a;
    d.meas_var = 0.1;
    tr_error err;
    tr_kalman_model *m = tr_kalman_model_design(&d, &err);
    CHECK(m != NULL, "%s", err.message);
    if (!m) return;
    const char *path = "test_kalman_model.bin";
    CHECK(tr_kalman_model_save(m, path, &err) == TR_OK, "save: %s", err.message);
    tr_kalman_model *l = tr_kalman_model_load(path, &err);
    CHECK(l != NULL, "load: %s", err.message);
    if (l) {
        int same = tr_kalman_model_Q(l) == 3 && tr_kalman_model_M(l) == 40 &&
                   tr_kalman_model_is_companion(l);
        for (uint32_t k = 1; k <= 40 && same; k++) {
            same &= tr_kalman_model_sigma(l, k) == tr_kalman_model_sigma(m, k);
            for (int i = 0; i < 6; i++)
                same &= tr_kalman_model_gain(l, k)[i] == tr_kalman_model_gain(m, k)[i];
        }
        for (int i = 0; i < 36; i++)
            same &= tr_kalman_model_A(l)[i] == tr_kalman_model_A(m)[i];
        CHECK(same, "loaded model differs from the saved one");
        tr_kalman_model_destroy(l);
    }
    /* truncated, trailing, bad magic */
    FILE *f = fopen(path, "rb");
    unsigned char buf[8192];
    const size_t len = f ? fread(buf, 1, sizeof buf, f) : 0;
    if (f) fclose(f);
    CHECK(len == 16 + 8 * (36 + 40 * 6 + 40), "file size %zu", len);
    f = fopen(path, "wb");
    fwrite(buf, 1, len - 1, f);
    fclose(f);
    l = tr_kalman_model_load(path, &err);
    CHECK(!l && err.code == TR_ERR_IO, "truncated file must be rejected");
    f = fopen(path, "wb");
    fwrite(buf, 1, len, f);
    fputc(0, f);
    fclose(f);
    l = tr_kalman_model_load(path, &err);
    CHECK(!l && err.code == TR_ERR_IO, "trailing data must be rejected");
    buf[0] = 'X';
    f = fopen(path, "wb");
    fwrite(buf, 1, len, f);
    fclose(f);
    l = tr_kalman_model_load(path, &err);
    CHECK(!l && err.code == TR_ERR_IO, "bad magic must be rejected");
    l = tr_kalman_model_load("/nonexistent/dir/model.bin", &err);
    CHECK(!l && err.code == TR_ERR_IO, "missing file must be rejected");
    remove(path);
    tr_kalman_model_destroy(m);
}

int main(void)
{
    test_brute_force();
    test_envelopes();
    test_invalid();
    test_files();
    return tu_finish("test_kalman_model");
}
