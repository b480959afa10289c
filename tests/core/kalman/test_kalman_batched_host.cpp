/*
 * The batched (diagonal) formulation of the CUDA FAST variant of the
 * Kalman-bank detector, evaluated on the host with the kernels' block
 * structure and arithmetic (float filters, Kahan sums, the chunked noise-only
 * filter with its double chunk transition, the thread-block tiles of the
 * diagonal kernel, the normaliser's lag-M sub-blocks (one warp with a plain-sum
 * path for M <= 256, the block scan with the quiet path above), the
 * LLR's float hi/lo window and k slices), against the reference on random
 * models, chunkings, block lengths, run-time N_s / alpha changes and missing
 * samples. It checks the algebra of cuda/kalman/kalman_kernels.cuh on every CI run (no
 * GPU needed); the kernels themselves run in the gpu tests.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (equations 2-15).
 */
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <math.h>
#include <vector>

#include "common/test_util.h"
#include "kalman_test_models.h"

#include "kalman/kalman_internal.h"

namespace
{

const float kNeg = -1e30f;
const int kChunk = 128, kBlock = 128, kKT = 32, kLxTile = 1024, kLxWarpMax = 256;
const float kQuiet = -18.0f, kPlainMax = 60.0f;

double tol_of(double v)
{
    return 1e-3 * std::max(1.0, std::fabs(v));
}

struct Batched {
    const tr_kalman_model *m;
    int Q, N, M, B;
    long long pos = 0;
    std::vector<float> st;                 /* [(N+2)][M]: z, R, compensation */
    std::vector<double> Gw;                /* C[j0 - M + i], rebased */
    std::vector<float> Gh, Gl;             /* its float hi + lo */
    std::vector<double> zc;                /* noise-only prediction, double */
    std::vector<double> P;                 /* chunk transition */
    std::vector<float> Kf, axf, anf, gain; /* float model */
    std::vector<double> Kd, axd, and_;
    float rlast = kNeg, hM;
    int GS;

    Batched(const tr_kalman_model *mm, int B_)
        : m(mm), Q(mm->Q), N(mm->n), M(mm->M), B(B_)
    {
        st.assign((size_t)(N + 2) * M, 0.f);
        for (int i = 0; i < M; i++)
            st[(size_t)N * M + i] = kNeg;
        Gw.assign(M, 0.0);
        Gh.assign(M, 0.f);
        Gl.assign(M, 0.f);
        zc.assign(N, 0.0);
        const double *KM = m->K + (size_t)(M - 1) * N;
        for (int i = 0; i < N; i++)
            Kf.push_back((float)KM[i]), Kd.push_back(KM[i]);
        for (int i = 0; i < Q; i++) {
            axf.push_back((float)m->ax[i]), anf.push_back((float)m->an[i]);
            axd.push_back(m->ax[i]), and_.push_back(m->an[i]);
        }
        hM = (float)m->h[M - 1];
        GS = (N + 2 + 3) / 4 * 4;
        gain.assign((size_t)(M - 1) * GS, 0.f);
        for (int k = 1; k < M; k++) {
            for (int i = 0; i < N; i++)
                gain[(size_t)(k - 1) * GS + i] = (float)m->K[(size_t)(k - 1) * N + i];
            gain[(size_t)(k - 1) * GS + N] = (float)(m->c[k - 1] - m->c[M - 1]);
            gain[(size_t)(k - 1) * GS + N + 1] = (float)m->h[k - 1];
        }
        /* P = (A (I - K_M h'))^kChunk */
        std::vector<double> F(N * N), T(N * N);
        P.assign(N * N, 0.0);
        for (int i = 0; i < N; i++) {
            double AK = 0;
            for (int t = 0; t < N; t++)
                AK += m->A[i * N + t] * KM[t];
            for (int l = 0; l < N; l++)
                F[i * N + l] = m->A[i * N + l] - ((l == 0 || l == Q) ? AK : 0.0);
            P[i * N + i] = 1.0;
        }
        for (int s = 0; s < kChunk; s++) {
            for (int i = 0; i < N; i++)
                for (int l = 0; l < N; l++) {
                    double v = 0;
                    for (int t = 0; t < N; t++)
                        v += F[i * N + t] * P[t * N + l];
                    T[i * N + l] = v;
                }
            P.swap(T);
        }
    }

