/*
 * Candidates of a search split into channel ranges (<transient/candidates_split.h>):
 * each part's peaks kept with their absolute position until every part has
 * reached it, then merged in stream order into one clustering.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 *
 * The merge gives tr_candidates_process_peaks the peaks of the positions
 * every part has given, ordered by position and then channel: the parts'
 * channel ranges are consecutive, so at one position the parts' peaks
 * follow each other in part order. That is the order in which one selection
 * over all channels lists them, and the clustering's events depend only on
 * the peaks and the positions given (candidates.h, Streaming).
 */
#include <transient/boxcar.h>
#include <transient/candidates_split.h>

#include "boxcar/candidates_cuda.h" /* the peak type (and the selection with CUDA) */
#include "common/core_util.h"
#include "boxcar/candidates_internal.h"

#include <stdlib.h>
#include <string.h>

/* Positions per tr_candidates_process_peaks call: their index is 32 bits. */
#define SPLIT_PIECE ((int64_t)1 << 30)

typedef struct {
    int64_t p;  /* absolute position */
    uint32_t c; /* channel in the clustering's numbering */
    int32_t w;
    float s;
} kept_peak;

typedef struct {
    uint32_t c0, nchan; /* first channel, channels */
    int64_t next;       /* next position the part gives */
    kept_peak *pk;      /* peaks not merged yet: pk[head .. n) */
    size_t head, n, cap;
    uint8_t *skip; /* nchan warm-up flags of a window piece */
#ifdef TR_HAVE_CUDA
    tr_cuda_cand *sel; /* the part's peak selection on its device */
#endif
} split_part;

struct tr_candidates_split {
    tr_candidates *c;
    uint32_t nparts;
    int devices;            /* the parts select on devices */
    split_part *part;       /* nparts */
    tr_cuda_cand_peak *out; /* merged peaks of one piece */
    size_t out_cap;
};

void tr_candidates_split_destroy(tr_candidates_split *s)
{
    if (!s) return;
    for (uint32_t j = 0; s->part && j < s->nparts; j++) {
        free(s->part[j].pk);
        free(s->part[j].skip);
#ifdef TR_HAVE_CUDA
        tr_cuda_cand_destroy(s->part[j].sel);
#endif
    }
    free(s->part);
    free(s->out);
    free(s);
}

tr_candidates_split *tr_candidates_split_create(tr_candidates *c, uint32_t nparts,
                                                const uint32_t *nchan, const int *devices,
                                                tr_error *err)
{
    tr_clear(err);
    if (!c || !nchan || nparts < 1 || nparts > TR_CANDIDATES_SPLIT_MAX_PARTS) {
        tr_fail(err, TR_ERR_INVALID,
                "candidates: a split needs a clustering and 1..%u parts with their "
                "channel counts",
                TR_CANDIDATES_SPLIT_MAX_PARTS);
        return NULL;
    }
#ifndef TR_HAVE_CUDA
    if (devices) {
        tr_fail(err, TR_ERR_UNSUPPORTED,
                "candidates: device selection needs a build with CUDA");
        return NULL;
    }
#endif
    tr_candidates_split *s = calloc(1, sizeof *s);
    if (s) s->part = calloc(nparts, sizeof *s->part);
    if (!s || !s->part) {
        free(s);
        tr_fail(err, TR_ERR_NOMEM, "candidates: out of memory for the split");
        return NULL;
    }
    s->c = c;
    s->nparts = nparts;
    s->devices = devices != NULL;
    uint64_t total = 0;
    for (uint32_t j = 0; j < nparts; j++) {
        split_part *pt = &s->part[j];
        pt->c0 = (uint32_t)total;
        pt->nchan = nchan[j];
        pt->next = tr_candidates_position(c);
        total += nchan[j];
        if (nchan[j] < 1) {
            tr_fail(err, TR_ERR_INVALID, "candidates: split part %u has no channels", j);
            goto fail;
        }
        pt->skip = malloc(nchan[j]);
        if (!pt->skip) {
            tr_fail(err, TR_ERR_NOMEM, "candidates: out of memory for the split");
            goto fail;
        }
#ifdef TR_HAVE_CUDA
        if (devices) {
            tr_candidates_config cc = tr_candidates_config_default();
            cc.nchan = nchan[j];
            if (tr_cuda_cand_create(devices[j], &cc, &pt->sel, err) != TR_OK) goto fail;
        }
#endif
    }
    const uint32_t cn = tr_candidates_nchan(c);
    if (total != cn) {
        tr_fail(err, TR_ERR_INVALID,
                "candidates: the split's parts hold %llu channels, the clustering %u",
                (unsigned long long)total, cn);
        goto fail;
    }
    return s;
fail:
    tr_candidates_split_destroy(s);
    return NULL;
}

