/*
 * The CUDA SPIIR trigger context of triggers_cuda.h: the cluster states on
 * the device, the scan launches of a call, the decided clusters copied back
 * and ordered as the reference emits them.
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (equation 8: the SNR these triggers are taken from).
 *
 * A round scans rows [0, r) from the state st[cur] into st[!cur] and reads
 * back the count of decided clusters and the first sample whose cluster did
 * not fit the list (the atomic counter orders clusters across templates
 * arbitrarily, so those of earlier samples may be the ones that did not fit;
 * every cluster decided before that sample did). The round's cut is that
 * sample, or the caller's room (the reference's rule), whichever comes
 * first; a cut round is run again to the cut without recording, so that
 * st[!cur] is the state there. A round whose very first sample did not fit
 * is run again over at most (capacity / ntemplates) * (window + 1) rows,
 * which cannot decide more than the list holds (a template's triggers are
 * decided more than `window` samples apart). With TR_SPIIR_TRIG_HOST_EMU the
 * includer provides the CUDA runtime, TR_CUDA_CHECK and TR_TRIG_LAUNCH (the
 * host emulation of tests/core/spiir).
 */
#ifndef TR_SPIIR_TRIG_HOST_EMU
#include "common/cuda_check.h"
#define TR_TRIG_LAUNCH(kern, grid, block, stream, ...)                                   \
    kern<<<(grid), (block), 0, (stream)>>>(__VA_ARGS__)
#endif
#include "common/cuda_raii.cuh"
#include "spiir/triggers_cuda.h"
#include "spiir/triggers_kernels.cuh"

#include <algorithm>
#include <cstdint>
#include <new>
#include <vector>

namespace
{
/* Scan: threads (templates) per block, rows of a tile (skipped or walked as
 * one, loaded ahead when walked), tile maxima read at once. */
constexpr int SCAN_THREADS = 64, SCAN_TILE = 16, SCAN_AHEAD = 8;
/* Tile maxima of a round: at most this many bytes, and grid.y tiles. */
constexpr size_t TMAX_BYTES = (size_t)64 << 20;
constexpr uint64_t MAX_TILES = 65535;
constexpr int FLUSH_THREADS = 256;
/* Host input: rows copied in per round, about this many bytes. */
constexpr size_t HOST_PIECE_BYTES = (size_t)16 << 20;
/* Device list entries (automatic): at least this many, and 4 per template. */
constexpr size_t AUTO_CAPACITY = (size_t)1 << 16;
/* The list's count is 32 bits and counts on past the capacity. */
constexpr size_t MAX_CAPACITY = (size_t)1 << 30;
constexpr unsigned long long NOT_LOST = ~0ULL;

unsigned blocks(uint32_t nt, int threads)
{
    return (unsigned)((nt + (uint32_t)threads - 1) / (uint32_t)threads);
}

bool by_sample_then_template(const tr_spiir_trig_event &a, const tr_spiir_trig_event &b)
{
    return a.decided != b.decided ? a.decided < b.decided : a.t < b.t;
}
} // namespace

struct tr_cuda_spiir_trig {
    int device = -1;
    uint32_t nt = 0, window = 0;
    size_t cap = 0;   /* device list entries */
    size_t piece = 0; /* host input rows per round, at most */
    tr_cuda_stream stream;
    tr_device_buffer<tr_spiir_trig_cluster> st[2]; /* states; st[cur] is current */
    int cur = 0;
    tr_device_buffer<tr_spiir_trig_event> list;
    tr_device_buffer<uint32_t> count;
    tr_device_buffer<unsigned long long> lost;
    tr_device_buffer<double> tmax;             /* tile maxima of a round */
    size_t tmax_tiles = 0;                     /* tiles (of every template) it holds */
    uint64_t round_rows = 0;                   /* rows a round may have, at most */
    tr_device_buffer<float2> in;               /* host input copied in */
    size_t in_rows = 0;                        /* rows it holds */
    std::vector<tr_spiir_trig_event> got, out; /* a round's list, the call's clusters */
    uint32_t rounds = 0;
};

