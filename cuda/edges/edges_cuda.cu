/*
 * Edge localizer, CUDA fast variant: one pass over the samples.
 *
 * Khambadkar, Barford and Harris run classify, level scan, segmented min-scan
 * and compaction as separate passes, each reading and writing whole arrays. Here
 * every sample is read once: each thread summarises ITEMS samples held in
 * registers (cuda/edges/edges_scan.cuh), a CUB block scan with decoupled look-back
 * across tiles (cub::TilePrefixCallbackOp) gives each thread the exact stream
 * state before its first sample, and the few threads whose samples confirm a
 * transition replay them from registers and write the transitions at their final
 * position in stream order: deterministic, no atomics, no sort.
 */
#include "common/cuda_check.h"
#include "common/cuda_raii.cuh"
#include "common/host_stager.cuh"
#include "edges/edges_cuda.h"
#include "edges/edges_scan.cuh"

#include <cub/agent/single_pass_scan_operators.cuh>

#include <memory>
#include <new>

namespace
{

/* Tile shape (see edges_mask_kernel): warps per block, 1024-sample sets per warp,
 * loads in flight per lane, resident blocks per SM. Measured on an H100 at 2^28
 * samples (docs/edges.md): 16 warps x 1 set with 16 loads in flight and 3
 * blocks per SM (40 registers) beat 8 or 32 warps, 2 or 4 sets, 8 or 32 loads. */
constexpr int kWarps = 16;
constexpr int kSets = 1;
constexpr int kChunk = 16;
constexpr int kMinBlocks = 3;
constexpr int kBlock = 32 * kWarps;
constexpr int kTile = kBlock * 32 * kSets;
constexpr unsigned kFull = 0xffffffffu;

using TileState = cub::ScanTileState<uint64_t>; /* packed summaries */
using PrefixOp = cub::TilePrefixCallbackOp<uint64_t, tr_edge_packed_op, TileState>;

__global__ void init_tiles(TileState state, int tiles)
{
    state.InitializeStatus(tiles);
}

__device__ __forceinline__ tr_edge_summary shfl_up(const tr_edge_summary &s, int d)
{
    tr_edge_summary r;
    r.pre_rise = __shfl_up_sync(kFull, s.pre_rise, d);
    r.pre_fall = __shfl_up_sync(kFull, s.pre_fall, d);
    r.tail = __shfl_up_sync(kFull, s.tail, d);
    r.count = __shfl_up_sync(kFull, s.count, d);
    r.first = (int8_t)__shfl_up_sync(kFull, (int)s.first, d);
    r.last = (int8_t)__shfl_up_sync(kFull, (int)s.last, d);
    r.pad[0] = r.pad[1] = 0;
    return r;
}

/* Exclusive scan across the warp (lane 0 gets the identity); *all = total. */
__device__ __forceinline__ tr_edge_summary warp_exclusive(tr_edge_summary s, int lane,
                                                          tr_edge_summary *all)
{
    const tr_edge_summary_op op;
#pragma unroll
    for (int d = 1; d < 32; d <<= 1) {
        const tr_edge_summary o = shfl_up(s, d);
        if (lane >= d) s = op(o, s);
    }
    all->pre_rise = __shfl_sync(kFull, s.pre_rise, 31);
    all->pre_fall = __shfl_sync(kFull, s.pre_fall, 31);
    all->tail = __shfl_sync(kFull, s.tail, 31);
    all->count = __shfl_sync(kFull, s.count, 31);
    all->first = (int8_t)__shfl_sync(kFull, (int)s.first, 31);
    all->last = (int8_t)__shfl_sync(kFull, (int)s.last, 31);
    all->pad[0] = all->pad[1] = 0;
    const tr_edge_summary e = shfl_up(s, 1);
    return lane == 0 ? tr_edge_summary_empty() : e;
}

/*
 * One tile per block: WARPS warps, each owning SETS x 1024 consecutive samples.
 * In a set, lane l owns group l (32 samples): it reads sample l of every group
 * (coalesced) and ballots turn them into the group masks. Summaries are
 * scanned across lanes (shuffles), sets (in order), warps (shared memory) and
 * tiles (CUB decoupled look-back); lanes whose group confirms a transition
 * replay it from the masks.
 */
template <int WARPS, int SETS, int CHUNK, int MIN_BLOCKS>
__global__ void __launch_bounds__(32 * WARPS, MIN_BLOCKS)
    edges_mask_kernel(const float *__restrict__ x, int32_t n, tr_edges_lv lv,
                      const tr_edges_carry *__restrict__ cin,
                      tr_edges_carry *__restrict__ cout, tr_edge *__restrict__ out,
                      int64_t cap, tr_edge *__restrict__ stop,
                      unsigned long long *__restrict__ count, TileState tiles)
{
    __shared__ typename PrefixOp::TempStorage prefix_smem;
    __shared__ tr_edge_summary set_sum[WARPS][SETS]; /* set aggregates, then prefixes */
    __shared__ tr_edge_summary warp_sum[WARPS];
    __shared__ tr_edge_summary tile_prefix, tile_total;

    const int tile = blockIdx.x, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int32_t wbase = (tile * WARPS + warp) * (SETS * 1024);
    const tr_edges_carry c = *cin; /* read before this tile publishes anything */
    const tr_edge_summary_op op;

    /* Sample before the warp's first: the carry at the start of the stream. */
    uint32_t last_lt, last_ge;
    {
        const bool has = wbase > 0 || c.has_prev;
        const float xp =
            wbase > 0 ? (wbase - 1 < n ? __ldg(x + wbase - 1) : 0.0f) : c.x_prev;
        const bool fin = has && tr_edges_finite(xp);
        last_lt = fin && xp < lv.mid;
        last_ge = fin && xp >= lv.mid;
    }
    tr_edge_group grp[SETS];
    tr_edge_summary wsum = tr_edge_summary_empty();
#pragma unroll
    for (int q = 0; q < SETS; q++) {
        const int32_t sbase = wbase + q * 1024;
        /* 32 coalesced loads per lane, CHUNK in flight at a time (registers
         * against memory parallelism); padding is NaN (intermediate, no crossing). */
        uint32_t lo = 0, hi = 0, lt = 0, ge = 0;
#pragma unroll
        for (int g0 = 0; g0 < 32; g0 += CHUNK) {
            float v[CHUNK];
#pragma unroll
            for (int i = 0; i < CHUNK; i++) {
                const int32_t j = sbase + 32 * (g0 + i) + lane;
                v[i] = j < n ? __ldg(x + j) : __int_as_float(0x7fc00000);
            }
#pragma unroll
            for (int i = 0; i < CHUNK; i++) {
                const bool fin = tr_edges_finite(v[i]);
                const uint32_t blo = __ballot_sync(kFull, fin && v[i] <= lv.low);
                const uint32_t bhi = __ballot_sync(kFull, fin && v[i] >= lv.high);
                const uint32_t blt = __ballot_sync(kFull, fin && v[i] < lv.mid);
                const uint32_t bge = __ballot_sync(kFull, fin && v[i] >= lv.mid);
                if (lane == g0 + i) {
                    lo = blo;
                    hi = bhi;
                    lt = blt;
                    ge = bge;
                }
            }
        }
        /* The pair ending at bit 0 starts at the last sample of the group before. */
        uint32_t prev_lt = __shfl_up_sync(kFull, lt >> 31, 1);
        uint32_t prev_ge = __shfl_up_sync(kFull, ge >> 31, 1);
        if (lane == 0) {
            prev_lt = last_lt;
            prev_ge = last_ge;
        }
        last_lt = __shfl_sync(kFull, lt >> 31, 31);
        last_ge = __shfl_sync(kFull, ge >> 31, 31);
        grp[q].lo = lo;
        grp[q].hi = hi;
        grp[q].rise = ge & ((lt << 1) | prev_lt);
        grp[q].fall = lt & ((ge << 1) | prev_ge);
        tr_edge_summary sall;
        warp_exclusive(tr_edges_group_summary(grp[q], sbase + 32 * lane), lane, &sall);
        if (lane == 0) set_sum[warp][q] = wsum; /* exclusive prefix of the set */
        wsum = op(wsum, sall);
    }
    if (lane == 0) warp_sum[warp] = wsum;
    __syncthreads();
    if (warp == 0) {
        tr_edge_summary agg;
        const tr_edge_summary ws =
            lane < WARPS ? warp_sum[lane] : tr_edge_summary_empty();
        const tr_edge_summary wex = warp_exclusive(ws, lane, &agg);
        if (lane < WARPS) warp_sum[lane] = wex;
        if (tile == 0) {
            if (lane == 0) {
                tile_prefix = tr_edge_summary_carry(c);
                tile_total = op(tile_prefix, agg);
                if (gridDim.x > 1)
                    tiles.SetInclusive(0, tr_edge_summary_pack(tile_total));
            }
        } else {
            PrefixOp prefix(tiles, prefix_smem, tr_edge_packed_op(), tile);
            const tr_edge_summary ex =
                tr_edge_summary_unpack(prefix(tr_edge_summary_pack(agg)));
            if (lane == 0) {
                tile_prefix = ex;
                tile_total = op(ex, agg);
            }
        }
    }
    __syncthreads();

    const tr_edge_summary wpre = op(tile_prefix, warp_sum[warp]);
#pragma unroll
    for (int q = 0; q < SETS; q++) {
        const int32_t gbase = wbase + q * 1024 + 32 * lane;
        const tr_edge_summary s = tr_edges_group_summary(grp[q], gbase);
        tr_edge_summary unused;
        const tr_edge_summary pre =
            op(op(wpre, set_sum[warp][q]), warp_exclusive(s, lane, &unused));
        if (gbase < n && tr_edges_group_emits(pre, s)) {
            tr_edges_group_replay(grp[q], gbase, pre, x, c, lv,
                                  [&](uint32_t k, const tr_edge &e) {
                                      if ((int64_t)k < cap)
                                          out[k] = e;
                                      else if ((int64_t)k == cap && stop)
                                          *stop = e;
                                  });
        }
    }

    if (tile == gridDim.x - 1 && threadIdx.x == 0) {
        *cout = tr_edges_summary_carry_out(tile_total, x, n, lv, c);
        *count = tile_total.count;
    }
}

} // namespace

