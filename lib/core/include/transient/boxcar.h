/*
 * Boxcar single-pulse search: BoxDIT, IGRID and the ideal search, per channel
 * of a float32 stream (one time series, or many at once such as de-dispersion
 * trials).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * sections 2-3 (equations 2, 4, 12-18, Algorithms 1-5, Table 1).
 *
 * Definitions (what the reference variant computes)
 *   Input x[p], p = 0, 1, ... absolute 64-bit positions, per channel. The
 *   boxcar (p, L) is X_L[p] = sum_{j=0}^{L-1} x[p+j] (eq. 2: it STARTS at p);
 *   its S/N is (X_L[p] - mu_L) / sigma_L (eq. 4), mu_L and sigma_L from the
 *   normalisation (<transient/boxcar_norm.h>) in effect for the window
 *   that contains p. An algorithm is a set of evaluated boxcars, described by
 *   a plan: a list of stages; stage i evaluates the boxcars that start at every
 *   absolute position that is a multiple of its stride s_i, with the widths
 *   width_first + m * width_step, m = 0 .. nwidths - 1. Widths increase
 *   strictly from stage to stage. L_end is the first evaluated width >=
 *   max_width (the last stage is cut after it).
 *   - IDEAL: one stage, stride 1, widths 1 .. max_width (L_end = max_width).
 *   - BOXDIT with per-iteration maximum widths B^0, B^1, ... (the list; its
 *     last entry repeats; each even and >= 2), decimation by 2 (eqs. 13-15,
 *     Algorithm 1): iteration i has stride 2^i and the widths
 *     LMAX^{i-1} + 2^i m, m = 1 .. B^i, where LMAX^{-1} = 0 and
 *     LMAX^i = LMAX^{i-1} + 2^i B^i. The decimated series of iteration i is
 *     x^i[n] = sum of x over [2^i n + LMAX^{i-1}, 2^i (n+1) + LMAX^{i-1}) and
 *     the running value X^{i-1}[n] is the boxcar of width LMAX^{i-1} that
 *     starts at 2^i n. Constant lists 32, 16, 8 are the paper's BD-32, BD-16,
 *     BD-8; AstroAccelerate uses 32,16,16,16,8 (the 8 repeating).
 *   - IGRID IG(d), d = depth in 1..3, P = layers per step (a power of two,
 *     default 4, 8, 16 for d = 1, 2, 3): step i has stride
 *     s_i = max(1, 2^i / P) and the widths 2^i + m * 2^{max(0, i-d)},
 *     m = 0 .. 2^{min(i,d)} - 1 (eq. 18, Table 1). This nominal set is what
 *     every variant computes (the paper's GPU code evaluates extra layers in
 *     some steps; ours does not).
 *   Output per channel and position p: Y[p] = the highest S/N of the evaluated
 *   boxcars that start at p, W[p] = the width of that boxcar; on ties the
 *   first in evaluation order wins (earlier stage, then smaller width). Every
 *   algorithm evaluates width 1 at every position, so Y and W are always
 *   defined. S/N values that are NaN never win a comparison.
 *
 * Streaming and latency
 *   The boxcar (p, L) needs x up to p + L - 1, so the outputs come out with a
 *   fixed latency of L_end - 1 samples, plus the statistics window W when the
 *   normalisation measures (WHITE, LEVELS) with norm.first_own = 1 (the
 *   default): the first window is normalised by its own statistics, known
 *   only at its end, so the search holds W samples (the whole stream is
 *   delayed by W to keep the latency fixed; a stream shorter than W is held
 *   until flush and normalised by the statistics of the samples it has). The
 *   latency is tr_boxcar_latency. tr_boxcar_process
 *   consumes n samples per channel and writes exactly n output positions:
 *   output k of the call is position position_in + k - latency (position_in =
 *   tr_boxcar_position before the call); positions < 0 get Y = 0, W = 0. The
 *   output does not depend on how the stream is split into calls (chunk size 1
 *   included). tr_boxcar_flush ends the stream: it writes the last `latency`
 *   positions, evaluating only the boxcars that lie inside the data (width 1
 *   always does); then only reset or destroy are allowed.
 *
 * Layout
 *   Host buffers are time-major with interleaved channels: x[k * nchan + c]
 *   (a GNU Radio vector stream of nchan); Y and W use the same layout. Device
 *   buffers (tr_boxcar_process_device) use cfg.device_layout: TIME_MAJOR as
 *   the host, or CHANNEL_MAJOR x[c * n + k] (channel c's n samples of the call
 *   one after the other); outputs in the same layout as the input.
 *
 * Non-finite input
 *   Handled by the normalisation (boxcar_norm.h): a NaN or Inf sample is
 *   replaced by the input mean in effect, excluded from the statistics and
 *   counted (tr_boxcar_nonfinite); it never reaches a sum, so it cannot poison
 *   the state. Huge finite inputs may overflow a float sum to Inf; such S/N
 *   values take part in the comparisons as they are (NaN ones never win) and
 *   affect only the boxcars that contain them.
 *
 * Precision
 *   REFERENCE sums every boxcar in double, directly from x[p] upwards, and
 *   divides in double. The CPU FAST variant builds the sums from float32
 *   partial sums (decimated series) and takes S/N = X * (1/sigma_L) -
 *   mu_L/sigma_L in float (coefficients rounded once from double); the CUDA
 *   variants are described in cuda/boxcar/boxcar_cuda.h. For every variant, for
 *   input with |mean| <= 16 sigma and outliers below 1e3 sigma,
 *   |Y_fast - Y_ref| <= TR_BOXCAR_FAST_TOL(L_end) (1 + |Y_ref|), with
 *   TR_BOXCAR_FAST_TOL(L) = 2^-17 * (8 + sqrt(L)) (tested); W agrees with the
 *   reference wherever the two best S/N values of a position differ by more
 *   than that. Every variant gives the same bits for any chunking.
 *
 * Per-stage outputs (cfg.stage_outputs = 1, CPU backend)
 *   Y^i, W^i of eq. 12 at the stage's own resolution: for every start n * s_i
 *   that a call finalised, the best S/N and width among stage i's boxcars only
 *   (-INFINITY and 0 where none was evaluated, which only flush can cause).
 *   Read them after each process or flush call with tr_boxcar_stage_output.
 */
