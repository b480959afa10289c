/*
 * Incoherent dedispersion of filterbank spectra over a list of dispersion
 * measure (DM) trials: the DM plan and the streaming object tr_dedisp.
 *
 * Paper: D. R. Lorimer, M. Kramer, "Handbook of Pulsar Astronomy" (CUP 2005),
 * section 5.2 (dispersion delay, incoherent dedispersion); B. R. Barsdell et
 * al., "Accelerating incoherent dedispersion" (MNRAS 422, 379, 2012) for the
 * direct GPU algorithm and the DM list of its library dedisp (L. Levin's
 * formula, section 2.3 there).
 *
 * DM list (tr_dedisp_dm_list; what dedisp_generate_dm_list and Heimdall use)
 *   With dt = tsamp in us, ti = pulse_width in us, tol = tolerance,
 *   f = (fch1 + (floor(nchans/2) - 0.5) * foff) / 1000 (GHz),
 *   a = 8.3 * foff / f^3, b^2 = a^2 * nchans^2 / 16, c = (dt^2 + ti^2)(tol^2 - 1):
 *   DM_0 = dm_min, DM_{i+1} = (b^2 DM_i + sqrt(-a^2 b^2 DM_i^2 + (a^2 + b^2)
 *   (c + tol^2 a^2 DM_i^2))) / (a^2 + b^2), appended while DM_i < dm_max (so the
 *   last trial is the first >= dm_max). As in dedisp, tsamp, fch1, foff,
 *   dm_min, dm_max, pulse_width and tolerance enter rounded to float32, the
 *   recursion runs in double and every DM is stored rounded to float32 (the
 *   next step starts from the rounded value): the list is dedisp's, value for
 *   value. Instead of generating it, an explicit list can be given.
 *
 * Delays (every variant)
 *   delay_c(DM) = round(K_DM * DM * (f_c^-2 - f_ref^-2) / tsamp) samples,
 *   K_DM = 4.148808e3 MHz^2 pc^-1 cm^3 s, f_c = fch1 + c * foff the channel
 *   centre, f_ref the highest channel centre (so delays are >= 0), computed
 *   in double, round half up. The latency L is the largest delay of the plan
 *   (lowest channel, largest DM), masked channels included (with scrunching
 *   see below).
 *
 * Output (what every variant computes)
 *   Input spectra x[k * nchan + c] at absolute positions k = 0, 1, ...
 *   (64-bit). Zero-DM subtraction (cfg.zero_dm, as Heimdall's zero-DM
 *   option): each spectrum's mean over the unmasked channels,
 *   m_k = (sum_c x[k][c]) / nused in float32 summed in channel order, is
 *   subtracted from its unmasked channels first. Then, for DM trial d and
 *   output position p,
 *     Y[p][d] = sum over unmasked c, in increasing c, of x'[p + delay_c(d)][c]
 *   accumulated in float32 (TR_DEDISP_SUM), or that sum divided by nused
 *   (TR_DEDISP_MEAN). Y[p] is the burst arrival time at f_ref. The order of
 *   the float additions is fixed, so REFERENCE, FAST and CUDA give the same
 *   bits (tested). Non-finite inputs propagate to the outputs that contain
 *   them (with zero-DM, to every output that contains their spectrum).
 *
 * Streaming and latency
 *   Y[p] needs spectra up to p + L, so outputs come out L positions late:
 *   tr_dedisp_process consumes n spectra and writes n output positions,
 *   output k of the call being position position_in + k - L (position_in =
 *   tr_dedisp_position before the call); positions < 0 are written as 0. The
 *   object keeps the last L spectra (L + smax - 1 when scrunched), so the
 *   output does not depend on how the stream is split into calls (chunk size
 *   1 included). tr_dedisp_flush ends the stream: it writes the last L
 *   positions as if L spectra of zeros followed (a position near the end
 *   sums only the channels whose sample lies inside the data); then only
 *   reset or destroy are allowed.
 *
 * Layout
 *   Host output is sample-major y[k * ndm + d] (what tr_boxcar_process takes
 *   as channels). Device outputs (CUDA backend) use cfg.device_layout:
 *   SAMPLE_MAJOR as the host, or DM_MAJOR y[d * n + k] (trial d's n outputs of
 *   the call one after the other; tr_boxcar's CHANNEL_MAJOR).
 *
 * Time scrunching at high DM (plan.scrunch = 1; default 0, when every trial
 * is computed at the full rate and nothing below applies)
 *   dedisp's adaptive dt (dedisp_enable_adaptive_dt, generate_scrunch_list,
 *   which Heimdall enables): trial d is computed at the time step s_d tsamp,
 *   s_d a power of two. s_0 = scrunch_first (default 1); for d >= 1, with
 *   smear(t) = sqrt(t^2 + W^2 + t_DM^2 + t_dDM^2) where W = pulse_width us in s,
 *   BW = nchan |foff|, f_c = fch1 - BW / 2, t_DM = 8.3 BW DM_d / f_c^3,
 *   t_dDM = 8.3 / 4 BW nchan (DM_d - DM_{d-1}) / f_c^3 (dedisp's units, MHz and
 *   s, kept as they are), s_d = 2 s_{d-1} when
 *   smear(2 s_{d-1} tsamp) / smear(s_{d-1} tsamp) < scrunch_tol, else s_{d-1}:
 *   the factor doubles once the trial's own smearing makes a sample twice as
 *   long cost less than the tolerance. Everything is evaluated in dedisp's
 *   float32 arithmetic (tsamp, fch1, foff, pulse_width, scrunch_tol and the
 *   DMs rounded to float32, the constants' products in double rounded to
 *   float32), so the factors are dedisp's, trial for trial
 *   (tr_dedisp_scrunch_factors). The factors never decrease along the list.
 *   Coarse spectra: X_1 = x' (after zero-DM), and
 *     X_2s[q][c] = (X_s[2q][c] + X_s[2q+1][c]) * 0.5f
 *   in float32: the mean of the s-sample block q (positions q s .. q s + s - 1,
 *   aligned to absolute positions) as a pairwise tree, so that a trial's SUM
 *   or MEAN keeps the scale of an unscrunched one. The coarse delay is
 *   delay_c^s(DM) = round(K_DM DM (f_c^-2 - f_ref^-2) / (s tsamp)) coarse
 *   samples (round half up), and
 *     Y[p][d] = sum over unmasked c, in increasing c, of X_s[q + delay_c^s(d)][c],
 *   q = floor(p / s): every full-rate position of block q carries the block's
 *   value, so the output keeps one value per spectrum and trial (same layout,
 *   same positions). Zero padding before position 0 and after the end (flush)
 *   enters the block means as zeros. The latency of trial d is
 *   L_d = (D_d + 1) s_d - 1, D_d its largest coarse delay (the lowest channel,
 *   masked or not): the last spectrum that block q needs is q s + L_d, so the
 *   plan's latency L = max_d L_d exceeds the unscrunched one by less than 1.5
 *   times the largest factor. Same bits in every variant (the tree and the
 *   channel order are fixed).
 */