namespace
{
tr_status fail_alloc(tr_error *err, cudaError_t e, const char *what)
{
    return tr_fail(err, e == cudaErrorMemoryAllocation ? TR_ERR_NOMEM : TR_ERR_CUDA,
                   "spiir triggers/cuda: allocate %s: %s", what, cudaGetErrorString(e));
}

/* One scan launch over rows [0, nrows) of src from st[cur] to st[!cur]; with
 * record, the list, its count and the first sample that did not fit. */
tr_status launch_scan(tr_cuda_spiir_trig *q, const float2 *src, uint64_t nrows,
                      uint64_t pos0, double thr2, bool record, uint32_t *count,
                      unsigned long long *lost, tr_error *err)
{
    spiir_trig::sink dst{nullptr, 0, nullptr, nullptr};
    if (record) {
        dst = spiir_trig::sink{q->list, (uint32_t)q->cap, q->count, q->lost};
        TR_CUDA_CHECK(cudaMemsetAsync(q->count, 0, sizeof(uint32_t), q->stream), err,
                      "spiir triggers/cuda: clear the count");
        TR_CUDA_CHECK(
            cudaMemsetAsync(q->lost, 0xff, sizeof(unsigned long long), q->stream), err,
            "spiir triggers/cuda: clear the cut");
    }
    TR_TRIG_LAUNCH((spiir_trig::scan<SCAN_THREADS, SCAN_TILE, SCAN_AHEAD>),
                   blocks(q->nt, SCAN_THREADS), SCAN_THREADS, q->stream, src, q->nt,
                   nrows, pos0, thr2, q->window, q->tmax.get(), q->st[q->cur].get(),
                   q->st[1 - q->cur].get(), dst);
    TR_CUDA_CHECK(cudaGetLastError(), err, "spiir triggers/cuda: scan launch");
    if (!record) return TR_OK;
    TR_CUDA_CHECK(cudaMemcpyAsync(count, q->count, sizeof *count, cudaMemcpyDeviceToHost,
                                  q->stream),
                  err, "spiir triggers/cuda: read the count");
    TR_CUDA_CHECK(
        cudaMemcpyAsync(lost, q->lost, sizeof *lost, cudaMemcpyDeviceToHost, q->stream),
        err, "spiir triggers/cuda: read the cut");
    TR_CUDA_CHECK(cudaStreamSynchronize(q->stream), err, "spiir triggers/cuda: scan");
    return TR_OK;
}

/* The first n entries of the device list into q->got, in the reference's order. */
tr_status read_list(tr_cuda_spiir_trig *q, size_t n, tr_error *err)
{
    try {
        q->got.resize(n);
    } catch (const std::bad_alloc &) {
        return tr_fail(err, TR_ERR_NOMEM,
                       "spiir triggers/cuda: no memory for %zu triggers", n);
    }
    if (n > 0) {
        TR_CUDA_CHECK(cudaMemcpyAsync(q->got.data(), q->list, n * sizeof(q->got[0]),
                                      cudaMemcpyDeviceToHost, q->stream),
                      err, "spiir triggers/cuda: copy the triggers back");
        TR_CUDA_CHECK(cudaStreamSynchronize(q->stream), err,
                      "spiir triggers/cuda: copy the triggers back");
    }
    std::sort(q->got.begin(), q->got.end(), by_sample_then_template);
    return TR_OK;
}

/*
 * One round over rows [0, rows) of src (row 0 at sample pos0) with `left`
 * entries of the caller's room: the rows it keeps (*kept) and their decided
 * clusters appended to q->out; the state advanced to the cut.
 */
tr_status scan_round(tr_cuda_spiir_trig *q, const float2 *src, uint64_t rows,
                     uint64_t pos0, double thr2, size_t left, uint64_t *kept,
                     tr_error *err)
{
    uint64_t r = rows, cut;
    uint32_t count = 0;
    unsigned long long lost = NOT_LOST;
    /* Tile maxima over the round's rows; a rerun over fewer rows reads them
     * too (a maximum over more rows only makes the walk look at more). */
    const size_t tiles = (size_t)((rows + SCAN_TILE - 1) / SCAN_TILE);
    if (tiles > q->tmax_tiles) {
        q->tmax_tiles = 0;
        const cudaError_t e = q->tmax.alloc(tiles * q->nt);
        if (e != cudaSuccess) return fail_alloc(err, e, "the tile maxima");
        q->tmax_tiles = tiles;
    }
    const dim3 grid(blocks(q->nt, SCAN_THREADS), (unsigned)tiles);
    TR_TRIG_LAUNCH((spiir_trig::tile_max<SCAN_THREADS, SCAN_TILE>), grid, SCAN_THREADS,
                   q->stream, src, q->nt, rows, q->tmax.get());
    TR_CUDA_CHECK(cudaGetLastError(), err, "spiir triggers/cuda: tile maxima launch");
    for (;;) {
        q->rounds++;
        tr_status s = launch_scan(q, src, r, pos0, thr2, true, &count, &lost, err);
        if (s != TR_OK) return s;
        cut = lost == NOT_LOST ? r : (uint64_t)(lost - pos0);
        if (cut > 0 || lost == NOT_LOST) break;
        /* The first row's clusters did not fit: rows that cannot overflow. */
        const uint64_t safe = (uint64_t)(q->cap / q->nt) * ((uint64_t)q->window + 1);
        r = std::min<uint64_t>(r, safe);
    }
    tr_status s = read_list(q, std::min<size_t>(count, q->cap), err);
    if (s != TR_OK) return s;
    /* The reference stops before the row at which more than left - nt
     * clusters were decided before it. */
    const size_t j = left - q->nt;
    if (j < q->got.size() && q->got[j].decided - pos0 + 1 < cut)
        cut = q->got[j].decided - pos0 + 1;
    size_t keep = 0;
    while (keep < q->got.size() && q->got[keep].decided < pos0 + cut)
        keep++;
    if (cut < r) {
        uint32_t unused = 0;
        unsigned long long unused_lost = 0;
        s = launch_scan(q, src, cut, pos0, thr2, false, &unused, &unused_lost, err);
        if (s != TR_OK) return s;
    }
    q->cur = 1 - q->cur;
    try {
        q->out.insert(q->out.end(), q->got.begin(), q->got.begin() + (ptrdiff_t)keep);
    } catch (const std::bad_alloc &) {
        return tr_fail(err, TR_ERR_NOMEM,
                       "spiir triggers/cuda: no memory for %zu triggers",
                       q->out.size() + keep);
    }
    *kept = cut;
    return TR_OK;
}
} // namespace

