/*
 * S/N normalisation of the boxcar search: the streaming. Samples are cleaned
 * (non-finite ones replaced by the mean in effect), baselines removed, and at
 * each statistics window end the window's summaries and the next window's
 * values computed. Without a baseline the channels are independent, and long
 * calls share them, or the windows that lie entirely in the call, among the
 * object's threads; the results are the same as with one thread.
 *
 * Paper: K. Adamek, W. Armour, "Single Pulse Detection Algorithms for
 * Real-time Fast Radio Burst Searches using GPUs" (ApJS 247:56, 2020),
 * section 4.6.2.
 */
#include "boxcar/norm/norm_internal.h"

#include "common/core_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Scratch of job t of a call (jobs run at the same time on the pool): the
 * object's own for job 0, else a part of tmem, which exists whenever there are
 * several jobs (statistics measured, nthr > 1). */
static tr_norm_scratch job_scratch(const tr_boxcar_norm *q, uint32_t t)
{
    tr_norm_scratch sc = {q->scratch, q->prefix, q->pbad};
    if (t > 0 && q->tmem) {
        const size_t W = q->cfg.window;
        double *m = q->tmem + (size_t)(t - 1) * (3 * W + 3);
        sc.scratch = m;
        sc.prefix = m + W;
        sc.pbad = (uint32_t *)(m + 2 * W + 1);
    }
    return sc;
}

/* One job of a call without baseline removal: channels c0 .. c1-1
 * of n samples from q->position on. */
typedef struct {
    tr_boxcar_norm *q;
    const float *x;
    float *y;
    size_t n;
    uint32_t c0, c1;
    tr_norm_scratch sc;
    uint64_t nonfinite, rejected;
} norm_job;

/*
 * Runs of samples inside one statistics window (the values in effect, hence
 * the replacement of a non-finite sample, are the same for all of them),
 * channel by channel in blocks of kBlk samples (the block of x stays in
 * cache); at each window end the summaries and the next window's values of
 * these channels. The same results as the general loop of
 * tr_boxcar_norm_process. Writes only the channels' own state.
 */
static void fast_channels(norm_job *jb)
{
    enum { kBlk = 512 };
    tr_boxcar_norm *q = jb->q;
    const uint32_t C = q->nchan;
    const uint64_t W = q->measure ? q->cfg.window : 0;
    const size_t S = BUF_STRIDE(W);
    uint64_t pos = q->position;
    size_t k = 0;
    while (k < jb->n) {
        const uint64_t p0 = pos;
        size_t run = jb->n - k;
        if (W && run > W - p0 % W) run = (size_t)(W - p0 % W);
        for (size_t b0 = 0; b0 < run; b0 += kBlk) {
            const size_t bn = run - b0 < kBlk ? run - b0 : kBlk;
            for (uint32_t c = jb->c0; c < jb->c1; c++) {
                const float *xs = jb->x + (k + b0) * C + c;
                float *ys = jb->y + (k + b0) * C + c;
                float *bk = W ? q->buf + (size_t)c * S + (p0 + b0) % W : NULL;
                for (size_t i = 0; i < bn; i++) {
                    const float v = xs[i * C];
                    if (isfinite(v)) {
                        ys[i * C] = v;
                        if (bk) bk[i] = v;
                    } else {
                        jb->nonfinite++;
                        ys[i * C] = (float)tr_norm_mean_at(q, p0, c);
                        if (bk) bk[i] = NAN;
                    }
                }
            }
        }
        pos = p0 + run;
        if (W && pos % W == 0) {
            const uint64_t j = p0 / W;
            tr_norm_summarise_ch(q, j, (uint32_t)W, jb->c0, jb->c1, &jb->sc,
                                 &jb->rejected);
            tr_norm_window_end_ch(q, j, jb->c0, jb->c1);
        }
        k += run;
    }
}

static void fast_channels_task(void *arg, size_t t)
{
    fast_channels((norm_job *)arg + t);
}

/* Samples [position, position + n) without baseline removal: threads share
 * the channels (long calls). */
