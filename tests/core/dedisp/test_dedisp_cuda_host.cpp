/*
 * The CUDA dedispersion code (cuda/dedisp/: the context, the fill, zero-DM
 * and sum kernels) compiled for the host on the boxcar's CUDA emulation
 * (cuda/boxcar/boxcar_emu.h: cooperative block threads, device memory
 * filled with NaN) and run against the reference variant, bit for bit:
 * float and packed input, both output layouts, staged and direct channels
 * (trials whose delays span more or less than the kernel's staging window),
 * batches shorter and longer than the latency, flush, reset; time scrunching
 * (levels of block means, the sum over them, the expansion). No GPU needed.
 */
#define TR_BOXCAR_HOST_EMU 1
#define TR_DEDISP_HOST_EMU 1
#include "boxcar/boxcar_emu.h"
#include "common/core_util.h" /* tr_fail, tr_clear */

/* What the dedispersion code uses beyond the boxcar's subset. */
inline cudaError_t cudaMemset2DAsync(void *d, size_t pitch, int v, size_t w, size_t h,
                                     cudaStream_t)
{
    for (size_t r = 0; r < h; r++)
        memset((char *)d + r * pitch, v, w);
    return cudaSuccess;
}
template <typename T> inline T __ldg(const T *p)
{
    return *p;
}
inline float __uint_as_float(unsigned u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
#define TR_CUDA_CHECK(call, err, what)                                                   \
    do {                                                                                 \
        const cudaError_t tr_e_ = (call);                                                \
        if (tr_e_ != cudaSuccess)                                                        \
            return tr_fail((err), TR_ERR_CUDA, "%s: %s", (what),                         \
                           cudaGetErrorString(tr_e_));                                   \
    } while (0)
#define TR_DEDISP_LAUNCH(kern, grid, block, stream, ...)                                 \
    tr_emu::launch(dim3(grid), dim3(block), 0, [&]() { kern(__VA_ARGS__); })

#include "dedisp/dedisp_context.cu"

#include <transient/dedisp.h>

#include "dedisp/fil_writer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

static int passed, failed;
static int scrunched; /* cases whose factors grow along the list */

static void check(bool ok, const char *what)
{
    if (ok) {
        ++passed;
    } else {
        ++failed;
        fprintf(stderr, "test_dedisp_cuda_host: FAILED: %s\n", what);
    }
}

static bool same(float a, float b)
{
    return (std::isnan(a) && std::isnan(b)) || !memcmp(&a, &b, sizeof a);
}

struct case_def {
    uint32_t nchan, nbits;
    double fch1, foff, tsamp;
    std::vector<double> dms;
    bool mask, zero_dm, mean, packed, dm_major;
    size_t n, batch;
    double scrunch_tol; /* 0: no scrunching */
    uint32_t scrunch_first;
};

static void run_case(const case_def &k, std::mt19937 &rng, const char *name)
{
    tr_dedisp_config cfg = tr_dedisp_config_default();
    cfg.plan.nchan = k.nchan;
    cfg.plan.fch1 = k.fch1;
    cfg.plan.foff = k.foff;
    cfg.plan.tsamp = k.tsamp;
    cfg.plan.dm_list = k.dms.data();
    cfg.plan.ndm_list = (uint32_t)k.dms.size();
    cfg.plan.scrunch = k.scrunch_tol > 0;
    cfg.plan.scrunch_tol = k.scrunch_tol;
    cfg.plan.scrunch_first = k.scrunch_first;
    std::vector<uint8_t> mask(k.nchan, 1);
    if (k.mask)
        for (uint32_t c = 0; c < k.nchan; c += 3)
            mask[c] = 0;
    cfg.mask = mask.data();
    cfg.zero_dm = k.zero_dm;
    cfg.scale = k.mean ? TR_DEDISP_MEAN : TR_DEDISP_SUM;
    cfg.raw_nbits = k.nbits;
    cfg.backend = TR_BACKEND_CPU;
    cfg.variant = TR_VARIANT_REFERENCE;
    tr_error err;
    tr_dedisp *ref = tr_dedisp_create(&cfg, &err);
    if (!ref) {
        check(false, err.message);
        return;
    }
    const uint32_t ndm = tr_dedisp_ndm(ref), L = tr_dedisp_latency(ref),
                   nused = tr_dedisp_nused(ref);
    std::vector<float> x(k.n * k.nchan);
    std::uniform_int_distribution<int> val(0, (1 << (k.nbits < 16 ? k.nbits : 12)) - 1);
    for (float &v : x)
        v = (float)val(rng);
    std::vector<unsigned char> raw(k.n * k.nchan * k.nbits / 8 + 1);
    fw_pack(x.data(), x.size(), k.nbits, raw.data());
    std::vector<float> want((k.n + L) * ndm);
    tr_dedisp_process(ref, x.data(), k.n, want.data());
    tr_dedisp_flush(ref, want.data() + k.n * ndm);

    std::vector<uint32_t> chans, delays((size_t)ndm * nused), factors(ndm);
    for (uint32_t d = 0; d < ndm; ++d)
        factors[d] = tr_dedisp_factor(ref, d);
    scrunched += factors.back() > factors.front();
    for (uint32_t c = 0; c < k.nchan; ++c)
        if (mask[c]) chans.push_back(c);
    for (uint32_t d = 0; d < ndm; ++d)
        for (uint32_t j = 0; j < nused; ++j)
            delays[(size_t)d * nused + j] = tr_dedisp_channel_delay(ref, d, chans[j]);
    tr_cuda_dedisp_plan p;
    p.nchan = k.nchan;
    p.nused = nused;
    p.ndm = ndm;
    p.latency = L;
    p.chans = chans.data();
    p.delays = delays.data();
    p.factors = factors.data();
    p.zero_dm = k.zero_dm;
    p.mean = k.mean;
    p.raw_nbits = k.nbits;
    p.batch = k.batch;
    tr_cuda_dedisp *ctx = nullptr;
    if (tr_cuda_dedisp_create(0, &p, &ctx, &err) != TR_OK) {
        check(false, err.message);
        tr_cuda_dedisp_destroy(ctx);
        tr_dedisp_destroy(ref);
        return;
    }
    for (int pass = 0; pass < 2; ++pass) { /* the second after a reset */
        std::vector<float> got((k.n + L) * ndm);
        std::uniform_int_distribution<size_t> len(0, 3 * k.batch);
        size_t done = 0;
        bool ok = true;
        while (ok && done <= k.n) {
            const bool flush = done == k.n;
            const size_t m = flush ? L : std::min(len(rng), k.n - done);
            std::vector<float> part(m * ndm + 1);
            const bool on_device = k.dm_major || pass;
            const tr_cuda_dedisp_input kind = flush      ? TR_CUDA_DEDISP_ZEROS
                                              : k.packed ? TR_CUDA_DEDISP_HOST_RAW
                                                         : TR_CUDA_DEDISP_HOST_FLOAT;
            const void *in =
                flush      ? nullptr
                : k.packed ? (const void *)(raw.data() + done * k.nchan * k.nbits / 8)
                           : (const void *)(x.data() + done * k.nchan);
            ok = tr_cuda_dedisp_run(ctx, kind, in, m, part.data(), on_device,
                                    k.dm_major ? TR_DEDISP_DM_MAJOR
                                               : TR_DEDISP_SAMPLE_MAJOR,
                                    &err) == TR_OK;
            for (size_t i = 0; i < m; ++i)
                for (uint32_t d = 0; d < ndm; ++d)
                    got[(done + i) * ndm + d] =
                        k.dm_major ? part[d * m + i] : part[i * ndm + d];
            done += flush ? 1 : m;
            if (flush) break;
        }
        if (!ok) fprintf(stderr, "%s: %s\n", name, err.message);
        size_t bad = 0;
        for (size_t i = 0; i < got.size(); ++i)
            bad += !same(got[i], want[i]);
        if (bad)
            fprintf(stderr, "%s pass %d: %zu of %zu outputs differ\n", name, pass, bad,
                    got.size());
        check(ok && bad == 0, name);
        tr_cuda_dedisp_reset(ctx, &err);
    }
    tr_cuda_dedisp_destroy(ctx);
    tr_dedisp_destroy(ref);
}

int main()
{
    std::mt19937 rng(1122);
    /* Small trial spreads (every channel staged), then trials far apart in
     * random order (channels read directly), every nbits, both foff signs. */
    const uint32_t bits[] = {1, 2, 4, 8, 16, 32};
    for (int it = 0; it < 20; ++it) {
        case_def k;
        k.nchan = 8 * (1 + it % 5);
        k.nbits = bits[it % 6];
        k.foff = it % 2 ? 1.0 : -1.0;
        k.fch1 = k.foff < 0 ? 500.0 : 300.0;
        k.tsamp = 1e-3;
        std::uniform_real_distribution<double> dm(0.0, it < 6    ? 4.0
                                                       : it < 12 ? 600.0
                                                                 : 300.0);
        for (int d = 0; d < 1 + (it % 12) * 2; ++d)
            k.dms.push_back(dm(rng));
        k.mask = it % 3 == 1;
        k.zero_dm = it % 4 >= 2;
        k.mean = it % 5 == 3;
        k.packed = it % 2 == 0;
        k.dm_major = it % 3 == 2;
        k.n = 300 + 97 * it;
        k.batch = it % 2 ? 40 : 700;
        k.scrunch_tol = 0;
        k.scrunch_first = 1;
        if (it >= 12) { /* scrunched: increasing trials, factors 1 .. 64 */
            std::sort(k.dms.begin(), k.dms.end());
            k.scrunch_tol = 1.45 + 0.05 * (it - 12);
            k.scrunch_first = 1u << (it % 3);
            k.batch = it % 2 ? 97 : 500;
        }
        char name[96];
        snprintf(name, sizeof name,
                 "case %d (nchan %u, nbits %u, %zu trials, scrunch %g)", it, k.nchan,
                 k.nbits, k.dms.size(), k.scrunch_tol);
        run_case(k, rng, name);
    }
    check(scrunched >= 4, "at least 4 cases with growing scrunch factors");
    printf("test_dedisp_cuda_host: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