extern "C" tr_status tr_cuda_spiir_trig_create(int device, uint32_t ntemplates,
                                               uint32_t window, size_t capacity,
                                               tr_cuda_spiir_trig **out, tr_error *err)
{
    if (out) *out = NULL;
    if (!out || ntemplates == 0 || window == 0)
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir triggers/cuda: need ntemplates >= 1 and window >= 1");
    if (capacity == 0) capacity = std::max(AUTO_CAPACITY, (size_t)4 * ntemplates);
    if (capacity < ntemplates || capacity > MAX_CAPACITY)
        return tr_fail(
            err, TR_ERR_INVALID,
            "spiir triggers/cuda: device capacity must be in [ntemplates = %u, "
            "%zu], got %zu",
            ntemplates, MAX_CAPACITY, capacity);
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || device < 0 || device >= count)
        return tr_fail(err, TR_ERR_NO_DEVICE, "spiir triggers/cuda: no CUDA device %d",
                       device);
    tr_cuda_spiir_trig *q = new (std::nothrow) tr_cuda_spiir_trig();
    if (!q)
        return tr_fail(err, TR_ERR_NOMEM,
                       "spiir triggers/cuda: cannot allocate the context");
    q->nt = ntemplates;
    q->window = window;
    q->cap = capacity;
    q->piece = std::max<size_t>(1, HOST_PIECE_BYTES / ((size_t)ntemplates * 8));
    /* Rows of a round: whole tiles whose maxima fit TMAX_BYTES and grid.y, and
     * at most 2^31 decisions, so that the list's 32-bit count cannot wrap. */
    const uint64_t tiles = std::min<uint64_t>(
        MAX_TILES, std::max<uint64_t>(1, TMAX_BYTES / sizeof(double) / ntemplates));
    q->round_rows = std::min<uint64_t>(
        tiles * SCAN_TILE, ((uint64_t)1 << 31) / ntemplates * ((uint64_t)window + 1));
    q->round_rows = std::max<uint64_t>(q->round_rows, 1);
    cudaError_t e;
    tr_status s = TR_OK;
    if ((e = cudaSetDevice(device)) != cudaSuccess) {
        s = tr_cuda_fail(err, e, "spiir triggers/cuda: select device");
    } else {
        q->device = device;
        if ((e = q->stream.create(cudaStreamNonBlocking)) != cudaSuccess)
            s = tr_cuda_fail(err, e, "spiir triggers/cuda: create a stream");
        else if ((e = q->st[0].alloc(ntemplates)) || (e = q->st[1].alloc(ntemplates)) ||
                 (e = q->list.alloc(capacity)) || (e = q->count.alloc(1)) ||
                 (e = q->lost.alloc(1)))
            s = fail_alloc(err, e, "the cluster states and the trigger list");
    }
    if (s == TR_OK) s = tr_cuda_spiir_trig_reset(q, err);
    if (s != TR_OK) {
        delete q;
        return s;
    }
    *out = q;
    tr_clear(err);
    return TR_OK;
}

