/*
 * The paper's multi-pass edge localizer (cuda/edges/edges_paper.cuh) run on the host
 * through Thrust's CPP backend and compared with the reference variant, so the
 * algorithm is checked where no GPU is present. The host backend runs every
 * element pass in reverse order (a pass must not depend on the order of its
 * elements) and every scan in random tiles combined afterwards (a different
 * bracketing than a left fold, as on the GPU), and the operators are checked for
 * associativity directly.
 *
 * Signals: noisy pulse trains with ramps, runts and oscillation around mid;
 * samples drawn from the levels themselves and their neighbouring floats;
 * NaN/Inf; long intermediate stretches. Streams are cut into random chunks
 * (chunk size 1 included) with the carry passed on, under small output
 * capacities, starting at small and very large absolute positions. Transitions
 * must be equal bit for bit, and so must the stop points and the carries.
 */
#include "edges/edges_internal.h"
#include "edges/edges_paper.cuh"
#ifdef TR_PAPER_ON_GPU
#include "edges/edges_cuda.h"
#include <cuda_runtime.h>
#endif

#include <thrust/copy.h>
#include <thrust/scan.h>
#include <thrust/system/cpp/execution_policy.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

namespace
{

int g_failures = 0;
int g_checks = 0;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        ++g_checks;                                                                      \
        if (!(cond)) {                                                                   \
            if (++g_failures <= 20) {                                                    \
                std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);              \
                std::printf(__VA_ARGS__);                                                \
                std::printf("\n");                                                       \
            }                                                                            \
        }                                                                                \
    } while (0)

struct is_true {
    bool operator()(bool b) const { return b; }
};

#ifndef TR_PAPER_ON_GPU
/* Host execution backend for tr_paper::run. */
struct host_exec {
    std::mt19937_64 *rng;

    template <class F> int for_each(int64_t m, F f)
    {
        for (int64_t i = m; i-- > 0;)
            f(i);
        return 0;
    }

    template <class In, class Out, class Op>
    int scan(void *tmp, size_t &bytes, In in, Out out, int64_t m, Op op)
    {
        if (tmp == NULL) {
            bytes = 0;
            return 0;
        }
        typedef decltype(op(*in, *in)) T;
        std::vector<T> local;
        T prefix{};
        bool have = false;
        for (int64_t i = 0; i < m;) {
            int64_t len = 1 + (int64_t)((*rng)() % 37);
            if (len > m - i) len = m - i;
            local.resize((size_t)len);
            thrust::inclusive_scan(thrust::cpp::par, in + i, in + (i + len),
                                   local.begin(), op);
            for (int64_t j = 0; j < len; j++)
                *(out + (i + j)) = have ? op(prefix, local[(size_t)j]) : local[(size_t)j];
            prefix = have ? op(prefix, local[(size_t)len - 1]) : local[(size_t)len - 1];
            have = true;
            i += len;
        }
        return 0;
    }

    template <class In, class Flags, class Out>
    int select_flagged(void *tmp, size_t &bytes, In in, Flags flags, Out out,
                       int64_t *nsel, int64_t m)
    {
        if (tmp == NULL) {
            bytes = 0;
            return 0;
        }
        Out end = thrust::copy_if(thrust::cpp::par, in, in + m, flags, out, is_true());
        *nsel = end - out;
        return 0;
    }
};
#endif

uint64_t bits(double d)
{
    uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
}
uint32_t bitsf(float f)
{
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}

bool same_edge(const tr_edge &a, const tr_edge &b)
{
    return bits(a.time) == bits(b.time) && a.sample == b.sample &&
           a.polarity == b.polarity && a.reserved == b.reserved;
}

/* ---- signals ---------------------------------------------------------- */

float uni(std::mt19937_64 &r, float a, float b)
{
    return a + (b - a) * (float)((r() >> 11) * (1.0 / 9007199254740992.0));
}

