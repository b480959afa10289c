/*
 * Kalman-bank detector: optimal online detection of a Gaussian signal of known
 * statistics and duration in coloured Gaussian noise.
 *
 * Paper: N. Nossenson and A. J. Jaffe, "CUDA Implementation of an Optimal
 * Online Gaussian-Signal-in-Gaussian-Noise Detector" (equations 2-15); the
 * detector of N. Nossenson and H. Messer, Neural Computation 24(4), 2012.
 *
 * Model (docs/kalman.md derives it). State z (2Q) = target AR(Q) companion
 * block then noise AR(Q) companion block:
 *   z = [x_t, x_{t-1}, ..., x_{t-Q+1}, n_t, ..., n_{t-Q+1}]
 *   x_t = sum_i a_i x_{t-i} + w_t,  Var w_t = target_var * g[t - onset]
 *   n_t = sum_i b_i n_{t-i} + u_t,  Var u_t = noise_var
 *   r_t = z{1} + z{Q+1} + v_t       Var v_t = meas_var (>= 0)      (eq. 2)
 * Hypotheses k = 1..M: for k <= M-1 the current sample is the k-th sample of
 * the target (onset k-1 samples ago; k = 1: onset now); k = M: the target is
 * absent (never came or is long gone). The target therefore lasts M-1
 * samples and the envelope g has M-1 values, g[k-1] for offset k.
 * Hypothesis k <= M-1 is a Kalman filter with the constant gain K_k and
 * innovation variance Sigma_k = Sigma_{r,k|k-1}; its state continues the state
 * of hypothesis k-1 of the previous sample (eqs. 3-4); hypothesis 1 starts
 * from the prediction of the noise-only filter (hypothesis M, steady-state
 * gain K_M, variance Sigma_M, its state fed back to itself).
 *
 * Per sample j with r = r[j] (all filters use their predicted state):
 *   rhat_k = z_k{1} + z_k{Q+1}                                   (eq. 2)
 *   z_k|k = z_k|k-1 + K_k (r - rhat_k)                           (eq. 3)
 *   z_{k+1|k} = A z_k|k                                          (eq. 4)
 *   q_k[j] = -1/2 [log(2 pi Sigma_k) + (r - rhat_k)^2 / Sigma_k] (eq. 5)
 *   L_X[j] = q_M[j] + log(1 - alpha + exp(d_{M-1}[j-1]))         (eq. 9)
 *   d_1[j] = log(alpha) + q_1[j] - L_X[j]                        (eq. 10)
 *   d_k[j] = d_{k-1}[j-1] + q_k[j] - L_X[j],  k = 2..M-1         (eq. 6)
 *   (d_M = 0: every register is a log-probability relative to hypothesis M)
 *   exp_d_k = exp(d_k - norm_factor)                             (eq. 7)
 *   S1 = sum_{k=2}^{N_s} exp_d_k, S2 = sum_{k=N_s+1}^{M-1} exp_d_k (eqs. 11-12)
 *   norm_factor[j+1] = norm_factor[j]
 *                      + log(max{exp_d_1, S1, S2}) - 20           (eq. 13)
 *   LLR[j] = log(S1 + exp_d_1) - log(exp(-norm_factor) + S2)     (eq. 15)
 * i.e. LLR = log sum_{k<=N_s} e^{d_k} - log(1 + sum_{N_s<k<M} e^{d_k}),
 * which does not depend on norm_factor. Start of stream: d_k = -inf for
 * k < M (no target), filter states zero. decision[j] = LLR[j] > threshold.
 *
 * Non-finite input samples are treated as missing: every filter predicts
 * without a measurement update (innovation 0) and every q_k[j] = 0, so the
 * registers only shift (the prior moves on); they are counted
 * (tr_kalman_nonfinite). The LLR of such a sample is computed from the shifted
 * registers as usual. The detector never stays stuck.
 *
 * Outputs do not depend on how the stream is split into calls.
 */
#ifndef TRANSIENT_KALMAN_H
#define TRANSIENT_KALMAN_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits checked by the design and by model loading. */
#define TR_KALMAN_MAX_Q 32         /* largest AR order (state size 2Q) */
#define TR_KALMAN_MAX_M (1u << 24) /* most hypotheses */

/* ---- model ------------------------------------------------------------- */

/* Shape of the target's innovation variance over its M-1 samples. */
typedef enum {
    TR_KALMAN_ENV_RECT = 0,          /* g = 1 */
    TR_KALMAN_ENV_EXP = 1,           /* g[i] = exp(-i / env_param), i = 0..M-2 */
    TR_KALMAN_ENV_GAUSS = 2,         /* g[i] = exp(-((i - c) / env_param)^2 / 2),
                                        c = (M-2)/2 */
    TR_KALMAN_ENV_RAISED_COSINE = 3, /* g[i] = (1 - cos(2 pi (i + 1) / M)) / 2 */
    TR_KALMAN_ENV_USER = 4           /* g[i] = env_user[i], M-1 values */
} tr_kalman_envelope;