tr_status tr_candidates_split_reset(tr_candidates_split *s)
{
    if (!s) return TR_ERR_INVALID;
    for (uint32_t j = 0; j < s->nparts; j++) {
        s->part[j].head = s->part[j].n = 0;
        s->part[j].next = tr_candidates_position(s->c);
    }
    return TR_OK;
}

/* Room for m more kept peaks in part pt (the merged ones dropped first). */
static tr_status reserve(split_part *pt, size_t m, tr_error *err)
{
    if (pt->head > 0) {
        memmove(pt->pk, pt->pk + pt->head, (pt->n - pt->head) * sizeof *pt->pk);
        pt->n -= pt->head;
        pt->head = 0;
    }
    if (pt->n + m <= pt->cap) return TR_OK;
    size_t cap = pt->cap ? pt->cap : 1024;
    while (cap < pt->n + m)
        cap *= 2;
    kept_peak *p = cap <= SIZE_MAX / sizeof *p ? realloc(pt->pk, cap * sizeof *p) : NULL;
    if (!p) return tr_fail(err, TR_ERR_NOMEM, "candidates: out of memory for kept peaks");
    pt->pk = p;
    pt->cap = cap;
    return TR_OK;
}

static tr_status check_part(const tr_candidates_split *s, uint32_t part, tr_error *err)
{
    if (!s) return tr_fail(err, TR_ERR_INVALID, "candidates: split is NULL");
    if (part >= s->nparts)
        return tr_fail(err, TR_ERR_INVALID, "candidates: split part %u of %u", part,
                       s->nparts);
    return TR_OK;
}

