/*
 * FRB search of a filterbank: dedispersion over a DM plan, boxcar search of
 * every DM trial with its normalisation, candidates clustered across time,
 * width and DM trials, each reported with its DM, time, width and S/N.
 *
 * Papers: the dispersion delay and the DM plan of dedisp/Heimdall
 * (B. R. Barsdell et al., "Accelerating incoherent dedispersion", MNRAS 422,
 * 379, 2012; <transient/dedisp.h>); the search and the candidates of
 * K. Adamek, W. Armour, "Single Pulse Detection Algorithms for Real-time Fast
 * Radio Burst Searches using GPUs" (ApJS 247:56, 2020; <transient/boxcar.h>,
 * <transient/candidates.h>).
 *
 * The chain
 *   spectra x[k * nchan + c] (file channel order; float32, or packed as in the
 *   file) -> tr_dedisp (channel mask, zero-DM subtraction, DM trials
 *   y[k * ndm + d]; with dedisp.plan.scrunch, dedisp's time scrunching of
 *   the high-DM trials, still one value per spectrum, held over each block
 *   of s_d samples: the search must then measure its noise per width,
 *   search.norm.mode = LEVELS, as create checks) -> tr_boxcar
 *   (normalisation of every DM trial, search up to search.max_width) ->
 *   tr_candidates (friends of friends across time, width and neighbouring DM
 *   trials) -> tr_frb_candidate.
 *   CPU backend: every stage on the host. CUDA backend: dedispersion and
 *   search run on the GPU; tr_frb_device_resident says whether the DM-time
 *   plane stays on the device between them (otherwise it crosses PCIe to
 *   the host normalisation and back).
 *
 * Positions and times
 *   Sample k of DM trial d is the dedispersed sum at the arrival time of
 *   spectrum k at the top of the band (the highest channel centre frequency:
 *   fch1 when foff < 0), counted from the first spectrum given after
 *   create/reset. A candidate's `sample` is the centre of its best boxcar,
 *   start + (width - 1) / 2, and `time` = sample * tsamp s: the pulse centre
 *   as it crosses the top of the band (Heimdall's convention).
 *   The first normalisation window of every trial (search.norm.window
 *   samples; none in FIXED mode) only measures the noise: it is not searched
 *   (tr_frb_warmup). At the end of the data, a position whose dedispersed sum
 *   would need spectra after the last one (k + the trial's latency
 *   tr_dedisp_trial_latency, its largest delay without scrunching, >= spectra
 *   given) is incomplete: it enters the search as a non-finite
 *   sample (replaced by the mean of its trial, tr_boxcar's rule), and no
 *   candidate is made of a boxcar that reaches one.
 *
 * Several devices (cfg.ndevices > 1)
 *   The DM trials are split into ndevices contiguous ranges of equal size
 *   (within one trial; more devices than trials is an error; a scrunched
 *   plan keeps the whole plan's factors in every range), range j on
 *   devices[j] with its own dedispersion, search and peak selection, each
 *   device fed the same spectra by a host thread of its own. The peaks of
 *   every range are merged in stream order (sample, then DM trial) into one
 *   clustering, so the candidates are those of one device, call by call, for
 *   any chunking. A device may repeat (two shares of one GPU). This needs the
 *   CUDA backend (AUTO counts as CUDA here) and the device-resident chain
 *   (tr_frb_device_resident), and no keep_plane: create says which is
 *   missing. A threshold change applies to each range from the next sample
 *   its device searches (a low-DM range runs ahead of the plan by the
 *   difference of the largest delays).
 *
 * Streaming
 *   tr_frb_process takes any number of spectra; a candidate comes out once no
 *   later sample can join it; tr_frb_flush ends the data and closes
 *   everything. The candidates do not depend on how the spectra are split
 *   into calls. Work is done in blocks of at most cfg.block spectra, so the
 *   memory is about block x ndm x 12 bytes whatever the length of the data.
 */
#ifndef TRANSIENT_FRB_H
#define TRANSIENT_FRB_H

#include <transient/common.h>
#include <transient/boxcar.h>
#include <transient/candidates.h>
#include <transient/dedisp.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits checked at create. */
#define TR_FRB_MAX_BLOCK   (1u << 24) /* most spectra per internal block */
#define TR_FRB_MAX_DEVICES 16u        /* most entries of a device list */

typedef struct {
    /* geometry (plan.nchan, fch1, foff, tsamp: no defaults), DM plan (range,
       tolerance, pulse width or an explicit list), channel mask, zero-DM,
       raw_nbits, variant, nthreads, batch; backend, device and device_layout
       are set by tr_frb. Defaults: tr_dedisp_config_default() but zero_dm = 1
       (Heimdall's default: broadband power that is not dispersed is removed
       before it reaches the low-DM trials and the wide boxcars). */
    tr_dedisp_config dedisp;
    /* algorithm, max_width, widths, depth, layers, norm, variant, batch; nchan,
       backend, device and device_layout are set by tr_frb. Defaults: BoxDIT,
       max_width 1024, norm WHITE with window 1024 and history 8. */
    tr_boxcar_config search;
    /* candidates */
    float threshold;    /* S/N threshold, finite (default 8) */
    uint32_t link_time; /* largest gap between friends' boxcars, samples (default 0) */
    uint32_t link_dm;   /* largest DM-trial distance of friends (default 200, as
                           Heimdall: a bright burst's DM side lobes join it) */
    double link_width;  /* largest width ratio of friends, >= 1; 0 = any (default 0) */
    uint64_t max_span;  /* close candidates spanning more samples; 0 = never
                           (default 0) */
    /* execution */
    tr_backend backend; /* AUTO (default), CPU or CUDA: both stages */
    int device;         /* CUDA device index (default 0) */
    uint32_t ndevices;  /* 0 (default): one device, `device`; 1..TR_FRB_MAX_DEVICES:
                           the DM trials split over devices[0 .. ndevices) (see
                           Several devices above) */
    int devices[TR_FRB_MAX_DEVICES]; /* CUDA device indices; one may repeat */
    uint32_t block; /* spectra per internal block, 1..TR_FRB_MAX_BLOCK (default
                       16384) */
    int keep_plane; /* 1: keep the DM-time plane of each call on the host
                       (tr_frb_plane), default 0 */
} tr_frb_config;

