/*
 * Streaming friends-of-friends clustering of boxcar search peaks into events
 * (<transient/candidates.h> describes the rules).
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.
 */
#include <transient/candidates.h>

#include "common/core_util.h"

#include "boxcar/candidates_cuda.h" /* the peak type (and the launcher with CUDA) */
#include "boxcar/candidates_internal.h"
#include "common/simd.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A cluster (event under construction); ids index q->cl. */
typedef struct {
    uint32_t parent; /* union-find parent (itself for a root) */
    uint32_t next;   /* next id of the same set (UINT32_MAX: last) */
    uint32_t tail;   /* root: last id of its set chain */
    uint32_t slot;   /* root: index in q->open */
    uint32_t gen;    /* bumped when the id is freed (stale entries see it) */
    tr_candidate ev; /* root: the event so far */
} cluster_t;

/* Latest active peak of one width in one channel. */
typedef struct {
    uint32_t width;
    uint32_t id;  /* a cluster id of the peak's set (find() gives the root) */
    uint32_t gen; /* q->cl[id].gen when stored: the set is still open if equal */
    int64_t end;  /* p + w */
} entry_t;

typedef struct {
    entry_t *e;
    uint32_t n, cap;
    /* Scan kernels with link_width = 0 (any widths link): the channel's peaks
     * that can still link all lie in one set, so one summary replaces the
     * entries: a cluster id of that set, its gen, and the largest p + w. */
    int has;
    uint32_t sid, sgen;
    int64_t max_end;
} chan_t;

struct tr_candidates {
    tr_candidates_config cfg;
    int64_t position;
    uint64_t peaks, emitted;
    cluster_t *cl;
    uint32_t ncl, capcl;
    uint32_t *freel; /* free cluster ids */
    uint32_t nfree;
    uint32_t *open; /* open roots */
    uint32_t nopen;
    int64_t next_check; /* no open event closes before this position */
    chan_t *ch;
    tr_candidate *queue; /* closed events, queue[qhead .. qn) unread */
    size_t qhead, qn, qcap;
    tr_candidate *tmp; /* closing batch */
    size_t tmpcap;
    int summary;      /* per-channel summaries instead of entries (see chan_t) */
    uint64_t visits;  /* channels looked at by add_peak (tr_candidates_visits) */
    const void *kern; /* the scan kernel chosen at create */
    void *cuda;       /* tr_cuda_cand with the CUDA backend, else NULL */
    tr_error err;
};

#define NONE UINT32_MAX

/* The scan kernel selected now (tr_candidates_select), and whether it scans
 * (else: the per-position loop). */
static const void *current_kernel(void);
static int kernel_scans(const void *k);

tr_candidates_config tr_candidates_config_default(void)
{
    tr_candidates_config c;
    memset(&c, 0, sizeof c);
    c.nchan = 1;
    c.threshold = 6.0f;
    c.link_time = 0;
    c.link_chan = 1;
    c.link_width = 0.0;
    c.start_position = 0;
    c.max_span = 0;
    c.backend = TR_BACKEND_CPU;
    c.device = 0;
    return c;
}

static tr_status check_config(const tr_candidates_config *c, tr_error *err)
{
    if (!c) return tr_fail(err, TR_ERR_INVALID, "candidates: config is NULL");
    if (c->nchan < 1 || c->nchan > (1u << 24))
        return tr_fail(err, TR_ERR_INVALID, "candidates: nchan must be in 1..%u, got %u",
                       1u << 24, c->nchan);
    if (!isfinite(c->threshold))
        return tr_fail(err, TR_ERR_INVALID, "candidates: threshold must be finite");
    if (!isfinite(c->link_width) || (c->link_width != 0.0 && c->link_width < 1.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "candidates: link_width must be 0 (any) or >= 1, got %g",
                       c->link_width);
    if (c->link_time > (1u << 30))
        return tr_fail(err, TR_ERR_INVALID, "candidates: link_time %u is too large",
                       c->link_time);
    if (c->start_position < -((int64_t)1 << 60) || c->start_position > ((int64_t)1 << 60))
        return tr_fail(err, TR_ERR_INVALID, "candidates: start_position out of range");
    tr_clear(err);
    return TR_OK;
}

void tr_candidates_destroy(tr_candidates *q)
{
    if (!q) return;
#ifdef TR_HAVE_CUDA
    if (q->cuda) tr_cuda_cand_destroy((tr_cuda_cand *)q->cuda);
#endif
    if (q->ch)
        for (uint32_t c = 0; c < q->cfg.nchan; c++)
            free(q->ch[c].e);
    free(q->ch);
    free(q->cl);
    free(q->freel);
    free(q->open);
    free(q->queue);
    free(q->tmp);
    free(q);
}

tr_status tr_candidates_reset(tr_candidates *q)
{
    if (!q) return TR_ERR_INVALID;
    q->position = q->cfg.start_position;
    q->peaks = q->emitted = q->visits = 0;
    q->ncl = q->nfree = q->nopen = 0;
    q->next_check = INT64_MAX;
    for (uint32_t c = 0; c < q->cfg.nchan; c++) {
        q->ch[c].n = 0;
        q->ch[c].has = 0;
    }
    q->qhead = q->qn = 0;
    tr_clear(&q->err);
    return TR_OK;
}

tr_candidates *tr_candidates_create(const tr_candidates_config *cfg, tr_error *err)
{
    if (check_config(cfg, err) != TR_OK) return NULL;
    tr_candidates *q = (tr_candidates *)calloc(1, sizeof *q);
    if (!q || !(q->ch = (chan_t *)calloc(cfg->nchan, sizeof(chan_t)))) {
        free(q);
        tr_fail(err, TR_ERR_NOMEM, "candidates: out of memory");
        return NULL;
    }
    q->cfg = *cfg;
    q->kern = current_kernel();
    q->summary = kernel_scans(q->kern) && cfg->link_width == 0.0;
    tr_placement pl;
    if (tr_place("candidates", cfg->backend, TR_VARIANT_FAST, cfg->device, 1, &pl, err) !=
        TR_OK) {
        tr_candidates_destroy(q);
        return NULL;
    }
#ifdef TR_HAVE_CUDA
    if (pl.try_cuda) {
        tr_cuda_cand *ctx = NULL;
        const tr_status s = tr_cuda_cand_create(cfg->device, cfg, &ctx, err);
        if (s == TR_OK) {
            q->cuda = ctx;
        } else if (pl.need_cuda) {
            tr_candidates_destroy(q);
            return NULL;
        }
    }
#endif
    tr_candidates_reset(q);
    tr_clear(err);
    return q;
}

/* Grow an array to hold at least need elements. */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap) return 1;
    size_t nc = *cap ? *cap : 16;
    while (nc < need)
        nc *= 2;
    void *np = realloc(*p, nc * elem);
    if (!np) return 0;
    *p = np;
    *cap = nc;
    return 1;
}

