/*
 * The CUDA fast variant's scan formulation (cuda/edges/edges_scan.cuh), run on the
 * host: per-thread summaries, prefixes combined in many different groupings (as
 * the block scan and the decoupled look-back may combine them), replay, and the
 * carry between launches must reproduce the reference bit for bit. This checks
 * the algorithm without a GPU; the gpu tests check the kernel itself.
 */
#include <transient/transient.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "edges/edges_internal.h"
#include "edges/edges_scan.cuh"
#include "common/test_util.h"

static const tr_edges_lv LV = {0.1f, 0.5f, 0.9f};

/* Fold a range of summaries in a random tree shape. */
static tr_edge_summary fold(const std::vector<tr_edge_summary> &v, size_t a, size_t b,
                            tu_rng *r)
{
    if (b - a == 1) return v[a];
    size_t mid = a + 1 + (size_t)tu_range(r, 0, (long)(b - a - 2));
    tr_edge_summary left = fold(v, a, mid, r), right = fold(v, mid, b, r);
    /* The scan across tiles works on packed summaries: packing anywhere must
     * not change what the replay and the carry read. */
    if (tu_uniform(r) < 0.3) left = tr_edge_summary_unpack(tr_edge_summary_pack(left));
    if (tu_uniform(r) < 0.3) right = tr_edge_summary_unpack(tr_edge_summary_pack(right));
    return tr_edge_summary_op()(left, right);
}

static bool same_summary(const tr_edge_summary &a, const tr_edge_summary &b)
{
    return a.pre_rise == b.pre_rise && a.pre_fall == b.pre_fall && a.tail == b.tail &&
           a.count == b.count && a.first == b.first && a.last == b.last;
}

/* Masks of 32 samples starting at local index j0 (NaN past n), as the kernel's
 * ballots build them. */
static tr_edge_group group_masks(const float *x, int32_t n, int32_t j0,
                                 const tr_edges_carry &c)
{
    tr_edge_group g = {0, 0, 0, 0};
    for (int i = 0; i < 32; i++) {
        const int32_t j = j0 + i;
        const float v = j < n ? x[j] : NAN;
        const bool has_a = j > 0 || c.has_prev;
        const float xa = j > 0 ? (j - 1 < n ? x[j - 1] : NAN) : c.x_prev;
        const int level = tr_edges_level(v, LV);
        g.lo |= (uint32_t)(level == TR_STATE_LOW) << i;
        g.hi |= (uint32_t)(level == TR_STATE_HIGH) << i;
        const bool ok = has_a && tr_edges_finite(xa) && tr_edges_finite(v);
        g.rise |= (uint32_t)(ok && xa < LV.mid && LV.mid <= v) << i;
        g.fall |= (uint32_t)(ok && v < LV.mid && LV.mid <= xa) << i;
    }
    return g;
}

/* One emulated launch: same steps as the kernel, any grouping of the scan. */
static size_t emulate_launch(const float *x, int32_t n, tr_edges_carry *c, tr_edge *out,
                             tu_rng *r)
{
    const int groups = (n + 31) / 32;
    std::vector<tr_edge_summary> sums(groups + 1);
    std::vector<tr_edge_group> masks(groups);
    sums[0] = tr_edge_summary_carry(*c);
    for (int g = 0; g < groups; g++) {
        masks[g] = group_masks(x, n, 32 * g, *c);
        sums[g + 1] = tr_edges_group_summary(masks[g], 32 * g);
        /* Against the sequential definition of a summary. */
        tr_edge_summary seq = tr_edge_summary_empty();
        for (int i = 0; i < 32; i++)
            tr_edge_summary_push(seq, 32 * g + i,
                                 tr_edges_level(32 * g + i < n ? x[32 * g + i] : NAN, LV),
                                 (masks[g].rise >> i) & 1u, (masks[g].fall >> i) & 1u);
        CHECK(same_summary(seq, sums[g + 1]),
              "group summary differs from the pushed one");
    }
    size_t nout = 0;
    for (int g = 0; g < groups; g++) {
        const tr_edge_summary p = fold(sums, 0, (size_t)g + 1, r);
        if (!tr_edges_group_emits(p, sums[g + 1])) continue;
        tr_edges_group_replay(masks[g], 32 * g, p, x, *c, LV,
                              [&](uint32_t k, const tr_edge &e) {
                                  out[k] = e;
                                  if (k + 1 > nout) nout = k + 1;
                              });
    }
    const tr_edge_summary total = fold(sums, 0, sums.size(), r);
    CHECK(nout <= total.count, "replay wrote past the total count");
    nout = total.count;
    if (n > 0) *c = tr_edges_summary_carry_out(total, x, n, LV, *c);
    return nout;
}

int main()
{
    tu_rng r = {42};
    const float special[] = {0.1f, 0.5f, 0.9f, 0.0f,     1.0f,
                             0.3f, 0.7f, NAN,  INFINITY, -INFINITY};
    for (int trial = 0; trial < 300; trial++) {
        const size_t n = (size_t)tu_range(&r, 0, 3000);
        std::vector<float> x(n + 1);
        for (size_t i = 0; i < n; i++) {
            double u = tu_uniform(&r);
            x[i] = u < 0.4 ? special[tu_range(&r, 0, 9)]
                           : (float)(0.05 + 0.9 * tu_uniform(&r) + (u < 0.5 ? 0.3 : 0.0));
        }
        std::vector<tr_edge> ref(n + 1), got(n + 1);
        tr_edges_carry rc;
        memset(&rc, 0, sizeof rc);
        size_t used = 0;
        const size_t nref =
            tr_edges_run_reference(LV, &rc, x.data(), n, ref.data(), n, &used);

        tr_edges_carry gc;
        memset(&gc, 0, sizeof gc);
        size_t pos = 0, ngot = 0;
        while (pos < n) { /* random launch sizes carry the state like batches do */
            size_t len = (size_t)tu_range(&r, 1, trial % 3 == 0 ? 5 : 700);
            if (len > n - pos) len = n - pos;
            ngot +=
                emulate_launch(x.data() + pos, (int32_t)len, &gc, got.data() + ngot, &r);
            pos += len;
        }
        bool same = ngot == nref;
        for (size_t i = 0; same && i < nref; i++)
            same = !memcmp(&ref[i].time, &got[i].time, sizeof(double)) &&
                   ref[i].sample == got[i].sample && ref[i].polarity == got[i].polarity;
        CHECK(same, "trial %d n=%zu: %zu vs reference %zu", trial, n, ngot, nref);
        CHECK(gc.state == rc.state && gc.has_cand == rc.has_cand &&
                  (!rc.has_cand || gc.cand == rc.cand) && gc.pos == rc.pos,
              "trial %d: final carry differs", trial);
    }
    return tu_finish("test_edges_scan_host");
}