#ifndef TRANSIENT_BOXCAR_H
#define TRANSIENT_BOXCAR_H

#include <transient/common.h>
#include <transient/boxcar_norm.h>

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    TR_BOXCAR_BOXDIT = 0, /* BoxDIT, decimation by 2 (section 3.1) */
    TR_BOXCAR_IGRID = 1,  /* IGRID IG(depth) (section 3.2) */
    TR_BOXCAR_IDEAL = 2   /* every width 1..max_width at every position */
} tr_boxcar_algorithm;

typedef enum {
    TR_BOXCAR_TIME_MAJOR = 0,   /* x[k * nchan + c] */
    TR_BOXCAR_CHANNEL_MAJOR = 1 /* x[c * n + k], n = samples of the call */
} tr_boxcar_layout;

/* Limits checked at create. */
#define TR_BOXCAR_MAX_LIST   32         /* entries of the BoxDIT width list */
#define TR_BOXCAR_MAX_WIDTH  (1u << 24) /* largest max_width */
#define TR_BOXCAR_MAX_BLIST  (1u << 16) /* largest entry of the BoxDIT list */
#define TR_BOXCAR_MAX_LAYERS 1024       /* largest IGRID layer count */
#define TR_BOXCAR_MAX_NCHAN  (1u << 20) /* most channels */
#define TR_BOXCAR_MAX_STAGES 64         /* most stages of a plan */

/* Relative S/N tolerance of the float32 variants against the reference. */
#define TR_BOXCAR_FAST_TOL(L) (7.62939453125e-6 * (8.0 + sqrt((double)(L))))

typedef struct {
    tr_boxcar_algorithm algorithm; /* BOXDIT (default), IGRID or IDEAL */
    uint32_t max_width;            /* S_end: widest pulse searched, >= 1 (default 1024) */
    uint32_t widths[TR_BOXCAR_MAX_LIST]; /* BoxDIT list B^0, B^1, ...: even, 2..65536 */
    uint32_t nwidths;               /* BoxDIT: entries used; the last repeats (default
                                       5: 32,16,16,16,8) */
    uint32_t depth;                 /* IGRID: d in 1..3 (default 1) */
    uint32_t layers;                /* IGRID: P, power of two <= 1024; 0 = 2^(d+1)
                                       (default 0) */
    uint32_t nchan;                 /* channels, >= 1 (default 1) */
    tr_boxcar_norm_config norm;     /* S/N normalisation (default: its defaults) */
    int stage_outputs;              /* 1: keep per-stage outputs (CPU), default 0 */
    tr_boxcar_layout device_layout; /* layout of device buffers (default TIME_MAJOR) */
    tr_backend backend;             /* AUTO (default), CPU or CUDA */
    int device;                     /* CUDA device index (default 0) */
    tr_variant variant;             /* FAST (default), REFERENCE (CPU) or PAPER (CUDA) */
    size_t batch; /* CUDA: samples per channel per batch (default 65536) */
} tr_boxcar_config;

tr_boxcar_config tr_boxcar_config_default(void);