static uint32_t find(tr_candidates *q, uint32_t id)
{
    uint32_t r = id;
    while (q->cl[r].parent != r)
        r = q->cl[r].parent;
    while (q->cl[id].parent != r) { /* path compression */
        const uint32_t nx = q->cl[id].parent;
        q->cl[id].parent = r;
        id = nx;
    }
    return r;
}

/* a better than b: higher S/N; ties: earlier start, then lower channel. */
static int better(const tr_candidate *a, const tr_candidate *b)
{
    if (a->snr != b->snr) return a->snr > b->snr;
    if (a->start != b->start) return a->start < b->start;
    return a->channel < b->channel;
}

static void update_check(tr_candidates *q, const tr_candidate *ev)
{
    int64_t t = ev->end + (int64_t)q->cfg.link_time + 1;
    if (q->cfg.max_span) {
        const int64_t s = ev->first + (int64_t)q->cfg.max_span + 1;
        if (s < t) t = s;
    }
    if (t < q->next_check) q->next_check = t;
}

/* x takes in the members of y: the better one's best member, the union of
 * the ranges. */
static void merge_event(tr_candidate *x, const tr_candidate *y)
{
    if (better(y, x)) {
        x->start = y->start;
        x->peak = y->peak;
        x->snr = y->snr;
        x->width = y->width;
        x->channel = y->channel;
    }
    if (y->first < x->first) x->first = y->first;
    if (y->end > x->end) x->end = y->end;
    x->members += y->members;
    if (y->chan_lo < x->chan_lo) x->chan_lo = y->chan_lo;
    if (y->chan_hi > x->chan_hi) x->chan_hi = y->chan_hi;
    if (y->width_lo < x->width_lo) x->width_lo = y->width_lo;
    if (y->width_hi > x->width_hi) x->width_hi = y->width_hi;
}

/* The event of one peak (p, c, w, s). */
static tr_candidate peak_event(int64_t p, uint32_t c, uint32_t w, float s)
{
    tr_candidate ev;
    memset(&ev, 0, sizeof ev);
    ev.start = p;
    ev.peak = p + (int64_t)(w - 1) / 2;
    ev.first = p;
    ev.end = p + (int64_t)w;
    ev.members = 1;
    ev.snr = s;
    ev.width = ev.width_lo = ev.width_hi = w;
    ev.channel = ev.chan_lo = ev.chan_hi = c;
    return ev;
}

/* Merge the sets of roots a and b (a != b); returns the new root. */
static uint32_t unite(tr_candidates *q, uint32_t a, uint32_t b)
{
    if (b < a) {
        const uint32_t t = a;
        a = b;
        b = t;
    }
    cluster_t *A = &q->cl[a], *B = &q->cl[b];
    merge_event(&A->ev, &B->ev);
    /* b leaves the open list (swap-remove) */
    const uint32_t s = B->slot, last = q->open[--q->nopen];
    q->open[s] = last;
    q->cl[last].slot = s;
    B->parent = a;
    q->cl[A->tail].next = b;
    A->tail = B->tail;
    update_check(q, &A->ev);
    return a;
}

static int cmp_event(const void *pa, const void *pb)
{
    const tr_candidate *a = (const tr_candidate *)pa, *b = (const tr_candidate *)pb;
    if (a->first != b->first) return a->first < b->first ? -1 : 1;
    if (a->channel != b->channel) return a->channel < b->channel ? -1 : 1;
    if (a->start != b->start) return a->start < b->start ? -1 : 1;
    return 0;
}

/* Append nb closed events to the queue. */
static tr_status enqueue(tr_candidates *q, const tr_candidate *ev, size_t nb)
{
    if (q->qhead > 0 && q->qhead == q->qn) q->qhead = q->qn = 0;
    if (!grow((void **)&q->queue, &q->qcap, q->qn + nb, sizeof(tr_candidate)))
        return TR_ERR_NOMEM;
    memcpy(q->queue + q->qn, ev, nb * sizeof *ev);
    q->qn += nb;
    q->emitted += nb;
    return TR_OK;
}