    /* The one-warp normaliser (M <= 256): sub-blocks of exactly M samples,
     * the window C[j - M] kept in float relative to the sub-block's base,
     * a plain prefix sum of e^y then log1p when every y < kPlainMax, else the
     * prefix log-sum-exp (kept in the order of the warp scan's stripes). */
    void lx_warp(const std::vector<float> &R, int n, double la)
    {
        double b = Gw[M - 1];
        std::vector<float> rel(M), cy(M), cr(M), y(M), t(M);
        for (int i = 0; i < M; i++) {
            rel[i] = (float)(Gw[i] - b);
            cy[i] = (float)(-(double)(i + 1) * la);
            cr[i] = (float)((double)(i + 1 - M) * la);
        }
        for (int s0 = 0; s0 < n; s0 += M) {
            const int len = std::min(M, n - s0);
            bool plain = true;
            for (int i = 0; i < M; i++) {
                const int jb = s0 + i;
                float rp = kNeg;
                if (jb < n) rp = jb == 0 ? rlast : R[(size_t)(M - 2) * n + jb - 1];
                y[i] = rp + (rel[i] + cy[i]);
                plain &= y[i] < kPlainMax;
            }
            if (plain) {
                float acc = 0.f;
                for (int i = 0; i < M; i++) {
                    acc += std::exp(y[i]);
                    const float S = acc;
                    t[i] = S < 1e-3f ? S * (1.0f - S * (0.5f - S * (1.0f / 3.0f)))
                                     : std::log(1.0f + S);
                }
            } else {
                float acc = kNeg;
                for (int i = 0; i < M; i++) {
                    const float mm = std::max(acc, y[i]), d = std::min(acc, y[i]) - mm;
                    acc = mm + std::log(1.f + std::exp(d));
                    t[i] = softplus(acc);
                }
            }
            const float tl = t[M - 1];
            for (int i = 0; i < len; i++) {
                const double G = b + (double)(i + 1) * la + (double)t[i];
                Gw[M + s0 + i] = G;
                Gh[M + s0 + i] = (float)G;
                Gl[M + s0 + i] = (float)(G - (double)(float)G);
            }
            for (int i = 0; i < M; i++)
                rel[i] = (t[i] - tl) + cr[i];
            b += (double)M * la + (double)tl;
        }
    }

    /* the kernels' filter step: innovation out, z <- A (z + K e) */
    template <class T> T step(T *z, const T *K, const T *ax, const T *an, T r) const
    {
        const T rhat = z[0] + z[Q];
        const T e = r == r ? r - rhat : T(0);
        T u[2 * TR_KALMAN_MAX_Q];
        for (int i = 0; i < N; i++)
            u[i] = std::fma(K[i], e, z[i]);
        T x0 = ax[0] * u[0], n0 = an[0] * u[Q];
        for (int i = 1; i < Q; i++) {
            x0 = std::fma(ax[i], u[i], x0);
            n0 = std::fma(an[i], u[Q + i], n0);
        }
        for (int i = Q - 1; i >= 1; i--) {
            z[i] = u[i - 1];
            z[Q + i] = u[Q + i - 1];
        }
        z[0] = x0;
        z[Q] = n0;
        return e;
    }

    static float softplus(float t)
    {
        return t > 0.f ? t + std::log1p(std::exp(-t)) : std::log1p(std::exp(t));
    }