#ifndef TRANSIENT_DEDISP_H
#define TRANSIENT_DEDISP_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Dispersion constant in MHz^2 pc^-1 cm^3 s. */
#define TR_DEDISP_KDM 4.148808e3

/* Limits checked at create. */
#define TR_DEDISP_MAX_NCHAN (1u << 20) /* most channels */
#define TR_DEDISP_MAX_NDM   (1u << 20) /* most DM trials */
#define TR_DEDISP_MAX_DELAY (1u << 28) /* largest delay in samples */

typedef enum {
    TR_DEDISP_SUM = 0, /* Y = sum over the unmasked channels */
    TR_DEDISP_MEAN = 1 /* Y = that sum / number of unmasked channels */
} tr_dedisp_scale;

typedef enum {
    TR_DEDISP_SAMPLE_MAJOR = 0, /* y[k * ndm + d] */
    TR_DEDISP_DM_MAJOR = 1      /* y[d * n + k], n = outputs of the call */
} tr_dedisp_layout;

/* The DM trials: generated from a range (dedisp's list) or given. */
typedef struct {
    uint32_t nchan;     /* channels per spectrum, >= 1 */
    double fch1;        /* MHz, centre of channel 0 (the first of each spectrum) */
    double foff;        /* MHz, channel c at fch1 + c * foff; != 0, either sign */
    double tsamp;       /* sampling time in s, > 0 */
    double dm_min;      /* first trial of a generated list, >= 0 (default 0) */
    double dm_max;      /* generated trials up to the first >= dm_max (default 1000) */
    double tolerance;   /* dedisp's dm_tol: smearing growth allowed between trials,
                           > 1 (default 1.25) */
    double pulse_width; /* dedisp's intrinsic pulse width ti in us, >= 0 (default 40) */
    const double *dm_list;  /* explicit trials (each >= 0, finite) instead of the
                               generated list; NULL (default) = generate */
    uint32_t ndm_list;      /* entries of dm_list */
    int scrunch;            /* 0: every trial at full rate (default); 1: dedisp's
                               adaptive dt (Time scrunching above) */
    double scrunch_tol;     /* dedisp's scrunch tolerance, > 1 (default 1.15) */
    uint32_t scrunch_first; /* factor of the first trial, a power of two (default 1;
                               a part of a split plan starts at its trial's factor) */
} tr_dedisp_plan_config;