/* Close the open events that cannot grow at position p (all when p is
 * INT64_MAX), sorted, into the queue. */
static tr_status close_events(tr_candidates *q, int64_t p, int all)
{
    if (!all && p < q->next_check) return TR_OK;
    size_t nb = 0;
    int64_t next = INT64_MAX;
    for (uint32_t i = 0; i < q->nopen;) {
        const uint32_t r = q->open[i];
        tr_candidate *ev = &q->cl[r].ev;
        const int span = q->cfg.max_span && p - ev->first > (int64_t)q->cfg.max_span;
        if (all || ev->end + (int64_t)q->cfg.link_time < p || span) {
            if (!grow((void **)&q->tmp, &q->tmpcap, nb + 1, sizeof(tr_candidate)))
                return TR_ERR_NOMEM;
            ev->truncated = !all && span && !(ev->end + (int64_t)q->cfg.link_time < p);
            q->tmp[nb++] = *ev;
            /* free the whole set */
            for (uint32_t id = r; id != NONE; id = q->cl[id].next) {
                q->cl[id].gen++; /* entries that still name it become stale */
                q->freel[q->nfree++] = id;
            }
            const uint32_t last = q->open[--q->nopen];
            q->open[i] = last;
            q->cl[last].slot = i;
            continue;
        }
        int64_t t = ev->end + (int64_t)q->cfg.link_time + 1;
        if (q->cfg.max_span) {
            const int64_t s = ev->first + (int64_t)q->cfg.max_span + 1;
            if (s < t) t = s;
        }
        if (t < next) next = t;
        i++;
    }
    q->next_check = next;
    if (nb == 0) return TR_OK;
    qsort(q->tmp, nb, sizeof *q->tmp, cmp_event);
    return enqueue(q, q->tmp, nb);
}

static tr_status new_cluster(tr_candidates *q, const tr_candidate *ev, uint32_t *id_out)
{
    uint32_t id;
    if (q->nfree) {
        id = q->freel[--q->nfree];
    } else {
        size_t cap = q->capcl;
        if (!grow((void **)&q->cl, &cap, (size_t)q->ncl + 1, sizeof(cluster_t)))
            return TR_ERR_NOMEM;
        if (cap != q->capcl) {
            uint32_t *nf = (uint32_t *)realloc(q->freel, cap * sizeof(uint32_t));
            uint32_t *no = (uint32_t *)realloc(q->open, cap * sizeof(uint32_t));
            if (nf) q->freel = nf;
            if (no) q->open = no;
            if (!nf || !no) return TR_ERR_NOMEM;
            q->capcl = (uint32_t)cap;
        }
        id = q->ncl++;
        q->cl[id].gen = 0;
    }
    cluster_t *k = &q->cl[id];
    k->parent = id;
    k->next = NONE;
    k->tail = id;
    k->slot = q->nopen;
    q->open[q->nopen++] = id;
    k->ev = *ev;
    update_check(q, &k->ev);
    *id_out = id;
    return TR_OK;
}

static int widths_link(const tr_candidates *q, uint32_t a, uint32_t b)
{
    if (q->cfg.link_width == 0.0) return 1;
    const uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
    return (double)hi <= q->cfg.link_width * (double)lo;
}

/* The set of root r joined to the set of root (NONE: none yet). */
static uint32_t join(tr_candidates *q, uint32_t root, uint32_t r)
{
    if (root == NONE) return r;
    return r != root ? unite(q, root, r) : root;
}

/* The peaks of pe into the set *root, or into a new cluster (its id in
 * *root) when *root is NONE. */
static tr_status add_to(tr_candidates *q, uint32_t *root, const tr_candidate *pe)
{
    if (*root == NONE) return new_cluster(q, pe, root);
    tr_candidate *ev = &q->cl[*root].ev;
    merge_event(ev, pe);
    update_check(q, ev);
    return TR_OK;
}

/* One peak (the event pe of one member), or in summary mode a run of one
 * channel's peaks that link among themselves (pe merges them; it links as
 * its first member, at pe->first); prev: the channel of the previous peak of
 * the same position (NONE for the first). */