extern "C" void tr_cuda_spiir_trig_destroy(tr_cuda_spiir_trig *q)
{
    if (!q) return;
    if (q->device >= 0) cudaSetDevice(q->device);
    delete q;
}

extern "C" tr_status tr_cuda_spiir_trig_reset(tr_cuda_spiir_trig *q, tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "spiir triggers/cuda: NULL context");
    TR_CUDA_CHECK(cudaSetDevice(q->device), err, "spiir triggers/cuda: select device");
    TR_TRIG_LAUNCH(spiir_trig::clear<FLUSH_THREADS>, blocks(q->nt, FLUSH_THREADS),
                   FLUSH_THREADS, q->stream, q->st[q->cur].get(), q->nt);
    TR_CUDA_CHECK(cudaGetLastError(), err, "spiir triggers/cuda: clear launch");
    TR_CUDA_CHECK(cudaStreamSynchronize(q->stream), err, "spiir triggers/cuda: clear");
    return TR_OK;
}

extern "C" tr_status tr_cuda_spiir_trig_get(tr_cuda_spiir_trig *q,
                                            tr_spiir_trig_cluster *c, tr_error *err)
{
    if (!q || !c) return tr_fail(err, TR_ERR_INVALID, "spiir triggers/cuda: NULL state");
    TR_CUDA_CHECK(cudaSetDevice(q->device), err, "spiir triggers/cuda: select device");
    TR_CUDA_CHECK(cudaMemcpyAsync(c, q->st[q->cur], q->nt * sizeof *c,
                                  cudaMemcpyDeviceToHost, q->stream),
                  err, "spiir triggers/cuda: copy the states back");
    TR_CUDA_CHECK(cudaStreamSynchronize(q->stream), err,
                  "spiir triggers/cuda: copy the states back");
    return TR_OK;
}

extern "C" tr_status tr_cuda_spiir_trig_set(tr_cuda_spiir_trig *q,
                                            const tr_spiir_trig_cluster *c, tr_error *err)
{
    if (!q || !c) return tr_fail(err, TR_ERR_INVALID, "spiir triggers/cuda: NULL state");
    TR_CUDA_CHECK(cudaSetDevice(q->device), err, "spiir triggers/cuda: select device");
    TR_CUDA_CHECK(cudaMemcpyAsync(q->st[q->cur], c, q->nt * sizeof *c,
                                  cudaMemcpyHostToDevice, q->stream),
                  err, "spiir triggers/cuda: copy the states in");
    TR_CUDA_CHECK(cudaStreamSynchronize(q->stream), err,
                  "spiir triggers/cuda: copy the states in");
    return TR_OK;
}