static void channel_segment(tr_boxcar_norm *q, const float *x, float *y, size_t n)
{
    const uint32_t C = q->nchan;
    const uint64_t W = q->measure ? q->cfg.window : 0;
    if (n == 0) return;
    /* No baseline: the channels are independent; with several threads
     * each takes a range of them (the same results as one). */
    uint32_t T = q->nthr < C ? q->nthr : C;
    /* threads only where the statistics make the work worth their start */
    if (!q->measure || (uint64_t)n * C < ((uint64_t)1 << 17)) T = 1;
    if (W) /* windows that complete in this call (see fast_channels) */
        for (uint64_t j = q->position / W; (j + 1) * W <= q->position + n; j++) {
            q->sum_valid[(size_t)(j % q->cfg.history)] = 1;
            if (j == 0 && q->cfg.first_own) q->first_n = W;
        }
    norm_job jobs[TR_BOXCAR_NORM_MAX_THREADS];
    for (uint32_t t = 0; t < T; t++) {
        norm_job *jb = &jobs[t];
        jb->q = q;
        jb->x = x;
        jb->y = y;
        jb->n = n;
        jb->c0 = (uint32_t)((uint64_t)C * t / T);
        jb->c1 = (uint32_t)((uint64_t)C * (t + 1) / T);
        jb->nonfinite = jb->rejected = 0;
        jb->sc = job_scratch(q, t);
    }
    tr_pool_run(q->pool, fast_channels_task, jobs, T);
    for (uint32_t t = 0; t < T; t++) {
        q->nonfinite += jobs[t].nonfinite;
        q->rejected += jobs[t].rejected;
    }
    q->position += n;
}

/* One job's tasks of window_segment: task t = window t / C, channel t % C
 * of the m windows at x. Phase 0: summaries into tmp; phase 1: cleaned
 * samples (the values in effect are known by then). */
typedef struct {
    tr_boxcar_norm *q;
    const float *x;
    float *y;
    uint64_t j0;
    size_t t0, t1;
    int phase;
    acc_t *tmp;
    tr_norm_scratch sc;
    uint64_t rejected, nonfinite;
} win_job;

static void win_tasks(win_job *jb)
{
    tr_boxcar_norm *q = jb->q;
    const uint32_t C = q->nchan, L = q->nlev;
    const size_t W = q->cfg.window;
    for (size_t t = jb->t0; t < jb->t1; t++) {
        const size_t jw = t / C;
        const uint32_t c = (uint32_t)(t % C);
        const float *src = jb->x + jw * W * C + c;
        if (jb->phase == 0) {
            tr_norm_summarise_one(q, src, C, (uint32_t)W, jb->tmp + (jw * C + c) * L,
                                  &jb->sc, &jb->rejected);
            continue;
        }
        float *dst = jb->y + jw * W * C + c;
        for (size_t i = 0; i < W; i++) {
            const float v = src[i * C];
            if (isfinite(v)) {
                dst[i * C] = v;
            } else {
                jb->nonfinite++;
                dst[i * C] = (float)tr_norm_mean_at(q, (jb->j0 + jw) * W, c);
            }
        }
    }
}

static void win_tasks_task(void *arg, size_t t)
{
    win_tasks((win_job *)arg + t);
}

/* Run phase `phase` of the m * C tasks on up to nthr threads. */
static void win_run(tr_boxcar_norm *q, win_job *base, size_t m, int phase)
{
    const size_t tasks = m * q->nchan;
    uint32_t T = q->nthr;
    if (T > tasks) T = (uint32_t)tasks;
    win_job jobs[TR_BOXCAR_NORM_MAX_THREADS];
    for (uint32_t t = 0; t < T; t++) {
        jobs[t] = *base;
        jobs[t].phase = phase;
        jobs[t].t0 = tasks * t / T;
        jobs[t].t1 = tasks * (t + 1) / T;
        jobs[t].rejected = jobs[t].nonfinite = 0;
        jobs[t].sc = job_scratch(q, t);
    }
    tr_pool_run(q->pool, win_tasks_task, jobs, T);
    for (uint32_t t = 0; t < T; t++) {
        base->rejected += jobs[t].rejected;
        base->nonfinite += jobs[t].nonfinite;
    }
}

/*
 * The m >= 1 windows j0 .. j0 + m - 1 that start at position = j0 W and lie
 * entirely in x: their summaries in parallel (read from x, as tr_norm_summarise_ch
 * reads them from buf), then in order what the window ends do (summaries into
 * their slots, the values in effect of the next window), then the cleaned
 * samples in parallel. m + 1 <= E - 1, so the values of every window of the
 * segment are still kept for the cleaning. Returns 0 (nothing done) when the
 * scratch cannot be had.
 */