extern "C" int tr_cuda_edges_fast_launch(const float *d_x, int64_t n, tr_edges_lv lv,
                                         const tr_edges_carry *d_cin,
                                         tr_edges_carry *d_cout, tr_edge *d_out,
                                         int64_t cap, tr_edge *d_stop,
                                         unsigned long long *d_count, void *d_temp,
                                         size_t *temp_bytes, void *stream)
{
    cudaStream_t s = (cudaStream_t)stream;
    if (n < 0 || n > TR_PACK_MAX_SAMPLES) return (int)cudaErrorInvalidValue;
    const int tiles = (int)((n + kTile - 1) / kTile);
    size_t need = 0;
    cudaError_t e = TileState::AllocationSize(tiles > 0 ? tiles : 1, need);
    if (e != cudaSuccess) return (int)e;
    if (!d_temp) {
        *temp_bytes = need;
        return (int)cudaSuccess;
    }
    if (*temp_bytes < need) return (int)cudaErrorInvalidValue;
    if (n == 0) {
        /* Nothing to scan: the state passes through. */
        if ((e = cudaMemcpyAsync(d_cout, d_cin, sizeof *d_cout, cudaMemcpyDeviceToDevice,
                                 s)))
            return (int)e;
        return (int)cudaMemsetAsync(d_count, 0, sizeof *d_count, s);
    }
    TileState state;
    if ((e = state.Init(tiles, d_temp, *temp_bytes)) != cudaSuccess) return (int)e;
    init_tiles<<<(tiles + 255) / 256, 256, 0, s>>>(state, tiles);
    if ((e = cudaGetLastError()) != cudaSuccess) return (int)e;
    edges_mask_kernel<kWarps, kSets, kChunk, kMinBlocks><<<tiles, kBlock, 0, s>>>(
        d_x, (int32_t)n, lv, d_cin, d_cout, d_out, cap, d_stop, d_count, state);
    return (int)cudaGetLastError();
}