/*
 * Parameters of a model design. AR convention: x_t = sum_{i=1}^{p} a[i-1]
 * x_{t-i} + w_t; the polynomial 1 - sum a_i z^-i must have every root strictly
 * inside the unit circle (checked by the Schur-Cohn step-down test).
 * Q = max(noise_order, target_order); the shorter model is padded with zeros.
 */
typedef struct {
    uint32_t M;                  /* hypotheses (>= 3); the target lasts M-1 samples */
    uint32_t noise_order;        /* p_n >= 1 */
    const double *noise_ar;      /* p_n noise AR coefficients */
    double noise_var;            /* noise innovation variance (> 0) */
    double meas_var;             /* white measurement noise variance (>= 0) */
    uint32_t target_order;       /* p_x >= 1 */
    const double *target_ar;     /* p_x target AR coefficients */
    double target_var;           /* target innovation variance at g = 1 (> 0) */
    tr_kalman_envelope envelope; /* shape of the target's variance (default RECT) */
    double env_param;            /* EXP: decay constant, GAUSS: width, in samples (> 0) */
    const double *env_user;      /* USER: M-1 values >= 0, finite, at least one > 0 */
    uint32_t riccati_max_iter;   /* noise-only steady state: most iterations (100000) */
    double riccati_tol;          /* converged when max |dP| <= tol * max |P| (1e-13) */
} tr_kalman_design;

/* Defaults: M = 92, RECT, order 1 both with zero coefficients (white), unit
 * variances, meas_var 0, env_param 0, riccati limits as above. The AR pointers
 * are NULL: set them (and the orders) before designing. */
tr_kalman_design tr_kalman_design_default(void);

typedef struct tr_kalman_model tr_kalman_model;

/* Design a model (in double): validates every parameter, iterates the
 * noise-only Riccati equation to its steady state, then runs the Riccati
 * recursion in Joseph form over k = 1..M-1 from that state. NULL on failure
 * with err filled. */
tr_kalman_model *tr_kalman_model_design(const tr_kalman_design *d, tr_error *err);

/*
 * A model from its raw quantities (as the paper assumes them given):
 * A (2Q x 2Q row-major), K (M rows of 2Q: K_1..K_{M-1}, then the noise-only
 * steady-state gain K_M), sigma (M: Sigma_1..Sigma_{M-1}, Sigma_M).
 * Validates: 1 <= Q <= TR_KALMAN_MAX_Q, 3 <= M <= TR_KALMAN_MAX_M, all finite,
 * sigma > 0. A need not be block companion (the fast CPU variant then uses a
 * dense product).
 */
tr_kalman_model *tr_kalman_model_from_arrays(uint32_t Q, uint32_t M, const double *A,
                                             const double *K, const double *sigma,
                                             tr_error *err);
tr_kalman_model *tr_kalman_model_copy(const tr_kalman_model *m, tr_error *err);
void tr_kalman_model_destroy(tr_kalman_model *m);

/*
 * Model files (little-endian binary, docs/kalman.md):
 *   8 bytes  magic "TRKALM01"
 *   uint32   Q
 *   uint32   M
 *   double   A[2Q * 2Q]      row-major
 *   double   K[M * 2Q]       K_1 .. K_M (K_M: noise-only steady state)
 *   double   sigma[M]        Sigma_1 .. Sigma_M
 * Loading validates like tr_kalman_model_from_arrays and rejects truncated or
 * trailing data (TR_ERR_IO).
 */
tr_kalman_model *tr_kalman_model_load(const char *path, tr_error *err);
tr_status tr_kalman_model_save(const tr_kalman_model *m, const char *path, tr_error *err);

uint32_t tr_kalman_model_Q(const tr_kalman_model *m);
uint32_t tr_kalman_model_M(const tr_kalman_model *m);
const double *tr_kalman_model_A(const tr_kalman_model *m);                /* 2Q x 2Q */
const double *tr_kalman_model_gain(const tr_kalman_model *m, uint32_t k); /* K_k, 2Q;
                                                       k = 1..M, NULL outside */
double tr_kalman_model_sigma(const tr_kalman_model *m, uint32_t k); /* Sigma_k, k=1..M;
                                                                      NaN outside */
double tr_kalman_model_log_sigma(const tr_kalman_model *m, uint32_t k); /* log Sigma_k */
double tr_kalman_model_inv_sigma(const tr_kalman_model *m, uint32_t k); /* 1/Sigma_k */
/* 1 when A = blkdiag(companion(target), companion(noise)). */
int tr_kalman_model_is_companion(const tr_kalman_model *m);

/* ---- detector ---------------------------------------------------------- */