static tr_status add_peak(tr_candidates *q, const tr_candidate *pe, uint32_t prev)
{
    const int64_t p = pe->first;
    const uint32_t c = pe->channel, w = pe->width;
    q->peaks += pe->members;
    /* The set the peak joins: the first friend's, united with every other
     * friend's; a peak without friends opens a cluster of its own. */
    uint32_t root = NONE;
    const uint32_t lc = q->cfg.link_chan;
    const uint32_t c0 = c > lc ? c - lc : 0;
    const uint32_t c1 = (uint64_t)c + lc < q->cfg.nchan ? c + lc : q->cfg.nchan - 1;
    const int64_t lt = (int64_t)q->cfg.link_time;
    if (q->summary) {
        /* Any widths link: after each peak, every peak of channels c0..c1 that
         * can still link is in the peak's set (the rest can never link
         * again), so per channel one set and the largest end say it all.
         * A previous peak of this position within link_chan covered the
         * channels up to prev + link_chan already and is a friend: join its
         * set and look only past them, so that a position costs
         * O(channels + peaks), not O(peaks x link_chan). */
        uint64_t from = c0;
        if (prev != NONE && (uint64_t)prev + lc >= c) {
            root = find(q, q->ch[prev].sid);
            from = (uint64_t)prev + lc + 1;
        }
        if (from <= c1) q->visits += c1 - from + 1;
        for (uint64_t cc = from; cc <= c1; cc++) {
            chan_t *ch = &q->ch[cc];
            if (!ch->has) continue;
            if (q->cl[ch->sid].gen != ch->sgen || ch->max_end + lt < p) {
                ch->has = 0; /* its set was closed, or no peak is active */
                continue;
            }
            root = join(q, root, find(q, ch->sid));
        }
        const tr_status st = add_to(q, &root, pe);
        if (st != TR_OK) return st;
        chan_t *ch = &q->ch[c];
        const int64_t end = pe->end;
        if (!ch->has || end > ch->max_end) ch->max_end = end;
        ch->has = 1;
        ch->sid = root;
        ch->sgen = q->cl[root].gen;
        return TR_OK;
    }
    q->visits += (uint64_t)(c1 - c0) + 1;
    for (uint32_t cc = c0; cc <= c1; cc++) {
        chan_t *ch = &q->ch[cc];
        for (uint32_t i = 0; i < ch->n;) {
            entry_t *e = &ch->e[i];
            if (e->end + lt < p || q->cl[e->id].gen != e->gen) {
                /* inactive for good, or its event was closed: drop */
                ch->e[i] = ch->e[--ch->n];
                continue;
            }
            if (widths_link(q, e->width, w)) root = join(q, root, find(q, e->id));
            i++;
        }
    }
    const tr_status st = add_to(q, &root, pe);
    if (st != TR_OK) return st;
    /* remember the peak in its channel: replaces the entry of the same width */
    chan_t *ch = &q->ch[c];
    for (uint32_t i = 0; i < ch->n; i++)
        if (ch->e[i].width == w) {
            ch->e[i].end = p + (int64_t)w;
            ch->e[i].id = root;
            ch->e[i].gen = q->cl[root].gen;
            return TR_OK;
        }
    size_t cap = ch->cap;
    if (!grow((void **)&ch->e, &cap, (size_t)ch->n + 1, sizeof(entry_t)))
        return TR_ERR_NOMEM;
    ch->cap = (uint32_t)cap;
    ch->e[ch->n].width = w;
    ch->e[ch->n].id = root;
    ch->e[ch->n].end = p + (int64_t)w;
    ch->e[ch->n].gen = q->cl[root].gen;
    ch->n++;
    return TR_OK;
}

/* ---- scan for the next peak ---------------------------------------------- */

/* Index of the first of x[0 .. n) that is >= thr (NaN never is), or n. */
typedef size_t (*scan_fn)(const float *x, size_t n, float thr);

static size_t scan_generic(const float *x, size_t n, float thr)
{
    size_t i = 0;
    /* blocks of 16 without an early exit (vectorisable), then the exact one */
    for (; i + 16 <= n; i += 16) {
        int any = 0;
        for (size_t j = 0; j < 16; j++)
            any |= x[i + j] >= thr;
        if (any) break;
    }
    for (; i < n; i++)
        if (x[i] >= thr) return i;
    return n;
}

#ifdef TR_X86
TR_AVX2 static size_t scan_avx2(const float *x, size_t n, float thr)
{
    const __m256 t = _mm256_set1_ps(thr);
    size_t i = 0;
    for (; i + 32 <= n; i += 32) {
        /* ordered >=: false for NaN */
        const __m256 a = _mm256_cmp_ps(_mm256_loadu_ps(x + i), t, _CMP_GE_OQ);
        const __m256 b = _mm256_cmp_ps(_mm256_loadu_ps(x + i + 8), t, _CMP_GE_OQ);
        const __m256 c = _mm256_cmp_ps(_mm256_loadu_ps(x + i + 16), t, _CMP_GE_OQ);
        const __m256 d = _mm256_cmp_ps(_mm256_loadu_ps(x + i + 24), t, _CMP_GE_OQ);
        if (_mm256_movemask_ps(_mm256_or_ps(_mm256_or_ps(a, b), _mm256_or_ps(c, d)))) {
            const unsigned m = (unsigned)_mm256_movemask_ps(a) |
                               (unsigned)_mm256_movemask_ps(b) << 8 |
                               (unsigned)_mm256_movemask_ps(c) << 16 |
                               (unsigned)_mm256_movemask_ps(d) << 24;
            return i + (size_t)__builtin_ctz(m);
        }
    }
    for (; i + 8 <= n; i += 8) {
        const int m =
            _mm256_movemask_ps(_mm256_cmp_ps(_mm256_loadu_ps(x + i), t, _CMP_GE_OQ));
        if (m) return i + (size_t)__builtin_ctz((unsigned)m);
    }
    for (; i < n; i++)
        if (x[i] >= thr) return i;
    return n;
}
#endif

typedef struct {
    tr_simd_kernel info;
    scan_fn scan; /* NULL: the per-position loop (reference) */
} kernel_t;

static const kernel_t kernels[] = {
    {{"generic", 0, 0}, scan_generic},
    {{"reference", 0, 1}, NULL},
#ifdef TR_X86
    {{"avx2", TR_CPU_AVX2, 0}, scan_avx2},
#endif
};
static tr_simd_table table = TR_SIMD_TABLE(kernels);