/* Short names: "boxdit", "igrid", "ideal". */
const char *tr_boxcar_algorithm_name(tr_boxcar_algorithm a);

/* ---- Plan: the evaluated boxcars, shared by every variant, the kernels, the
 * sensitivity predictor and the tests. ---- */

typedef struct {
    uint32_t level;  /* BoxDIT iteration i / IGRID step i (0 for IDEAL) */
    uint32_t stride; /* s_i: starts at every absolute multiple of it (power of two) */
    uint32_t width_first; /* smallest width of the stage */
    uint32_t width_step;  /* widths are width_first + m * width_step */
    uint32_t nwidths;     /* m = 0 .. nwidths - 1 (the last stage may be cut) */
    uint32_t base;        /* width of the reused partial sum: BoxDIT LMAX^{i-1}, IGRID
                             2^i (the step's layer), IDEAL 0 */
    uint32_t block;       /* width of the summands added to base: 2^i for BoxDIT (x^i),
                             2^{max(0,i-d)} for IGRID, 1 for IDEAL */
} tr_boxcar_stage;

typedef struct tr_boxcar_plan tr_boxcar_plan;

/*
 * Plan of cfg's algorithm fields (algorithm, max_width, widths, nwidths,
 * depth, layers); the other fields are not looked at. NULL with err filled
 * when they are invalid (messages start with "boxcar: ").
 */
tr_boxcar_plan *tr_boxcar_plan_create(const tr_boxcar_config *cfg, tr_error *err);
void tr_boxcar_plan_destroy(tr_boxcar_plan *p);
tr_boxcar_algorithm tr_boxcar_plan_algorithm(const tr_boxcar_plan *p);
uint32_t tr_boxcar_plan_stages(const tr_boxcar_plan *p);
/* Stage i (NULL when out of range). */
const tr_boxcar_stage *tr_boxcar_plan_stage(const tr_boxcar_plan *p, uint32_t i);
/* Width m of stage i (0 when out of range). */
uint32_t tr_boxcar_plan_width(const tr_boxcar_plan *p, uint32_t i, uint32_t m);
uint32_t tr_boxcar_plan_lend(const tr_boxcar_plan *p);    /* L_end */
uint32_t tr_boxcar_plan_latency(const tr_boxcar_plan *p); /* L_end - 1 */
uint32_t tr_boxcar_plan_depth(const tr_boxcar_plan *p);   /* IGRID d, else 0 */
uint32_t tr_boxcar_plan_layers(const tr_boxcar_plan *p);  /* IGRID P, else 0 */
/* Boxcars evaluated per input sample: sum over stages of nwidths / stride. */
double tr_boxcar_plan_boxcars_per_sample(const tr_boxcar_plan *p);
/* Total number of distinct widths (sum of nwidths). */
uint32_t tr_boxcar_plan_total_widths(const tr_boxcar_plan *p);
/*
 * Every evaluated width in evaluation order, with its separation L_s (the
 * stage stride): writes min(cap, total) entries, returns total. Either array
 * may be NULL.
 */
uint32_t tr_boxcar_plan_list(const tr_boxcar_plan *p, uint32_t *widths,
                             uint32_t *separations, uint32_t cap);

/* ---- The search object ---- */

typedef struct tr_boxcar tr_boxcar;

/* Validates everything (plan, normalisation, execution fields). */
tr_boxcar *tr_boxcar_create(const tr_boxcar_config *cfg, tr_error *err);
void tr_boxcar_destroy(tr_boxcar *q);

/* Back to position 0: history, normalisation and counters cleared. */
tr_status tr_boxcar_reset(tr_boxcar *q);

/*
 * Consume n samples per channel x[k * nchan + c] and write the n output
 * positions position_in - latency + k: snr[k * nchan + c] and, when width is
 * not NULL, width[k * nchan + c]. n = 0 is allowed. After flush:
 * TR_ERR_STATE until reset.
 */
tr_status tr_boxcar_process(tr_boxcar *q, const float *x, size_t n, float *snr,
                            int32_t *width);

/*
 * End of data: write the last latency positions (latency * nchan values
 * each; positions < 0 get 0), evaluating only the boxcars inside the data.
 * Once per stream; width may be NULL.
 */
tr_status tr_boxcar_flush(tr_boxcar *q, float *snr, int32_t *width);

