/*
 * The CUDA SPIIR trigger search (cuda/spiir/triggers_cuda.cu: the context,
 * the scan, flush and clear kernels of triggers_kernels.cuh) compiled for
 * the host on the boxcar's CUDA emulation (cuda/boxcar/boxcar_emu.h:
 * cooperative block threads, device memory filled with NaN) and run against
 * the REFERENCE object call by call, bit for bit (triggers_test_driver.h):
 * random SNR with NaN/Inf, chunkings of 1 sample, random and whole, output
 * capacities from ntemplates up, threshold changes, device lists as short as
 * ntemplates (rounds cut and resumed), host and device input, the cluster
 * states moved out and into a new context mid-stream, flush; and the
 * context's argument checks. No GPU needed.
 */
#define TR_BOXCAR_HOST_EMU     1
#define TR_SPIIR_TRIG_HOST_EMU 1
#include "boxcar/boxcar_emu.h"
#include "common/core_util.h" /* tr_fail, tr_clear */

/* What the trigger search uses beyond the boxcar's subset. Blocks run their
 * threads one after another, so plain updates are atomic. */
inline unsigned atomicAdd(unsigned *p, unsigned v)
{
    const unsigned o = *p;
    *p += v;
    return o;
}
inline unsigned long long atomicMin(unsigned long long *p, unsigned long long v)
{
    const unsigned long long o = *p;
    if (v < o) *p = v;
    return o;
}
using std::isfinite;
inline tr_status tr_cuda_fail(tr_error *err, cudaError_t e, const char *what)
{
    return tr_fail(err, TR_ERR_CUDA, "%s: %s", what, cudaGetErrorString(e));
}
#define TR_CUDA_CHECK(call, err, what)                                                   \
    do {                                                                                 \
        const cudaError_t tr_e_ = (call);                                                \
        if (tr_e_ != cudaSuccess) return tr_cuda_fail((err), tr_e_, (what));             \
    } while (0)
#define TR_TRIG_LAUNCH(kern, grid, block, stream, ...)                                   \
    tr_emu::launch(dim3(grid), dim3(block), 0, [&]() { kern(__VA_ARGS__); })

#include "spiir/triggers_cuda.cu"

#include "spiir/triggers_test_driver.h"

#include <vector>