static const void *current_kernel(void)
{
    return tr_simd_get(&table);
}

static int kernel_scans(const void *k)
{
    return ((const kernel_t *)k)->scan != NULL;
}

int tr_candidates_select(const char *name)
{
    return tr_simd_select(&table, name);
}

const char *tr_candidates_kernel(void)
{
    return ((const kernel_t *)tr_simd_get(&table))->info.name;
}

/* ---- process ----------------------------------------------------------- */

/* The peaks of input position k (position p). */
static tr_status add_position(tr_candidates *q, const float *snr, const int32_t *width,
                              size_t k, int64_t p)
{
    const uint32_t C = q->cfg.nchan;
    const float thr = q->cfg.threshold;
    uint32_t prev = NONE;
    for (uint32_t c = 0; c < C; c++) {
        const float s = snr[k * C + c];
        if (!(s >= thr)) continue;
        const int32_t wi = width ? width[k * C + c] : 1;
        const tr_candidate pe = peak_event(p, c, wi < 1 ? 1u : (uint32_t)wi, s);
        const tr_status st = add_peak(q, &pe, prev);
        if (st != TR_OK) return st;
        prev = c;
    }
    return TR_OK;
}

/* Every position in turn: the rules as written (the oracle of the scan). */
static tr_status process_each(tr_candidates *q, const float *snr, const int32_t *width,
                              size_t n)
{
    for (size_t k = 0; k < n; k++) {
        const int64_t p = q->position;
        tr_status st = close_events(q, p, 0);
        if (st == TR_OK) st = add_position(q, snr, width, k, p);
        if (st != TR_OK) return st;
        q->position = p + 1;
    }
    return TR_OK;
}

/* The closes due at positions k .. kp of a call from position base (kp = n:
 * the end of the call), as process_each would make them. */
static tr_status close_until(tr_candidates *q, int64_t base, size_t k, size_t kp,
                             size_t n)
{
    const int64_t last = base + (int64_t)kp - (kp == n ? 1 : 0);
    while (q->next_check <= last) {
        const int64_t p0 = base + (int64_t)k;
        const int64_t p = q->next_check > p0 ? q->next_check : p0;
        q->position = p;
        const tr_status st = close_events(q, p, 0);
        if (st != TR_OK) return st;
    }
    return TR_OK;
}

/*
 * The same sequence with a scan: close_events acts only at positions
 * >= next_check (and sets next_check past the position it ran at), and only
 * positions with a value >= threshold add peaks; the positions in between
 * cost one compare per value.
 */
static tr_status process_scan(tr_candidates *q, const float *snr, const int32_t *width,
                              size_t n, scan_fn scan)
{
    const size_t C = q->cfg.nchan;
    const size_t nv = n * C;
    const int64_t base = q->position;
    size_t k = 0; /* next input position */
    while (k < n) {
        const size_t i = scan(snr + k * C, nv - k * C, q->cfg.threshold);
        const size_t kp = i == nv - k * C ? n : k + i / C; /* next peak position */
        const tr_status sc = close_until(q, base, k, kp, n);
        if (sc != TR_OK) return sc;
        if (kp == n) break;
        const int64_t p = base + (int64_t)kp;
        q->position = p;
        const tr_status st = add_position(q, snr, width, kp, p);
        if (st != TR_OK) return st;
        k = kp + 1;
    }
    q->position = base + (int64_t)n;
    return TR_OK;
}

/* One channel, any widths: the last position of the run that starts at p
 * before the span limit of the set it joins closes it (INT64_MAX without
 * max_span). */
static int64_t span_limit(tr_candidates *q, int64_t p)
{
    if (!q->cfg.max_span) return INT64_MAX;
    const chan_t *ch = &q->ch[0];
    int64_t first = p;
    if (ch->has && q->cl[ch->sid].gen == ch->sgen &&
        ch->max_end + (int64_t)q->cfg.link_time >= p)
        first = q->cl[find(q, ch->sid)].ev.first; /* the set it joins */
    return first + (int64_t)q->cfg.max_span;
}

/* The event of run r (positions from base). */
static tr_candidate run_event(int64_t base, const tr_cuda_cand_run *r)
{
    tr_candidate ev = peak_event(base + r->kb, 0, (uint32_t)r->wb, r->sb);
    ev.first = base + r->k0;
    ev.end = base + r->end;
    ev.members = r->members;
    ev.width_lo = r->wlo;
    ev.width_hi = r->whi;
    return ev;
}

/* Merge the later run r of the channel into ev: its best is the best only
 * with a higher S/N (ties keep the earlier start). */
static void merge_run(tr_candidate *ev, int64_t base, const tr_cuda_cand_run *r)
{
    if (r->sb > ev->snr) {
        ev->start = base + r->kb;
        ev->peak = ev->start + (int64_t)(r->wb - 1) / 2;
        ev->snr = r->sb;
        ev->width = (uint32_t)r->wb;
    }
    if (base + r->end > ev->end) ev->end = base + r->end;
    ev->members += r->members;
    if (r->wlo < ev->width_lo) ev->width_lo = r->wlo;
    if (r->whi > ev->width_hi) ev->width_hi = r->whi;
}

