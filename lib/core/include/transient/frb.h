/*
 * FRB search of a filterbank: dedispersion over a DM plan, boxcar search of
 * every DM trial with its normalisation, candidates clustered across time,
 * width and DM trials, each reported with its DM, time, width and S/N.
 *
 * Papers: the dispersion delay and the DM plan of dedisp/Heimdall
 * (B. R. Barsdell et al., "Accelerating incoherent dedispersion", MNRAS 422,
 * 379, 2012; dm_tol and the pulse width as there, <transient/dedisp.h>);
 * the search and the candidates of K. Adamek, W. Armour, "Single Pulse
 * Detection Algorithms for Real-time Fast Radio Burst Searches using GPUs"
 * (ApJS 247:56, 2020), <transient/boxcar.h>, <transient/candidates.h>.
 *
 * The chain
 *   spectra x[k * nchan + c] (file channel order, float32 or SIGPROC-packed
 *   nbits) -> tr_dedisp (channel mask, zero-DM subtraction, DM trials
 *   y[k * ndm + d]) -> tr_boxcar (normalisation per DM trial, search up to
 *   search.max_width) -> tr_candidates (friends of friends across time, width
 *   and neighbouring DM trials) -> tr_frb_candidate.
 *   CPU backend: every stage on the host. CUDA backend: the stages run on the
 *   GPU; see tr_frb_device_resident for whether the DM-time plane stays on
 *   the device between dedispersion and search.
 *
 * Positions and times
 *   Sample k of DM trial d is the dispersed sum of the channels at the
 *   arrival time of sample k at the top of the band (the highest channel
 *   centre frequency, fch1 when foff < 0), counted from the first spectrum
 *   given after create/reset: a pulse that crosses the top of the band at
 *   spectrum k peaks there. A candidate's `sample` is the centre of its best
 *   boxcar, start + (width - 1) / 2, and `time` = sample * tsamp seconds
 *   (the pulse centre at the top of the band, Heimdall's convention).
 *   Positions k whose sum would need spectra after the end of the data
 *   (k + largest delay of the trial >= spectra given) are not searched: the
 *   last tr_frb_max_delay spectra of the highest DM (the end of a file).
 *
 * Streaming
 *   tr_frb_process takes any number of spectra; candidates come out once no
 *   later sample can join them; tr_frb_flush ends the data and closes
 *   everything. The candidates do not depend on how the spectra are split
 *   into calls. Work is done in blocks of at most cfg.block spectra, so
 *   memory is bounded by block x ndm whatever the file size.
 */
#ifndef TRANSIENT_FRB_H
#define TRANSIENT_FRB_H

#include <transient/common.h>
#include <transient/boxcar.h>
#include <transient/candidates.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Limits checked at create. */
#define TR_FRB_MAX_NCHAN (1u << 20) /* most frequency channels */
#define TR_FRB_MAX_BLOCK (1u << 24) /* most spectra per internal block */

typedef struct {
    /* filterbank geometry (the SIGPROC header) */
    uint32_t nchan; /* frequency channels, >= 1 (no default: 0) */
    double fch1;    /* centre frequency of channel 0, MHz, > 0 */
    double foff;    /* channel spacing, MHz, either sign, != 0 */
    double tsamp;   /* sampling interval, s, > 0 */
    /* DM trials: the plan of dedisp/Heimdall, or an explicit list */
    double dm_min;      /* lowest DM, pc cm^-3, >= 0 (default 0) */
    double dm_max;      /* highest DM, >= dm_min (default 1000) */
    double dm_tol;      /* smearing tolerance between trials, > 1 (default 1.25) */
    double pulse_width; /* intrinsic pulse width of the plan, us, > 0 (default 40) */
    const double *dms;  /* explicit DM list (ascending, >= 0, copied), or NULL */
    uint32_t ndms;      /* entries of dms */
    /* cleaning */
    const uint8_t *chan_mask; /* nchan flags, nonzero = channel left out, or NULL
                                 (copied) */
    int zero_dm;              /* 1: subtract the zero-DM series (default 0) */
    /* search: algorithm, max_width, widths, depth, layers, norm, variant; its
       nchan, backend, device and device_layout are set by tr_frb */
    tr_boxcar_config search;
    /* candidates */
    float threshold;    /* S/N threshold (default 8) */
    uint32_t link_time; /* largest gap between friends' boxcars, samples (default 0) */
    uint32_t link_dm;   /* largest DM-trial distance of friends (default 1) */
    double link_width;  /* largest width ratio of friends, >= 1; 0 = any (default 0) */
    uint64_t max_span;  /* close candidates spanning more samples; 0 = never
                           (default 0) */
    /* execution */
    tr_backend backend; /* AUTO (default), CPU or CUDA */
    int device;         /* CUDA device index (default 0) */
    uint32_t block;     /* spectra per internal block, >= 1 (default 16384) */
    int keep_plane;     /* 1: keep the DM-time plane of each call on the host
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
    uint64_t members;     /* (sample, width, DM trial) outputs above threshold joined */
    uint32_t dm_index;    /* trial of the best member (index into tr_frb_dms) */
    uint32_t dm_index_lo; /* lowest member trial */
    uint32_t dm_index_hi; /* highest member trial */
    int64_t first;        /* first sample covered by a member */
    int64_t end;          /* one past the last sample covered by a member */
    int truncated;        /* 1: closed by max_span */
} tr_frb_candidate;