namespace
{

/* The context as a subject: host or device input per call, and now and then
 * the states moved to the host and into a fresh context. */
struct emu_subject {
    const tt_trial *tr = nullptr;
    tr_cuda_spiir_trig *ctx = nullptr;
    uint64_t pos = 0;
    tu_rng r{0};
    long rounds = 0, moves = 0;
};

int emu_begin(void *u, const tt_trial *tr)
{
    emu_subject *s = (emu_subject *)u;
    s->tr = tr;
    s->pos = 0;
    s->r = tu_rng{tr->seed};
    tr_error err;
    if (tr_cuda_spiir_trig_create(0, tr->nt, tr->window, tr->capacity, &s->ctx, &err) !=
        TR_OK) {
        std::fprintf(stderr, "create: %s\n", err.message);
        return 0;
    }
    return 1;
}

/* The states into a new context, as a switch between host and device does. */
bool move_states(emu_subject *s)
{
    tr_error err;
    std::vector<tr_spiir_trig_cluster> st(s->tr->nt);
    tr_cuda_spiir_trig *fresh = nullptr;
    if (tr_cuda_spiir_trig_get(s->ctx, st.data(), &err) != TR_OK ||
        tr_cuda_spiir_trig_create(0, s->tr->nt, s->tr->window, s->tr->capacity, &fresh,
                                  &err) != TR_OK ||
        tr_cuda_spiir_trig_set(fresh, st.data(), &err) != TR_OK) {
        std::fprintf(stderr, "move: %s\n", err.message);
        tr_cuda_spiir_trig_destroy(fresh);
        return false;
    }
    tr_cuda_spiir_trig_destroy(s->ctx);
    s->ctx = fresh;
    s->moves++;
    return true;
}

tr_status emu_process(void *u, size_t k0, size_t n, float thr, tr_spiir_trigger *out,
                      size_t cap, size_t *consumed, size_t *nout)
{
    emu_subject *s = (emu_subject *)u;
    if (tu_uniform(&s->r) < 0.05 && !move_states(s)) return TR_ERR_STATE;
    const int on_device = (int)tu_range(&s->r, 0, 1);
    const tr_spiir_trig_event *ev = nullptr;
    size_t nev = 0;
    tr_error err;
    const tr_status st =
        tr_cuda_spiir_trig_scan(s->ctx, s->tr->snr + k0 * s->tr->nt * 2, n, on_device,
                                s->pos, thr, cap, &ev, &nev, consumed, &err);
    if (st != TR_OK) {
        std::fprintf(stderr, "scan: %s\n", err.message);
        return st;
    }
    for (size_t i = 0; i < nev; i++)
        tr_spiir_trig_make(&ev[i].c, ev[i].t, &out[i]);
    *nout = nev;
    s->pos += *consumed;
    s->rounds += tr_cuda_spiir_trig_rounds(s->ctx);
    return TR_OK;
}

tr_status emu_flush(void *u, tr_spiir_trigger *out, size_t cap, size_t *nout)
{
    emu_subject *s = (emu_subject *)u;
    (void)cap;
    const tr_spiir_trig_event *ev = nullptr;
    size_t nev = 0;
    tr_error err;
    const tr_status st = tr_cuda_spiir_trig_flush(s->ctx, s->pos, &ev, &nev, &err);
    if (st != TR_OK) return st;
    for (size_t i = 0; i < nev; i++)
        tr_spiir_trig_make(&ev[i].c, ev[i].t, &out[i]);
    *nout = nev;
    return TR_OK;
}

void emu_end(void *u)
{
    emu_subject *s = (emu_subject *)u;
    tr_cuda_spiir_trig_destroy(s->ctx);
    s->ctx = nullptr;
}

/* Bad arguments are errors; a reset closes every cluster. */
void invalid()
{
    tr_error err;
    tr_cuda_spiir_trig *ctx = nullptr;
    CHECK(tr_cuda_spiir_trig_create(0, 8, 4, 7, &ctx, &err) == TR_ERR_INVALID,
          "capacity below ntemplates accepted");
    CHECK(tr_cuda_spiir_trig_create(0, 0, 4, 0, &ctx, &err) == TR_ERR_INVALID,
          "no templates accepted");
    if (tr_cuda_spiir_trig_create(0, 2, 1, 0, &ctx, &err) != TR_OK) {
        CHECK(0, "create: %s", err.message);
        return;
    }
    std::vector<float> snr(8, 50.0f);
    const tr_spiir_trig_event *ev = nullptr;
    size_t nev = 0, used = 0;
    CHECK(tr_cuda_spiir_trig_scan(ctx, snr.data() + 1, 2, 1, 0, 8.0f, 8, &ev, &nev, &used,
                                  &err) == TR_ERR_INVALID &&
              std::strstr(err.message, "aligned"),
          "misaligned device SNR: %s", err.message);
    CHECK(tr_cuda_spiir_trig_scan(ctx, nullptr, 2, 1, 0, 8.0f, 8, &ev, &nev, &used,
                                  &err) == TR_ERR_INVALID,
          "NULL SNR accepted");
    /* Room for fewer than ntemplates: nothing scanned. */
    CHECK(tr_cuda_spiir_trig_scan(ctx, snr.data(), 2, 1, 0, 8.0f, 1, &ev, &nev, &used,
                                  &err) == TR_OK &&
              used == 0 && nev == 0,
          "room 1: %zu scanned", used);
    /* Both templates open at sample 0; a reset closes them. */
    CHECK(tr_cuda_spiir_trig_scan(ctx, snr.data(), 1, 1, 0, 8.0f, 8, &ev, &nev, &used,
                                  &err) == TR_OK &&
              used == 1 && nev == 0,
          "one row: %zu scanned, %zu triggers", used, nev);
    CHECK(tr_cuda_spiir_trig_reset(ctx, &err) == TR_OK &&
              tr_cuda_spiir_trig_flush(ctx, 1, &ev, &nev, &err) == TR_OK && nev == 0,
          "reset left %zu open clusters", nev);
    tr_cuda_spiir_trig_destroy(ctx);
}

} // namespace

int main()
{
    emu_subject s;
    const tt_subject sub = {
        "cuda (host emulation)", emu_begin, emu_process, emu_flush, emu_end, &s};
    tt_run(&sub, 901, 40, 90, 3000);
    CHECK(s.rounds > 0 && s.moves > 0, "rounds %ld, moves %ld", s.rounds, s.moves);
    invalid();
    std::printf("test_spiir_triggers_cuda_host: %ld calls compared, %ld scan rounds, "
                "%ld state moves\n",
                tt_calls, s.rounds, s.moves);
    return tu_finish("test_spiir_triggers_cuda_host");
}
