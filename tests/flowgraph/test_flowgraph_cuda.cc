/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The CUDA pipeline in a GNU Radio flow graph gives the same detections as the
 * CPU pipeline, for every detector: the same signal goes through
 * source -> block -> sink once with backend "cpu" and once with "cuda", and the
 * outputs and tags are compared with the equality of docs/architecture.md:
 *   edges   bit-identical output and transition tags;
 *   boxcar  S/N within 2 TR_BOXCAR_FAST_TOL(L_end) (1 + |Y|) (each backend is
 *           within one tolerance of the reference), the same pulse events
 *           (channel, S/N within 1e-3, start within the event's width);
 *   spiir   relative RMS difference of the SNR at most 2e-4, the same triggers
 *           (template, sample; |SNR| within 1e-3);
 *   kalman  LLR within 2e-3 max(1, |LLR|), the same burst tags except where
 *           the LLR is that close to the threshold.
 *   frb     every injected burst found at its DM and time on the CPU, the
 *           same candidates (sample, DM trial, width) with S/N above the
 *           threshold + 0.5 (the sink's "detects" messages).
 * The CUDA batches are smaller than the streams and do not divide them, so
 * that several batches, GNU Radio's chunking and the end of a stream are
 * exercised. Exit 77 (skipped) without a usable GPU; `--cpu-only` runs the
 * CPU flow graphs alone (checks that the signals give detections).
 *
 * Boxcar also runs without its S/N and width outputs (the block as a sink,
 * the candidates on "detects" only; with CUDA the WHITE statistics, window 0
 * held by its own statistics, measured and clustered on the device): every
 * sample consumed, the candidates match the pulse tags of the run with the
 * outputs on the same backend.
 *
 * Edges also run without the pass-through output (the block as a sink, the
 * transitions on "detects" only) and with "detects" connected: the messages
 * carry exactly the transitions of the tags, with both backends, for a
 * transition every 24 to 200 and every 4 to 40 samples, in both message
 * formats ("dicts": a dict per transition; "vectors": uniform vectors).
 *
 * SPIIR also runs without its SNR output (the block as a sink, the triggers on
 * "detects" only; with CUDA the SNR stays on the GPU and the triggers are
 * searched there), in both message formats, with GNU Radio's work calls and
 * with calls of at most 997 samples: every sample consumed, the triggers
 * those of the CPU block's tags (as above); with CUDA also exactly those of
 * the host search (GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS=0). The same sink with
 * multirate and with complex input (spiir_bank_cc): CUDA's device search
 * gives exactly its host search's triggers and the CPU's.
 */

#include "flowgraph_blocks.h"
#include "flowgraph_cases.h"

#include <gnuradio/top_block.h>
#include <gnuradio/transient/spiir_bank_cc.h>
#include <pmt/pmt.h>
#include <transient/common.h>

#include <unistd.h>
#include <algorithm>
#include <tuple>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace
{

int g_failures = 0;

#define CHECK(cond, ...)                                                                 \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            std::fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__);                    \
            std::fprintf(stderr, __VA_ARGS__);                                           \
            std::fprintf(stderr, "\n");                                                  \
            g_failures++;                                                                \
        }                                                                                \
    } while (0)

//! Keeps every message it receives on its port "in".
class msg_store : public gr::block
{
  public:
    typedef std::shared_ptr<msg_store> sptr;
    static sptr make() { return gnuradio::make_block_sptr<msg_store>(); }
    msg_store()
        : gr::block("msg_store", gr::io_signature::make(0, 0, 0),
                    gr::io_signature::make(0, 0, 0))
    {
        message_port_register_in(pmt::mp("in"));
        set_msg_handler(pmt::mp("in"), [this](const pmt::pmt_t &m) {
            std::lock_guard<std::mutex> lk(d_m);
            d_msgs.push_back(m);
        });
    }
    std::vector<pmt::pmt_t> msgs()
    {
        std::lock_guard<std::mutex> lk(d_m);
        return d_msgs;
    }

  private:
    std::mutex d_m;
    std::vector<pmt::pmt_t> d_msgs;
};

struct run_out {
    std::vector<std::vector<char>> data;
    std::vector<gr::tag_t> tags;
    std::vector<pmt::pmt_t> msgs; // "detects" messages (edges, when asked for)
    uint64_t consumed = 0;        // samples the detector took
};

// source (n items of vlen floats from x) -> blk -> a sink of its outputs
// (item sizes `sizes`; none: no sink); max_items > 0: the source produces at
// most that many items per call.
run_out run_graph(gr::block_sptr blk, const std::vector<int> &sizes, unsigned vlen,
                  std::shared_ptr<const std::vector<float>> x, uint64_t n, bool msgs,
                  int max_items)
{
    auto src = trfg::ring_source::make(x, vlen, n, 0, false);
    if (max_items > 0) src->set_max_noutput_items(max_items);
    // No outputs (edges without the pass-through output): no sink.
    trfg::capture_sink::sptr snk;
    if (!sizes.empty()) snk = trfg::capture_sink::make(sizes);
    auto store = msg_store::make();
    gr::top_block_sptr tb = gr::make_top_block("test_flowgraph_cuda");
    tb->connect(src, 0, blk, 0);
    for (size_t i = 0; i < sizes.size(); i++)
        tb->connect(blk, (int)i, snk, (int)i);
    if (msgs) tb->msg_connect(blk, "detects", store, "in");
    tb->run();
    run_out r;
    for (size_t i = 0; i < sizes.size(); i++)
        r.data.push_back(snk->data(i));
    if (snk) r.tags = snk->tags();
    if (msgs) {
        // Delivered by the store's own thread: wait briefly for the last.
        for (int i = 0; i < 50 && store->msgs().empty(); i++)
            usleep(10000);
        r.msgs = store->msgs();
    }
    r.consumed = blk->nitems_read(0);
    return r;
}

run_out run(const trfg::det_case &c, const std::string &backend,
            std::shared_ptr<const std::vector<float>> x, uint64_t n, bool msgs = false,
            int max_items = 0)
{
    std::vector<int> sizes;
    gr::block_sptr blk = trfg::make_block(c, backend, sizes);
    return run_graph(blk, sizes, (unsigned)trfg::item_floats(c), x, n, msgs, max_items);
}

// Tags of the detector's key only, in offset order.
std::vector<gr::tag_t> det_tags(const run_out &r, const char *key)
{
    std::vector<gr::tag_t> v;
    for (const auto &t : r.tags)
        if (pmt::symbol_to_string(t.key) == key) v.push_back(t);
    std::stable_sort(v.begin(), v.end(), gr::tag_t::offset_compare);
    return v;
}

double dnum(const pmt::pmt_t &dict, const char *key)
{
    const pmt::pmt_t v = pmt::dict_ref(dict, pmt::mp(key), pmt::PMT_NIL);
    if (pmt::is_integer(v)) return (double)pmt::to_long(v);
    if (pmt::is_uint64(v)) return (double)pmt::to_uint64(v);
    if (pmt::is_real(v)) return pmt::to_double(v);
    return NAN;
}

const float *floats(const std::vector<char> &b)
{
    return (const float *)b.data();
}

void check_edges(const trfg::det_case &c, const run_out &a, const run_out &g, uint64_t n,
                 const std::vector<float> &x)
{
    CHECK(a.data[0].size() == n * 4 && g.data[0].size() == n * 4,
          "edges: output lengths %zu, %zu", a.data[0].size() / 4, g.data[0].size() / 4);
    // The block passes its input through unchanged.
    CHECK(a.data[0].size() == n * 4 &&
              std::memcmp(a.data[0].data(), x.data(), n * 4) == 0,
          "edges: the CPU output is not the input");
    CHECK(a.data[0] == g.data[0], "edges: outputs differ");
    const auto ta = det_tags(a, "edge"), tg = det_tags(g, "edge");
    CHECK(!ta.empty(), "edges: no transitions found");
    CHECK(ta.size() == tg.size(), "edges: %zu transitions on the CPU, %zu on CUDA",
          ta.size(), tg.size());
    size_t bad = 0;
    for (size_t i = 0; i < std::min(ta.size(), tg.size()); i++) {
        const double t1 = dnum(ta[i].value, "time"), t2 = dnum(tg[i].value, "time");
        if (ta[i].offset != tg[i].offset || std::memcmp(&t1, &t2, sizeof t1) != 0 ||
            dnum(ta[i].value, "polarity") != dnum(tg[i].value, "polarity"))
            bad++;
    }
    CHECK(bad == 0, "edges: %zu transitions differ", bad);
    (void)c;
    std::printf("edges: %zu transitions, identical\n", ta.size());
}

// The transitions of "detects" messages: (sample, time bits, polarity).
struct edge_rec {
    uint64_t sample;
    double time;
    long polarity;
    bool operator==(const edge_rec &o) const
    {
        return sample == o.sample && polarity == o.polarity &&
               std::memcmp(&time, &o.time, sizeof time) == 0;
    }
};

// Either format: {"edges": [dict, ...]} or {"sample": u64vector, "time":
// f64vector, "polarity": s8vector} (vectors of unequal length count as one
// bad record, so that the comparison fails).
std::vector<edge_rec> msg_edges(const run_out &r)
{
    std::vector<edge_rec> v;
    for (const auto &m : r.msgs) {
        const pmt::pmt_t e = pmt::dict_ref(m, pmt::mp("edges"), pmt::PMT_NIL);
        for (size_t i = 0; pmt::is_vector(e) && i < pmt::length(e); i++) {
            const pmt::pmt_t d = pmt::vector_ref(e, i);
            v.push_back(edge_rec{(uint64_t)dnum(d, "sample"), dnum(d, "time"),
                                 (long)dnum(d, "polarity")});
        }
        const pmt::pmt_t s = pmt::dict_ref(m, pmt::mp("sample"), pmt::PMT_NIL);
        if (!pmt::is_u64vector(s)) continue;
        const pmt::pmt_t t = pmt::dict_ref(m, pmt::mp("time"), pmt::PMT_NIL);
        const pmt::pmt_t p = pmt::dict_ref(m, pmt::mp("polarity"), pmt::PMT_NIL);
        const size_t n = pmt::length(s);
        if (!pmt::is_f64vector(t) || !pmt::is_s8vector(p) || pmt::length(t) != n ||
            pmt::length(p) != n) {
            v.push_back(edge_rec{0, NAN, 0});
            continue;
        }
        for (size_t i = 0; i < n; i++)
            v.push_back(edge_rec{pmt::u64vector_ref(s, i), pmt::f64vector_ref(t, i),
                                 (long)pmt::s8vector_ref(p, i)});
    }
    return v;
}

std::vector<edge_rec> tag_edges(const run_out &r)
{
    std::vector<edge_rec> v;
    for (const auto &t : det_tags(r, "edge")) {
        v.push_back(
            edge_rec{t.offset, dnum(t.value, "time"), (long)dnum(t.value, "polarity")});
        if ((uint64_t)dnum(t.value, "sample") != t.offset) v.back().polarity = 0;
    }
    return v;
}

// Edges without the pass-through output and with "detects" connected: the
// messages hold exactly the transitions of the tags of `ref` (a flow graph with
// the output connected and no messages).
void check_edges_outputs(trfg::det_case c, const std::string &backend,
                         std::shared_ptr<const std::vector<float>> x, uint64_t n,
                         const run_out &ref, const char *what)
{
    const std::vector<edge_rec> want = tag_edges(ref);
    CHECK(!want.empty(), "edges %s: no transitions", what);
    // Output connected, detects connected: tags unchanged, messages = tags.
    const run_out both = run(c, backend, x, n, true);
    CHECK(both.data[0] == ref.data[0], "edges %s %s: output differs with messages", what,
          backend.c_str());
    CHECK(tag_edges(both) == want, "edges %s %s: tags differ with messages", what,
          backend.c_str());
    CHECK(msg_edges(both) == want, "edges %s %s: messages (%zu) differ from tags (%zu)",
          what, backend.c_str(), msg_edges(both).size(), want.size());
    // No output: every sample consumed, messages = tags.
    c.edge_passthrough = false;
    const run_out none = run(c, backend, x, n, true);
    CHECK(none.consumed == n, "edges %s %s: %llu of %llu samples consumed without output",
          what, backend.c_str(), (unsigned long long)none.consumed,
          (unsigned long long)n);
    CHECK(msg_edges(none) == want,
          "edges %s %s: %zu transitions in messages without output, %zu tags", what,
          backend.c_str(), msg_edges(none).size(), want.size());
    // The same in the "vectors" message format.
    c.edge_msg_format = "vectors";
    const run_out vnone = run(c, backend, x, n, true);
    CHECK(vnone.consumed == n, "edges %s %s: %llu of %llu samples consumed (vectors)",
          what, backend.c_str(), (unsigned long long)vnone.consumed,
          (unsigned long long)n);
    CHECK(msg_edges(vnone) == want,
          "edges %s %s: %zu transitions in vector messages without output, %zu tags",
          what, backend.c_str(), msg_edges(vnone).size(), want.size());
    c.edge_passthrough = true;
    const run_out vboth = run(c, backend, x, n, true);
    CHECK(vboth.data[0] == ref.data[0],
          "edges %s %s: output differs with vector messages", what, backend.c_str());
    CHECK(tag_edges(vboth) == want, "edges %s %s: tags differ with vector messages", what,
          backend.c_str());
    CHECK(msg_edges(vboth) == want, "edges %s %s: vector messages (%zu) differ from tags",
          what, backend.c_str(), msg_edges(vboth).size());
    c.edge_passthrough = false;
    c.edge_msg_format = "dicts";
    // No output, no messages: the core alone, every sample consumed.
    const run_out bare = run(c, backend, x, n, false);
    CHECK(bare.consumed == n, "edges %s %s: %llu of %llu samples consumed (bare)", what,
          backend.c_str(), (unsigned long long)bare.consumed, (unsigned long long)n);
    std::printf("edges %s %s: %zu transitions, messages (dicts and vectors) with and "
                "without the output equal the tags\n",
                what, backend.c_str(), want.size());
}

// Pulses of ta without a match in tg: the same channel, start within the
// width, S/N within 1e-3 (each tg pulse matches once).
size_t unmatched(const std::vector<gr::tag_t> &ta, const std::vector<gr::tag_t> &tg)
{
    size_t bad = 0;
    std::vector<bool> used(tg.size(), false);
    for (const auto &t : ta) {
        const double ch = dnum(t.value, "channel"), w = dnum(t.value, "width"),
                     s = dnum(t.value, "snr");
        bool ok = false;
        for (size_t j = 0; j < tg.size() && !ok; j++) {
            if (used[j] || dnum(tg[j].value, "channel") != ch) continue;
            const double d = std::fabs((double)t.offset - (double)tg[j].offset);
            if (d > std::max(w, dnum(tg[j].value, "width"))) continue;
            if (std::fabs(dnum(tg[j].value, "snr") - s) >
                1e-3 * std::max(1.0, std::fabs(s)))
                continue;
            used[j] = ok = true;
        }
        if (!ok) bad++;
    }
    return bad;
}

void check_boxcar(const trfg::det_case &c, const run_out &a, const run_out &g, uint64_t n)
{
    const size_t m = n * c.nchan;
    CHECK(a.data[0].size() == m * 4 && g.data[0].size() == m * 4,
          "boxcar/%u: output lengths differ", c.nchan);
    if (a.data[0].size() == m * 4 && g.data[0].size() == m * 4) {
        // L_end of BoxDIT 32,16,16,16,8 up to 256 is at most 512.
        const double tol = 2.0 * TR_BOXCAR_FAST_TOL(512);
        size_t bad = 0;
        const float *ya = floats(a.data[0]), *yg = floats(g.data[0]);
        for (size_t i = 0; i < m; i++) {
            const double d = std::fabs((double)ya[i] - yg[i]);
            if (!(d <= tol * (1.0 + std::fabs((double)ya[i]))) &&
                !(std::isinf(ya[i]) && ya[i] == yg[i]))
                bad++;
        }
        CHECK(bad == 0, "boxcar/%u: %zu of %zu S/N values differ beyond tolerance",
              c.nchan, bad, m);
    }
    const auto ta = det_tags(a, "pulse"), tg = det_tags(g, "pulse");
    CHECK(ta.size() >= 10, "boxcar/%u: only %zu pulses found", c.nchan, ta.size());
    CHECK(ta.size() == tg.size(), "boxcar/%u: %zu pulses on the CPU, %zu on CUDA",
          c.nchan, ta.size(), tg.size());
    const size_t bad = unmatched(ta, tg);
    CHECK(bad == 0, "boxcar/%u: %zu pulses without a match", c.nchan, bad);
    std::printf("boxcar/%u: %zu pulses, equal\n", c.nchan, ta.size());
}

// Without the S/N and width outputs: every sample consumed, and the
// candidates on "detects" match the pulse tags of the run with the outputs on
// the same backend (with CUDA they were clustered on the device).
void check_boxcar_outputs(trfg::det_case c, const std::string &backend,
                          std::shared_ptr<const std::vector<float>> x, uint64_t n,
                          const run_out &ref)
{
    c.boxcar_outputs = false;
    const run_out none = run(c, backend, x, n, true);
    CHECK(none.consumed == n,
          "boxcar/%u %s: %llu of %llu samples consumed without outputs", c.nchan,
          backend.c_str(), (unsigned long long)none.consumed, (unsigned long long)n);
    std::vector<gr::tag_t> got;
    for (const pmt::pmt_t &m : none.msgs) {
        const pmt::pmt_t v = pmt::dict_ref(m, pmt::mp("pulses"), pmt::PMT_NIL);
        if (!pmt::is_vector(v)) continue;
        for (size_t i = 0; i < pmt::length(v); i++) {
            gr::tag_t t;
            t.value = pmt::vector_ref(v, i);
            t.offset = (uint64_t)dnum(t.value, "start");
            got.push_back(t);
        }
    }
    const auto want = det_tags(ref, "pulse");
    CHECK(got.size() == want.size(),
          "boxcar/%u %s: %zu candidates without outputs, %zu tags", c.nchan,
          backend.c_str(), got.size(), want.size());
    const size_t bad = unmatched(want, got);
    CHECK(bad == 0, "boxcar/%u %s: %zu tags without a candidate", c.nchan,
          backend.c_str(), bad);
    std::printf("boxcar/%u %s: %zu candidates without outputs, equal to the tags\n",
                c.nchan, backend.c_str(), got.size());
}

// SPIIR triggers by (sample, template): |SNR|, phase (NaN from tags) and time.
struct spiir_trig {
    double snr, phase, time;
    bool operator==(const spiir_trig &o) const
    {
        return std::memcmp(&snr, &o.snr, sizeof snr) == 0 &&
               std::memcmp(&time, &o.time, sizeof time) == 0 &&
               (std::memcmp(&phase, &o.phase, sizeof phase) == 0 ||
                (std::isnan(phase) && std::isnan(o.phase)));
    }
};
using spiir_triggers = std::map<std::pair<uint64_t, long>, spiir_trig>;

spiir_triggers spiir_tag_triggers(const run_out &r)
{
    spiir_triggers m;
    for (const auto &t : det_tags(r, "trigger"))
        m[{t.offset, (long)dnum(t.value, "template")}] = spiir_trig{
            dnum(t.value, "snr"), dnum(t.value, "phase"), dnum(t.value, "time")};
    return m;
}

// Either format: {"triggers": [dict, ...]} or uniform vectors (snr and phase
// as the float32 the vectors carry; vectors of unequal length make a NaN
// entry, so that comparisons fail).
spiir_triggers spiir_msg_triggers(const run_out &r)
{
    spiir_triggers m;
    for (const auto &msg : r.msgs) {
        const pmt::pmt_t d = pmt::dict_ref(msg, pmt::mp("triggers"), pmt::PMT_NIL);
        for (size_t i = 0; pmt::is_vector(d) && i < pmt::length(d); i++) {
            const pmt::pmt_t e = pmt::vector_ref(d, i);
            m[{(uint64_t)dnum(e, "sample"), (long)dnum(e, "template")}] = spiir_trig{
                dnum(e, "snr"), (double)(float)dnum(e, "phase"), dnum(e, "time")};
        }
        const pmt::pmt_t s = pmt::dict_ref(msg, pmt::mp("sample"), pmt::PMT_NIL);
        if (!pmt::is_s64vector(s)) continue;
        const pmt::pmt_t tm = pmt::dict_ref(msg, pmt::mp("time"), pmt::PMT_NIL);
        const pmt::pmt_t tp = pmt::dict_ref(msg, pmt::mp("template"), pmt::PMT_NIL);
        const pmt::pmt_t z = pmt::dict_ref(msg, pmt::mp("snr"), pmt::PMT_NIL);
        const pmt::pmt_t ph = pmt::dict_ref(msg, pmt::mp("phase"), pmt::PMT_NIL);
        const size_t k = pmt::length(s);
        if (!pmt::is_f64vector(tm) || !pmt::is_u32vector(tp) || !pmt::is_f32vector(z) ||
            !pmt::is_f32vector(ph) || pmt::length(tm) != k || pmt::length(tp) != k ||
            pmt::length(z) != k || pmt::length(ph) != k) {
            m[{0, -1}] = spiir_trig{NAN, NAN, NAN};
            continue;
        }
        for (size_t i = 0; i < k; i++)
            m[{(uint64_t)pmt::s64vector_ref(s, i), (long)pmt::u32vector_ref(tp, i)}] =
                spiir_trig{(double)pmt::f32vector_ref(z, i),
                           (double)pmt::f32vector_ref(ph, i), pmt::f64vector_ref(tm, i)};
    }
    return m;
}

// Triggers of a or b without a twin in the other (the same sample and
// template, |SNR| within 1e-3). One without a twin is allowed only when its
// |SNR| is within 1e-3 of the threshold (a peak the float32 differences of
// two backends may put on either side).
size_t spiir_unmatched(const spiir_triggers &a, const spiir_triggers &b)
{
    const double thr = trfg::k_spiir_threshold;
    size_t bad = 0;
    for (const auto &e : a) {
        auto it = b.find(e.first);
        const double z = e.second.snr;
        if (it == b.end()
                ? !(std::fabs(z) <= thr * (1 + 1e-3))
                : !(std::fabs(it->second.snr - z) <= 1e-3 * std::max(1.0, std::fabs(z))))
            bad++;
    }
    for (const auto &e : b)
        if (!a.count(e.first) && !(std::fabs(e.second.snr) <= thr * (1 + 1e-3))) bad++;
    return bad;
}

// The triggers of a SPIIR sink over x (n items) on `backend`: spiir_bank_cc
// (x interleaved complex) or spiir_bank_fc, single-rate or multirate.
spiir_triggers spiir_sink(const trfg::det_case &c, const std::string &backend,
                          bool complex_in, bool multirate,
                          std::shared_ptr<const std::vector<float>> x, uint64_t n)
{
    gr::block_sptr blk;
    if (complex_in)
        blk = gr::transient::spiir_bank_cc::make(
            c.bank_file, {}, {}, {}, {}, {}, 0.0, trfg::k_spiir_threshold,
            trfg::k_spiir_window, multirate, backend, 0, c.batch, "vectors");
    else
        blk = gr::transient::spiir_bank_fc::make(
            c.bank_file, {}, {}, {}, {}, {}, 0.0, trfg::k_spiir_threshold,
            trfg::k_spiir_window, multirate, backend, 0, c.batch, "vectors");
    const run_out r = run_graph(blk, {}, complex_in ? 2 : 1, x, n, true, 0);
    CHECK(r.consumed == n, "spiir sink %s: %llu of %llu samples consumed",
          backend.c_str(), (unsigned long long)r.consumed, (unsigned long long)n);
    return spiir_msg_triggers(r);
}

// The sink's other forms: multirate (the multirate engine's device path) and
// complex input (spiir_bank_cc): the CPU finds triggers; CUDA's device search
// gives those of its host search exactly and the CPU's (spiir_unmatched).
void check_spiir_forms(const trfg::det_case &c, const std::vector<float> &x, uint64_t n,
                       bool cpu_only)
{
    // Complex input: the real signal, with the imaginary part its reverse / 2.
    auto xc = std::make_shared<std::vector<float>>(2 * n);
    for (uint64_t i = 0; i < n; i++) {
        (*xc)[2 * i] = x[i];
        (*xc)[2 * i + 1] = 0.5f * x[n - 1 - i];
    }
    auto xr = std::make_shared<std::vector<float>>(x.begin(), x.begin() + n);
    for (const bool complex_in : {false, true}) {
        const bool multirate = !complex_in;
        const char *form = complex_in ? "complex input" : "multirate";
        auto in = complex_in ? xc : xr;
        const spiir_triggers cpu = spiir_sink(c, "cpu", complex_in, multirate, in, n);
        CHECK(!cpu.empty(), "spiir sink, %s: no triggers on the CPU", form);
        if (cpu_only) {
            std::printf("spiir sink, %s: %zu triggers on the CPU\n", form, cpu.size());
            continue;
        }
        const spiir_triggers dev = spiir_sink(c, "cuda", complex_in, multirate, in, n);
        setenv("GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS", "0", 1);
        const spiir_triggers host = spiir_sink(c, "cuda", complex_in, multirate, in, n);
        unsetenv("GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS");
        CHECK(dev == host,
              "spiir sink, %s: the device search (%zu) differs from the "
              "host search (%zu)",
              form, dev.size(), host.size());
        const size_t bad = spiir_unmatched(cpu, dev);
        CHECK(bad == 0, "spiir sink, %s: %zu triggers of CPU and CUDA without a match",
              form, bad);
        std::printf("spiir sink, %s: %zu triggers, CUDA (searched on the GPU) equal\n",
                    form, cpu.size());
    }
}

void check_spiir(const trfg::det_case &c, const run_out &a, const run_out &g, uint64_t n)
{
    const size_t m = n * 2 * c.templates;
    CHECK(a.data[0].size() == m * 4 && g.data[0].size() == m * 4,
          "spiir: output lengths differ");
    if (a.data[0].size() == m * 4 && g.data[0].size() == m * 4) {
        const float *za = floats(a.data[0]), *zg = floats(g.data[0]);
        double num = 0, den = 0;
        for (size_t i = 0; i < m; i++) {
            const double d = (double)za[i] - zg[i];
            num += d * d;
            den += (double)za[i] * za[i];
        }
        const double rel = den > 0 ? std::sqrt(num / den) : 0.0;
        double zmax = 0;
        for (size_t i = 0; i + 1 < m; i += 2)
            zmax = std::max(zmax, std::hypot((double)za[i], (double)za[i + 1]));
        CHECK(rel <= 2e-4, "spiir: relative RMS difference %.3g", rel);
        std::printf("spiir: SNR relative RMS difference %.3g (RMS |z| %.3g, max %.3g)\n",
                    rel, std::sqrt(den / (m / 2)), zmax);
    }
    const auto ta = spiir_tag_triggers(a), tg = spiir_tag_triggers(g);
    CHECK(!ta.empty(), "spiir: no triggers");
    const size_t bad = spiir_unmatched(ta, tg);
    CHECK(bad == 0, "spiir: %zu triggers without a match", bad);
    std::printf("spiir: %zu triggers, equal\n", ta.size());
}

// Without the SNR output, "detects" connected: every sample consumed, the
// triggers of the messages (both formats, GNU Radio's work calls and calls of
// at most 997 samples) are those of the tags of `ref` (the CPU block with the
// output); with CUDA (searched on the device) also exactly those of the host
// search of the same SNR.
void check_spiir_outputs(trfg::det_case c, const std::string &backend,
                         std::shared_ptr<const std::vector<float>> x, uint64_t n,
                         const run_out &ref)
{
    const spiir_triggers want = spiir_tag_triggers(ref);
    CHECK(!want.empty(), "spiir %s: no triggers", backend.c_str());
    c.spiir_output = false;
    spiir_triggers host;
    if (backend == "cuda") {
        setenv("GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS", "0", 1);
        host = spiir_msg_triggers(run(c, backend, x, n, true));
        unsetenv("GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS");
        CHECK(spiir_unmatched(want, host) == 0,
              "spiir %s: %zu triggers of the host search without a match",
              backend.c_str(), spiir_unmatched(want, host));
    }
    for (const char *fmt : {"dicts", "vectors"}) {
        for (int max_items : {0, 997}) {
            c.spiir_msg_format = fmt;
            const run_out r = run(c, backend, x, n, true, max_items);
            CHECK(r.consumed == n, "spiir %s %s/%d: %llu of %llu samples consumed",
                  backend.c_str(), fmt, max_items, (unsigned long long)r.consumed,
                  (unsigned long long)n);
            const spiir_triggers got = spiir_msg_triggers(r);
            const size_t bad = spiir_unmatched(want, got);
            // The CPU sink has the CPU tags' triggers exactly; CUDA may differ
            // at the threshold (spiir_unmatched).
            CHECK(bad == 0 && (backend == "cuda" || got.size() == want.size()),
                  "spiir %s %s/%d: %zu triggers in messages without output, %zu tags, "
                  "%zu without a match",
                  backend.c_str(), fmt, max_items, got.size(), want.size(), bad);
            CHECK(backend != "cuda" || got == host,
                  "spiir %s %s/%d: the device search differs from the host search",
                  backend.c_str(), fmt, max_items);
        }
    }
    std::printf("spiir %s: %zu triggers without the output (dicts and vectors, %s) equal "
                "the CPU tags\n",
                backend.c_str(), want.size(),
                backend == "cuda" ? "searched on the GPU, equal to the host search"
                                  : "searched on the CPU");
}

void check_kalman(const trfg::det_case &c, const run_out &a, const run_out &g, uint64_t n)
{
    (void)c;
    CHECK(a.data[0].size() == n * 4 && g.data[0].size() == n * 4,
          "kalman: output lengths differ");
    const float *la = floats(a.data[0]), *lg = floats(g.data[0]);
    auto close = [](double x, double y, double k) {
        return std::fabs(x - y) <= k * std::max(1.0, std::fabs(x));
    };
    if (a.data[0].size() == n * 4 && g.data[0].size() == n * 4) {
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            if (!close(la[i], lg[i], 2e-3) && !(la[i] == lg[i])) bad++;
        CHECK(bad == 0, "kalman: %zu of %zu LLR values differ beyond tolerance", bad,
              (size_t)n);
    }
    const auto ta = det_tags(a, "burst"), tg = det_tags(g, "burst");
    CHECK(ta.size() >= 10, "kalman: only %zu burst tags", ta.size());
    // Tags may differ only where the LLR is within the tolerance of the
    // threshold (0) near the tag.
    auto near_thr = [&](uint64_t off) {
        for (uint64_t k = off > 1 ? off - 1 : 0; k <= off + 1 && k < n; k++)
            if (std::fabs(la[k]) <= 2e-3 * std::max(1.0, std::fabs((double)la[k])))
                return true;
        return false;
    };
    std::map<std::pair<uint64_t, bool>, int> sa, sg;
    for (const auto &t : ta)
        sa[{t.offset, pmt::to_bool(t.value)}]++;
    for (const auto &t : tg)
        sg[{t.offset, pmt::to_bool(t.value)}]++;
    size_t bad = 0;
    for (const auto &e : sa)
        if (!sg.count(e.first) && !near_thr(e.first.first)) bad++;
    for (const auto &e : sg)
        if (!sa.count(e.first) && !near_thr(e.first.first)) bad++;
    CHECK(bad == 0, "kalman: %zu burst tags differ away from the threshold", bad);
    std::printf("kalman: %zu burst tags, equal\n", ta.size());
}

// The candidates of frb_search_f's "detects" messages.
struct frb_cand {
    double sample, channel, width, snr, dm;
};

std::vector<frb_cand> frb_cands(const run_out &r)
{
    std::vector<frb_cand> v;
    for (const auto &m : r.msgs) {
        const pmt::pmt_t p = pmt::dict_ref(m, pmt::mp("pulses"), pmt::PMT_NIL);
        for (size_t i = 0; pmt::is_vector(p) && i < pmt::length(p); i++) {
            const pmt::pmt_t d = pmt::vector_ref(p, i);
            v.push_back({dnum(d, "sample"), dnum(d, "channel"), dnum(d, "width"),
                         dnum(d, "snr"), dnum(d, "dm")});
        }
    }
    return v;
}

// Every injected burst (make_signal: DM 500, 4 spectra, one every 65536 from
// 32768) is found by the CPU flow graph at its DM and time; the CUDA flow
// graph reports the same candidates away from the threshold.
void check_frb(const trfg::det_case &c, const run_out &a, const run_out &g, uint64_t n)
{
    CHECK(a.consumed == n && g.consumed == n, "frb: consumed %llu and %llu of %llu",
          (unsigned long long)a.consumed, (unsigned long long)g.consumed,
          (unsigned long long)n);
    const auto ca = frb_cands(a), cg = frb_cands(g);
    const tr_dedisp_plan_config plan = trfg::frb_plan(c);
    const uint64_t sweep = tr_dedisp_delay(&plan, 500.0, c.nchan - 1);
    size_t bursts = 0, found = 0;
    for (uint64_t p = 32768; p + sweep + 4 < n; p += 65536, bursts++)
        for (const auto &e : ca)
            if (std::fabs(e.sample - (double)(p + 1)) <= 4 &&
                std::fabs(e.dm - 500.0) <= 25.0) {
                found++;
                break;
            }
    CHECK(bursts > 0 && found == bursts, "frb: %zu of %zu bursts found on the CPU", found,
          bursts);
    const double margin = trfg::k_frb_threshold + 0.5;
    auto strong = [margin](const std::vector<frb_cand> &v) {
        std::vector<std::tuple<double, double, double>> s;
        for (const auto &e : v)
            if (e.snr > margin) s.emplace_back(e.sample, e.channel, e.width);
        std::sort(s.begin(), s.end());
        return s;
    };
    CHECK(strong(ca) == strong(cg), "frb: %zu candidates on the CPU, %zu on CUDA differ",
          ca.size(), cg.size());
    std::printf("frb: %zu candidates (%zu of %zu bursts), CPU and CUDA equal\n",
                ca.size(), found, bursts);
}

} // namespace