typedef struct tr_frb tr_frb;

/* Defaults as listed above; geometry fields zero (must be set). */
tr_frb_config tr_frb_config_default(void);

/* Validates everything, builds the DM plan, the stages and their buffers. */
tr_frb *tr_frb_create(const tr_frb_config *cfg, tr_error *err);
void tr_frb_destroy(tr_frb *q);

/* Back to spectrum 0 with nothing pending. */
tr_status tr_frb_reset(tr_frb *q);

/* Consume n spectra x[k * nchan + c]. n = 0 is allowed. After flush:
 * TR_ERR_STATE until reset. */
tr_status tr_frb_process(tr_frb *q, const float *x, size_t n);

/*
 * The same from packed SIGPROC samples of nbits (1, 2, 4, 8: unsigned, the
 * first channel in the lowest bits of a byte; 16: unsigned little-endian;
 * 32: float32 little-endian); n spectra of nchan * nbits / 8 bytes each
 * (nchan * nbits must be a multiple of 8).
 */
tr_status tr_frb_process_raw(tr_frb *q, const void *raw, uint32_t nbits, size_t n);

/* End of data: search what is left and close every candidate. */
tr_status tr_frb_flush(tr_frb *q);

/* Move up to cap candidates, oldest first, into out; returns how many. */
size_t tr_frb_read(tr_frb *q, tr_frb_candidate *out, size_t cap);

/*
 * cfg.keep_plane: the DM trials that the last process or flush call searched,
 * on the host (copied back from the GPU on CUDA): *n samples per trial from
 * sample *first on, plane[k * ndm + d] (after the channel mask and zero-DM
 * subtraction, before the normalisation). Valid until the next call on q. A
 * call of n spectra yields at most n samples (none while the first
 * tr_frb_max_delay spectra arrive); memory n x ndm floats.
 */
tr_status tr_frb_plane(const tr_frb *q, const float **plane, size_t *n, int64_t *first);

/* Change the threshold from the next searched sample on (as candidates.h). */
tr_status tr_frb_set_threshold(tr_frb *q, float threshold);

uint32_t tr_frb_ndm(const tr_frb *q);       /* DM trials */
const double *tr_frb_dms(const tr_frb *q);  /* their DMs, pc cm^-3 */
uint32_t tr_frb_max_delay(const tr_frb *q); /* largest delay, samples */
uint32_t tr_frb_max_width(const tr_frb *q); /* widest boxcar (L_end) */
uint64_t tr_frb_position(const tr_frb *q);  /* spectra consumed */
uint64_t tr_frb_searched(const tr_frb *q);  /* samples per trial searched so far */
uint64_t tr_frb_peaks(const tr_frb *q);     /* outputs above threshold so far */
size_t tr_frb_pending(const tr_frb *q);     /* candidates queued, not yet read */
tr_backend tr_frb_backend(const tr_frb *q); /* backend in use */
/* 1 when the DM-time plane stays on the GPU between dedispersion and search. */
int tr_frb_device_resident(const tr_frb *q);
int tr_frb_flushed(const tr_frb *q);
const char *tr_frb_last_error(const tr_frb *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_FRB_H */