tr_edges_lv random_levels(std::mt19937_64 &r)
{
    tr_edges_lv lv;
    switch (r() % 4) {
    case 0:
        lv.low = 0.1f, lv.mid = 0.5f, lv.high = 0.9f;
        break;
    case 1: /* the three levels on adjacent floats */
        lv.mid = uni(r, -2.0f, 2.0f);
        lv.low = std::nextafter(lv.mid, -INFINITY);
        lv.high = std::nextafter(lv.mid, INFINITY);
        break;
    case 2:
        lv.low = uni(r, -1.0f, 0.3f);
        lv.high = uni(r, 0.7f, 2.0f);
        lv.mid = uni(r, 0.31f, 0.69f);
        break;
    default: /* asymmetric, mid close to one boundary */
        lv.low = -1.0f, lv.high = 3.0f;
        lv.mid = (r() & 1) ? std::nextafter(-1.0f, 1.0f) : std::nextafter(3.0f, -1.0f);
        break;
    }
    return lv;
}

/* Samples drawn from a small set around the levels: exercises every equality
 * and the nearest floats on each side, plus the non-finite values. */
void gen_levelset(std::mt19937_64 &r, tr_edges_lv lv, std::vector<float> &x,
                  bool nonfinite)
{
    const float set[] = {lv.low,
                         lv.mid,
                         lv.high,
                         std::nextafter(lv.low, -INFINITY),
                         std::nextafter(lv.low, INFINITY),
                         std::nextafter(lv.mid, -INFINITY),
                         std::nextafter(lv.mid, INFINITY),
                         std::nextafter(lv.high, -INFINITY),
                         std::nextafter(lv.high, INFINITY),
                         lv.low - 1.0f,
                         lv.high + 1.0f,
                         0.5f * (lv.low + lv.mid),
                         0.5f * (lv.mid + lv.high),
                         NAN,
                         INFINITY,
                         -INFINITY};
    const size_t nset = nonfinite ? 16 : 13;
    for (float &v : x)
        v = set[r() % nset];
}

/* A noisy pulse train: ramps, ringing, runts, oscillation around mid, drops,
 * and long intermediate stretches. */
void gen_pulses(std::mt19937_64 &r, tr_edges_lv lv, std::vector<float> &x, bool nonfinite)
{
    const float lo = lv.low - 0.5f * (lv.high - lv.low) - 0.01f;
    const float hi = lv.high + 0.5f * (lv.high - lv.low) + 0.01f;
    const float amp = hi - lo;
    const float noise = amp * (float)(r() % 4) * 0.02f;
    size_t i = 0;
    float level = (r() & 1) ? hi : lo;
    while (i < x.size()) {
        const int kind = (int)(r() % 8);
        const float target = level == hi ? lo : hi;
        size_t len = 1 + r() % 12;
        if (kind == 0) { /* runt toward the other side */
            const float peak = uni(r, level, target);
            for (size_t k = 0; k < len && i < x.size(); k++, i++)
                x[i] = k < len / 2 ? peak : level;
        } else if (kind == 1) { /* oscillation around mid, then settle */
            for (size_t k = 0; k < len && i < x.size(); k++, i++)
                x[i] = lv.mid + ((k & 1) ? 1.0f : -1.0f) * uni(r, 0.0f, 0.3f * amp);
            level = (r() & 1) ? target : level;
        } else if (kind == 2) { /* long intermediate stretch */
            len = 20 + r() % 200;
            const float v = uni(r, lv.low, lv.high);
            for (size_t k = 0; k < len && i < x.size(); k++, i++)
                x[i] = v + uni(r, -noise, noise);
        } else if (kind == 3) { /* ramp to the other level with ringing */
            for (size_t k = 0; k < len && i < x.size(); k++, i++)
                x[i] = level + (target - level) * (float)(k + 1) / (float)len;
            for (size_t k = 0; k < 8 && i < x.size(); k++, i++)
                x[i] = target + 0.3f * amp * std::exp(-0.5f * (float)k) *
                                    std::sin(1.7f * (float)k);
            level = target;
        } else { /* settled, noisy */
            for (size_t k = 0; k < len && i < x.size(); k++, i++)
                x[i] = level + uni(r, -noise, noise);
        }
    }
    if (nonfinite) {
        const size_t drops = x.size() / 20;
        for (size_t k = 0; k < drops; k++) {
            const float v[] = {NAN, INFINITY, -INFINITY};
            x[r() % x.size()] = v[r() % 3];
        }
    }
}

/* ---- the comparison --------------------------------------------------- */

