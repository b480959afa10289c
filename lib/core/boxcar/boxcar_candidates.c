/*
 * The boxcar search output given to the clustering with the warm-up masked:
 * values of a channel whose statistics were not measured yet (the warm-up
 * S/N uses init_sigma, not the data's noise) must never become events.
 * Readiness comes from the search (tr_boxcar_ready): its normalisation
 * object, or the statistics measured on the device for a device stream.
 */
#include <transient/boxcar.h>
#include <transient/boxcar_norm.h>
#include <transient/candidates.h>

#include "boxcar/candidates_internal.h"
#include "common/device_src.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Gives len positions of one statistics window with the S/N of the channels
 * flagged as warming up (skip[ch] = 1) at -inf, below every finite
 * threshold. */
static tr_status process_masked(tr_candidates *c, uint32_t nchan, const uint8_t *skip,
                                const float *snr, const int32_t *width, size_t len)
{
    const size_t nvals = len * nchan;
    float *masked = malloc(nvals * sizeof *masked);
    if (!masked) return TR_ERR_NOMEM;
    memcpy(masked, snr, nvals * sizeof *masked);
    for (uint32_t ch = 0; ch < nchan; ch++) {
        if (!skip[ch]) continue;
        for (size_t j = 0; j < len; j++)
            masked[j * nchan + ch] = -INFINITY;
    }
    const tr_status st = tr_candidates_process(c, masked, width, len);
    free(masked);
    return st;
}

tr_status tr_boxcar_candidates_process(tr_candidates *c, const struct tr_boxcar *q,
                                       uint64_t position, const float *snr,
                                       const int32_t *width, size_t n)
{
    if (!c || !q) return TR_ERR_INVALID;
    const uint32_t nchan = tr_boxcar_nchan(q);
    uint8_t *skip = calloc(nchan, 1);
    if (!skip) return TR_ERR_NOMEM;
    /* Runs of windows where every channel is ready go to the clustering as
     * they are, a window with a warming-up channel masked (as on the device). */
    tr_status st = TR_OK;
    for (size_t k = 0; k < n && st == TR_OK;) {
        const uint8_t *flags = NULL;
        const size_t len = tr_boxcar_ready_piece(q, position + k, n - k, skip, &flags);
        const float *y = snr + k * nchan;
        const int32_t *w = width ? width + k * nchan : NULL;
        st = flags ? process_masked(c, nchan, flags, y, w, len)
                   : tr_candidates_process(c, y, w, len);
        k += len;
    }
    free(skip);
    return st;
}

size_t tr_boxcar_ready_piece(const struct tr_boxcar *q, uint64_t p, size_t n,
                             uint8_t *skip, const uint8_t **flags)
{
    *flags = NULL;
    const uint32_t W = tr_boxcar_norm_window(tr_boxcar_get_norm(q));
    if (W == 0) return n; /* FIXED mode measures nothing: every value counts */
    /* Windows where every channel is ready go out as one run (each piece is
     * a selection round trip on the device); a window with a warming-up
     * channel goes out alone, with its flags. */
    size_t len = 0;
    while (len < n) {
        const uint64_t pp = p + len, left = W - pp % W;
        const size_t step = (size_t)(n - len < left ? n - len : left);
        int all = 1;
        for (uint32_t ch = 0; ch < tr_boxcar_nchan(q); ch++) {
            const int ready = tr_boxcar_ready(q, pp, ch);
            if (len == 0) skip[ch] = ready ? 0 : 1;
            all &= ready != 0;
        }
        if (!all) {
            if (len > 0) return len; /* the run ends before this window */
            *flags = skip;
            return step;
        }
        len += step;
    }
    return len;
}

tr_status tr_boxcar_cluster_device(tr_candidates *c, const struct tr_boxcar *q,
                                   uint64_t position, const float *d_snr,
                                   const int32_t *d_width, int64_t ld, int64_t k0,
                                   size_t n, int channel_major)
{
    if (!c || !q) return TR_ERR_INVALID;
    uint8_t *skip = calloc(tr_boxcar_nchan(q), 1);
    if (!skip) return TR_ERR_NOMEM;
    /* Per statistics window piece: the warming-up channels yield no peaks. */
    tr_status st = TR_OK;
    for (size_t k = 0; k < n && st == TR_OK;) {
        const uint8_t *flags = NULL;
        const size_t len = tr_boxcar_ready_piece(q, position + k, n - k, skip, &flags);
        st =
            tr_candidates_process_device_part(c, d_snr, d_width, ld, k0 + (int64_t)k, len,
                                              channel_major, flags, TR_SRC_CALLER_DEVICE);
        k += len;
    }
    free(skip);
    return st;
}

tr_status tr_boxcar_candidates_process_device(tr_candidates *c, const struct tr_boxcar *q,
                                              uint64_t position, const float *d_snr,
                                              const int32_t *d_width, size_t n)
{
    if (!c || !q) return TR_ERR_INVALID;
    const int cm = tr_boxcar_device_layout(q) == TR_BOXCAR_CHANNEL_MAJOR;
    return tr_boxcar_cluster_device(c, q, position, d_snr, d_width, (int64_t)n, 0, n, cm);
}