/* ---- context: buffers, stream and the host/device entry points ---------- */

typedef int (*launch_fn)(const float *, int64_t, tr_edges_lv, const tr_edges_carry *,
                         tr_edges_carry *, tr_edge *, int64_t, tr_edge *,
                         unsigned long long *, void *, size_t *, void *);

/* Pinned results of one launch. */
struct launch_result {
    tr_edges_carry carry;     /* carry after the launch (in: carry to upload) */
    tr_edge stop;             /* transition number out_cap, if count > out_cap */
    unsigned long long count; /* transitions found */
};

/* One of two pipeline slots: while the GPU runs one, the host stages the other. */
struct launch_slot {
    tr_device_buffer<float> d_x;                  /* device input */
    tr_pinned_buffer<float> h_stage;              /* pinned staging for pageable input */
    tr_device_buffer<tr_edge> d_out;              /* device transitions (out_cap) */
    tr_device_buffer<tr_edge> d_stop;             /* transition that did not fit */
    tr_device_buffer<unsigned long long> d_count; /* transitions found */
    tr_pinned_buffer<launch_result> h_res;        /* pinned copy of the results */
    tr_cuda_event uploaded;                       /* h_stage may be overwritten */
    tr_cuda_event done;                           /* h_res is complete */
    size_t off = 0, len = 0;                      /* samples of the call in this launch */
    int64_t pos0 = 0;                             /* absolute index of its first sample */
};

