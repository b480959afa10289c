/*
 * Candidates of the boxcar single-pulse search: the (position, channel, S/N,
 * width) outputs at or above a threshold ("peaks") clustered into events by
 * friends-of-friends across time, width and channel, streaming.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6 (candidate selection after the search; a wide pulse gives many
 * outputs above threshold in neighbouring samples, widths and trials).
 *
 * Input: the search outputs of consecutive positions, time-major,
 * snr[k * nchan + c] and width[k * nchan + c] (tr_boxcar_process output).
 * The first value given after create/reset is position cfg.start_position
 * (set it to -latency for tr_boxcar output, whose first `latency` positions
 * are negative); each call continues where the previous one ended.
 *
 * A peak is (p, c, w, s) with s >= threshold (NaN never is); its boxcar covers
 * [p, p + w) (w < 1 counts as 1). Two peaks are friends when all hold:
 *   time:    the gap between their boxcars is at most link_time samples,
 *            i.e. p2 - (p1 + w1) <= link_time for p1 <= p2 (overlapping or
 *            touching boxcars always qualify when link_time = 0);
 *   channel: |c1 - c2| <= link_chan;
 *   width:   max(w1, w2) <= link_width * min(w1, w2)  (link_width = 0: any).
 * An event is a connected set of the friendship graph (friends of friends).
 *
 * Event fields (the best member = highest S/N; ties: earliest position, then
 * lowest channel):
 *   start, width, snr, channel  of the best member's boxcar: the pulse's start
 *                               estimate, width, S/N and channel (DM trial);
 *   peak                         = start + (width - 1) / 2, the sample index of
 *                               the pulse centre estimate (integer division);
 *   first, end                   = [first, end): samples covered by members;
 *   chan_lo..chan_hi, width_lo..width_hi: ranges over the members;
 *   members                      number of peaks;
 *   truncated                    1 when closed by max_span (see below).
 *
 * Streaming: peaks are taken in stream order (position, then channel). Before
 * the peaks of position p, every open event whose members all end before
 * p - link_time (end + link_time < p) is closed: no later peak can join it.
 * Events closed at the same position are emitted in order of (first,
 * channel, start). The emitted sequence therefore does not depend on how
 * the stream is split into calls. tr_candidates_flush closes every open
 * event (end of data). With max_span > 0, an event is also closed, marked
 * truncated, before position p when p - first > max_span (bounds latency
 * and memory when the threshold lies in the noise); later peaks then start
 * new events.
 *
 * Use from a stream block (GNU Radio): after create (start_position =
 * -tr_boxcar_latency), per work call tr_candidates_process(snr, width, n) on
 * the search output, then tr_candidates_read until it returns 0; output up
 * to tr_candidates_closed can be released with the tags of its events
 * (their positions are absolute: start, peak, first); at the end of the
 * stream tr_candidates_flush, then read. Set max_span to bound how long
 * output may be held (tr_candidates_horizon); tr_candidates_set_threshold
 * serves a threshold callback.
 *
 * Cost: a vectorised scan (AVX2 where the CPU has it) finds the values
 * >= threshold, so a position without peaks costs one compare per value; per
 * peak, the active peaks of the 2 link_chan + 1 neighbouring channels are
 * looked at: per channel only the latest active peak of each width is kept
 * (an earlier one of the same width is a friend of it), and with
 * link_width = 0 only one set and the largest end per channel (every peak
 * of a channel that can still link lies in one set). With link_width = 0 a
 * peak looks only at the channels the previous peak of its position did not
 * (that peak is a friend when within link_chan), so a position costs
 * O(nchan + peaks) for any link_chan; with link_width > 0 a peak costs up to
 * (2 link_chan + 1) x (distinct active widths) (docs/reliability.md).
 *
 * CUDA backend (cfg.backend CUDA, or AUTO with a usable GPU): the same rules
 * and the same emitted sequence, computed on the GPU, so that S/N and widths
 * that are already on the device (tr_boxcar_process_device) never leave it:
 * tr_candidates_process_device takes device pointers, and only the closed
 * events come back to the host (tr_candidates_read as usual). The open
 * events and the per-channel active peaks stay on the device between calls,
 * so events that span calls are the same as for any other chunking.
 * tr_candidates_process with host pointers also works (the values are copied
 * to the device first). Every closing batch is ordered by (first, channel,
 * start, width), the CPU's order with ties broken by width.
 */
