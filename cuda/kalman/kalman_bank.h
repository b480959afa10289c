/*
 * Kalman-bank detector: the model arrays and run-time parameters that every
 * variant reads, shared by the core (lib/core/kalman, which builds the model)
 * and the CUDA variants (cuda/kalman). Plain C; includes only the public
 * kalman.h. Not installed.
 *
 * Indexing of every array below: hypothesis k = 1..M is stored at index k-1.
 * Index M-1 (hypothesis M) is the noise-only steady-state filter. Per
 * hypothesis the log-likelihood of eq. 5 of the paper is evaluated as
 *   q_k = c[k-1] - h[k-1] * e^2,  e = r - (z{1} + z{Q+1}),
 *   c = -1/2 log(2 pi Sigma_k),   h = 1/(2 Sigma_k).
 */
#ifndef TRANSIENT_CUDA_KALMAN_BANK_H
#define TRANSIENT_CUDA_KALMAN_BANK_H

#include <transient/kalman.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tr_kalman_model {
    uint32_t Q;        /* AR order; state size n = 2Q */
    uint32_t n;        /* 2Q */
    uint32_t M;        /* hypotheses */
    double *A;         /* n x n, row-major */
    double *K;         /* M x n: row k-1 = K_k; row M-1 = noise-only gain */
    double *sigma;     /* M: Sigma_{r,k|k-1}; [M-1] = noise-only */
    double *log_sigma; /* M: log Sigma_k */
    double *inv_sigma; /* M: 1 / Sigma_k */
    double *c;         /* M: -1/2 log(2 pi Sigma_k) */
    double *h;         /* M: 1 / (2 Sigma_k) */
    int companion;     /* A = blkdiag(companion(ax), companion(an)) */
    double *ax;        /* Q: first row of the target block (when companion) */
    double *an;        /* Q: first row of the noise block (when companion) */
};

/* Run-time parameters shared by every variant. */
typedef struct {
    uint32_t Ns;        /* present: hypotheses 1..Ns */
    double log_alpha;   /* log(alpha) */
    double log1m_alpha; /* log(1 - alpha) (log1p(-alpha)) */
} tr_kalman_params;

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CUDA_KALMAN_BANK_H */
