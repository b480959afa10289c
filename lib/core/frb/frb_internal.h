/*
 * FRB search object, internal: its state, shared by the host chain (frb.c)
 * and the device-resident chain over one or several GPUs (frb_device.c).
 *
 * Papers: B. R. Barsdell et al., "Accelerating incoherent dedispersion"
 * (MNRAS 422, 379, 2012); K. Adamek, W. Armour, "Single Pulse Detection
 * Algorithms for Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56,
 * 2020).
 *
 * Parts: the DM trials are split into npart contiguous ranges, one per
 * device of the list (one part holding every trial without a list, and on
 * the host chain). Each part dedisperses and searches its trials on its own
 * objects; the positions of a part run ahead of the plan's by the difference
 * of the largest delays (its dedispersion has less latency), and the
 * candidates split (<transient/candidates_split.h>) clusters every position
 * once all parts have searched it.
 */
#ifndef TRANSIENT_FRB_INTERNAL_H
#define TRANSIENT_FRB_INTERNAL_H

#include <transient/candidates_split.h>
#include <transient/frb.h>

#include "common/pool.h"

/* One device's share of the DM trials (or all of them). */
typedef struct {
    tr_dedisp *dd;        /* dedispersion of the part's trials */
    tr_boxcar *bx;        /* their normalisation + search, nchan = ndm */
    void *dev;            /* tr_cuda_frb: the device chain's buffers (resident) */
    int device;           /* CUDA device index */
    uint32_t d0, ndm;     /* trials d0 .. d0 + ndm - 1 of the plan */
    uint32_t L;           /* largest delay of those trials */
    uint64_t searched;    /* dedispersed positions given to its search */
    tr_frb_timing timing; /* seconds per stage spent by this part */
    int device_search;    /* set-up: its search takes device samples */
    tr_status st;         /* status of its last task on the pool */
    tr_error err;         /* message of that task */
} frb_part;

struct tr_frb {
    tr_frb_config cfg; /* validated configuration (pointers cleared) */
    frb_part *part;    /* npart parts, ascending trials */
    uint32_t npart;
    tr_pool *pool; /* one thread per part (several parts only) */
    tr_candidates *cand;
    tr_candidates_split *split; /* resident: the parts' peaks into cand */
    const double *dms;          /* the plan's DMs (ndm) */
    double *dm_own;             /* dms when the plan is split (else part 0's) */
    uint32_t ndm;
    uint32_t nchan;
    uint32_t L;          /* largest delay */
    uint32_t *trial_lat; /* each trial's latency (its largest delay unscrunched) */
    float *y;            /* block * ndm dedispersed (host chain) */
    float *snr;          /* block * ndm search outputs (host chain) */
    int32_t *width;
    float *zeros; /* block * nchan zero spectra (the end of the data) */
    float *plane; /* keep_plane: the plane of the last call */
    size_t plane_n, plane_cap;
    int64_t plane_first;
    tr_candidate *tmp; /* tr_candidates_read scratch */
    size_t tmp_cap;
    uint64_t position; /* spectra consumed */
    double merge;      /* seconds clustering the merged peaks (resident) */
    int ending;        /* flush under way: total is the number of spectra */
    uint64_t total;
    int flushed;
    int resident; /* the chain runs on the device (docs/frb.md, Backends) */
    tr_error err;
};

double tr_frb_now(void);

/* Room for m more positions, from position first on, in the plane of the
 * current call (keep_plane); NULL with q->err filled without memory. */
float *tr_frb_plane_grow(tr_frb *q, uint64_t first, size_t m);

/* Search outputs v[k * pt->ndm + d] of positions first + k, k < n, at the end
 * of the data: -inf where the boxcar reaches an incomplete position of its
 * trial (its sum holds the replacements of NaN samples, not data). */
void tr_frb_mark_tail_host(const tr_frb *q, const frb_part *pt, uint64_t first,
                           float *snr, const int32_t *width, size_t n);

/* After a search call of pt (status st, begun at t0 with its search at
 * position bpos) of m positions: its time, the outputs at negative positions
 * to skip (output k is position bpos - latency + k) and the position of the
 * first one kept. */
tr_status tr_frb_search_done(frb_part *pt, tr_status st, double t0, uint64_t bpos,
                             size_t m, size_t *skip, uint64_t *first);

/* The first failed part's status after a task on every part (its message with
 * the part's device and trials into err; one part: its message as it is);
 * TR_OK when all succeeded. */
tr_status tr_frb_parts_status(const tr_frb *q, tr_error *err);

#ifdef TR_HAVE_CUDA
/* The device-resident chain (frb_device.c). */
/* Each part's device buffers and the split, when the search can take device
 * samples (q->resident = 1); otherwise nothing changes (one part only: the
 * host chain runs; several: an error). */
tr_status tr_frb_device_setup(tr_frb *q, tr_error *err);
/* n spectra (floats, or raw bytes when raw is set) through every part,
 * merged; in steps of at most cfg.block spectra. */
tr_status tr_frb_device_run(tr_frb *q, const float *x, const void *raw, size_t n);
/* The end of the data on every part, merged, every candidate closed. */
tr_status tr_frb_device_flush(tr_frb *q);
#endif

#endif /* TRANSIENT_FRB_INTERNAL_H */