#ifndef TRANSIENT_CANDIDATES_H
#define TRANSIENT_CANDIDATES_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    uint32_t nchan;     /* channels of the input streams, >= 1 (default 1) */
    float threshold;    /* peaks have S/N >= threshold, finite (default 6) */
    uint32_t link_time; /* largest gap between friends' boxcars, samples (default 0) */
    uint32_t link_chan; /* largest channel distance of friends (default 1) */
    double link_width;  /* largest width ratio of friends, >= 1; 0 = any (default 0) */
    int64_t start_position; /* position of the first input value (default 0) */
    uint64_t max_span;  /* close events spanning more samples; 0 = never (default 0) */
    tr_backend backend; /* CPU (default), CUDA, or AUTO (CUDA when a GPU is usable) */
    int device;         /* CUDA device index (default 0) */
} tr_candidates_config;

typedef struct {
    int64_t start;     /* best member's boxcar start (pulse start estimate) */
    int64_t peak;      /* start + (width - 1) / 2: sample index of the pulse centre */
    int64_t first;     /* first sample covered by any member */
    int64_t end;       /* one past the last sample covered by any member */
    uint64_t members;  /* peaks in the event */
    float snr;         /* best member's S/N */
    uint32_t width;    /* best member's width */
    uint32_t channel;  /* best member's channel */
    uint32_t chan_lo;  /* lowest member channel */
    uint32_t chan_hi;  /* highest member channel */
    uint32_t width_lo; /* smallest member width */
    uint32_t width_hi; /* largest member width */
    int truncated;     /* 1: closed by max_span */
} tr_candidate;

typedef struct tr_candidates tr_candidates;

tr_candidates_config tr_candidates_config_default(void);

tr_candidates *tr_candidates_create(const tr_candidates_config *cfg, tr_error *err);
void tr_candidates_destroy(tr_candidates *q);

/* Back to cfg.start_position with no open or pending events. */
tr_status tr_candidates_reset(tr_candidates *q);

/*
 * Take n positions of snr (and width; NULL means width 1 everywhere), time-
 * major with nchan values per position. Closed events queue up for
 * tr_candidates_read. n = 0 is allowed.
 */
tr_status tr_candidates_process(tr_candidates *q, const float *snr, const int32_t *width,
                                size_t n);

/*
 * CUDA backend only (TR_ERR_UNSUPPORTED otherwise): the same with device
 * pointers, time-major d_snr[k * nchan + c] (channel_major = 0) or
 * channel-major d_snr[c * n + k] (channel_major = 1, the layout of
 * TR_BOXCAR_CHANNEL_MAJOR); d_width the same layout or NULL (width 1).
 * Returns when the call's closed events are queued for tr_candidates_read.
 */
tr_status tr_candidates_process_device(tr_candidates *q, const float *d_snr,
                                       const int32_t *d_width, size_t n,
                                       int channel_major);

/* Close every open event (end of data); processing may continue afterwards. */
tr_status tr_candidates_flush(tr_candidates *q);

/* Move up to cap queued events, oldest first, into out; returns how many. */
size_t tr_candidates_read(tr_candidates *q, tr_candidate *out, size_t cap);

/*
 * Change the threshold (finite) from the next input position on. Peaks
 * already taken stay; the emitted sequence is that of a stream whose
 * threshold changed at that position, whatever the chunking.
 */
tr_status tr_candidates_set_threshold(tr_candidates *q, float threshold);
float tr_candidates_threshold(const tr_candidates *q);

/*
 * Every event whose first sample (tr_candidate.first) lies before this
 * position has been closed (queued or read): min(next input position, first
 * of the open events). Output up to it can be released with its events.
 */