    /* one block of n <= B samples; llr, kmax out */
    void block(const float *x, int n, uint32_t Ns, double log_alpha, double log1m_alpha,
               float *llr, uint32_t *kmax)
    {
        const long long j0 = pos;
        std::vector<float> r(n), hq(n, 0.f), zM((size_t)N * n);
        for (int i = 0; i < n; i++)
            r[i] = std::isfinite(x[i]) ? x[i] : NAN;
        /* noise-only filter: partial chunks, chain in double, final pass */
        const int nch = (n + kChunk - 1) / kChunk;
        std::vector<float> zstart((size_t)nch * N);
        for (int c = 0; c < nch; c++) {
            const int a = c * kChunk, len = std::min(kChunk, n - a);
            bool miss = len < kChunk;
            std::vector<float> part(N, 0.f);
            for (int i = 0; i < len; i++) {
                miss |= r[a + i] != r[a + i];
                step<float>(part.data(), Kf.data(), axf.data(), anf.data(), r[a + i]);
            }
            for (int i = 0; i < N; i++)
                zstart[(size_t)c * N + i] = (float)zc[i];
            if (miss) {
                for (int i = 0; i < len; i++)
                    step<double>(zc.data(), Kd.data(), axd.data(), and_.data(),
                                 (double)r[a + i]);
            } else {
                std::vector<double> W(N);
                for (int i = 0; i < N; i++) {
                    double s = part[i];
                    for (int l = 0; l < N; l++)
                        s = std::fma(P[i * N + l], zc[l], s);
                    W[i] = s;
                }
                zc = W;
            }
        }
        for (int c = 0; c < nch; c++) {
            const int a = c * kChunk, len = std::min(kChunk, n - a);
            float z[2 * TR_KALMAN_MAX_Q];
            for (int i = 0; i < N; i++)
                z[i] = zstart[(size_t)c * N + i];
            for (int i = 0; i < len; i++) {
                for (int l = 0; l < N; l++)
                    zM[(size_t)l * n + a + i] = z[l];
                const float e =
                    step<float>(z, Kf.data(), axf.data(), anf.data(), r[a + i]);
                hq[a + i] = hM * (e * e);
            }
        }
        /* diagonals: thread blocks of kBlock diagonals, tiles of kKT offsets */
        std::vector<float> R((size_t)(M - 1) * n, NAN), st2 = st;
        const long long nd = (long long)n + M - 2;
        auto kstart = [&](long long s) { return s < j0 ? (int)(j0 - s + 1) : 1; };
        auto kend = [&](long long s) {
            return (int)std::min((long long)(M - 1), j0 + n - s);
        };
        for (long long t0 = 0; t0 < nd; t0 += kBlock) {
            const long long S0 = j0 - (M - 2) + t0;
            const long long tlast = std::min(t0 + kBlock - 1, nd - 1);
            const int kloC = kstart(S0 + (tlast - t0)), khiC = kend(S0);
            for (int tid = 0; tid < kBlock; tid++) {
                const long long t = t0 + tid, s = S0 + tid;
                const bool valid = t < nd;
                const long long wf = t0 + (tid & ~31), wl = std::min(wf + 31, nd - 1);
                const int kloW = wf <= wl ? kstart(S0 + (wl - t0)) : INT_MAX;
                const int khiW = wf <= wl ? kend(S0 + (wf - t0)) : 0;
                int ks = INT_MAX, ke = 0;
                if (valid) ks = kstart(s), ke = kend(s);
                const int slot = (int)(((s % M) + M) % M);
                float z[2 * TR_KALMAN_MAX_Q] = {0}, Rv = 0.f, C = 0.f;
                if (valid) {
                    if (s < j0) {
                        for (int i = 0; i < N; i++)
                            z[i] = st[(size_t)i * M + slot];
                        Rv = st[(size_t)N * M + slot];
                        C = st[(size_t)(N + 1) * M + slot];
                    } else {
                        for (int i = 0; i < N; i++)
                            z[i] = zM[(size_t)i * n + (s - j0)];
                        Rv = (float)log_alpha;
                    }
                }
                for (int kt = kloC; kt <= khiC; kt += kKT) {
                    const long long jb0 = S0 + kt - 1 - j0; /* staged samples from here */
                    const int k0 = std::max(kt, kloW), k1 = std::min(kt + kKT - 1, khiW);
                    for (int k = k0; k <= k1; k++) {
                        if (k < ks || k > ke) continue;
                        const int kk = k - kt;
                        const float *g = &gain[(size_t)(k - 1) * GS];
                        const long long jb = jb0 + tid + kk;
                        if (!(jb >= 0 && jb < n && tid + kk < kBlock + kKT)) {
                            CHECK(0, "staged sample index %lld out of the tile", jb);
                            continue;
                        }
                        const float xr = r[jb], xq = hq[jb];
                        const float e = step<float>(z, g, axf.data(), anf.data(), xr);
                        const float dc = xr == xr ? g[N] : 0.f;
                        const float inc = (dc - g[N + 1] * (e * e)) + xq;
                        const float y = inc - C, tt = Rv + y;
                        C = (tt - Rv) - y;
                        Rv = tt;
                        R[(size_t)(k - 1) * n + jb] = Rv;
                    }
                }
                if (valid && ke < M - 1) {
                    for (int i = 0; i < N; i++)
                        st2[(size_t)i * M + slot] = z[i];
                    st2[(size_t)N * M + slot] = Rv;
                    st2[(size_t)(N + 1) * M + slot] = C;
                }
            }
        }
        st.swap(st2);
        for (size_t i = 0; i < R.size(); i++)
            if (R[i] != R[i]) {
                CHECK(0, "register buffer entry %zu not written", i);
                break;
            }
        /* normaliser: sub-blocks of L = min(M, tile) */
        Gw.resize((size_t)M + n);
        Gh.resize((size_t)M + n);
        Gl.resize((size_t)M + n);
        if (M <= kLxWarpMax) {
            lx_warp(R, n, log1m_alpha);
        } else {
            const int L = std::min(M, kLxTile);
            for (int s0 = 0; s0 < n; s0 += L) {
                const int len = std::min(L, n - s0);
                const double b = Gw[M + s0 - 1];
                std::vector<float> y(len);
                bool quiet = true;
                for (int i = 0; i < len; i++) {
                    const int jb = s0 + i;
                    const float rp = jb == 0 ? rlast : R[(size_t)(M - 2) * n + jb - 1];
                    y[i] =
                        (float)((double)rp + Gw[jb] - b - (double)(i + 1) * log1m_alpha);
                    quiet &= y[i] < kQuiet;
                }
                float acc = 0.f;
                for (int i = 0; i < len; i++) {
                    float v;
                    if (quiet) {
                        acc += std::exp(y[i]);
                        v = acc - 0.5f * (acc * acc);
                    } else {
                        if (i == 0) {
                            acc = y[0];
                        } else {
                            const float mm = std::max(acc, y[i]),
                                        d = std::min(acc, y[i]) - mm;
                            acc = mm + std::log(1.f + std::exp(d));
                        }
                        v = softplus(acc);
                    }
                    const double G = b + (double)(i + 1) * log1m_alpha + (double)v;
                    Gw[M + s0 + i] = G;
                    Gh[M + s0 + i] = (float)G;
                    Gl[M + s0 + i] = (float)(G - (double)(float)G);
                }
            }
        }
        rlast = R[(size_t)(M - 2) * n + n - 1];
        /* LLR: slices of k, running log-sum-exp, combined */
        const int slices = std::max(1, std::min(7, (M - 1 + 31) / 32));
        const int ksl = (M - 1 + slices - 1) / slices;
        for (int jb = 0; jb < n; jb++) {
            float mp = kNeg, sp = 0.f, ma = kNeg, sa = 0.f, best = -INFINITY;
            uint32_t kb = 1;
            for (int k0 = 1; k0 <= M - 1; k0 += ksl) {
                float pmp = kNeg, psp = 0.f, pma = kNeg, psa = 0.f;
                for (int k = k0; k <= std::min(M - 1, k0 + ksl - 1); k++) {
                    const float d =
                        R[(size_t)(k - 1) * n + jb] +
                        ((Gh[jb - k + M] - Gh[jb + M]) + (Gl[jb - k + M] - Gl[jb + M]));
                    if (d > best) best = d, kb = (uint32_t)k;
                    float &mm = k <= (int)Ns ? pmp : pma, &ss = k <= (int)Ns ? psp : psa;
                    const float nm = std::max(mm, d);
                    ss = ss * std::exp(mm - nm) + std::exp(d - nm);
                    mm = nm;
                }
                auto merge = [](float &m1, float &s1, float m2, float s2) {
                    const float nm = std::max(m1, m2);
                    s1 = s1 * std::exp(m1 - nm) + s2 * std::exp(m2 - nm);
                    m1 = nm;
                };
                merge(mp, sp, pmp, psp);
                merge(ma, sa, pma, psa);
            }
            const float present = mp + std::log(sp);
            float absent = 0.f;
            if (sa > 0.f) {
                const float xx = ma + std::log(sa);
                absent = std::max(xx, 0.f) + std::log1p(std::exp(-std::fabs(xx)));
            }
            llr[jb] = present - absent;
            kmax[jb] = kb;
        }
        /* next block's window, rebased */
        std::vector<double> Gn(M);
        std::vector<float> hn(M), ln(M);
        for (int i = 0; i < M; i++) {
            const double v = Gw[n + i] - Gw[M + n - 1];
            Gn[i] = v;
            hn[i] = (float)v;
            ln[i] = (float)(v - (double)(float)v);
        }
        Gw.swap(Gn);
        Gh.swap(hn);
        Gl.swap(ln);
        pos += n;
    }
};

void trial(tu_rng *g, int id)
{
    const uint32_t Q = (uint32_t)tu_range(g, 1, 6);
    const uint32_t M =
        id < 8 ? (uint32_t)tu_range(g, 3, 300) : (uint32_t)tu_range(g, 600, 1500);
    double an[8], ax[8];
    random_ar_real(g, Q, 0.9, an);
    random_ar_real(g, Q, 0.95, ax);
    tr_kalman_design d = tr_kalman_design_default();
    d.M = M;
    d.noise_order = d.target_order = Q;
    d.noise_ar = an;
    d.target_ar = ax;
    d.noise_var = 0.5 + tu_uniform(g);
    d.meas_var = tu_uniform(g) < 0.3 ? 0.0 : 0.2 * tu_uniform(g);
    d.target_var = d.noise_var * (0.05 + 0.4 * tu_uniform(g)) * (M > 60 ? 60.0 / M : 1.0);
    d.envelope = (tr_kalman_envelope)tu_range(g, 0, 3);
    d.env_param = 2.0 + tu_uniform(g) * M / 3.0;
    tr_error err;
    tr_kalman_model *m = tr_kalman_model_design(&d, &err);
    CHECK(m != NULL, "trial %d: design: %s", id, err.message);
    if (!m) return;
    const size_t len = id < 8 ? 6000 : 3 * (size_t)M + 1000;
    std::vector<float> x(len);
    /* AR noise, bursts of the target process */
    double nh[8] = {0}, xh[8] = {0};
    size_t next = (size_t)tu_range(g, 0, M);
    long since = -1;
    for (size_t t = 0; t < len; t++) {
        double nv = std::sqrt(d.noise_var) * tu_gauss(g);
        for (uint32_t i = 0; i < Q; i++)
            nv += an[i] * nh[i];
        std::memmove(nh + 1, nh, 7 * sizeof(double));
        nh[0] = nv;
        if (t == next) since = 0, next = t + M + (size_t)tu_range(g, M / 2, 3 * M);
        double xv = 0;
        if (since >= 0 && since < (long)M - 1) {
            xv = std::sqrt(d.target_var) * tu_gauss(g);
            for (uint32_t i = 0; i < Q; i++)
                xv += ax[i] * xh[i];
            since++;
        } else {
            since = -1;
        }
        std::memmove(xh + 1, xh, 7 * sizeof(double));
        xh[0] = xv;
        x[t] = (float)(nv + xv + std::sqrt(d.meas_var) * tu_gauss(g));
    }
    if (id % 3 == 2)
        for (int i = 0; i < 8; i++)
            x[tu_range(g, 0, (long)len - 1)] = i % 2 ? NAN : INFINITY;
    uint32_t Ns = (uint32_t)tu_range(g, 1, M - 1);
    double alpha = std::pow(10.0, -(double)tu_range(g, 2, 12));
    /* settings change at len/2 (trials 1, 4, ...) */
    const size_t at = id % 3 == 1 ? len / 2 : len;
    const uint32_t Ns2 = (uint32_t)tu_range(g, 1, M - 1);
    const double alpha2 = std::pow(10.0, -(double)tu_range(g, 3, 10));

    std::vector<double> lr(len);
    std::vector<uint32_t> kr(len, 0);
    tr_kalman_ref *ref = tr_kalman_ref_create(m);
    tr_kalman_params p;
    for (int part = 0; part < 2; part++) {
        const size_t a = part ? at : 0, b = part ? len : at;
        if (a >= b) continue;
        p.Ns = part ? Ns2 : Ns;
        const double al = part ? alpha2 : alpha;
        p.log_alpha = std::log(al);
        p.log1m_alpha = std::log1p(-al);
        tr_kalman_ref_run(ref, &p, &x[a], b - a, &lr[a], NULL, 0.0);
    }
    tr_kalman_ref_destroy(ref);

    const int B = id % 2 ? kChunk * (int)tu_range(g, 1, 4) : 8192;
    Batched f(m, B);
    std::vector<float> lf(len);
    std::vector<uint32_t> kf(len);
    size_t done = 0;
    while (done < len) {
        size_t c = tu_uniform(g) < 0.3 ? (size_t)tu_range(g, 1, 3)
                                       : (size_t)tu_range(g, 1, 3000);
        c = std::min(c, len - done);
        if (done < at && done + c > at) c = at - done;
        const bool second = done >= at;
        const double al = second ? alpha2 : alpha;
        for (size_t q = 0; q < c; q += (size_t)B) {
            const int l = (int)std::min((size_t)B, c - q);
            f.block(&x[done + q], l, second ? Ns2 : Ns, std::log(al), std::log1p(-al),
                    &lf[done + q], &kf[done + q]);
        }
        done += c;
    }
    double worst = 0;
    size_t at_w = 0, compared = 0;
    for (size_t j = 0; j < len; j++) {
        if (!std::isfinite(lr[j])) continue; /* beyond the literal reference's range */
        compared++;
        const double e = std::fabs(lf[j] - lr[j]) / tol_of(lr[j]);
        if (!(e <= worst)) worst = e, at_w = j;
    }
    printf("trial %2d M=%-5u Q=%u Ns=%-5u alpha=%-6.0e block=%-5d len=%-6zu: worst "
           "|diff|/tol %.3g, %zu compared\n",
           id, M, Q, Ns, alpha, B, len, worst, compared);
    CHECK(worst <= 1.0 && compared >= len * 9 / 10,
          "trial %d (M=%u Q=%u): worst |diff|/tol %g at %zu (ref %g, batched %g), %zu of "
          "%zu compared",
          id, M, Q, worst, at_w, lr[at_w], (double)lf[at_w], compared, len);
    tr_kalman_model_destroy(m);
}

} // namespace

int main()
{
    tu_rng g = {4242};
    for (int id = 0; id < 12; id++)
        trial(&g, id);
    return tu_finish("test_kalman_batched_host");
}