#ifdef TR_PAPER_ON_GPU
/* Failures of the test's own CUDA calls end the test. */
#define CUDA_OK(call)                                                                    \
    do {                                                                                 \
        const cudaError_t e_ = (call);                                                   \
        if (e_ != cudaSuccess) {                                                         \
            std::printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call,               \
                        cudaGetErrorString(e_));                                         \
            std::exit(1);                                                                \
        }                                                                                \
    } while (0)

/* A device buffer that grows on demand. */
struct dev_mem {
    void *p = nullptr;
    size_t n = 0;
    void *get(size_t bytes)
    {
        if (bytes == 0) bytes = 1;
        if (bytes > n) {
            if (p) CUDA_OK(cudaFree(p));
            CUDA_OK(cudaMalloc(&p, bytes));
            n = bytes;
        }
        return p;
    }
    ~dev_mem()
    {
        if (p) cudaFree(p);
    }
};
#endif

struct paper_runner {
    std::mt19937_64 rng;
    std::vector<unsigned char> temp;
    std::vector<tr_edge> out;
#ifdef TR_PAPER_ON_GPU
    dev_mem d_x, d_out, d_carry, d_stop, d_count, d_temp;
#endif

    /* The launcher over host memory (cout may equal cin). The GPU build copies
     * every buffer the launcher reads or writes, poison included, to the
     * device and back, so that both builds check the same contract. With
     * short_temp the temporary storage is one byte smaller than asked for. */
    int invoke(tr_edges_lv lv, tr_edges_carry *cin, tr_edges_carry *cout, const float *x,
               int64_t n, tr_edge *o, int64_t cap, tr_edge *stop, unsigned long long *cnt,
               bool short_temp)
    {
        size_t tb = 0;
#ifndef TR_PAPER_ON_GPU
        host_exec ex = {&rng};
        int err =
            tr_paper::run(ex, x, n, lv, cin, cout, NULL, cap, NULL, NULL, NULL, &tb);
        if (err) return err;
        temp.assign(tb, 0xA5);
        if (short_temp) tb--;
        return tr_paper::run(ex, x, n, lv, cin, cout, o, cap, stop, cnt, temp.data(),
                             &tb);
#else
        int err = tr_cuda_edges_paper_launch(NULL, n, lv, NULL, NULL, NULL, cap, NULL,
                                             NULL, NULL, &tb, NULL);
        if (err) return err;
        const bool alias = cin == cout;
        const size_t nout = (size_t)cap + 1;
        float *dx = (float *)d_x.get((size_t)n * sizeof(float));
        tr_edges_carry *dc = (tr_edges_carry *)d_carry.get(2 * sizeof(tr_edges_carry));
        tr_edge *dout = (tr_edge *)d_out.get(nout * sizeof(tr_edge));
        tr_edge *dstop = (tr_edge *)d_stop.get(sizeof(tr_edge));
        unsigned long long *dcnt =
            (unsigned long long *)d_count.get(sizeof(unsigned long long));
        void *dt = d_temp.get(tb);
        CUDA_OK(cudaMemset(dt, 0xA5, tb));
        if (n > 0)
            CUDA_OK(cudaMemcpy(dx, x, (size_t)n * sizeof(float), cudaMemcpyDefault));
        CUDA_OK(cudaMemcpy(dc, cin, sizeof *cin, cudaMemcpyDefault));
        if (!alias) CUDA_OK(cudaMemcpy(dc + 1, cout, sizeof *cout, cudaMemcpyDefault));
        CUDA_OK(cudaMemcpy(dout, o, nout * sizeof(tr_edge), cudaMemcpyDefault));
        CUDA_OK(cudaMemcpy(dstop, stop, sizeof *stop, cudaMemcpyDefault));
        CUDA_OK(cudaMemcpy(dcnt, cnt, sizeof *cnt, cudaMemcpyDefault));
        if (short_temp) tb--;
        err = tr_cuda_edges_paper_launch(dx, n, lv, dc, alias ? dc : dc + 1, dout, cap,
                                         dstop, dcnt, dt, &tb, NULL);
        if (err) return err;
        CUDA_OK(cudaDeviceSynchronize());
        CUDA_OK(cudaMemcpy(o, dout, nout * sizeof(tr_edge), cudaMemcpyDefault));
        CUDA_OK(cudaMemcpy(stop, dstop, sizeof *stop, cudaMemcpyDefault));
        CUDA_OK(cudaMemcpy(cnt, dcnt, sizeof *cnt, cudaMemcpyDefault));
        CUDA_OK(cudaMemcpy(cout, alias ? dc : dc + 1, sizeof *cout, cudaMemcpyDefault));
        return 0;
#endif
    }