static int window_segment(tr_boxcar_norm *q, const float *x, float *y, size_t m)
{
    const uint32_t C = q->nchan, L = q->nlev, H = q->cfg.history;
    const uint64_t W = q->cfg.window, j0 = q->position / W;
    acc_t *tmp = (acc_t *)malloc(m * C * L * sizeof(acc_t));
    if (!tmp) return 0;
    win_job base;
    memset(&base, 0, sizeof base);
    base.q = q;
    base.x = x;
    base.y = y;
    base.j0 = j0;
    base.tmp = tmp;
    win_run(q, &base, m, 0);
    for (size_t jw = 0; jw < m; jw++) {
        const uint64_t j = j0 + jw;
        const size_t slot = (size_t)(j % H);
        q->sum_valid[slot] = 1;
        memcpy(q->sum + (size_t)slot * C * L, tmp + jw * C * L,
               (size_t)C * L * sizeof(acc_t));
        tr_norm_window_end_ch(q, j, 0, C);
        if (j == 0 && q->cfg.first_own) q->first_n = W;
    }
    win_run(q, &base, m, 1);
    q->rejected += base.rejected;
    q->nonfinite += base.nonfinite;
    q->position += m * W;
    free(tmp);
    return 1;
}

tr_status tr_boxcar_norm_process(tr_boxcar_norm *q, const float *x, size_t n, float *y)
{
    if (!q) return TR_ERR_INVALID;
    if (q->finished)
        return tr_fail(&q->err, TR_ERR_STATE,
                       "boxcar_norm: the stream was finished; reset before new samples");
    if (n == 0) return TR_OK;
    if (!x || !y)
        return tr_fail(&q->err, TR_ERR_INVALID, "boxcar_norm: NULL buffer with n = %zu",
                       n);
    const uint32_t C = q->nchan;
    const uint64_t W = q->measure ? q->cfg.window : 0;
    if (!q->bl_n && !q->bb_n) {
        /* No baseline. Several statistics windows in one call and fewer
         * channels than threads: the windows that lie entirely in the call
         * are summarised in parallel (window_segment); otherwise threads
         * share the channels (channel_segment). The same results as one
         * thread. */
        size_t k = 0;
        if (W && q->nthr > C && q->nthr > 1) {
            const size_t head = q->position % W ? (size_t)(W - q->position % W) : 0;
            if (head < n && (n - head) / W >= 2 &&
                (uint64_t)(n - head) * C >= ((uint64_t)1 << 17)) {
                channel_segment(q, x, y, head);
                k = head;
                size_t m = (n - head) / W;
                const size_t cap =
                    q->E > 3 ? q->E - 2 : 1; /* values of the windows kept */
                while (m > 0) {
                    const size_t mm = m < cap ? m : cap;
                    if (!window_segment(q, x + k * C, y + k * C, mm)) break;
                    k += mm * W;
                    m -= mm;
                }
            }
        }
        channel_segment(q, x + k * C, y + k * C, n - k);
        return TR_OK;
    }
    for (size_t k = 0; k < n; k++) {
        const uint64_t p = q->position;
        const float *xk = x + k * C;
        float *yk = y + k * C;
        float *bk = q->measure ? q->buf + p % W : NULL; /* channel c at bk[c * S] */
        const size_t S = BUF_STRIDE(W);
        /* block-median baseline: p ends a block */
        const int bend = q->bb_n && (p + 1) % (q->cfg.baseline_window / BB_BLOCKS) == 0;
        for (uint32_t c = 0; c < C; c++) {
            float v = xk[c];
            const int fin = isfinite(v);
            if (q->bl_n) {
                const float b = tr_norm_median_push(q, c, p, fin ? v : NAN);
                if (fin) v = v - b;
            } else if (q->bb_n) {
                const float b = tr_norm_block_median_push(q, c, p, bend, fin ? v : NAN);
                if (fin) v = v - b;
            }
            if (fin) {
                yk[c] = v;
            } else {
                q->nonfinite++;
                yk[c] = (float)tr_norm_mean_at(q, p, c);
                v = NAN;
            }
            if (bk) bk[(size_t)c * S] = v;
        }
        q->position = p + 1;
        if (W && q->position % W == 0) {
            const uint64_t j = p / W;
            tr_norm_summarise_window(q, j, (uint32_t)W);
            tr_norm_window_end_ch(q, j, 0, C);
            if (j == 0 && q->cfg.first_own) q->first_n = W;
        }
    }
    return TR_OK;
}

tr_status tr_boxcar_norm_finish(tr_boxcar_norm *q)
{
    if (!q) return TR_ERR_INVALID;
    const uint64_t n = q->position;
    if (q->measure && q->cfg.first_own && n > 0 && n < q->cfg.window) {
        /* window 0 incomplete: its own values from the n samples in buf */
        tr_norm_summarise_window(q, 0, (uint32_t)n);
        tr_norm_window_end_ch(q, 0, 0, q->nchan);
        q->first_n = n;
    }
    q->finished = 1;
    return TR_OK;
}
