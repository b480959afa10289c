/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * The detector cases of transient-flowgraph-bench and the flow graph tests:
 * for each detector a test signal, the GNU Radio block and the core object
 * with the same settings (backend, batch, detector parameters).
 */

#ifndef TRANSIENT_APPS_FLOWGRAPH_CASES_H
#define TRANSIENT_APPS_FLOWGRAPH_CASES_H

#include "signals.h"
#include <gnuradio/transient/boxcar_search_ff.h>
#include <gnuradio/transient/edge_localizer_f.h>
#include <gnuradio/transient/frb_search_f.h>
#include <gnuradio/transient/kalman_detector_ff.h>
#include <gnuradio/transient/spiir_bank_fc.h>
#include <transient/boxcar.h>
#include <transient/candidates.h>
#include <transient/edges.h>
#include <transient/frb.h>
#include <transient/kalman.h>
#include <transient/spiir.h>
#include <transient/spiir_triggers.h>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace trfg
{

//! One detector configuration.
struct det_case {
    std::string detector;   // "edges", "boxcar", "spiir", "kalman", "frb"
    unsigned nchan = 1;     // boxcar channels, frb frequency channels (items are
                            // nchan floats)
    unsigned templates = 0; // spiir bank
    unsigned filters = 0;   // spiir filters per template
    unsigned M = 92;        // kalman hypotheses
    size_t batch = 1 << 20; // block and core batch (samples per channel)
    std::string bank_file;  // spiir: the bank, saved by make_spiir_bank()
    float edge_levels[3] = {0.1f, 0.5f, 0.9f};
    double edge_min_width = 24, edge_max_width = 200; // edges: samples between edges
    bool edge_passthrough = true; // edges: false = output not connected (messages only)
    std::string edge_msg_format = "dicts"; // edges: "detects" as "dicts" or "vectors"
    std::string boxcar_norm = "white";     // boxcar: "white", "levels" or "fixed" (0, 1)
    bool boxcar_outputs = true; // boxcar: false = S/N and width not connected (candidates
                                // on "detects" only; CUDA: clustered on the device)
    size_t boxcar_spacing = 8192; // boxcar: samples between pulses (each is an event)
    std::string boxcar_msg_format = "dicts"; // boxcar: "detects" as "dicts" or "vectors"
    bool spiir_output = true; // spiir: false = SNR not connected (triggers on "detects"
                              // only; CUDA: searched on the device)
    std::string spiir_msg_format = "dicts"; // spiir: "detects" as "dicts" or "vectors"
};

/* ---- deterministic noise ------------------------------------------------ */

struct rng {
    uint64_t s;
    explicit rng(uint64_t seed) : s(seed * 0x9e3779b97f4a7c15ull + 0x2545f4914f6cdd1dull)
    {
    }
    uint64_t next()
    {
        uint64_t z = (s += 0x9e3779b97f4a7c15ull);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    double uniform() { return (double)(next() >> 11) * (1.0 / 9007199254740992.0); }
    double gauss()
    {
        double u = uniform();
        if (u < 1e-300) u = 1e-300;
        return std::sqrt(-2.0 * std::log(u)) * std::cos(6.283185307179586 * uniform());
    }
};

//! Floats per item of the detector's input.
inline size_t item_floats(const det_case &c)
{
    return c.detector == "boxcar" || c.detector == "frb" ? c.nchan : 1;
}

/* ---- the FRB search's band -------------------------------------------------- */

// 300 MHz below 1500 MHz in c.nchan channels, 64 us per spectrum, DM 0-1000
// (the band and sampling of Heimdall's synthetic file in docs/frb.md).
constexpr double k_frb_fch1 = 1500.0;
constexpr double k_frb_band = 300.0;
constexpr double k_frb_tsamp = 64e-6;
constexpr double k_frb_dm_max = 1000.0;
constexpr float k_frb_threshold = 8.0f;

//! The FRB case's dedispersion plan.
inline tr_dedisp_plan_config frb_plan(const det_case &c)
{
    tr_dedisp_plan_config p = tr_dedisp_plan_config_default();
    p.nchan = c.nchan;
    p.fch1 = k_frb_fch1;
    p.foff = -k_frb_band / c.nchan;
    p.tsamp = k_frb_tsamp;
    p.dm_min = 0.0;
    p.dm_max = k_frb_dm_max;
    return p;
}

/* ---- signals --------------------------------------------------------------- */

//! n items of item_floats(c) floats: the test signal of the detector.
inline std::vector<float> make_signal(det_case &c, size_t n, uint64_t seed)
{
    const size_t nc = item_floats(c);
    std::vector<float> x(n * nc);
    rng r(seed);
    if (c.detector == "edges") {
        tr_sig_config sc = tr_sig_config_default();
        sc.seed = seed;
        sc.min_width = c.edge_min_width;
        sc.max_width = c.edge_max_width;
        tr_sig_info info;
        if (tr_sig_generate(&sc, x.data(), n, &info) != 0)
            throw std::runtime_error("edges: signal generator failed");
        c.edge_levels[0] = info.low;
        c.edge_levels[1] = info.mid;
        c.edge_levels[2] = info.high;
    } else if (c.detector == "boxcar") {
        // Unit white noise with a boxcar pulse (S/N about 15 to 40 at its own
        // width) every boxcar_spacing samples, in a channel that moves along.
        for (auto &v : x)
            v = (float)r.gauss();
        const size_t sp = std::max<size_t>(c.boxcar_spacing, 512);
        for (size_t p = sp / 2, k = 0; p + 256 < n; p += sp, k++) {
            const unsigned w = 1u << (k % 7); // 1 .. 64 samples
            const double snr = 15.0 + 25.0 * r.uniform();
            const float a = (float)(snr / std::sqrt((double)w));
            const size_t ch = (k * 7) % nc;
            for (unsigned j = 0; j < w; j++)
                x[(p + j) * nc + ch] += a;
        }
    } else if (c.detector == "frb") {
        // Unit white noise spectra with a burst of 4 spectra dispersed at DM
        // 500 (S/N about 30) every 65536 spectra.
        for (auto &v : x)
            v = (float)r.gauss();
        const tr_dedisp_plan_config plan = frb_plan(c);
        const float a = (float)(30.0 / std::sqrt(4.0 * nc));
        for (size_t p = 32768; p < n; p += 65536)
            for (uint32_t ch = 0; ch < nc; ch++)
                for (size_t j = p + tr_dedisp_delay(&plan, 500.0, ch), e = j + 4;
                     j < e && j < n; j++)
                    x[j * nc + ch] += a;
    } else if (c.detector == "spiir") {
        // Unit white noise with a strong impulse (20000) every 16384 samples.
        for (auto &v : x)
            v = (float)r.gauss();
        for (size_t p = 8192; p < n; p += 16384)
            x[p] += 20000.0f;
    } else if (c.detector == "kalman") {
        // AR(1) noise (0.5, unit innovations) with a burst of an AR(1) target
        // (0.9, innovations of variance 4) of 60 samples every 2000 samples.
        double nv = 0.0, xv = 0.0;
        for (size_t t = 0; t < n; t++) {
            nv = 0.5 * nv + r.gauss();
            const size_t ph = t % 2000;
            if (ph == 1000) xv = 0.0;
            double s = 0.0;
            if (ph >= 1000 && ph < 1060) {
                xv = 0.9 * xv + 2.0 * r.gauss();
                s = xv;
            }
            x[t] = (float)(nv + s);
        }
    } else {
        throw std::invalid_argument("unknown detector " + c.detector);
    }
    return x;
}

//! SPIIR bank of c.templates x c.filters filters (random but fixed poles near
//! the unit circle, delays up to 4096), saved to `path` for the block.
inline void make_spiir_bank(det_case &c, const std::string &path, uint64_t seed)
{
    const double pi = 3.14159265358979323846;
    std::vector<tr_spiir_filter> f((size_t)c.templates * c.filters);
    std::vector<uint32_t> counts(c.templates, c.filters);
    rng r(seed);
    for (size_t i = 0; i < f.size(); i++) {
        const size_t l = i % c.filters;
        const double m = 1.0 - std::pow(10.0, -2.0 - r.uniform());
        const double ph = pi * (0.01 + 0.98 * r.uniform());
        const double g = (1.0 - m) * (0.5 + r.uniform());
        const double pb = 2.0 * pi * r.uniform();
        f[i].a1_re = m * std::cos(ph);
        f[i].a1_im = m * std::sin(ph);
        f[i].b0_re = g * std::cos(pb);
        f[i].b0_im = g * std::sin(pb);
        f[i].delay = (int32_t)(4096.0 * ((double)l + r.uniform()) / c.filters);
        f[i].level = 0;
    }
    tr_error err;
    tr_spiir_bank *b =
        tr_spiir_bank_create(f.data(), counts.data(), c.templates, 1.0 / 4096.0, &err);
    if (!b) throw std::runtime_error(std::string("spiir bank: ") + err.message);
    const tr_status st = tr_spiir_bank_save(b, path.c_str(), &err);
    tr_spiir_bank_destroy(b);
    if (st != TR_OK) throw std::runtime_error(std::string("spiir bank: ") + err.message);
    c.bank_file = path;
}

/* ---- blocks ---------------------------------------------------------------- */

// Block parameters, shared with the core configurations below.
constexpr float k_boxcar_threshold = 7.0f;
constexpr unsigned k_boxcar_max_width = 256;
constexpr float k_spiir_threshold = 0.02f; // |z| of the test banks: noise ~1e-3
constexpr int k_spiir_window = 1024;

//! Input item size in bytes.
inline int in_item_bytes(const det_case &c)
{
    return (int)(sizeof(float) * item_floats(c));
}

//! The detector block and the item sizes of the outputs a sink takes (none:
//! connect no sink; the block is the end of the stream).
inline gr::block_sptr make_block(const det_case &c, const std::string &backend,
                                 std::vector<int> &out_sizes)
{
    if (c.detector == "edges") {
        // Without the pass-through output the block consumes its input and
        // reports transitions on "detects" only.
        out_sizes.assign(c.edge_passthrough ? 1 : 0, (int)sizeof(float));
        return gr::transient::edge_localizer_f::make(
            false, c.edge_levels[0], c.edge_levels[1], c.edge_levels[2], 10.0, 50.0, 100,
            65536, 0, backend, 0, c.batch, c.edge_msg_format);
    }
    if (c.detector == "boxcar") {
        out_sizes.assign(c.boxcar_outputs ? 2 : 0, in_item_bytes(c));
        return gr::transient::boxcar_search_ff::make(
            c.nchan, "boxdit", {32, 16, 16, 16, 8}, 1, 0, k_boxcar_max_width,
            k_boxcar_threshold, c.boxcar_norm, 3.0, 16384, 4, 0, "median", 0.0, 1.0, 0, 1,
            backend, 0, c.batch, false, c.boxcar_msg_format);
    }
    if (c.detector == "spiir") {
        out_sizes.assign(c.spiir_output ? 1 : 0, (int)(2 * sizeof(float) * c.templates));
        return gr::transient::spiir_bank_fc::make(
            c.bank_file, {}, {}, {}, {}, {}, 0.0, k_spiir_threshold, k_spiir_window,
            false, backend, 0, c.batch, c.spiir_msg_format);
    }
    if (c.detector == "frb") {
        // A sink: candidates on "detects" only.
        out_sizes.clear();
        const tr_dedisp_plan_config p = frb_plan(c);
        return gr::transient::frb_search_f::make(
            c.nchan, p.fch1, p.foff, p.tsamp, p.dm_min, p.dm_max, p.tolerance,
            p.pulse_width, {}, {}, true, "boxdit", {32, 16, 16, 16, 8}, 1, 1024,
            k_frb_threshold, "white", 1024, 3.0, 0, 200, false, backend, 0,
            (unsigned)c.batch);
    }
    if (c.detector == "kalman") {
        out_sizes.assign(1, (int)sizeof(float));
        return gr::transient::kalman_detector_ff::make(c.M, c.M / 2, 0.0, 1e-9, {0.5},
                                                       1.0, 0.0, {0.9}, 1.0, "rect", 10.0,
                                                       "", backend, 0, c.batch);
    }
    throw std::invalid_argument("unknown detector " + c.detector);
}

/* ---- the core with the block's settings -------------------------------------- */

//! The boxcar block's normalisation settings as a core configuration.
inline tr_boxcar_norm_config boxcar_norm_config(const det_case &c)
{
    tr_boxcar_norm_config n = tr_boxcar_norm_config_default();
    n.mode = c.boxcar_norm == "fixed"    ? TR_BOXCAR_NORM_FIXED
             : c.boxcar_norm == "levels" ? TR_BOXCAR_NORM_LEVELS
                                         : TR_BOXCAR_NORM_WHITE;
    n.reject_sigma = 3.0;
    n.window = 16384;
    n.history = 4;
    n.baseline = TR_BOXCAR_BASELINE_NONE;
    n.fixed_mean = 0.0;
    n.fixed_sigma = 1.0;
    return n;
}

//! The SPIIR core of a case (its bank file, batch) on `backend`.
inline tr_spiir *make_spiir(const det_case &c, tr_backend backend)
{
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    tr_spiir_bank *b = tr_spiir_bank_load(c.bank_file.c_str(), &err);
    if (!b) throw std::runtime_error(std::string("spiir core: ") + err.message);
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.backend = backend;
    cfg.batch = c.batch;
    tr_spiir *q = tr_spiir_create(&cfg, b, &err);
    tr_spiir_bank_destroy(b);
    if (!q) throw std::runtime_error(std::string("spiir core: ") + err.message);
    return q;
}

//! The core object of a case, fed chunk by chunk like the block feeds it.
class core_runner
{
  public:
    core_runner(const det_case &c, tr_backend backend) : d_c(c)
    {
        tr_error err;
        err.code = TR_OK;
        err.message[0] = '\0';
        const size_t chunk = c.batch;
        if (c.detector == "edges") {
            tr_edges_config cfg = tr_edges_config_default();
            cfg.levels_mode = TR_LEVELS_FIXED;
            cfg.low = c.edge_levels[0];
            cfg.mid = c.edge_levels[1];
            cfg.high = c.edge_levels[2];
            cfg.backend = backend;
            cfg.batch = c.batch;
            d_edges = tr_edges_create(&cfg, &err);
            if (!d_edges) fail(err.message);
            d_edge_out.resize(chunk + 1024);
        } else if (c.detector == "boxcar") {
            tr_boxcar_config cfg = tr_boxcar_config_default();
            cfg.algorithm = TR_BOXCAR_BOXDIT;
            cfg.max_width = k_boxcar_max_width;
            const uint32_t w[5] = {32, 16, 16, 16, 8};
            for (int i = 0; i < 5; i++)
                cfg.widths[i] = w[i];
            cfg.nwidths = 5;
            cfg.nchan = c.nchan;
            cfg.norm = boxcar_norm_config(c);
            cfg.backend = backend;
            cfg.batch = c.batch;
            d_boxcar = tr_boxcar_create(&cfg, &err);
            if (!d_boxcar) fail(err.message);
            d_snr.resize(chunk * c.nchan);
            d_width.resize(chunk * c.nchan);
            if (!c.boxcar_outputs) {
                // What the block does without outputs: the clustering too, on
                // the device with the CUDA backend (only events come back) when
                // the statistics can be measured there (as the block decides:
                // no baseline)
                tr_candidates_config cc = tr_candidates_config_default();
                cc.nchan = c.nchan;
                cc.threshold = k_boxcar_threshold;
                const bool dev_norm = cfg.norm.baseline == TR_BOXCAR_BASELINE_NONE;
                cc.backend = dev_norm ? tr_boxcar_backend(d_boxcar) : TR_BACKEND_CPU;
                d_cands = tr_candidates_create(&cc, &err);
                if (!d_cands) fail(err.message);
                d_cand_out.resize(1024);
            }
        } else if (c.detector == "spiir") {
            d_spiir = make_spiir(c, backend);
            d_snr.resize(chunk * 2 * (size_t)c.templates);
        } else if (c.detector == "frb") {
            // frb_search_f's defaults (tr_frb's) with the case's band.
            tr_frb_config cfg = tr_frb_config_default();
            cfg.dedisp.plan = frb_plan(c);
            cfg.threshold = k_frb_threshold;
            cfg.backend = backend;
            cfg.block = (uint32_t)c.batch;
            d_frb = tr_frb_create(&cfg, &err);
            if (!d_frb) fail(err.message);
            d_frb_cands.resize(1024);
        } else if (c.detector == "kalman") {
            const double an = 0.5, ax = 0.9;
            tr_kalman_design d = tr_kalman_design_default();
            d.M = c.M;
            d.noise_order = 1;
            d.noise_ar = &an;
            d.noise_var = 1.0;
            d.meas_var = 0.0;
            d.target_order = 1;
            d.target_ar = &ax;
            d.target_var = 1.0;
            d.envelope = TR_KALMAN_ENV_RECT;
            d.env_param = 10.0;
            tr_kalman_model *m = tr_kalman_model_design(&d, &err);
            if (!m) fail(err.message);
            tr_kalman_config cfg = tr_kalman_config_default();
            cfg.Ns = c.M / 2;
            cfg.alpha = 1e-9;
            cfg.threshold = 0.0;
            cfg.backend = backend;
            cfg.batch = c.batch;
            d_kalman = tr_kalman_create(&cfg, m, &err);
            tr_kalman_model_destroy(m);
            if (!d_kalman) fail(err.message);
            d_snr.resize(chunk);
            d_events.resize(4096);
        } else {
            fail("unknown detector");
        }
    }
    ~core_runner()
    {
        if (d_edges) tr_edges_destroy(d_edges);
        if (d_cands) tr_candidates_destroy(d_cands);
        if (d_boxcar) tr_boxcar_destroy(d_boxcar);
        if (d_spiir) tr_spiir_destroy(d_spiir);
        if (d_kalman) tr_kalman_destroy(d_kalman);
        if (d_frb) tr_frb_destroy(d_frb);
    }
    core_runner(const core_runner &) = delete;
    core_runner &operator=(const core_runner &) = delete;

    //! Processes n <= batch samples (items) of x; returns detections found.
    size_t process(const float *x, size_t n)
    {
        size_t found = 0;
        if (d_edges) {
            size_t done = 0;
            while (done < n) {
                size_t consumed = 0, nout = 0;
                if (tr_edges_process(d_edges, x + done, n - done, d_edge_out.data(),
                                     d_edge_out.size(), &consumed, &nout) != TR_OK)
                    fail(tr_edges_last_error(d_edges));
                done += consumed;
                found += nout;
            }
        } else if (d_boxcar && d_cands &&
                   tr_candidates_backend(d_cands) == TR_BACKEND_CUDA) {
            if (tr_boxcar_search_candidates_pipelined(d_cands, d_boxcar, x, n) != TR_OK)
                fail(tr_boxcar_last_error(d_boxcar));
            found += read_candidates();
        } else if (d_boxcar) {
            const uint64_t pos = tr_boxcar_position(d_boxcar);
            if (tr_boxcar_process(d_boxcar, x, n, d_snr.data(), d_width.data()) != TR_OK)
                fail(tr_boxcar_last_error(d_boxcar));
            if (d_cands) {
                if (tr_boxcar_candidates_process(d_cands, d_boxcar, pos, d_snr.data(),
                                                 d_width.data(), n) != TR_OK)
                    fail(tr_candidates_last_error(d_cands));
                found += read_candidates();
            }
        } else if (d_spiir) {
            if (tr_spiir_process(d_spiir, x, n, d_snr.data()) != TR_OK)
                fail(tr_spiir_last_error(d_spiir));
        } else if (d_frb) {
            if (tr_frb_process(d_frb, x, n) != TR_OK) fail(tr_frb_last_error(d_frb));
            while (const size_t k =
                       tr_frb_read(d_frb, d_frb_cands.data(), d_frb_cands.size()))
                found += k;
        } else if (d_kalman) {
            if (tr_kalman_process(d_kalman, x, n, d_snr.data(), nullptr) != TR_OK)
                fail(tr_kalman_last_error(d_kalman));
            for (;;) {
                const size_t k =
                    tr_kalman_events(d_kalman, d_events.data(), d_events.size());
                found += k;
                if (k < d_events.size()) break;
            }
        }
        return found;
    }

    //! The S/N output of the last call (boxcar, spiir, kalman LLR).
    const float *snr() const { return d_snr.data(); }

    tr_backend backend() const
    {
        if (d_edges) return tr_edges_backend(d_edges);
        if (d_boxcar) return tr_boxcar_backend(d_boxcar);
        if (d_spiir) return tr_spiir_backend(d_spiir);
        if (d_frb) return tr_frb_backend(d_frb);
        return tr_kalman_backend(d_kalman);
    }

  private:
    size_t read_candidates()
    {
        size_t found = 0, k;
        while ((k = tr_candidates_read(d_cands, d_cand_out.data(), d_cand_out.size())) >
               0)
            found += k;
        return found;
    }
    [[noreturn]] void fail(const char *what) const
    {
        throw std::runtime_error(d_c.detector + " core: " + (what ? what : "?"));
    }
    const det_case d_c;
    tr_edges *d_edges = nullptr;
    tr_boxcar *d_boxcar = nullptr;
    tr_candidates *d_cands = nullptr; // boxcar without outputs
    std::vector<tr_candidate> d_cand_out;
    tr_spiir *d_spiir = nullptr;
    tr_kalman *d_kalman = nullptr;
    tr_frb *d_frb = nullptr;
    std::vector<tr_edge> d_edge_out;
    std::vector<float> d_snr;
    std::vector<int32_t> d_width;
    std::vector<tr_kalman_event> d_events;
    std::vector<tr_frb_candidate> d_frb_cands;
};

} // namespace trfg

#endif /* TRANSIENT_APPS_FLOWGRAPH_CASES_H */