typedef struct {
    uint32_t Ns;        /* N_s: hypotheses 1..N_s count as "present" (1 <= N_s < M) */
    double alpha;       /* per-sample onset prior, 0 < alpha < 1 (default 1e-9) */
    double threshold;   /* decision: LLR > threshold (default 0) */
    tr_backend backend; /* AUTO, CPU or CUDA (default AUTO) */
    int device;         /* CUDA device index (default 0) */
    tr_variant variant; /* FAST (default), REFERENCE (CPU, double, eqs. 2-15
                           literally) or PAPER (CUDA, one launch per sample) */
    size_t batch;       /* CUDA FAST: samples per device batch (default 65536) */
    size_t max_events;  /* events kept until read; older dropped (default 4096) */
} tr_kalman_config;

tr_kalman_config tr_kalman_config_default(void);

/* Events of the decision stream (positions are 0-based sample indices). */
typedef enum {
    TR_KALMAN_EVENT_START = 1, /* decision went 0 -> 1 at `start` */
    TR_KALMAN_EVENT_END = 2    /* decision went 1 -> 0 at `end`; all fields valid */
} tr_kalman_event_type;

typedef struct {
    int32_t type;    /* tr_kalman_event_type */
    uint64_t start;  /* first sample with decision 1 */
    uint64_t end;    /* first sample with decision 0 after the burst (END only) */
    uint64_t peak;   /* sample of the highest LLR so far in the burst */
    double peak_llr; /* that LLR */
    uint64_t onset;  /* estimated onset: peak - k* + 1, k* = argmax_{k<M} d_k[peak]
                        (clamped at 0) */
} tr_kalman_event;

typedef struct tr_kalman tr_kalman;

/* The object keeps its own copy of the model. Validates cfg against the model
 * (N_s, alpha, threshold finite, backend/variant/device/batch). */
tr_kalman *tr_kalman_create(const tr_kalman_config *cfg, const tr_kalman_model *model,
                            tr_error *err);
void tr_kalman_destroy(tr_kalman *q);

/* Back to the start of a stream: d_k = -inf, states zero, position 0, no
 * burst open, event queue and counters cleared. */
tr_status tr_kalman_reset(tr_kalman *q);

/*
 * Detect on n samples. llr (n floats) and decision (n bytes, 0/1) may each be
 * NULL when not wanted. Every sample is consumed; state carries over. Events
 * found are queued (tr_kalman_events).
 */
tr_status tr_kalman_process(tr_kalman *q, const float *x, size_t n, float *llr,
                            uint8_t *decision);
/* The same with a double LLR. */
tr_status tr_kalman_process_f64(tr_kalman *q, const float *x, size_t n, double *llr,
                                uint8_t *decision);

/* CUDA backend only (TR_ERR_UNSUPPORTED otherwise): device pointers in and out
 * (d_llr, d_decision may be NULL); returns when done. Events and the
 * non-finite count are not produced on this path. */
tr_status tr_kalman_process_device(tr_kalman *q, const float *d_x, size_t n, float *d_llr,
                                   uint8_t *d_decision);

/* Move up to max queued events (oldest first) into ev; returns how many. */
size_t tr_kalman_events(tr_kalman *q, tr_kalman_event *ev, size_t max);
size_t tr_kalman_events_pending(const tr_kalman *q);
uint64_t tr_kalman_events_dropped(const tr_kalman *q); /* lost to max_events */

/*
 * Run-time settings; each takes effect from the next sample processed (the
 * next call on the CUDA backend) and keeps every register:
 *  - threshold: only the decision changes (an open burst may end or start).
 *  - N_s (1 <= N_s < M): only the split of the registers into the present and
 *    absent sums of eqs. 11-12 changes.
 *  - alpha (0 < alpha < 1): the prior of eqs. 9-10; the registers stay valid
 *    log-probabilities, so the recursion simply continues with the new prior.
 * Invalid values: TR_ERR_INVALID, nothing changed.
 */
tr_status tr_kalman_set_threshold(tr_kalman *q, double threshold);
tr_status tr_kalman_set_ns(tr_kalman *q, uint32_t Ns);
tr_status tr_kalman_set_alpha(tr_kalman *q, double alpha);
double tr_kalman_threshold(const tr_kalman *q);
uint32_t tr_kalman_ns(const tr_kalman *q);
double tr_kalman_alpha(const tr_kalman *q);

uint32_t tr_kalman_M(const tr_kalman *q);
uint32_t tr_kalman_Q(const tr_kalman *q);
uint64_t tr_kalman_position(const tr_kalman *q);  /* samples processed */
uint64_t tr_kalman_nonfinite(const tr_kalman *q); /* non-finite samples skipped */
int tr_kalman_in_burst(const tr_kalman *q);       /* decision of the last sample */
tr_backend tr_kalman_backend(const tr_kalman *q);
tr_variant tr_kalman_variant(const tr_kalman *q);
const char *tr_kalman_last_error(const tr_kalman *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_KALMAN_H */