/* Peak i of a call as a run of one. */
static tr_cuda_cand_run run_of_peak(const tr_cuda_cand_peak *pk, uint32_t i)
{
    const uint32_t w = (uint32_t)(pk->w < 1 ? 1 : pk->w);
    const tr_cuda_cand_run one = {pk->k,     pk->k, pk->k, (int32_t)w, pk->s,
                                  pk->k + w, 1u,    w,     w,          i};
    return one;
}

/* What one channel's clustering walks: the runs of a call (r) with one of
 * them replaced by its peaks (each a run of one) where a span limit cuts
 * it, or a call's peaks (pk), each a run of one. */
typedef struct {
    const tr_cuda_cand_run *r;
    const tr_cuda_cand_peak *pk;
    size_t nr, i;                               /* next run (or peak) */
    tr_cuda_cand_run x[TR_CUDA_CAND_RUN_CHUNK]; /* run i as single peaks */
    size_t nx, ix;                              /* x[ix .. nx) left; nx = 0: none */
    tr_cuda_cand_run one;                       /* peak i as a run */
    tr_candidates_run_peaks_fn fetch;
    void *arg;
} run_seq;

static const tr_cuda_cand_run *seq_cur(run_seq *sq)
{
    if (sq->ix < sq->nx) return &sq->x[sq->ix];
    if (sq->i >= sq->nr) return NULL;
    if (!sq->pk) return &sq->r[sq->i];
    sq->one = run_of_peak(&sq->pk[sq->i], (uint32_t)sq->i);
    return &sq->one;
}

static void seq_next(run_seq *sq)
{
    if (sq->ix < sq->nx) {
        if (++sq->ix < sq->nx) return;
        sq->nx = sq->ix = 0; /* run i is used up */
    }
    sq->i++;
}

/* Run i as its peaks, one run each (a span limit never cuts a run of one:
 * the set it joins is open, so the limit lies at or after its start). */
static tr_status seq_split(tr_candidates *q, run_seq *sq)
{
    const tr_cuda_cand_run *r = &sq->r[sq->i];
    tr_cuda_cand_peak pk[TR_CUDA_CAND_RUN_CHUNK];
    if (r->members > TR_CUDA_CAND_RUN_CHUNK)
        return tr_fail(&q->err, TR_ERR_INVALID,
                       "candidates: a run of %u peaks (at most %d)", r->members,
                       TR_CUDA_CAND_RUN_CHUNK);
    tr_error e;
    memset(&e, 0, sizeof e);
    const tr_status st = sq->fetch(sq->arg, r, pk, &e);
    if (st != TR_OK)
        return tr_fail(&q->err, st, "candidates: the peaks of a run: %s", e.message);
    for (uint32_t j = 0; j < r->members; j++)
        sq->x[j] = run_of_peak(&pk[j], r->i0 + j);
    sq->nx = r->members;
    sq->ix = 0;
    return TR_OK;
}

/*
 * One channel, any widths linking: n positions from q->position on. The
 * runs that follow a run and start at most link_time after the largest end
 * before them join the set of the first whatever it links to, and no event
 * closes among them (the set is the channel's only open one) before the
 * span limit of that set, so they go in as one merged peak; a run that the
 * span limit cuts goes in peak by peak (fetch gives its peaks).
 */
static tr_status cluster_runs(tr_candidates *q, run_seq *sq, size_t n)
{
    const int64_t base = q->position;
    const int64_t lt = (int64_t)q->cfg.link_time;
    size_t k = 0; /* next input position */
    while (k < n) {
        const tr_cuda_cand_run *it = seq_cur(sq);
        const size_t kp = it && it->k0 < n ? it->k0 : n; /* next peak position */
        tr_status st = close_until(q, base, k, kp, n);
        if (st != TR_OK) return tr_fail(&q->err, st, "candidates: out of memory");
        if (kp == n) break;
        const int64_t p = base + (int64_t)kp;
        q->position = p;
        const int64_t lim = span_limit(q, p);
        if (base + (int64_t)it->k1 > lim) {
            if ((st = seq_split(q, sq)) != TR_OK) return st;
            continue;
        }
        tr_candidate ev = run_event(base, it);
        size_t last = it->k1;
        seq_next(sq);
        while ((it = seq_cur(sq)) != NULL && it->k0 < n &&
               base + (int64_t)it->k0 <= ev.end + lt && base + (int64_t)it->k0 <= lim) {
            if (base + (int64_t)it->k1 > lim) {
                if ((st = seq_split(q, sq)) != TR_OK) return st;
                continue;
            }
            merge_run(&ev, base, it);
            last = it->k1;
            seq_next(sq);
        }
        st = add_peak(q, &ev, NONE);
        if (st != TR_OK) return tr_fail(&q->err, st, "candidates: out of memory");
        k = last + 1;
    }
    q->position = base + (int64_t)n;
    const tr_status st = close_events(q, q->position, 0);
    if (st != TR_OK) return tr_fail(&q->err, st, "candidates: out of memory");
    return TR_OK;
}

/* tr_candidates_process_peaks for one channel with any widths linking. */
static tr_status process_peak_runs(tr_candidates *q, const tr_cuda_cand_peak *pk,
                                   size_t npk, size_t n)
{
    run_seq sq;
    memset(&sq, 0, sizeof sq);
    sq.pk = pk;
    sq.nr = npk;
    return cluster_runs(q, &sq, n);
}