tr_dedisp_plan_config tr_dedisp_plan_config_default(void);

/*
 * dedisp's DM list for cfg (dm_list ignored): writes min(cap, count) trials
 * into dms (may be NULL) and returns count; 0 with err filled when a field
 * is out of range or the list would exceed TR_DEDISP_MAX_NDM.
 */
size_t tr_dedisp_dm_list(const tr_dedisp_plan_config *cfg, double *dms, size_t cap,
                         tr_error *err);

/* delay_c(dm) in samples (see Delays above) for a validated plan config. */
uint32_t tr_dedisp_delay(const tr_dedisp_plan_config *cfg, double dm, uint32_t c);

/*
 * The time-scrunch factor of every trial of cfg's list (generated or given;
 * all 1 when cfg->scrunch = 0): writes min(cap, count) factors into factors
 * (may be NULL) and returns count; 0 with err filled when the config is
 * invalid or a factor would exceed TR_DEDISP_MAX_DELAY.
 */
size_t tr_dedisp_scrunch_factors(const tr_dedisp_plan_config *cfg, uint32_t *factors,
                                 size_t cap, tr_error *err);

typedef struct {
    tr_dedisp_plan_config plan; /* channels, frequencies, sampling and DM trials */
    const uint8_t *mask;        /* nchan entries, non-zero = channel used; NULL (default)
                                   = all; copied at create; at least one used */
    int zero_dm;                /* 1: subtract each spectrum's channel mean (default 0) */
    tr_dedisp_scale scale;      /* SUM (default) or MEAN */
    uint32_t raw_nbits;         /* bits per sample of tr_dedisp_process_raw input: 1, 2,
                                   4, 8, 16 or 32, as in a filterbank file (default 8) */
    tr_dedisp_layout device_layout; /* layout of device outputs (default SAMPLE_MAJOR) */
    tr_backend backend;             /* AUTO (default), CPU or CUDA */
    int device;                     /* CUDA device index (default 0) */
    tr_variant variant;             /* FAST (default) or REFERENCE (CPU only) */
    uint32_t nthreads;              /* CPU FAST: threads, 0 = one per core (default 0) */
    size_t batch;                   /* CUDA: spectra per batch (default 16384) */
} tr_dedisp_config;

tr_dedisp_config tr_dedisp_config_default(void);

typedef struct tr_dedisp tr_dedisp;

/* Validates everything and builds the plan; NULL with err filled on failure
 * (messages start with "dedisp: "). */
tr_dedisp *tr_dedisp_create(const tr_dedisp_config *cfg, tr_error *err);
void tr_dedisp_destroy(tr_dedisp *q);