    /* One call of the launcher, then what a caller does with its result:
     * consumed samples, the transitions kept, and the carry to continue with. */
    int call(tr_edges_lv lv, tr_edges_carry *c, const float *x, int64_t n, int64_t cap,
             std::vector<tr_edge> &kept, size_t *consumed)
    {
        tr_edge stop;
        std::memset(&stop, 0xA5, sizeof stop);
        const tr_edge poison = stop;
        out.assign((size_t)cap + 1, tr_edge());
        std::memset(out.data(), 0xA5, out.size() * sizeof(tr_edge));
        unsigned long long cnt = ~0ull;

        /* A too small temporary storage is refused. */
        int err = invoke(lv, c, c, x, n, out.data(), cap, &stop, &cnt, true);
        CHECK(err == tr_paper::ERR_INVALID, "small temp storage accepted (%d)", err);

        tr_edges_carry cin = *c, cout;
        std::memset(&cout, 0x5A, sizeof cout);
        /* Alias d_cout with d_cin half of the time, as the contract allows. */
        tr_edges_carry *co = (rng() & 1) ? c : &cout;
        err = invoke(lv, c, co, x, n, out.data(), cap, &stop, &cnt, false);
        if (err) return err;
        CHECK(cnt <= (unsigned long long)n, "count %llu > n %lld", cnt, (long long)n);
        const size_t got = cnt < (unsigned long long)cap ? (size_t)cnt : (size_t)cap;
        for (size_t k = 0; k < got; k++)
            kept.push_back(out[k]);
        for (size_t k = got; k < out.size(); k++)
            CHECK(std::memcmp(&out[k], &poison, sizeof poison) == 0, "out[%zu] written",
                  k);
        if (cnt > (unsigned long long)cap) {
            /* Continue right before transition number cap. */
            CHECK(stop.sample >= cin.pos && stop.sample < cin.pos + n, "stop sample %lld",
                  (long long)stop.sample);
            *c = cin;
            tr_edges_carry_before(c, &stop);
            if (stop.sample > cin.pos) {
                c->x_prev = x[stop.sample - cin.pos - 1];
                c->has_prev = 1;
            }
            *consumed = (size_t)(stop.sample - cin.pos);
        } else {
            CHECK(std::memcmp(&stop, &poison, sizeof poison) == 0, "stop written");
            *c = *co;
            *consumed = (size_t)n;
        }
        return 0;
    }
};

bool same_carry(const tr_edges_carry &a, const tr_edges_carry &b)
{
    return a.pos == b.pos && a.state == b.state && a.has_prev == b.has_prev &&
           (!a.has_prev || bitsf(a.x_prev) == bitsf(b.x_prev)) &&
           a.has_cand == b.has_cand && (!a.has_cand || bits(a.cand) == bits(b.cand));
}