/*
 * tr_candidates_process_peaks for one channel with any widths linking, from
 * the peaks' runs: a run goes in as the peaks it holds would (each links to
 * the one before it), but where a span limit falls inside a run, fetch
 * gives its peaks and they go in one by one.
 */
tr_status tr_candidates_process_runs(tr_candidates *q, const tr_cuda_cand_run *runs,
                                     size_t nruns, size_t n,
                                     tr_candidates_run_peaks_fn fetch, void *arg)
{
    if (q->cfg.nchan != 1 || !q->summary)
        return tr_fail(&q->err, TR_ERR_INVALID,
                       "candidates: runs need one channel and any widths linking");
    run_seq sq;
    memset(&sq, 0, sizeof sq);
    sq.r = runs;
    sq.nr = nruns;
    sq.fetch = fetch;
    sq.arg = arg;
    return cluster_runs(q, &sq, n);
}

/*
 * process_scan's sequence over peaks found elsewhere (the CUDA selection):
 * pk[0 .. npk) in stream order (k ascending, then channel) among n positions
 * from q->position on.
 */
tr_status tr_candidates_process_peaks(tr_candidates *q, const tr_cuda_cand_peak *pk,
                                      size_t npk, size_t n)
{
    if (q->cfg.nchan == 1 && q->summary) return process_peak_runs(q, pk, npk, n);
    const int64_t base = q->position;
    size_t i = 0; /* next peak */
    size_t k = 0; /* next input position */
    while (k < n) {
        const size_t kp = i < npk && pk[i].k < n ? pk[i].k : n; /* next peak position */
        const tr_status sc = close_until(q, base, k, kp, n);
        if (sc != TR_OK) return tr_fail(&q->err, sc, "candidates: out of memory");
        if (kp == n) break;
        const int64_t p = base + (int64_t)kp;
        q->position = p;
        uint32_t prev = NONE;
        for (; i < npk && pk[i].k == kp; i++) {
            const tr_candidate pe =
                peak_event(p, pk[i].c, pk[i].w < 1 ? 1u : (uint32_t)pk[i].w, pk[i].s);
            const tr_status st = add_peak(q, &pe, prev);
            if (st != TR_OK) return tr_fail(&q->err, st, "candidates: out of memory");
            prev = pk[i].c;
        }
        k = kp + 1;
    }
    q->position = base + (int64_t)n;
    const tr_status st = close_events(q, q->position, 0);
    if (st != TR_OK) return tr_fail(&q->err, st, "candidates: out of memory");
    return TR_OK;
}

#ifdef TR_HAVE_CUDA
static tr_status fetch_run(void *arg, const tr_cuda_cand_run *run, tr_cuda_cand_peak *out,
                           tr_error *err)
{
    return tr_cuda_cand_run_peaks((tr_cuda_cand *)arg, run, out, err);
}

/* Values selected on the device in pieces whose peak positions fit 32 bits,
 * each piece's peaks (or one channel's runs) clustered here. */
static tr_status cuda_process(tr_candidates *q, const float *snr, const int32_t *width,
                              int64_t ld, int64_t k0, size_t n, int channel_major,
                              int on_device, const uint8_t *skip)
{
    const size_t C = q->cfg.nchan;
    /* one channel, any widths: the device merges the peaks into runs, so
     * that few cross PCIe and the host walks few */
    const int runs = C == 1 && q->summary;
    const size_t piece = (size_t)(TR_CUDA_CAND_MAX_VALUES / (int64_t)C);
    for (size_t done = 0; done < n;) {
        const size_t m = n - done < piece ? n - done : piece;
        const tr_cuda_cand_peak *pk = NULL;
        size_t npk = 0;
        /* host values: the piece's own pointer (time-major) */
        const float *s = on_device ? snr : snr + done * C;
        const int32_t *w = on_device || !width ? width : width + done * C;
        const int64_t kk = on_device ? k0 + (int64_t)done : 0;
        tr_status st;
        if (runs) {
            const tr_cuda_cand_run *rn = NULL;
            size_t nrn = 0;
            st = tr_cuda_cand_select_runs(
                (tr_cuda_cand *)q->cuda, s, w, ld, kk, m, channel_major, on_device,
                q->cfg.threshold, skip, q->cfg.link_time, &rn, &nrn, &npk, &q->err);
            if (st == TR_OK)
                st = tr_candidates_process_runs(q, rn, nrn, m, fetch_run, q->cuda);
            if (st != TR_OK) return st;
            done += m;
            continue;
        }
        st = tr_cuda_cand_select((tr_cuda_cand *)q->cuda, s, w, ld, kk, m, channel_major,
                                 on_device, q->cfg.threshold, skip, &pk, &npk, &q->err);
        if (st != TR_OK) return st;
        st = tr_candidates_process_peaks(q, pk, npk, m);
        if (st != TR_OK) return st;
        done += m;
    }
    return TR_OK;
}
#endif

