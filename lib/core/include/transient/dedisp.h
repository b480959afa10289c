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
 *   (lowest channel, largest DM), masked channels included.
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
 *   object keeps the last L spectra, so the output does not depend on how the
 *   stream is split into calls (chunk size 1 included). tr_dedisp_flush ends
 *   the stream: it writes the last L positions as if L spectra of zeros
 *   followed (a position near the end sums only the channels whose sample
 *   lies inside the data); then only reset or destroy are allowed.
 *
 * Layout
 *   Host output is sample-major y[k * ndm + d] (what tr_boxcar_process takes
 *   as channels). Device outputs (CUDA backend) use cfg.device_layout:
 *   SAMPLE_MAJOR as the host, or DM_MAJOR y[d * n + k] (trial d's n outputs of
 *   the call one after the other; tr_boxcar's CHANNEL_MAJOR).
 *
 * Time scrunching at high DM (as dedisp's adaptive dt) is not done: every
 * trial is computed at the full time resolution.
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
    const double *dm_list; /* explicit trials (each >= 0, finite) instead of the
                              generated list; NULL (default) = generate */
    uint32_t ndm_list;     /* entries of dm_list */
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
/* delay of channel c for trial d in samples (0 when out of range). */
uint32_t tr_dedisp_channel_delay(const tr_dedisp *q, uint32_t d, uint32_t c);
uint32_t tr_dedisp_latency(const tr_dedisp *q); /* L, the largest delay */
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