/* Declared first in a context, so destroyed last: clears the errors of releasing
 * the other members, which are not the caller's. */
struct release_errors {
    ~release_errors() { (void)cudaGetLastError(); }
};

struct tr_cuda_edges {
    release_errors cleared;
    int device = -1;       /* CUDA device index */
    size_t batch = 0;      /* samples per launch from host memory */
    size_t dev_batch = 0;  /* samples per launch from device memory */
    size_t out_cap = 0;    /* transitions per launch before a re-launch */
    launch_fn launch = {}; /* fast or paper variant */
    tr_cuda_stream stream; /* all work of this context */
    launch_slot slot[2];   /* double buffering of host input */
    tr_device_buffer<tr_edges_carry> d_carry; /* two carries, alternating in and out */
    tr_device_buffer<unsigned char> d_temp;   /* launcher temporary storage */
    size_t temp_bytes = 0;
    std::unique_ptr<tr_host_stager> stager; /* parallel copy of pageable input */

    /* The members are released on the context's device once its work is done. */
    ~tr_cuda_edges()
    {
        if (device < 0) return;
        (void)cudaSetDevice(device);
        if (stream) (void)cudaStreamSynchronize(stream);
    }
};

extern "C" tr_status tr_cuda_edges_create(int device, size_t batch, tr_variant variant,
                                          tr_cuda_edges **out, tr_error *err)
{
    *out = NULL;
    std::unique_ptr<tr_cuda_edges> c(new (std::nothrow) tr_cuda_edges());
    if (!c) return tr_fail(err, TR_ERR_NOMEM, "edges/cuda: cannot allocate the context");
    TR_CUDA_CHECK(cudaSetDevice(device), err, "edges/cuda: select device");
    c->device = device;
    c->batch = batch < (size_t)TR_PACK_MAX_SAMPLES ? batch : (size_t)TR_PACK_MAX_SAMPLES;
    /* Transitions are rarer than samples; a launch that finds more re-runs. */
    c->out_cap = c->batch / 8 + 1024;
    c->launch = variant == TR_VARIANT_PAPER ? tr_cuda_edges_paper_launch
                                            : tr_cuda_edges_fast_launch;
    /* Device input needs no staging: the fast variant takes up to 2^29 samples
     * per launch (its temporary storage is a few bytes per tile); the paper's
     * design keeps whole-array intermediates, so it stays at `batch`. */
    c->dev_batch = variant == TR_VARIANT_PAPER ? c->batch : (size_t)TR_PACK_MAX_SAMPLES;
    TR_CUDA_CHECK(c->stream.create(cudaStreamNonBlocking), err,
                  "edges/cuda: create stream");
    for (launch_slot &s : c->slot) {
        TR_CUDA_CHECK(s.d_x.alloc(c->batch), err, "edges/cuda: allocate device input");
        TR_CUDA_CHECK(s.h_stage.alloc(c->batch), err,
                      "edges/cuda: allocate pinned staging");
        TR_CUDA_CHECK(s.d_out.alloc(c->out_cap), err,
                      "edges/cuda: allocate device output");
        TR_CUDA_CHECK(s.d_stop.alloc(1), err, "edges/cuda: allocate");
        TR_CUDA_CHECK(s.d_count.alloc(1), err, "edges/cuda: allocate");
        TR_CUDA_CHECK(s.h_res.alloc(1), err, "edges/cuda: allocate pinned results");
        TR_CUDA_CHECK(s.uploaded.create(cudaEventDisableTiming), err,
                      "edges/cuda: create event");
        TR_CUDA_CHECK(s.done.create(cudaEventDisableTiming), err,
                      "edges/cuda: create event");
    }
    TR_CUDA_CHECK(c->d_carry.alloc(2), err, "edges/cuda: allocate carry");
    TR_CUDA_CHECK((cudaError_t)c->launch(NULL, (int64_t)c->dev_batch,
                                         tr_edges_lv{0, 0.5f, 1}, NULL, NULL, NULL, 0,
                                         NULL, NULL, NULL, &c->temp_bytes, NULL),
                  err, "edges/cuda: size temporary storage");
    TR_CUDA_CHECK(c->d_temp.alloc(c->temp_bytes), err,
                  "edges/cuda: allocate temporary storage");
    try {
        c->stager.reset(new tr_host_stager(tr_host_stager_threads()));
    } catch (...) {
        return tr_fail(err, TR_ERR_NOMEM, "edges/cuda: cannot start the staging threads");
    }
    *out = c.release();
    return TR_OK;
}