int main(int argc, char **argv)
{
    const bool cpu_only = argc > 1 && std::strcmp(argv[1], "--cpu-only") == 0;
    char why[256] = "";
    if (!cpu_only && tr_cuda_device_count(why, sizeof why) <= 0) {
        std::printf("skipped: no usable CUDA device (%s)\n", why);
        return 77;
    }

    char bank_path[] = "/tmp/transient-fg-test-bank-XXXXXX";
    const int fd = mkstemp(bank_path);
    if (fd < 0) {
        std::fprintf(stderr, "cannot create a temporary file\n");
        return 1;
    }
    close(fd);

    struct spec {
        const char *det;
        unsigned nchan;
        size_t batch;
        uint64_t n;
        double edge_min, edge_max; // edges: samples between transitions (0: default)
    };
    const spec specs[] = {
        {"edges", 1, 65536, 3000017, 0, 0},  {"edges", 1, 4096, 300007, 4, 40},
        {"boxcar", 1, 65536, 1500007, 0, 0}, {"boxcar", 16, 8192, 200003, 0, 0},
        {"spiir", 1, 4096, 150001, 0, 0},    {"kalman", 1, 65536, 1000003, 0, 0},
        {"frb", 64, 16384, 140003, 0, 0},
    };
    for (const spec &s : specs) {
        trfg::det_case c;
        c.detector = s.det;
        c.nchan = s.nchan;
        c.batch = s.batch;
        c.templates = 64;
        c.filters = 16;
        if (s.edge_min > 0) {
            c.edge_min_width = s.edge_min;
            c.edge_max_width = s.edge_max;
        }
        try {
            if (c.detector == "spiir") trfg::make_spiir_bank(c, bank_path, 3);
            auto x = std::make_shared<std::vector<float>>(trfg::make_signal(c, s.n, 5));
            const bool msgs = c.detector == "frb"; // a sink: candidates on detects
            const run_out a = run(c, "cpu", x, s.n, msgs);
            const run_out g = cpu_only ? a : run(c, "cuda", x, s.n, msgs);
            if (c.detector == "edges") {
                check_edges(c, a, g, s.n, *x);
                char what[64];
                std::snprintf(what, sizeof what, "(a transition every %g-%g samples)",
                              c.edge_min_width, c.edge_max_width);
                check_edges_outputs(c, "cpu", x, s.n, a, what);
                if (!cpu_only) check_edges_outputs(c, "cuda", x, s.n, a, what);
            }
            if (c.detector == "boxcar") {
                check_boxcar(c, a, g, s.n);
                check_boxcar_outputs(c, "cpu", x, s.n, a);
                if (!cpu_only) check_boxcar_outputs(c, "cuda", x, s.n, g);
            }
            if (c.detector == "spiir") {
                check_spiir(c, a, g, s.n);
                check_spiir_outputs(c, "cpu", x, s.n, a);
                if (!cpu_only) check_spiir_outputs(c, "cuda", x, s.n, a);
                check_spiir_forms(c, *x, s.n, cpu_only);
            }
            if (c.detector == "kalman") check_kalman(c, a, g, s.n);
            if (c.detector == "frb") check_frb(c, a, g, s.n);
        } catch (const std::exception &e) {
            CHECK(false, "%s: %s", s.det, e.what());
        }
    }
    unlink(bank_path);
    if (g_failures) {
        std::printf("%d check(s) failed\n", g_failures);
        return 1;
    }
    std::printf("all detectors: the %s flow graphs agree\n",
                cpu_only ? "CPU (only)" : "CUDA and CPU");
    return 0;
}