/* Runs one stream through both variants with the same chunks and capacities. */
void compare_stream(std::mt19937_64 &r, tr_edges_lv lv, const std::vector<float> &x,
                    int64_t pos0, const char *what)
{
    paper_runner pr;
    pr.rng.seed(r());
    tr_edges_carry cref, cpap;
    std::memset(&cref, 0, sizeof cref);
    cref.pos = pos0;
    cpap = cref;
    std::vector<tr_edge> eref, epap, buf;
    const int chunking = (int)(r() % 4);
    const int capmode = (int)(r() % 3);
    size_t off = 0;
    int failures_before = g_failures;
    while (off < x.size() || (off == x.size() && (r() % 4) == 0)) {
        size_t len;
        switch (chunking) {
        case 0:
            len = 1;
            break;
        case 1:
            len = r() % 8;
            break;
        case 2:
            len = r() % (x.size() + 1);
            break;
        default:
            len = x.size();
            break;
        }
        if (len > x.size() - off) len = x.size() - off;
        size_t done = 0;
        int stalled = 0;
        do {
            int64_t cap;
            if (stalled || capmode == 0)
                cap = (int64_t)(len - done) + 3;
            else if (capmode == 1)
                cap = (int64_t)(r() % 4);
            else
                cap = (int64_t)(r() % 2);
            size_t cr = 0, cp = 0;
            buf.assign((size_t)cap + 1, tr_edge());
            const size_t nr =
                tr_edges_run_reference(lv, &cref, x.data() + off + done, len - done,
                                       buf.data(), (size_t)cap, &cr);
            const size_t before = epap.size();
            eref.insert(eref.end(), buf.begin(), buf.begin() + (long)nr);
            const int err = pr.call(lv, &cpap, x.data() + off + done,
                                    (int64_t)(len - done), cap, epap, &cp);
            CHECK(err == 0, "%s: launcher error %d", what, err);
            if (err) return;
            CHECK(cr == cp, "%s: consumed ref %zu paper %zu (pos %lld cap %lld)", what,
                  cr, cp, (long long)(pos0 + (int64_t)(off + done)), (long long)cap);
            CHECK(nr == epap.size() - before, "%s: transitions ref %zu paper %zu", what,
                  nr, epap.size() - before);
            if (cr != cp) return;
            if (cr == len - done && cr > 0)
                CHECK(same_carry(cref, cpap), "%s: carry differs at pos %lld", what,
                      (long long)cref.pos);
            stalled = cr == 0 && len - done > 0;
            done += cr;
        } while (done < len);
        off += len;
        if (off == x.size() && len == 0) break;
    }
    CHECK(eref.size() == epap.size(), "%s: total ref %zu paper %zu", what, eref.size(),
          epap.size());
    for (size_t k = 0; k < eref.size() && k < epap.size(); k++) {
        if (!same_edge(eref[k], epap[k])) {
            CHECK(false,
                  "%s: edge %zu ref (%.17g, %lld, %d) paper (%.17g, %lld, %d), pos0 %lld",
                  what, k, eref[k].time, (long long)eref[k].sample, eref[k].polarity,
                  epap[k].time, (long long)epap[k].sample, epap[k].polarity,
                  (long long)pos0);
            break;
        }
    }
    if (g_failures != failures_before)
        std::printf("  (%s: levels %.9g %.9g %.9g, %zu samples, chunking %d, caps %d)\n",
                    what, lv.low, lv.mid, lv.high, x.size(), chunking, capmode);
}

/* CUB combines in any bracketing: the operators must be associative. */
void check_associativity(std::mt19937_64 &r)
{
    tr_paper::level_op lop;
    for (uint8_t a = 0; a < 3; a++)
        for (uint8_t b = 0; b < 3; b++)
            for (uint8_t c = 0; c < 3; c++)
                CHECK(lop(lop(a, b), c) == lop(a, lop(b, c)), "level op %d %d %d", a, b,
                      c);
    /* Table I, verbatim. */
    const uint8_t table[3][3] = {{0, 1, 2}, {1, 1, 2}, {2, 1, 2}};
    for (uint8_t a = 0; a < 3; a++)
        for (uint8_t b = 0; b < 3; b++)
            CHECK(lop(a, b) == table[a][b], "Table I at %d %d", a, b);
    tr_paper::seg_min_op sop;
    const double vals[] = {0.0, 1.0, 2.0, 2.0, 3.5, 1e300, tr_paper::inf_value()};
    for (int t = 0; t < 20000; t++) {
        uint64_t p[3];
        for (auto &q : p)
            q = bits(vals[r() % 7]) | ((r() & 1) ? tr_paper::SEG_HEAD : 0);
        const uint64_t u = sop(sop(p[0], p[1]), p[2]);
        const uint64_t w = sop(p[0], sop(p[1], p[2]));
        CHECK(u == w, "segmented min not associative");
        /* The value is the numeric minimum since the last head. */
        double want = 0;
        for (int k = 0; k < 3; k++) {
            const double v = tr_paper::seg_value()(p[k]);
            if (k == 0 || (p[k] & tr_paper::SEG_HEAD))
                want = v;
            else if (v < want)
                want = v;
        }
        CHECK(bits(tr_paper::seg_value()(u)) == bits(want), "segmented min value");
    }
}