extern "C" void tr_cuda_edges_destroy(tr_cuda_edges *c)
{
    delete c;
}

/*
 * Enqueue one launch of slot s over s.d_x[0..n) (after uploading from src if
 * src != NULL): carry in d_carry[cin] (uploaded from *cr first if cr != NULL),
 * out to d_carry[cin ^ 1], results copied into s.h_res; s.done marks the end.
 */
static tr_status enqueue(tr_cuda_edges *c, launch_slot &s, tr_edges_lv lv, int cin,
                         const tr_edges_carry *cr, const float *src, const float *d_x,
                         size_t n, tr_edge *d_out, int64_t cap, tr_error *err)
{
    if (cr) {
        s.h_res->carry = *cr;
        TR_CUDA_CHECK(cudaMemcpyAsync(c->d_carry + cin, &s.h_res->carry, sizeof *cr,
                                      cudaMemcpyHostToDevice, c->stream),
                      err, "edges/cuda: upload carry");
    }
    if (src) {
        TR_CUDA_CHECK(cudaMemcpyAsync(s.d_x, src, n * sizeof(float),
                                      cudaMemcpyHostToDevice, c->stream),
                      err, "edges/cuda: upload samples");
        TR_CUDA_CHECK(cudaEventRecord(s.uploaded, c->stream), err, "edges/cuda: event");
    }
    TR_CUDA_CHECK((cudaError_t)c->launch(d_x, (int64_t)n, lv, c->d_carry + cin,
                                         c->d_carry + (cin ^ 1), d_out, cap, s.d_stop,
                                         s.d_count, c->d_temp, &c->temp_bytes, c->stream),
                  err, "edges/cuda: launch");
    TR_CUDA_CHECK(cudaMemcpyAsync(&s.h_res->count, s.d_count, sizeof s.h_res->count,
                                  cudaMemcpyDeviceToHost, c->stream),
                  err, "edges/cuda: download count");
    TR_CUDA_CHECK(cudaMemcpyAsync(&s.h_res->carry, c->d_carry + (cin ^ 1), sizeof *cr,
                                  cudaMemcpyDeviceToHost, c->stream),
                  err, "edges/cuda: download carry");
    TR_CUDA_CHECK(cudaMemcpyAsync(&s.h_res->stop, s.d_stop, sizeof(tr_edge),
                                  cudaMemcpyDeviceToHost, c->stream),
                  err, "edges/cuda: download stop");
    TR_CUDA_CHECK(cudaEventRecord(s.done, c->stream), err, "edges/cuda: event");
    return TR_OK;
}

/* When a launch found more than fit: stop before transition *stop. */
static size_t stop_before(tr_edges_carry *cr, const tr_edge *stop, int64_t pos0,
                          float x_before)
{
    const size_t used = (size_t)(stop->sample - pos0);
    tr_edges_carry_before(cr, stop);
    if (used > 0) {
        cr->x_prev = x_before;
        cr->has_prev = 1;
    }
    return used;
}

extern "C" tr_status tr_cuda_edges_run_device(tr_cuda_edges *c, tr_edges_lv lv,
                                              tr_edges_carry *cr, const float *d_x,
                                              size_t n, tr_edge *d_out, size_t cap,
                                              size_t *consumed, size_t *nout,
                                              tr_error *err)
{
    *consumed = *nout = 0;
    launch_slot &s = c->slot[0];
    TR_CUDA_CHECK(cudaSetDevice(c->device), err, "edges/cuda: select device");
    TR_CUDA_CHECK(tr_cuda_caller_ready(), err,
                  "edges/cuda: wait for the caller's stream");
    while (*consumed < n) {
        const size_t len = n - *consumed < c->dev_batch ? n - *consumed : c->dev_batch;
        const int64_t pos0 = cr->pos;
        tr_status st = enqueue(c, s, lv, 0, cr, NULL, d_x + *consumed, len, d_out + *nout,
                               (int64_t)(cap - *nout), err);
        if (st != TR_OK) return st;
        TR_CUDA_CHECK(cudaEventSynchronize(s.done), err, "edges/cuda: kernel");
        const unsigned long long found = s.h_res->count;
        if (found <= cap - *nout) {
            *cr = s.h_res->carry;
            *consumed += len;
            *nout += found;
            continue;
        }
        float before = 0.0f;
        const size_t used = (size_t)(s.h_res->stop.sample - pos0);
        if (used > 0)
            TR_CUDA_CHECK(cudaMemcpy(&before, d_x + *consumed + used - 1, sizeof before,
                                     cudaMemcpyDeviceToHost),
                          err, "edges/cuda: read sample");
        *consumed += stop_before(cr, &s.h_res->stop, pos0, before);
        *nout = cap;
        break;
    }
    return TR_OK;
}