/*
 * CUDA backend only: the same with device pointers in cfg.device_layout;
 * returns when the results are in d_snr, d_width (d_width may be NULL).
 * The samples never reach the host. FIXED: a non-finite sample is replaced
 * on the device by the fixed mean of its channel. WHITE and LEVELS: the
 * statistics are measured on the device with the definitions of
 * <transient/boxcar_norm.h> (windows, history, robust rejection, warm-up,
 * window 0 by its own statistics with first_own, held on the device as on
 * the host, non-finite samples replaced by the input mean in effect); the FAST
 * variant and a window that is a multiple of its tile are needed (the
 * default 16384 is), else TR_ERR_UNSUPPORTED. Such a stream stays on the
 * device until reset: tr_boxcar_process then fails with TR_ERR_STATE, and a
 * stream begun with tr_boxcar_process cannot continue here; flush works.
 * Baseline removal runs on the host only (TR_ERR_UNSUPPORTED). Non-finite
 * samples are counted in tr_boxcar_nonfinite; the statistics queries of
 * tr_boxcar_get_norm do not see device samples.
 */
tr_status tr_boxcar_process_device(tr_boxcar *q, const float *d_x, size_t n, float *d_snr,
                                   int32_t *d_width);

/*
 * CUDA backend only: tr_boxcar_flush of a stream given through
 * tr_boxcar_process_device, into device pointers in cfg.device_layout
 * (latency positions; d_width may be NULL). The outputs never reach the
 * host. A stream whose statistics are measured on the host
 * (tr_boxcar_process) is TR_ERR_STATE: flush it with tr_boxcar_flush.
 */
tr_status tr_boxcar_flush_device(tr_boxcar *q, float *d_snr, int32_t *d_width);

/*
 * Page-locked host memory (CUDA backend: cudaMallocHost, so that
 * tr_boxcar_process moves x, snr and width at PCIe speed instead of through
 * the driver's staging of pageable memory; CPU backend: malloc). NULL when it
 * cannot be had. Free with tr_boxcar_host_free on an object of the same
 * backend (any object; the memory is not tied to q).
 */
void *tr_boxcar_host_alloc(const tr_boxcar *q, size_t bytes);
void tr_boxcar_host_free(const tr_boxcar *q, void *p);

/*
 * Warnings: the search ran, but not as its settings describe (set by process
 * or flush, cleared by reset). A caller that reports "nothing found" should
 * report these too.
 */
#define TR_BOXCAR_WARN_SHORT_STREAM                                                      \
    1u /* the stream ended before the first statistics window was complete: its          \
          statistics were measured on the samples there were (flush) */
#define TR_BOXCAR_WARN_NARROW                                                            \
    2u /* the stream is shorter than L_end: boxcars longer than it were not searched     \
          (flush) */
#define TR_BOXCAR_WARN_UNMEASURED                                                        \
    4u /* a channel's first window had fewer than 2 finite values or none that           \
          differ: its S/N uses init_mean/init_sigma and it gives no candidates */
unsigned tr_boxcar_warnings(const tr_boxcar *q);
/* The warnings in one line that says what was done ("" when there are none). */
const char *tr_boxcar_warning(const tr_boxcar *q);

/* Per-stage outputs of the last process or flush call (cfg.stage_outputs). */
typedef struct {
    uint32_t stride;      /* s_i: output k is position (first + k) * stride */
    uint64_t first;       /* decimated index of the first output of the call */
    size_t count;         /* outputs per channel of the call (may be 0) */
    const float *snr;     /* count * nchan values, snr[k * nchan + c] */
    const int32_t *width; /* widths in input samples, same layout */
} tr_boxcar_stage_out;

/* Pointers stay valid until the next process/flush/reset/destroy. */
tr_status tr_boxcar_stage_output(const tr_boxcar *q, uint32_t stage,
                                 tr_boxcar_stage_out *out);

const tr_boxcar_plan *tr_boxcar_get_plan(const tr_boxcar *q);
/* The normalisation object the search uses (statistics queries; do not feed it). */
const tr_boxcar_norm *tr_boxcar_get_norm(const tr_boxcar *q);
uint32_t tr_boxcar_latency(const tr_boxcar *q); /* L_end - 1 (+ W, see above) */
uint32_t tr_boxcar_lend(const tr_boxcar *q);    /* L_end */
uint32_t tr_boxcar_nchan(const tr_boxcar *q);
tr_boxcar_layout tr_boxcar_device_layout(const tr_boxcar *q); /* cfg.device_layout */
uint64_t tr_boxcar_position(const tr_boxcar *q);  /* samples per channel consumed */
uint64_t tr_boxcar_nonfinite(const tr_boxcar *q); /* non-finite samples replaced */
int tr_boxcar_flushed(const tr_boxcar *q);        /* 1 after flush, until reset */
tr_backend tr_boxcar_backend(const tr_boxcar *q);
tr_variant tr_boxcar_variant(const tr_boxcar *q);
const char *tr_boxcar_last_error(const tr_boxcar *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_BOXCAR_H */