extern "C" tr_status tr_cuda_spiir_trig_scan(tr_cuda_spiir_trig *q, const float *snr,
                                             size_t n, int on_device, uint64_t pos0,
                                             float threshold, size_t room,
                                             const tr_spiir_trig_event **ev, size_t *nev,
                                             size_t *consumed, tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "spiir triggers/cuda: NULL context");
    if (!ev || !nev || !consumed)
        return tr_fail(err, TR_ERR_INVALID, "spiir triggers/cuda: NULL output");
    q->out.clear();
    q->rounds = 0;
    *ev = q->out.data();
    *nev = 0;
    if (on_device && n > 0)
        TR_CUDA_CHECK(tr_cuda_caller_ready(), err,
                      "spiir triggers/cuda: wait for the caller's stream");
    *consumed = 0;
    if (n == 0) return TR_OK;
    if (!snr) return tr_fail(err, TR_ERR_INVALID, "spiir triggers/cuda: NULL snr");
    if (on_device && (uintptr_t)snr % sizeof(float2) != 0)
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir triggers/cuda: device SNR must be 8-byte aligned (a whole "
                       "complex sample)");
    TR_CUDA_CHECK(cudaSetDevice(q->device), err, "spiir triggers/cuda: select device");
    if (!on_device && q->in_rows < std::min(q->piece, n)) {
        q->in_rows = 0;
        const cudaError_t e = q->in.alloc(std::min(q->piece, n) * q->nt);
        if (e != cudaSuccess) return fail_alloc(err, e, "the SNR copy");
        q->in_rows = std::min(q->piece, n);
    }
    const double thr2 = (double)threshold * (double)threshold;
    const float2 *all = (const float2 *)snr;
    size_t done = 0;
    while (done < n && room - q->out.size() >= q->nt) {
        uint64_t rows = std::min<uint64_t>(n - done, q->round_rows);
        const float2 *src = all + done * q->nt;
        if (!on_device) {
            rows = std::min<uint64_t>(rows, q->piece);
            TR_CUDA_CHECK(cudaMemcpyAsync(q->in, src, rows * q->nt * sizeof(float2),
                                          cudaMemcpyHostToDevice, q->stream),
                          err, "spiir triggers/cuda: copy the SNR in");
            src = q->in;
        }
        uint64_t kept = 0;
        const tr_status s =
            scan_round(q, src, rows, pos0 + done, thr2, room - q->out.size(), &kept, err);
        if (s != TR_OK) return s;
        done += kept;
    }
    *ev = q->out.data();
    *nev = q->out.size();
    *consumed = done;
    tr_clear(err);
    return TR_OK;
}

extern "C" tr_status tr_cuda_spiir_trig_flush(tr_cuda_spiir_trig *q, uint64_t pos,
                                              const tr_spiir_trig_event **ev, size_t *nev,
                                              tr_error *err)
{
    if (!q) return tr_fail(err, TR_ERR_INVALID, "spiir triggers/cuda: NULL context");
    if (!ev || !nev)
        return tr_fail(err, TR_ERR_INVALID, "spiir triggers/cuda: NULL output");
    q->out.clear();
    *ev = q->out.data();
    *nev = 0;
    TR_CUDA_CHECK(cudaSetDevice(q->device), err, "spiir triggers/cuda: select device");
    TR_CUDA_CHECK(cudaMemsetAsync(q->count, 0, sizeof(uint32_t), q->stream), err,
                  "spiir triggers/cuda: clear the count");
    const spiir_trig::sink dst{q->list, (uint32_t)q->cap, q->count, q->lost};
    TR_TRIG_LAUNCH(spiir_trig::flush<FLUSH_THREADS>, blocks(q->nt, FLUSH_THREADS),
                   FLUSH_THREADS, q->stream, q->st[q->cur].get(), q->nt, pos, dst);
    TR_CUDA_CHECK(cudaGetLastError(), err, "spiir triggers/cuda: flush launch");
    uint32_t count = 0;
    TR_CUDA_CHECK(cudaMemcpyAsync(&count, q->count, sizeof count, cudaMemcpyDeviceToHost,
                                  q->stream),
                  err, "spiir triggers/cuda: read the count");
    TR_CUDA_CHECK(cudaStreamSynchronize(q->stream), err, "spiir triggers/cuda: flush");
    const tr_status s = read_list(q, count, err);
    if (s != TR_OK) return s;
    q->out.swap(q->got);
    *ev = q->out.data();
    *nev = q->out.size();
    return TR_OK;
}

extern "C" uint32_t tr_cuda_spiir_trig_rounds(const tr_cuda_spiir_trig *q)
{
    return q ? q->rounds : 0;
}