/* Stage (if pageable) and enqueue the launch of x[off, off + len) in slot s. */
static tr_status start_slot(tr_cuda_edges *c, launch_slot &s, tr_edges_lv lv, int cin,
                            const tr_edges_carry *upload, const float *x, int direct,
                            size_t off, size_t len, int64_t pos0, tr_error *err)
{
    const float *src = x + off;
    if (!direct) {
        /* The previous upload from this staging buffer must be done. */
        TR_CUDA_CHECK(cudaEventSynchronize(s.uploaded), err, "edges/cuda: upload");
        c->stager->copy(s.h_stage, src, len * sizeof(float));
        src = s.h_stage;
    }
    s.off = off;
    s.len = len;
    s.pos0 = pos0;
    return enqueue(c, s, lv, cin, upload, src, s.d_x, len, s.d_out, (int64_t)c->out_cap,
                   err);
}

/*
 * Host samples: batches go through two slots, so that staging (parallel copy
 * into pinned memory), upload and kernel of consecutive batches overlap, and
 * the carry passes from launch to launch on the device. A launch that finds
 * more transitions than fit ends the pipeline there: the next launch (already
 * queued) is discarded and processing restarts before the transition.
 */
extern "C" tr_status tr_cuda_edges_run_host(tr_cuda_edges *c, tr_edges_lv lv,
                                            tr_edges_carry *cr, const float *x, size_t n,
                                            tr_edge *out, size_t cap, size_t *consumed,
                                            size_t *nout, tr_error *err)
{
    *consumed = *nout = 0;
    if (n == 0) return TR_OK;
    TR_CUDA_CHECK(cudaSetDevice(c->device), err, "edges/cuda: select device");
    const int direct = tr_host_is_pinned(x);
    while (*consumed < n) { /* (re)start the pipeline at *consumed */
        int cur = 0, cin = 0;
        tr_status st =
            start_slot(c, c->slot[0], lv, 0, cr, x, direct, *consumed,
                       n - *consumed < c->batch ? n - *consumed : c->batch, cr->pos, err);
        if (st != TR_OK) return st;
        for (;;) {
            launch_slot &s = c->slot[cur];
            const size_t next = s.off + s.len;
            if (next < n) {
                st = start_slot(c, c->slot[cur ^ 1], lv, cin ^ 1, NULL, x, direct, next,
                                n - next < c->batch ? n - next : c->batch,
                                s.pos0 + (int64_t)s.len, err);
                if (st != TR_OK) return st;
            }
            TR_CUDA_CHECK(cudaEventSynchronize(s.done), err, "edges/cuda: kernel");
            const unsigned long long found = s.h_res->count;
            const size_t room = cap - *nout;
            size_t got = found < c->out_cap ? (size_t)found : c->out_cap;
            if (got > room) got = room;
            if (got)
                TR_CUDA_CHECK(cudaMemcpy(out + *nout, s.d_out, got * sizeof(tr_edge),
                                         cudaMemcpyDeviceToHost),
                              err, "edges/cuda: download transitions");
            *nout += got;
            if (found == got) {
                *cr = s.h_res->carry;
                *consumed = next;
                if (next >= n) break;
                cur ^= 1;
                cin ^= 1;
                continue;
            }
            /* Stop before transition number `got` of this launch. */
            tr_edge stop = s.h_res->stop;
            if (got < c->out_cap)
                TR_CUDA_CHECK(
                    cudaMemcpy(&stop, s.d_out + got, sizeof stop, cudaMemcpyDeviceToHost),
                    err, "edges/cuda: download transition");
            TR_CUDA_CHECK(cudaStreamSynchronize(c->stream), err, "edges/cuda: drain");
            const size_t used = (size_t)(stop.sample - s.pos0);
            *consumed = s.off + stop_before(cr, &stop, s.pos0,
                                            used > 0 ? x[s.off + used - 1] : 0);
            break;
        }
        if (*nout == cap) break;
    }
    return TR_OK;
}