/* One burst candidate. */
typedef struct {
    double dm;            /* DM of the best member's trial, pc cm^-3 */
    double time;          /* sample * tsamp: pulse centre at the top of the band, s */
    int64_t sample;       /* centre of the best boxcar, start + (width - 1) / 2 */
    int64_t start;        /* first sample of the best boxcar */
    uint32_t width;       /* best boxcar width, samples */
    float snr;            /* best S/N */
    uint64_t members;     /* (sample, DM trial) outputs >= threshold joined */
    uint32_t dm_index;    /* trial of the best member (index into tr_frb_dms) */
    uint32_t dm_index_lo; /* lowest member trial */
    uint32_t dm_index_hi; /* highest member trial */
    int64_t first;        /* first sample covered by a member */
    int64_t end;          /* one past the last sample covered by a member */
    int truncated;        /* 1: closed by max_span */
} tr_frb_candidate;

typedef struct tr_frb tr_frb;

/* Defaults as listed above; the geometry fields are zero (must be set). */
tr_frb_config tr_frb_config_default(void);

/* Validates everything, builds the DM plan, the stages and their buffers
 * (messages start with "frb: ", or with the stage's own prefix). */
tr_frb *tr_frb_create(const tr_frb_config *cfg, tr_error *err);
void tr_frb_destroy(tr_frb *q);

/* Back to spectrum 0 with nothing pending. */
tr_status tr_frb_reset(tr_frb *q);

/* Consume n spectra x[k * nchan + c]. n = 0 is allowed. After flush:
 * TR_ERR_STATE until reset. */
tr_status tr_frb_process(tr_frb *q, const float *x, size_t n);

/*
 * The same from n packed spectra as read from a filterbank file
 * (dedisp.raw_nbits bits per sample, tr_filterbank_read_raw); on the CUDA
 * backend the packed bytes cross PCIe and are unpacked on the GPU.
 */
tr_status tr_frb_process_raw(tr_frb *q, const void *raw, size_t n);

/* End of data: search what is left and close every candidate. */
tr_status tr_frb_flush(tr_frb *q);

/* Move up to cap candidates, oldest first, into out; returns how many. */
size_t tr_frb_read(tr_frb *q, tr_frb_candidate *out, size_t cap);

/*
 * cfg.keep_plane: the dedispersed samples that the last process or flush
 * call gave to the search, on the host: *n samples per trial from sample
 * *first on, plane[k * ndm + d] (after the channel mask and zero-DM
 * subtraction, before the normalisation; incomplete positions at the end
 * are NaN). Valid until the next call on q. A call of n spectra yields at most
 * n samples (none while the first tr_frb_max_delay spectra arrive).
 */
tr_status tr_frb_plane(const tr_frb *q, const float **plane, size_t *n, int64_t *first);

/* Change the threshold from the next searched sample on (as candidates.h;
 * with several devices, see Several devices above). */
tr_status tr_frb_set_threshold(tr_frb *q, float threshold);

/* Wall time spent in each stage since create/reset (every stage call returns
 * when its results are in place, GPU stages included). With several devices,
 * dedisp and search are the largest of the devices' times, candidates that
 * device's peak selection plus the host clustering. */
typedef struct {
    double dedisp;     /* tr_dedisp, transfers to and from the GPU included */
    double search;     /* tr_boxcar: normalisation and search */
    double candidates; /* warm-up masking and clustering */
} tr_frb_timing;

tr_frb_timing tr_frb_get_timing(const tr_frb *q);

uint32_t tr_frb_ndm(const tr_frb *q);       /* DM trials */
const double *tr_frb_dms(const tr_frb *q);  /* their DMs, pc cm^-3 */
uint32_t tr_frb_max_delay(const tr_frb *q); /* largest delay, samples */
uint32_t tr_frb_latency(const tr_frb *q);   /* spectra from input to searched output:
                                               largest delay + search latency */
uint32_t tr_frb_warmup(const tr_frb *q);    /* samples per trial not searched at the
                                               start (the first statistics window) */
uint64_t tr_frb_position(const tr_frb *q);  /* spectra consumed */
uint64_t tr_frb_searched(const tr_frb *q);  /* samples per trial given to the search
                                               (the least over the devices) */
uint32_t tr_frb_ndevices(const tr_frb *q);  /* devices sharing the trials (1 without a
                                               list, and on the CPU) */
uint64_t tr_frb_peaks(const tr_frb *q);     /* outputs >= threshold so far */
size_t tr_frb_pending(const tr_frb *q);     /* candidates queued, not yet read */
tr_backend tr_frb_backend(const tr_frb *q); /* backend in use */
/* 1 when the DM-time plane stays on the GPU between dedispersion and search. */
int tr_frb_device_resident(const tr_frb *q);

/* Page-locked host memory on the CUDA backend (malloc on the CPU), so that
 * tr_frb_process / _raw copy it up at PCIe speed; NULL when it cannot be had.
 * Free with tr_frb_host_free on an object of the same backend. */
void *tr_frb_host_alloc(const tr_frb *q, size_t bytes);
void tr_frb_host_free(const tr_frb *q, void *p);
int tr_frb_flushed(const tr_frb *q);
const char *tr_frb_last_error(const tr_frb *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_FRB_H */