int64_t tr_candidates_closed(const tr_candidates *q);

/*
 * Upper bound of tr_candidates_position - tr_candidates_closed: max_span + 1,
 * or UINT64_MAX when max_span = 0 (an event may then stay open for ever, e.g.
 * with a threshold in the noise).
 */
uint64_t tr_candidates_horizon(const tr_candidates *q);

/*
 * The boxcar search's output (tr_boxcar_process or tr_boxcar_flush) of the
 * search positions position .. position + n - 1 (>= 0) given to the
 * clustering, with the S/N of every channel whose statistics are still
 * warming up (tr_boxcar_norm_ready of the search's normalisation says 0) at
 * -inf, so that the warm-up never yields events. Call it after the search
 * call that wrote the values (the statistics of older windows are dropped).
 * The search must have the clustering's nchan. FIXED normalisation passes
 * the values through unchanged.
 */
struct tr_boxcar;
tr_status tr_boxcar_candidates_process(tr_candidates *c, const struct tr_boxcar *q,
                                       uint64_t position, const float *snr,
                                       const int32_t *width, size_t n);

/*
 * tr_boxcar_candidates_process for the device output of
 * tr_boxcar_process_device (device pointers in the search's
 * cfg.device_layout); c needs the CUDA backend. Warm-up positions are masked
 * as there (a search with FIXED normalisation has none).
 */
tr_status tr_boxcar_candidates_process_device(tr_candidates *c, const struct tr_boxcar *q,
                                              uint64_t position, const float *d_snr,
                                              const int32_t *d_width, size_t n);

/*
 * Host samples searched and clustered on the device (q and c on the CUDA
 * backend): x[k * nchan + c], n per channel, is copied to the device in
 * pieces, each searched there with tr_boxcar_process_device (time-major;
 * FIXED, or WHITE/LEVELS measured on the device) and clustered there; the
 * S/N and widths never come back, only the closed events
 * (tr_candidates_read). Output positions below 0 (the first latency of the
 * stream) are not given to the clustering: create c with start_position 0.
 * q's stream is then a device stream (see tr_boxcar_process_device).
 */
tr_status tr_boxcar_search_candidates(tr_candidates *c, struct tr_boxcar *q,
                                      const float *x, size_t n);

/*
 * tr_boxcar_search_candidates for a stream of calls: a call's last piece is
 * copied to the device but searched with the next call, beside the copy of
 * that call's first piece, and the piece before it is selected and clustered
 * there too (a call of one piece otherwise copies, searches and clusters it
 * one after the other). So the events of a call's last two pieces come out
 * with the next call (its last piece's, with the one after). The same
 * events in the same order as tr_boxcar_search_candidates, each piece
 * clustered with the threshold in effect when its samples were given. The
 * samples are read before the return, as there, and count as consumed
 * (tr_boxcar_position). The pieces left over belong to c: the next call
 * must give the same c (else TR_ERR_STATE), and
 * tr_boxcar_search_candidates_drain searches and clusters them without new
 * samples; tr_boxcar_search_candidates, tr_boxcar_process,
 * tr_boxcar_process_device and both flushes of q drain first,
 * tr_boxcar_reset drops them. Drain before tr_candidates_flush.
 */
tr_status tr_boxcar_search_candidates_pipelined(tr_candidates *c, struct tr_boxcar *q,
                                                const float *x, size_t n);
tr_status tr_boxcar_search_candidates_drain(struct tr_boxcar *q);

tr_backend tr_candidates_backend(const tr_candidates *q); /* CPU or CUDA */
size_t tr_candidates_pending(const tr_candidates *q);     /* queued, not yet read */
size_t tr_candidates_open(const tr_candidates *q);        /* events still growing */
int64_t tr_candidates_position(const tr_candidates *q);   /* next input position */
uint64_t tr_candidates_peaks(const tr_candidates *q);     /* peaks seen */
uint64_t tr_candidates_emitted(const tr_candidates *q);   /* events closed so far */
const char *tr_candidates_last_error(const tr_candidates *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_CANDIDATES_H */
