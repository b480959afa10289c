/*
 * The kernel choice of the boxcar CUDA context: per plan and variant, which
 * kernels run with which parameters, and their launches (FAST: one kernel
 * per call, boxcar_fast.cuh; PAPER: one per BoxDIT iteration or per group of
 * IGRID steps, boxcar_paper.cuh), plus the FAST benchmark knobs.
 *
 * Both variants evaluate exactly the plan's boxcars (the nominal set of
 * <transient/boxcar.h>) and give Y = the best S/N of the boxcars that
 * start at a position, W = its width, first in evaluation order on ties
 * (strict > in the order stage, then width).
 */
#include "boxcar/boxcar_context.cuh"
#include "boxcar/boxcar_fast.cuh"
#include "boxcar/boxcar_paper.cuh"

#include <algorithm>
#include <cmath>
#include <cstdint>

namespace boxcar_cuda
{

/* Threads of the FAST block for tile T: kq positions each, 128 .. 512. */
static int fast_threads(int T, int kq)
{
    return (int)std::min<int64_t>(512, std::max<int64_t>(128, T / kq));
}

static size_t fast_smem_bytes(int T, int kq, int M, int nc, int totpad, int nent)
{
    return (size_t)totpad * 8 + (size_t)skew_len(M + 8) * 4 + (size_t)skew_len(nc) * 4 +
           (size_t)(fast_threads(T, kq) / 32) * skew_len(32 * kq) * 4 + (size_t)nent * 8;
}

/* The FAST layout for tile T: resolution R of the far halo and the stages. */
static void fast_layout(tr_cuda_boxcar *q, int T)
{
    const tr_boxcar_plan &p = q->plan;
    const int64_t E0 = T + q->lat;
    int64_t best_cost = -1;
    for (int R = 1; R <= 32; R *= 2) {
        const int64_t R4 = std::max(R, 4); /* fine items in groups of 4 */
        int64_t maxfine = 0;
        for (uint32_t i = 0; i < p.nstages; i++) {
            const tr_boxcar_stage &s = p.stages[i];
            const bool coarse = R > 1 && s.stride % R == 0 && s.width_first % R == 0 &&
                                (s.nwidths == 1 || s.width_step % R == 0);
            if (!coarse) maxfine = std::max<int64_t>(maxfine, tr_boxcar_stage_last(&s));
        }
        const int64_t E = R > 1 ? (E0 + R4 - 1) / R4 * R4 : E0;
        const int64_t F = std::min(E, (T + maxfine + R4 - 1) / R4 * R4);
        const int64_t Ec = (E - F + 127) / 128 * 128;
        const int64_t M = F + Ec / R;
        const int64_t cost = M + (R > 1 ? (F + Ec) / R : 0);
        if (best_cost < 0 || cost < best_cost) {
            best_cost = cost;
            q->R = R;
            q->F = (int)F;
            q->Ecoarse = R > 1 ? (int)Ec : 0;
            q->M = (int)(R > 1 ? M : E);
            if (R == 1) q->F = (int)E;
            q->nc = R > 1 ? (int)((F + Ec) / R + 1) : 1;
        }
    }
    q->T = T;
    fplan &fp = q->fp;
    fp.n = (int)p.nstages;
    uint32_t widx = 0;
    for (uint32_t i = 0; i < p.nstages; i++) {
        const tr_boxcar_stage &s = p.stages[i];
        fstage &f = fp.s[i];
        const int R = q->R;
        f.st = (int)s.stride;
        f.w0 = (int)s.width_first;
        f.ws = (int)s.width_step;
        f.nw = (int)s.nwidths;
        f.widx = (int)widx;
        f.coarse = R > 1 && s.stride % R == 0 && s.width_first % R == 0 &&
                   (s.nwidths == 1 || s.width_step % R == 0);
        const int sc = f.coarse ? R : 1;
        f.lsc = 0;
        while ((1 << f.lsc) < sc)
            f.lsc++;
        f.stp = f.st / sc;
        f.w0p = f.w0 / sc;
        f.wsp = f.ws / sc;
        f.window = s.nwidths > 1 && s.width_step == s.stride;
        f.lst = 0;
        while ((1 << f.lst) < f.st)
            f.lst++;
        /* the specialised window path: strides 1..8, 8/16/32 widths, fine
         * array, first width - stride a multiple of 8 */
        f.fix = 0;
        f.basep = 0;
        f.kmask = ~kCodeMask;
        const int lgw = f.nw == 8 ? 0 : (f.nw == 16 ? 1 : (f.nw == 32 ? 2 : -1));
        if (f.window && !f.coarse && f.st <= 8 && lgw >= 0 && f.w0 >= f.st &&
            (f.w0 - f.st) % 8 == 0) {
            f.fix = 1 + 3 * f.lst + lgw;
            f.basep = sk(f.w0 - f.st);
        }
        widx += s.nwidths;
    }
    /* Sparse stages: the last stages of the plan whose stride is at least
     * 2 kq (a thread's positions hold at most one of their starts) and does
     * not decrease from one to the next, when q->split; an item takes J
     * starts (4 for window stages where the tile holds at least 4, else 1). */
    fp.sp0 = fp.n;
    while (q->split && fp.sp0 > 0 && fp.s[fp.sp0 - 1].st >= 2 * q->kq &&
           T % fp.s[fp.sp0 - 1].st == 0 &&
           (fp.sp0 == fp.n || fp.s[fp.sp0 - 1].st <= fp.s[fp.sp0].st))
        fp.sp0--;
    fp.nitems = 0;
    fp.nent = 0;
    for (int i = fp.sp0; i < fp.n; i++) {
        fstage &f = fp.s[i];
        const int starts = T / f.st;
        f.J = f.window && starts >= 4 ? 4 : 1;
        f.ioff = fp.nitems;
        f.eoff = fp.nent;
        fp.nitems += starts / f.J;
        fp.nent += starts;
    }
    q->fast_smem =
        fast_smem_bytes(T, q->kq, q->M, q->nc, (int)((q->total + 1) & ~1u), fp.nent);
}

/* Every FAST kernel instance (attributes at create). */
using fast_fn = void (*)(const fast_args, const fplan);
static const fast_fn kFastFns[] = {
    fast_kernel<128, 8, false>,  fast_kernel<128, 8, true>,   fast_kernel<256, 8, false>,
    fast_kernel<256, 8, true>,   fast_kernel<512, 8, false>,  fast_kernel<512, 8, true>,
    fast_kernel<128, 16, false>, fast_kernel<128, 16, true>,  fast_kernel<256, 16, false>,
    fast_kernel<256, 16, true>,  fast_kernel<512, 16, false>, fast_kernel<512, 16, true>};

/* The FAST kernel instance as one macro argument of TR_LAUNCH. */
#define TR_FAST_KERNEL(nt, kq, clip) fast_kernel<nt, kq, clip>

template <int NT, int KQ>
static void launch_fast(bool clip, dim3 grid, size_t smem, cudaStream_t st,
                        const fast_args &a, const fplan &fp)
{
    if (clip)
        TR_LAUNCH(TR_FAST_KERNEL(NT, KQ, true), grid, NT, smem, st, a, fp);
    else
        TR_LAUNCH(TR_FAST_KERNEL(NT, KQ, false), grid, NT, smem, st, a, fp);
}

/* One launch worth of work: n_out outputs from q0, data up to end. */
static tr_status compute_fast(tr_cuda_boxcar *q, const source &src, int64_t q0,
                              int64_t n_out, float *y, int32_t *w, int64_t ldy,
                              tr_error *err)
{
    const cudaStream_t st = q->stream;
    {
        fast_args a{};
        a.src = src;
        a.ldy = ldy;
        a.q0 = q0;
        a.n_out = n_out;
        a.T = q->T;
        a.tile0 = floor_div(q0, q->T) * q->T;
        a.R = q->R;
        a.F = q->F;
        a.M = q->M;
        a.Ecoarse = q->Ecoarse;
        a.nc = q->nc;
        a.lat = (int)q->lat;
        a.total = (int)q->total;
        a.totpad = (int)((q->total + 1) & ~1u);
        a.widths = q->widths;
        a.count = src.fill ? q->count : nullptr;
        const int64_t ntiles = floor_div(q0 + n_out - 1, q->T) - floor_div(q0, q->T) + 1;
        const bool clip = src.end < q0 + n_out + q->lat;
        for (uint32_t c0 = 0; c0 < q->nchan; c0 += kMaxGridY) {
            const uint32_t nc = std::min(kMaxGridY, q->nchan - c0);
            a.src.hist = src.hist + (int64_t)c0 * src.H;
            a.src.x = src.x ? src.x + (int64_t)c0 * src.ldx : nullptr;
            a.src.fill = src.fill ? src.fill + c0 : nullptr;
            a.y = y + (int64_t)c0 * ldy;
            a.w = w ? w + (int64_t)c0 * ldy : nullptr;
            if (q->win_mode) {
                a.mu = q->tmu + (size_t)c0 * q->total;
                a.sigma = q->tsig + (size_t)c0 * q->total;
                a.tabW = q->tabW;
                a.tab0 = q->tab0;
                a.tabn = q->tabn;
                a.tabstride = (int64_t)q->nchan * q->total;
            } else {
                a.mu = q->mu + (size_t)c0 * q->total;
                a.sigma = q->sigma + (size_t)c0 * q->total;
            }
            const dim3 grid((unsigned)ntiles, nc);
            const int nt = fast_threads(q->T, q->kq);
            const size_t sm = q->fast_smem;
            if (q->kq == 16) {
                if (nt == 512)
                    launch_fast<512, 16>(clip, grid, sm, st, a, q->fp);
                else if (nt == 256)
                    launch_fast<256, 16>(clip, grid, sm, st, a, q->fp);
                else
                    launch_fast<128, 16>(clip, grid, sm, st, a, q->fp);
            } else {
                if (nt == 512)
                    launch_fast<512, 8>(clip, grid, sm, st, a, q->fp);
                else if (nt == 256)
                    launch_fast<256, 8>(clip, grid, sm, st, a, q->fp);
                else
                    launch_fast<128, 8>(clip, grid, sm, st, a, q->fp);
            }
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: FAST kernel launch", fail);
        }
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

static tr_status compute_paper(tr_cuda_boxcar *q, const source &src, int64_t q0,
                               int64_t n_out, float *y, int32_t *w, int64_t ldy,
                               tr_error *err)
{
    const cudaStream_t st = q->stream;
    const tr_boxcar_plan &p = q->plan;
    /* The cleaned line [a0, a0 + nl). */
    const int64_t a0 = floor_div(q0, q->Ap) * q->Ap;
    const int64_t u0 = q0 - a0;
    const int64_t nl = (u0 + n_out + q->lend + 2 * q->Ap + q->Ap - 1) / q->Ap * q->Ap;
    const int64_t D = src.end - a0;
    if (nl > q->ldl)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: internal: line too short");
    for (uint32_t c0 = 0; c0 < q->nchan; c0 += kMaxGridY) {
        const uint32_t nc = std::min(kMaxGridY, q->nchan - c0);
        source s = src;
        s.hist = src.hist + (int64_t)c0 * src.H;
        s.x = src.x ? src.x + (int64_t)c0 * src.ldx : nullptr;
        s.fill = src.fill ? src.fill + c0 : nullptr;
        const int64_t off = (int64_t)c0 * q->ldl;
        const float2 *coef = q->coef + (size_t)c0 * q->total;
        float *yc = y + (int64_t)c0 * ldy;
        int32_t *wc = w ? w + (int64_t)c0 * ldy : nullptr;
        {
            const dim3 grid((unsigned)std::min<int64_t>((nl + 255) / 256, 4096), nc);
            TR_LAUNCH(line_kernel, grid, 256, 0, st, s, q->line[0] + off, q->ldl, a0, nl,
                      src.fill ? q->count : nullptr);
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: line kernel launch", fail);
        }
        if (p.algorithm != TR_BOXCAR_IGRID) {
            levels_desc lv{};
            lv.n = (int)p.nstages;
            int64_t yoff = 0;
            for (uint32_t i = 0; i < p.nstages; i++) {
                const int64_t ncov = (nl + ((int64_t)1 << i) - 1) >> i;
                lv.off[i] = yoff;
                lv.ld[i] = ncov;
                yoff += ncov * nc;
            }
            for (uint32_t i = 0; i < p.nstages; i++) {
                const tr_boxcar_stage &sg = p.stages[i];
                const bool last = i + 1 == p.nstages;
                const int B = (int)sg.nwidths;
                const int Bfull = (int)sg.nwidths;
                const int wm = Bfull % 4 == 0 ? 4 : (Bfull % 2 == 0 ? 2 : 1);
                const int bround = (B + wm - 1) / wm * wm;
                const int nout = (kPaperDitThreads - bround) & ~1;
                dit_args a{};
                a.xi = q->line[i & 1] + off;
                a.xnext = last ? nullptr : q->line[(i + 1) & 1] + off;
                a.Xprev = i == 0 ? nullptr : q->X[i & 1] + off;
                a.Xnext = last ? nullptr : q->X[(i + 1) & 1] + off;
                a.Yi = q->Yl + lv.off[i];
                a.Wi = q->Wl + lv.off[i];
                a.ldx = q->ldl;
                a.ldX = q->ldl;
                a.ldY = lv.ld[i];
                a.nx = lv.ld[i];
                a.ncov = lv.ld[i];
                a.nnext = last ? 0 : lv.ld[i + 1];
                a.B = B;
                a.Bfull = Bfull;
                a.lmax_prev = (int)sg.base;
                a.step = (int)sg.stride;
                a.lim = D < (int64_t)sg.base ? -1 : (D - (int64_t)sg.base) >> i;
                a.coef = coef;
                a.total = (int)q->total;
                uint32_t widx = 0;
                for (uint32_t k = 0; k < i; k++)
                    widx += p.stages[k].nwidths;
                a.widx = (int)widx;
                const dim3 grid((unsigned)((a.ncov + nout - 1) / nout), nc);
                if (wm == 4)
                    TR_LAUNCH(paper_dit_kernel<4>, grid, kPaperDitThreads, 0, st, a,
                              nout);
                else if (wm == 2)
                    TR_LAUNCH(paper_dit_kernel<2>, grid, kPaperDitThreads, 0, st, a,
                              nout);
                else
                    TR_LAUNCH(paper_dit_kernel<1>, grid, kPaperDitThreads, 0, st, a,
                              nout);
                TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: BoxDIT kernel launch",
                            fail);
            }
            const dim3 grid((unsigned)std::min<int64_t>((n_out + 255) / 256, 4096), nc);
            TR_LAUNCH(paper_combine_kernel, grid, 256, 0, st, q->Yl, q->Wl, lv, u0, q0,
                      n_out, yc, wc, ldy);
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: combine kernel launch",
                        fail);
        } else {
            const int d = (int)p.depth;
            int lgP = 0;
            while ((1u << lgP) < p.layers)
                lgP++;
            const int e = std::max(lgP, d);
            const int spk = std::min(kPaperSpk, 9 - e);
            ig_args a{};
            a.ldl = q->ldl;
            a.Y = q->Yl + off;
            a.W = q->Wl + off;
            a.D = D;
            a.coef = coef;
            a.total = (int)q->total;
            uint32_t widx = 0;
            for (uint32_t i = 0; i < p.nstages; i++) {
                const tr_boxcar_stage &sg = p.stages[i];
                ig_step &sp = a.steps[i];
                sp.i = (int)i;
                sp.st = (int)sg.stride;
                sp.nw = (int)sg.nwidths;
                sp.ws = (int)sg.width_step;
                sp.D = std::min<int>((int)i, d);
                sp.widx = (int)widx;
                widx += sg.nwidths;
            }
            int src_buf = 0;
            const float *din = q->line[0] + off;
            const int nst = (int)p.nstages;
            for (int i0 = 0; i0 < nst; i0 += spk) {
                const int i1 = std::min(i0 + spk, nst);
                const int r = std::max(0, i0 - e);
                const int rout = std::max(0, i1 - e);
                a.din = din;
                a.r = r;
                a.rout = rout;
                a.i0 = i0;
                a.i1 = i1;
                a.first = i0 == 0;
                a.nin = (nl + ((int64_t)1 << r) - 1) >> r;
                a.ncov = a.nin;
                a.dout = nullptr;
                if (i1 < nst && rout > r) {
                    a.dout = q->line[1 - src_buf] + off;
                    a.nout_next = (nl + ((int64_t)1 << rout) - 1) >> rout;
                }
                const int nout = kPaperIgThreads - (1 << (i1 - r));
                const dim3 grid((unsigned)((a.ncov + nout - 1) / nout), nc);
                const size_t sm = (size_t)(d + 1) * kPaperIgThreads * 4;
                if (d == 1)
                    TR_LAUNCH(paper_ig_kernel<1>, grid, kPaperIgThreads, sm, st, a, nout);
                else if (d == 2)
                    TR_LAUNCH(paper_ig_kernel<2>, grid, kPaperIgThreads, sm, st, a, nout);
                else
                    TR_LAUNCH(paper_ig_kernel<3>, grid, kPaperIgThreads, sm, st, a, nout);
                TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: IGRID kernel launch",
                            fail);
                if (a.dout) {
                    src_buf = 1 - src_buf;
                    din = a.dout;
                }
            }
            const dim3 grid((unsigned)std::min<int64_t>((n_out + 255) / 256, 4096), nc);
            TR_LAUNCH(paper_store_kernel, grid, 256, 0, st, a.Y, a.W, q->ldl, u0, q0,
                      n_out, yc, wc, ldy);
            TR_CUDA_TRY(cudaGetLastError(), err, "boxcar/cuda: store kernel launch",
                        fail);
        }
    }
    tr_clear(err);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

tr_status compute(tr_cuda_boxcar *q, const source &src, int64_t q0, int64_t n_out,
                  float *y, int32_t *w, int64_t ldy, tr_error *err)
{
    if (q->variant == TR_VARIANT_FAST)
        return compute_fast(q, src, q0, n_out, y, w, ldy, err);
    return compute_paper(q, src, q0, n_out, y, w, ldy, err);
}

tr_status check_plan(const tr_cuda_boxcar *q, tr_error *err)
{
    if (q->plan.lend > (1u << 24) || q->A > (1 << 24))
        return tr_fail(err, TR_ERR_UNSUPPORTED, "boxcar/cuda: L_end %u too large",
                       q->plan.lend);
    for (uint32_t i = 0; i < q->plan.nstages; i++)
        if ((q->plan.stages[i].stride & (q->plan.stages[i].stride - 1)) != 0)
            return tr_fail(
                err, TR_ERR_UNSUPPORTED,
                "boxcar/cuda: stage strides must be powers of two (stage %u: %u)", i,
                q->plan.stages[i].stride);
    if (q->variant == TR_VARIANT_PAPER) {
        if (q->plan.algorithm == TR_BOXCAR_IGRID) {
            int lgP = 0;
            while ((1u << lgP) < q->plan.layers)
                lgP++;
            if (std::max<int>(lgP, (int)q->plan.depth) > 8)
                return tr_fail(
                    err, TR_ERR_UNSUPPORTED,
                    "boxcar/cuda: the PAPER IGRID kernels support up to 256 layers");
        } else {
            for (uint32_t i = 0; i < q->plan.nstages; i++)
                if (q->plan.stages[i].nwidths > (uint32_t)kPaperDitThreads - 64)
                    return tr_fail(
                        err, TR_ERR_UNSUPPORTED,
                        "boxcar/cuda: the PAPER BoxDIT kernel supports at most "
                        "%d widths per iteration",
                        kPaperDitThreads - 64);
        }
    }
    return TR_OK;
}

tr_status fast_smem_max(int device, size_t *smem_max, tr_error *err)
{
    int smem_optin = 0;
    size_t stat = 0;
    TR_CUDA_TRY(cudaDeviceGetAttribute(&smem_optin,
                                       cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
                err, "boxcar/cuda: query shared memory", fail);
    for (fast_fn f : kFastFns) {
        cudaFuncAttributes fa;
        TR_CUDA_TRY(cudaFuncGetAttributes(&fa, f), err, "boxcar/cuda: kernel attributes",
                    fail);
        stat = std::max(stat, (size_t)fa.sharedSizeBytes);
    }
    *smem_max = (size_t)smem_optin - stat;
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

tr_status fast_setup(tr_cuda_boxcar *q, tr_error *err)
{
    /* The float prefix sums of a tile carry an absolute error that grows
     * with the tile (about 10 ulp of a random walk over T samples); a
     * small L_end has a tight tolerance (TR_BOXCAR_FAST_TOL), so its tile
     * is at most 32 (8 + sqrt(L_end)) positions; a large L_end takes the
     * next power of two >= L_end (less halo per output), up to 8192; at
     * least 256 and the largest stride, smaller when the shared memory
     * does not hold it. */
    int64_t Tp = 256;
    while (2 * Tp <= 32.0 * (8.0 + std::sqrt((double)q->lend)) && 2 * Tp <= kTileMax)
        Tp *= 2;
    int64_t T = 256;
    while (T < q->lat + 1 && T < kTileMax)
        T *= 2;
    T = std::max<int64_t>(std::max(T, Tp), q->A);
    fast_layout(q, (int)T);
    while (q->fast_smem > q->smem_max && T > q->A && T > 64) {
        T /= 2;
        fast_layout(q, (int)T);
    }
    if (q->fast_smem > q->smem_max)
        return tr_fail(
            err, TR_ERR_UNSUPPORTED,
            "boxcar/cuda: the FAST kernel needs %zu bytes of shared memory for "
            "this plan (at most %zu)",
            q->fast_smem, q->smem_max);
    for (fast_fn f : kFastFns)
        TR_CUDA_TRY(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                         (int)q->smem_max),
                    err, "boxcar/cuda: shared memory limit", fail);
    return TR_OK;
fail:
    return err ? err->code : TR_ERR_CUDA;
}

} // namespace boxcar_cuda

using namespace boxcar_cuda;

extern "C" uint32_t tr_cuda_boxcar_table_granule(const tr_cuda_boxcar *q)
{
    return q && q->variant == TR_VARIANT_FAST ? (uint32_t)q->T : 0;
}

extern "C" tr_status tr_cuda_boxcar_set_tile(tr_cuda_boxcar *q, uint32_t tile,
                                             tr_error *err)
{
    if (!q || q->variant != TR_VARIANT_FAST)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: set_tile needs a FAST context");
    if (tile == 0) tile = kTileMax;
    if ((tile & (tile - 1)) != 0 || (int64_t)tile < q->A || (int)tile > q->Tmax)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: tile must be a power of two in %lld..%d, got %u",
                       (long long)q->A, q->Tmax, tile);
    const int oldT = q->T;
    fast_layout(q, (int)tile);
    if (q->fast_smem > q->smem_max) {
        fast_layout(q, oldT);
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: tile %u needs too much shared memory", tile);
    }
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_boxcar_set_skew(tr_cuda_boxcar *q, int on, tr_error *err)
{
    (void)on; /* the kernel's layout is always the padded one now */
    if (!q || q->variant != TR_VARIANT_FAST)
        return tr_fail(err, TR_ERR_INVALID, "boxcar/cuda: set_skew needs a FAST context");
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_boxcar_set_positions(tr_cuda_boxcar *q, int kq,
                                                  tr_error *err)
{
    if (!q || q->variant != TR_VARIANT_FAST)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: set_positions needs a FAST context");
    if (kq != 8 && kq != 16)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: positions per thread must be 8 or 16, got %d", kq);
    const int old = q->kq;
    q->kq = kq;
    fast_layout(q, q->T);
    if (q->fast_smem > q->smem_max) {
        q->kq = old;
        fast_layout(q, q->T);
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: %d positions per thread need too much shared memory",
                       kq);
    }
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_boxcar_set_split(tr_cuda_boxcar *q, int on, tr_error *err)
{
    if (!q || q->variant != TR_VARIANT_FAST)
        return tr_fail(err, TR_ERR_INVALID,
                       "boxcar/cuda: set_split needs a FAST context");
    q->split = on != 0;
    fast_layout(q, q->T);
    tr_clear(err);
    return TR_OK;
}