/* The size query (d_temp NULL) of either build. */
int size_query(int64_t n, int64_t cap, size_t *tb)
{
#ifdef TR_PAPER_ON_GPU
    return tr_cuda_edges_paper_launch(NULL, n, tr_edges_lv(), NULL, NULL, NULL, cap, NULL,
                                      NULL, NULL, tb, NULL);
#else
    std::mt19937_64 r(1);
    host_exec ex = {&r};
    return tr_paper::run(ex, NULL, n, tr_edges_lv(), NULL, NULL, NULL, cap, NULL, NULL,
                         NULL, tb);
#endif
}

/* The size query and argument checks. */
void check_contract()
{
    size_t tb = 0;
    CHECK(size_query(0, 0, &tb) == 0 && tb > 0, "size query for n = 0");
    CHECK(size_query(((int64_t)1 << 31) - 1, 0, &tb) == 0 && tb > ((size_t)1 << 31),
          "size query for n = 2^31 - 1");
    CHECK(size_query(-1, 0, &tb) == tr_paper::ERR_INVALID, "n < 0 accepted");
    CHECK(size_query((int64_t)1 << 31, 0, &tb) == tr_paper::ERR_INVALID,
          "n = 2^31 accepted");
    CHECK(size_query(5, -1, &tb) == tr_paper::ERR_INVALID, "cap < 0 accepted");
    CHECK(size_query(5, 0, NULL) == tr_paper::ERR_INVALID, "temp_bytes NULL accepted");
}

/* The paper's Figure 1 situations, by hand. */
void check_fixed()
{
    const tr_edges_lv lv = {0.1f, 0.5f, 0.9f};
    std::mt19937_64 r(7);
    /* runt, then a real edge preceded by oscillation around mid, then a falling
     * edge hidden by a NaN, then a falling edge after a falling crossing that a
     * NaN separates from the low sample (must use the rising... direction). */
    const std::vector<float> x = {0.0f, 0.0f, 0.6f,  0.7f, 0.2f, 0.0f, 0.4f, 0.6f,
                                  0.4f, 0.6f, 1.0f,  1.0f, NAN,  0.0f, 0.0f, NAN,
                                  0.7f, 0.3f, 0.95f, 0.5f, 0.5f, 0.05f};
    for (int rep = 0; rep < 50; rep++)
        compare_stream(r, lv, x, rep * 1000003LL, "fixed");
}

} // namespace

int main(int argc, char **argv)
{
#ifdef TR_PAPER_ON_GPU
    const char *name = "test_edges_paper_gpu";
    /* Every launch round-trips through the device: fewer streams. */
    const int streams = argc > 1 ? std::atoi(argv[1]) : 300;
    int ndev = 0;
    if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
        std::printf("%s: skipped: no CUDA device\n", name);
        return 77;
    }
#else
    const char *name = "test_edges_paper_host";
    const int streams = argc > 1 ? std::atoi(argv[1]) : 20000;
#endif
    std::mt19937_64 r(0x5eedULL);
    check_contract();
    check_associativity(r);
    check_fixed();
    std::vector<float> x;
    for (int s = 0; s < streams; s++) {
        const tr_edges_lv lv = random_levels(r);
        x.resize(1 + r() % (s % 10 == 0 ? 4000 : 300));
        const bool nonfinite = (r() % 3) != 0;
        const char *what;
        if (r() & 1) {
            gen_levelset(r, lv, x, nonfinite);
            what = "levelset";
        } else {
            gen_pulses(r, lv, x, nonfinite);
            what = "pulses";
        }
        int64_t pos0;
        switch (r() % 4) {
        case 0:
            pos0 = 0;
            break;
        case 1:
            pos0 = (int64_t)(r() % 1000);
            break;
        case 2:
            pos0 = ((int64_t)1 << 40) + (int64_t)(r() % 100000);
            break;
        default:
            pos0 = ((int64_t)1 << 52) - (int64_t)(r() % 5000);
            break;
        }
        compare_stream(r, lv, x, pos0, what);
        if (g_failures > 20) break;
    }
    std::printf("%s: %d checks, %d failures\n", name, g_checks, g_failures);
    std::printf("%d passed, %d failed\n", g_checks - g_failures, g_failures);
    return g_failures == 0 ? 0 : 1;
}