/* Back to position 0 with an empty history. */
tr_status tr_dedisp_reset(tr_dedisp *q);

/*
 * Consume n spectra x[k * nchan + c] and write the n output positions
 * position_in - L + k as y[k * ndm + d]. n = 0 is allowed. After flush:
 * TR_ERR_STATE until reset.
 */
tr_status tr_dedisp_process(tr_dedisp *q, const float *x, size_t n, float *y);

/*
 * The same with n packed spectra as read from a filterbank file
 * (cfg.raw_nbits bits per sample, tr_filterbank_read_raw): on the CUDA
 * backend the packed bytes cross PCIe and are unpacked on the GPU.
 */
tr_status tr_dedisp_process_raw(tr_dedisp *q, const void *raw, size_t n, float *y);

/*
 * End of data: write the last L positions (L * ndm values, sample-major).
 * Once per stream.
 */
tr_status tr_dedisp_flush(tr_dedisp *q, float *y);

/*
 * CUDA backend only: n spectra of float32 on the device d_x[k * nchan + c],
 * outputs left on the device in d_y (n * ndm floats, cfg.device_layout);
 * returns when d_y holds them. Same positions as tr_dedisp_process.
 */
tr_status tr_dedisp_process_device(tr_dedisp *q, const float *d_x, size_t n, float *d_y);

/*
 * CUDA backend only: n packed spectra on the HOST (cfg.raw_nbits), copied up
 * once and unpacked on the device, outputs left on the device as for
 * tr_dedisp_process_device: the filterbank-to-search path with the smallest
 * transfer.
 */
tr_status tr_dedisp_process_raw_device(tr_dedisp *q, const void *raw, size_t n,
                                       float *d_y);

/*
 * CUDA backend only: end of data with the last L positions written to the
 * device buffer d_y (L * ndm floats, cfg.device_layout with n = L).
 */
tr_status tr_dedisp_flush_device(tr_dedisp *q, float *d_y);

/* Page-locked host memory on the CUDA backend (malloc on CPU); NULL when it
 * cannot be had. Free with tr_dedisp_host_free on an object of the same backend. */
void *tr_dedisp_host_alloc(const tr_dedisp *q, size_t bytes);
void tr_dedisp_host_free(const tr_dedisp *q, void *p);

uint32_t tr_dedisp_ndm(const tr_dedisp *q);
/* The trials in pc cm^-3 (ndm entries, valid for the object's lifetime). */
const double *tr_dedisp_dms(const tr_dedisp *q);
/* delay of channel c for trial d in the trial's samples (coarse samples of
 * s_d tsamp when scrunched; 0 when out of range). */
uint32_t tr_dedisp_channel_delay(const tr_dedisp *q, uint32_t d, uint32_t c);
/* s_d, trial d's time-scrunch factor (1 unscrunched; 0 when out of range). */
uint32_t tr_dedisp_factor(const tr_dedisp *q, uint32_t d);
/* L_d: the last spectrum that position p of trial d needs is at most p + L_d. */
uint32_t tr_dedisp_trial_latency(const tr_dedisp *q, uint32_t d);
/* sum over the trials of 1 / s_d: the work in full-rate trials (ndm unscrunched). */
double tr_dedisp_full_rate_trials(const tr_dedisp *q);
/* L = max_d L_d (the largest delay unscrunched). */
uint32_t tr_dedisp_latency(const tr_dedisp *q);
uint32_t tr_dedisp_nchan(const tr_dedisp *q);
uint32_t tr_dedisp_nused(const tr_dedisp *q);    /* unmasked channels */
uint64_t tr_dedisp_position(const tr_dedisp *q); /* spectra consumed */
int tr_dedisp_flushed(const tr_dedisp *q);       /* 1 after flush, until reset */
tr_backend tr_dedisp_backend(const tr_dedisp *q);
tr_variant tr_dedisp_variant(const tr_dedisp *q);
const char *tr_dedisp_last_error(const tr_dedisp *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_DEDISP_H */