tr_status tr_candidates_process(tr_candidates *q, const float *snr, const int32_t *width,
                                size_t n)
{
    if (!q) return TR_ERR_INVALID;
    if (n == 0) return TR_OK;
    if (!snr)
        return tr_fail(&q->err, TR_ERR_INVALID, "candidates: snr is NULL with n = %zu",
                       n);
#ifdef TR_HAVE_CUDA
    if (q->cuda) return cuda_process(q, snr, width, (int64_t)n, 0, n, 0, 0, NULL);
#endif
    const scan_fn scan = ((const kernel_t *)q->kern)->scan;
    tr_status st =
        scan ? process_scan(q, snr, width, n, scan) : process_each(q, snr, width, n);
    if (st != TR_OK) return tr_fail(&q->err, st, "candidates: out of memory");
    /* the same check the next position would make first: emits earlier,
     * changes nothing in the sequence */
    st = close_events(q, q->position, 0);
    if (st != TR_OK) return tr_fail(&q->err, st, "candidates: out of memory");
    return TR_OK;
}

tr_status tr_candidates_process_device(tr_candidates *q, const float *d_snr,
                                       const int32_t *d_width, size_t n,
                                       int channel_major)
{
    if (!q) return TR_ERR_INVALID;
    if (!q->cuda)
        return tr_fail(&q->err, TR_ERR_UNSUPPORTED,
                       "candidates: device values need the CUDA backend (this object "
                       "runs on the CPU)");
    if (n == 0) return TR_OK;
    if (!d_snr)
        return tr_fail(&q->err, TR_ERR_INVALID, "candidates: snr is NULL with n = %zu",
                       n);
    return tr_candidates_process_device_part(q, d_snr, d_width, (int64_t)n, 0, n,
                                             channel_major, NULL, TR_SRC_CALLER_DEVICE);
}

tr_status tr_candidates_process_device_part(tr_candidates *q, const float *d_snr,
                                            const int32_t *d_width, int64_t ld,
                                            int64_t k0, size_t n, int channel_major,
                                            const uint8_t *skip, int src)
{
    if (!q) return TR_ERR_INVALID;
    if (!q->cuda)
        return tr_fail(&q->err, TR_ERR_UNSUPPORTED,
                       "candidates: device values need the CUDA backend (this object "
                       "runs on the CPU)");
#ifdef TR_HAVE_CUDA
    return cuda_process(
        q, d_snr, d_width, ld, k0, n, channel_major != 0,
        src == TR_SRC_OWN_DEVICE ? TR_SRC_OWN_DEVICE : TR_SRC_CALLER_DEVICE, skip);
#else
    (void)d_snr;
    (void)d_width;
    (void)ld;
    (void)k0;
    (void)n;
    (void)channel_major;
    (void)skip;
    (void)src;
    return TR_ERR_UNSUPPORTED;
#endif
}

tr_status tr_candidates_flush(tr_candidates *q)
{
    if (!q) return TR_ERR_INVALID;
    tr_status st = close_events(q, q->position, 1);
    if (st != TR_OK) return tr_fail(&q->err, st, "candidates: out of memory");
    for (uint32_t c = 0; c < q->cfg.nchan; c++) {
        q->ch[c].n = 0;
        q->ch[c].has = 0;
    }
    q->next_check = INT64_MAX;
    return TR_OK;
}

size_t tr_candidates_read(tr_candidates *q, tr_candidate *out, size_t cap)
{
    if (!q || !out) return 0;
    size_t m = q->qn - q->qhead;
    if (m > cap) m = cap;
    if (m == 0) return 0; /* the queue may not exist yet */
    memcpy(out, q->queue + q->qhead, m * sizeof *out);
    q->qhead += m;
    if (q->qhead == q->qn) q->qhead = q->qn = 0;
    return m;
}

tr_status tr_candidates_set_threshold(tr_candidates *q, float threshold)
{
    if (!q) return TR_ERR_INVALID;
    if (!isfinite(threshold))
        return tr_fail(&q->err, TR_ERR_INVALID, "candidates: threshold must be finite");
    q->cfg.threshold = threshold;
    return TR_OK;
}

float tr_candidates_threshold(const tr_candidates *q)
{
    return q ? q->cfg.threshold : 0.0f;
}

int64_t tr_candidates_closed(const tr_candidates *q)
{
    if (!q) return 0;
    int64_t m = q->position;
    for (uint32_t i = 0; i < q->nopen; i++)
        if (q->cl[q->open[i]].ev.first < m) m = q->cl[q->open[i]].ev.first;
    return m;
}

uint64_t tr_candidates_horizon(const tr_candidates *q)
{
    if (!q) return 0;
    return q->cfg.max_span ? q->cfg.max_span + 1 : UINT64_MAX;
}

size_t tr_candidates_pending(const tr_candidates *q)
{
    return q ? q->qn - q->qhead : 0;
}
size_t tr_candidates_open(const tr_candidates *q)
{
    if (!q) return 0;
    return q->nopen;
}
tr_backend tr_candidates_backend(const tr_candidates *q)
{
    return q && q->cuda ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
}
int64_t tr_candidates_position(const tr_candidates *q)
{
    return q ? q->position : 0;
}
uint64_t tr_candidates_peaks(const tr_candidates *q)
{
    return q ? q->peaks : 0;
}
uint64_t tr_candidates_emitted(const tr_candidates *q)
{
    return q ? q->emitted : 0;
}
const char *tr_candidates_last_error(const tr_candidates *q)
{
    return q ? q->err.message : "candidates: NULL object";
}

uint64_t tr_candidates_visits(const tr_candidates *q)
{
    return q ? q->visits : 0;
}

uint32_t tr_candidates_nchan(const tr_candidates *q)
{
    return q ? q->cfg.nchan : 0;
}