tr_status tr_candidates_split_add(tr_candidates_split *s, uint32_t part,
                                  const tr_candidates_peak *pk, size_t npk, size_t n,
                                  tr_error *err)
{
    tr_status st = check_part(s, part, err);
    if (st != TR_OK) return st;
    if (npk && !pk) return tr_fail(err, TR_ERR_INVALID, "candidates: peaks are NULL");
    split_part *pt = &s->part[part];
    for (size_t i = 0; i < npk; i++) {
        const int ordered = i == 0 || pk[i].k > pk[i - 1].k ||
                            (pk[i].k == pk[i - 1].k && pk[i].c > pk[i - 1].c);
        if (pk[i].k >= n || pk[i].c >= pt->nchan || !ordered)
            return tr_fail(
                err, TR_ERR_INVALID,
                "candidates: split part %u: peak %zu (position %u, channel %u) "
                "out of order or range (%zu positions, %u channels)",
                part, i, pk[i].k, pk[i].c, n, pt->nchan);
    }
    st = reserve(pt, npk, err);
    if (st != TR_OK) return st;
    for (size_t i = 0; i < npk; i++) {
        const kept_peak e = {pt->next + (int64_t)pk[i].k, pt->c0 + pk[i].c, pk[i].w,
                             pk[i].s};
        pt->pk[pt->n++] = e;
    }
    pt->next += (int64_t)n;
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
/* m positions (a piece of one statistics window) selected on the part's
 * device, their peaks kept from position pt->next + k on. */
static tr_status select_piece(tr_candidates_split *s, split_part *pt, const float *snr,
                              const int32_t *width, int64_t ld, int64_t k, size_t m,
                              int channel_major, int on_device, const uint8_t *flags,
                              tr_error *err)
{
    const size_t C = pt->nchan;
    const size_t most = (size_t)(TR_CUDA_CAND_MAX_VALUES / (int64_t)C);
    for (size_t done = 0; done < m;) {
        const size_t len = m - done < most ? m - done : most;
        const int64_t kk = k + (int64_t)done;
        /* host values: the piece's own pointer (time-major) */
        const float *sp = on_device ? snr : snr + (size_t)kk * C;
        const int32_t *wp = on_device || !width ? width : width + (size_t)kk * C;
        const tr_cuda_cand_peak *pk = NULL;
        size_t npk = 0;
        tr_status st = tr_cuda_cand_select(
            pt->sel, sp, wp, ld, on_device ? kk : 0, len, channel_major, on_device,
            tr_candidates_threshold(s->c), flags, &pk, &npk, err);
        if (st == TR_OK) st = reserve(pt, npk, err);
        if (st != TR_OK) return st;
        const int64_t base = pt->next + (int64_t)done;
        for (size_t i = 0; i < npk; i++) {
            const kept_peak e = {base + pk[i].k, pt->c0 + pk[i].c, pk[i].w, pk[i].s};
            pt->pk[pt->n++] = e;
        }
        done += len;
    }
    pt->next += (int64_t)m;
    return TR_OK;
}
#endif

tr_status tr_boxcar_candidates_split_select(tr_candidates_split *s, uint32_t part,
                                            const struct tr_boxcar *q, uint64_t position,
                                            const float *snr, const int32_t *width,
                                            size_t n, int on_device, tr_error *err)
{
    tr_status st = check_part(s, part, err);
    if (st != TR_OK) return st;
#ifndef TR_HAVE_CUDA
    (void)q;
    (void)position;
    (void)snr;
    (void)width;
    (void)n;
    (void)on_device;
    return tr_fail(err, TR_ERR_UNSUPPORTED, "candidates: device selection needs CUDA");
#else
    if (!s->devices)
        return tr_fail(err, TR_ERR_UNSUPPORTED,
                       "candidates: this split was made without devices");
    split_part *pt = &s->part[part];
    if (!q || tr_boxcar_nchan(q) != pt->nchan)
        return tr_fail(err, TR_ERR_INVALID,
                       "candidates: split part %u needs a search of %u channels", part,
                       pt->nchan);
    if (n && !snr) return tr_fail(err, TR_ERR_INVALID, "candidates: snr is NULL");
    if ((int64_t)position != pt->next)
        return tr_fail(err, TR_ERR_INVALID,
                       "candidates: split part %u is at position %lld, given %llu", part,
                       (long long)pt->next, (unsigned long long)position);
    const int cm = on_device && tr_boxcar_device_layout(q) == TR_BOXCAR_CHANNEL_MAJOR;
    for (size_t k = 0; k < n && st == TR_OK;) {
        const uint8_t *flags = NULL;
        const size_t len =
            tr_boxcar_ready_piece(q, position + k, n - k, pt->skip, &flags);
        st = select_piece(s, pt, snr, width, (int64_t)n, (int64_t)k, len, cm, on_device,
                          flags, err);
        k += len;
    }
    return st;
#endif
}

/* The kept peaks of positions base .. lim - 1 of every part, merged into s->out
 * in stream order; returns their count (SIZE_MAX without memory). */
static size_t gather(tr_candidates_split *s, int64_t base, int64_t lim)
{
    size_t need = 0;
    for (uint32_t j = 0; j < s->nparts; j++)
        need += s->part[j].n - s->part[j].head;
    if (need > s->out_cap) {
        tr_cuda_cand_peak *o =
            need <= SIZE_MAX / sizeof *o ? realloc(s->out, need * sizeof *o) : NULL;
        if (!o) return SIZE_MAX;
        s->out = o;
        s->out_cap = need;
    }
    size_t m = 0;
    for (;;) {
        /* the part whose next peak comes first: lowest position, then the
         * lowest part (its channels come first) */
        uint32_t best = s->nparts;
        for (uint32_t j = 0; j < s->nparts; j++) {
            const split_part *pt = &s->part[j];
            if (pt->head == pt->n || pt->pk[pt->head].p >= lim) continue;
            if (best == s->nparts ||
                pt->pk[pt->head].p < s->part[best].pk[s->part[best].head].p)
                best = j;
        }
        if (best == s->nparts) break;
        /* its peaks of that position, all at once */
        split_part *pt = &s->part[best];
        const int64_t p = pt->pk[pt->head].p;
        for (; pt->head < pt->n && pt->pk[pt->head].p == p; pt->head++) {
            const kept_peak *e = &pt->pk[pt->head];
            const tr_cuda_cand_peak o = {(uint32_t)(p - base), e->c, e->w, e->s};
            s->out[m++] = o;
        }
    }
    return m;
}

tr_status tr_candidates_split_merge(tr_candidates_split *s, tr_error *err)
{
    if (!s) return tr_fail(err, TR_ERR_INVALID, "candidates: split is NULL");
    int64_t W = s->part[0].next;
    for (uint32_t j = 1; j < s->nparts; j++)
        if (s->part[j].next < W) W = s->part[j].next;
    for (int64_t base = tr_candidates_position(s->c); base < W;) {
        const int64_t lim = W - base < SPLIT_PIECE ? W : base + SPLIT_PIECE;
        const size_t m = gather(s, base, lim);
        if (m == SIZE_MAX)
            return tr_fail(err, TR_ERR_NOMEM, "candidates: out of memory for the merge");
        const tr_status st =
            tr_candidates_process_peaks(s->c, s->out, m, (size_t)(lim - base));
        if (st != TR_OK) return tr_fail(err, st, "%s", tr_candidates_last_error(s->c));
        base = lim;
    }
    return TR_OK;
}

int64_t tr_candidates_split_position(const tr_candidates_split *s, uint32_t part)
{
    return s && part < s->nparts ? s->part[part].next : -1;
}

size_t tr_candidates_split_kept(const tr_candidates_split *s)
{
    size_t m = 0;
    for (uint32_t j = 0; s && j < s->nparts; j++)
        m += s->part[j].n - s->part[j].head;
    return m;
}
