/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/*
 * Python helpers over libtransient on numpy arrays: no flowgraph needed.
 *   find_edges(x, low, mid, high, backend='cpu', variant='fast')
 *   estimate_state_levels(x, bins=100, tolerance_pct=10, mid_pct=50)
 *   edges_to_pulses(edges)
 *   spiir_filter(x, a1, b0, delay, level, counts, dt, multirate=False, ...)
 *   spiir_latency(a1, b0, delay, level, counts, dt)
 *   spiir_triggers(snr, threshold, window)
 *   spiir_autochisq(snr, sample, template, autocorr)
 *   version(), cuda_compiled(), cuda_device_count()
 *   boxcar_plan(algorithm, max_width, widths, depth, layers)
 *   boxcar_predict(algorithm, max_width, widths, depth, layers, smax, exact)
 *   boxcar_predict_list(widths, separations, smax, exact)
 *   boxcar_search(x, algorithm, max_width, ...)
 *   boxcar_candidates(snr, width, threshold, link_time, link_chan, ...)
 */

#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <transient/transient.h>
#include <transient/boxcar_predict.h>
#include <transient/candidates.h>

#include "core_util_python.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cctype>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace tr_python;

namespace
{

using float_array = py::array_t<float, py::array::c_style | py::array::forcecast>;

// Transitions are collected in chunks of at most this many per process() call.
constexpr size_t k_edge_chunk = size_t(1) << 20;

const float *samples_of(const float_array &x, size_t *n)
{
    if (x.ndim() != 1) throw py::value_error("x must be a one-dimensional array");
    *n = static_cast<size_t>(x.shape(0));
    return x.data();
}

py::dtype make_dtype(std::initializer_list<std::pair<const char *, const char *>> fields)
{
    py::list spec;
    for (const auto &f : fields)
        spec.append(py::make_tuple(f.first, f.second));
    return py::dtype::from_args(spec);
}

py::dtype edge_dtype()
{
    return make_dtype({{"time", "<f8"}, {"sample", "<u8"}, {"polarity", "<i1"}});
}

py::dtype pulse_dtype()
{
    return make_dtype({{"start", "<f8"},
                       {"width", "<f8"},
                       {"period", "<f8"},
                       {"duty", "<f8"},
                       {"polarity", "<i1"}});
}

size_t field_offset(const py::dtype &dt, const char *name)
{
    return dt.attr("fields")[name].cast<py::tuple>()[1].cast<size_t>();
}

// Writes one value into field `off` of record i of a packed structured array.
template <typename T> void put(char *base, size_t itemsize, size_t i, size_t off, T value)
{
    std::memcpy(base + i * itemsize + off, &value, sizeof(T));
}

struct edges_deleter {
    void operator()(tr_edges *q) const { tr_edges_destroy(q); }
};

py::array find_edges(const float_array &x, float low, float mid, float high,
                     const std::string &backend, const std::string &variant)
{
    size_t n = 0;
    const float *data = samples_of(x, &n);

    tr_edges_config cfg = tr_edges_config_default();
    cfg.levels_mode = TR_LEVELS_FIXED;
    cfg.low = low;
    cfg.mid = mid;
    cfg.high = high;
    cfg.backend = parse_backend(backend);
    cfg.variant = parse_variant(variant);

    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    std::unique_ptr<tr_edges, edges_deleter> q(tr_edges_create(&cfg, &err));
    if (!q) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);

    std::vector<tr_edge> all;
    tr_status st = TR_OK;
    std::string message;
    {
        py::gil_scoped_release release;
        // Loop on consumed samples and output capacity: a full chunk of output
        // stops processing early; the rest is processed by the next call.
        std::vector<tr_edge> chunk(std::max<size_t>(1, std::min(n, k_edge_chunk)));
        size_t done = 0;
        while (done < n) {
            size_t consumed = 0, nout = 0;
            st = tr_edges_process(q.get(), data + done, n - done, chunk.data(),
                                  chunk.size(), &consumed, &nout);
            if (st != TR_OK) {
                message = tr_edges_last_error(q.get());
                break;
            }
            all.insert(all.end(), chunk.begin(), chunk.begin() + nout);
            done += consumed;
            if (consumed == 0 && nout == 0) {
                st = TR_ERR_STATE;
                message = "the edge localizer made no progress";
                break;
            }
        }
    }
    if (st != TR_OK) raise_status(st, message);

    const py::dtype dt = edge_dtype();
    py::array out(dt, std::vector<py::ssize_t>{static_cast<py::ssize_t>(all.size())});
    char *base = static_cast<char *>(out.mutable_data());
    const size_t itemsize = static_cast<size_t>(dt.itemsize());
    const size_t o_time = field_offset(dt, "time");
    const size_t o_sample = field_offset(dt, "sample");
    const size_t o_polarity = field_offset(dt, "polarity");
    for (size_t i = 0; i < all.size(); i++) {
        put<double>(base, itemsize, i, o_time, all[i].time);
        put<uint64_t>(base, itemsize, i, o_sample, static_cast<uint64_t>(all[i].sample));
        put<int8_t>(base, itemsize, i, o_polarity, static_cast<int8_t>(all[i].polarity));
    }
    return out;
}

py::dict estimate_state_levels(const float_array &x, unsigned int bins,
                               double tolerance_pct, double mid_pct)
{
    size_t n = 0;
    const float *data = samples_of(x, &n);
    tr_statelevels lv;
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    tr_status st;
    {
        py::gil_scoped_release release;
        st = tr_statelevels_estimate(data, n, bins, tolerance_pct, mid_pct, &lv, &err);
    }
    if (st != TR_OK) raise_status(st, err.message);
    py::dict d;
    d["low_level"] = lv.low_level;
    d["high_level"] = lv.high_level;
    d["low"] = lv.low;
    d["mid"] = lv.mid;
    d["high"] = lv.high;
    return d;
}

py::array edges_to_pulses(const py::array &edges)
{
    if (edges.ndim() != 1)
        throw py::value_error("edges must be a one-dimensional structured array");
    const py::object names = edges.dtype().attr("names");
    bool ok = !names.is_none();
    if (ok) {
        const py::tuple t = names.cast<py::tuple>();
        for (const char *f : {"time", "sample", "polarity"}) {
            bool found = false;
            for (const auto &name : t)
                found = found || name.cast<std::string>() == f;
            ok = ok && found;
        }
    }
    if (!ok)
        throw py::value_error("edges must be a structured array with fields time, "
                              "sample and polarity (as returned by find_edges)");

    using f8 = py::array_t<double, py::array::c_style | py::array::forcecast>;
    using u8 = py::array_t<uint64_t, py::array::c_style | py::array::forcecast>;
    using i1 = py::array_t<int8_t, py::array::c_style | py::array::forcecast>;
    const f8 time = f8::ensure(edges[py::str("time")]);
    const u8 sample = u8::ensure(edges[py::str("sample")]);
    const i1 polarity = i1::ensure(edges[py::str("polarity")]);
    if (!time || !sample || !polarity)
        throw py::value_error("edges: fields time, sample and polarity must be numeric");

    const size_t n = static_cast<size_t>(edges.shape(0));
    std::vector<tr_edge> e(n);
    for (size_t i = 0; i < n; i++) {
        e[i].time = time.data()[i];
        e[i].sample = sample.data()[i];
        e[i].polarity = polarity.data()[i];
        e[i].reserved = 0;
        if (e[i].polarity != 1 && e[i].polarity != -1)
            throw py::value_error("edges: polarity must be +1 or -1");
    }
    std::vector<tr_pulse> p(n > 1 ? n - 1 : 0);
    const size_t np = n > 1 ? tr_edges_to_pulses(e.data(), n, p.data()) : 0;

    const py::dtype dt = pulse_dtype();
    py::array out(dt, std::vector<py::ssize_t>{static_cast<py::ssize_t>(np)});
    char *base = static_cast<char *>(out.mutable_data());
    const size_t itemsize = static_cast<size_t>(dt.itemsize());
    const size_t o_start = field_offset(dt, "start");
    const size_t o_width = field_offset(dt, "width");
    const size_t o_period = field_offset(dt, "period");
    const size_t o_duty = field_offset(dt, "duty");
    const size_t o_polarity = field_offset(dt, "polarity");
    for (size_t i = 0; i < np; i++) {
        put<double>(base, itemsize, i, o_start, p[i].start);
        put<double>(base, itemsize, i, o_width, p[i].width);
        put<double>(base, itemsize, i, o_period, p[i].period);
        put<double>(base, itemsize, i, o_duty, p[i].duty);
        put<int8_t>(base, itemsize, i, o_polarity, static_cast<int8_t>(p[i].polarity));
    }
    return out;
}

/* ---- SPIIR ------------------------------------------------------------- */

using cdouble_array =
    py::array_t<std::complex<double>, py::array::c_style | py::array::forcecast>;
using int_array = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
using cfloat_array =
    py::array_t<std::complex<float>, py::array::c_style | py::array::forcecast>;

struct spiir_bank_deleter {
    void operator()(tr_spiir_bank *b) const { tr_spiir_bank_destroy(b); }
};
struct spiir_deleter {
    void operator()(tr_spiir *q) const { tr_spiir_destroy(q); }
};
struct spiir_triggers_deleter {
    void operator()(tr_spiir_triggers *q) const { tr_spiir_triggers_destroy(q); }
};
using bank_ptr = std::unique_ptr<tr_spiir_bank, spiir_bank_deleter>;

int32_t to_int32(int64_t v, const char *what)
{
    if (v < INT32_MIN || v > INT32_MAX)
        throw py::value_error(std::string(what) + " out of the int32 range");
    return static_cast<int32_t>(v);
}

// A bank from flat arrays, validated by the core (ValueError with its message).
bank_ptr make_bank(const cdouble_array &a1, const cdouble_array &b0,
                   const int_array &delay, const py::object &level,
                   const int_array &counts, double dt)
{
    const size_t n = static_cast<size_t>(a1.size());
    // level None or empty: every filter at the full rate.
    const bool no_level = level.is_none() || py::len(level) == 0;
    int_array lv =
        no_level ? int_array(static_cast<py::ssize_t>(n)) : int_array::ensure(level);
    if (!lv) throw py::value_error("level must be an integer array, empty or None");
    if (no_level) std::fill(lv.mutable_data(), lv.mutable_data() + n, int64_t(0));
    if (static_cast<size_t>(b0.size()) != n || static_cast<size_t>(delay.size()) != n ||
        static_cast<size_t>(lv.size()) != n)
        throw py::value_error("a1, b0, delay and level must have the same length (" +
                              std::to_string(n) + ", " + std::to_string(b0.size()) +
                              ", " + std::to_string(delay.size()) + ", " +
                              std::to_string(lv.size()) + ")");
    std::vector<uint32_t> cnt(static_cast<size_t>(counts.size()));
    uint64_t total = 0;
    for (size_t t = 0; t < cnt.size(); t++) {
        const int64_t c = counts.data()[t];
        if (c < 0 || c > INT32_MAX) throw py::value_error("counts must be in [0, 2^31)");
        cnt[t] = static_cast<uint32_t>(c);
        total += cnt[t];
    }
    if (total != n)
        throw py::value_error("counts add up to " + std::to_string(total) +
                              " filters, the arrays hold " + std::to_string(n));
    std::vector<tr_spiir_filter> f(n);
    for (size_t i = 0; i < n; i++) {
        f[i].a1_re = a1.data()[i].real();
        f[i].a1_im = a1.data()[i].imag();
        f[i].b0_re = b0.data()[i].real();
        f[i].b0_im = b0.data()[i].imag();
        f[i].delay = to_int32(delay.data()[i], "delay");
        f[i].level = to_int32(lv.data()[i], "level");
    }
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    bank_ptr b(tr_spiir_bank_create(f.data(), cnt.data(),
                                    static_cast<uint32_t>(cnt.size()), dt, &err));
    if (!b) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    return b;
}

std::unique_ptr<tr_spiir, spiir_deleter> make_spiir(const tr_spiir_bank *bank, int cplx,
                                                    bool multirate,
                                                    const std::string &backend,
                                                    const std::string &variant)
{
    tr_spiir_config cfg = tr_spiir_config_default();
    cfg.complex_input = cplx;
    cfg.multirate = multirate ? 1 : 0;
    cfg.backend = parse_backend(backend);
    cfg.variant = parse_variant(variant);
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    std::unique_ptr<tr_spiir, spiir_deleter> q(tr_spiir_create(&cfg, bank, &err));
    if (!q) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    return q;
}

py::array spiir_filter(const py::array &x, const cdouble_array &a1,
                       const cdouble_array &b0, const int_array &delay,
                       const py::object &level, const int_array &counts, double dt,
                       bool multirate, const std::string &backend,
                       const std::string &variant)
{
    if (x.ndim() != 1) throw py::value_error("x must be a one-dimensional array");
    const bool cplx = x.dtype().kind() == 'c';
    bank_ptr bank = make_bank(a1, b0, delay, level, counts, dt);
    auto q = make_spiir(bank.get(), cplx ? 1 : 0, multirate, backend, variant);
    const size_t n = static_cast<size_t>(x.shape(0));
    const size_t nt = tr_spiir_templates(q.get());
    py::array_t<std::complex<float>> out(std::vector<py::ssize_t>{
        static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(nt)});
    const float *data = nullptr;
    float_array xr;
    cfloat_array xc;
    if (cplx) {
        xc = cfloat_array::ensure(x);
        data = reinterpret_cast<const float *>(xc.data());
    } else {
        xr = float_array::ensure(x);
        if (!xr) throw py::value_error("x must be a numeric array");
        data = xr.data();
    }
    float *snr = reinterpret_cast<float *>(out.mutable_data());
    tr_status st;
    {
        py::gil_scoped_release release;
        st = n ? tr_spiir_process(q.get(), data, n, snr) : TR_OK;
    }
    if (st != TR_OK) raise_status(st, tr_spiir_last_error(q.get()));
    return out;
}

int64_t spiir_latency(const cdouble_array &a1, const cdouble_array &b0,
                      const int_array &delay, const py::object &level,
                      const int_array &counts, double dt)
{
    bank_ptr bank = make_bank(a1, b0, delay, level, counts, dt);
    auto q = make_spiir(bank.get(), 0, true, "cpu", "fast");
    return tr_spiir_latency(q.get());
}

py::array spiir_autochisq(const cfloat_array &snr, const int_array &sample,
                          const int_array &templ, const cdouble_array &autocorr)
{
    if (snr.ndim() != 2)
        throw py::value_error(
            "snr must be a two-dimensional array (samples x templates)");
    if (autocorr.ndim() != 2)
        throw py::value_error(
            "autocorr must be a two-dimensional array (templates x (2 half + 1) lags)");
    const size_t n = static_cast<size_t>(snr.shape(0));
    const size_t nt = static_cast<size_t>(snr.shape(1));
    const size_t lags = static_cast<size_t>(autocorr.shape(1));
    if (static_cast<size_t>(autocorr.shape(0)) != nt)
        throw py::value_error("autocorr needs one row per template (" +
                              std::to_string(nt) + "), got " +
                              std::to_string(autocorr.shape(0)));
    if (lags % 2 != 1)
        throw py::value_error("autocorr needs an odd number of lags (-half..half)");
    if (nt == 0 || nt > UINT32_MAX)
        throw py::value_error("snr needs at least one template");
    if (sample.ndim() != 1 || templ.ndim() != 1 || sample.shape(0) != templ.shape(0))
        throw py::value_error(
            "sample and template must be one-dimensional, of one length");
    const size_t m = static_cast<size_t>(sample.shape(0));
    py::array_t<double> out(static_cast<py::ssize_t>(m));
    const float *z = reinterpret_cast<const float *>(snr.data());
    const double *ac = reinterpret_cast<const double *>(autocorr.data());
    for (size_t i = 0; i < m; i++) {
        const int64_t s = sample.data()[i], t = templ.data()[i];
        if (s < 0) throw py::value_error("sample must be >= 0");
        if (t < 0 || static_cast<size_t>(t) >= nt)
            throw py::value_error("template " + std::to_string(t) + " outside the " +
                                  std::to_string(nt) + " templates");
        tr_error err;
        err.code = TR_OK;
        err.message[0] = '\0';
        const tr_status st = tr_spiir_autochisq(
            z, n, static_cast<uint32_t>(nt), static_cast<uint32_t>(t),
            static_cast<uint64_t>(s), ac + static_cast<size_t>(t) * lags * 2,
            static_cast<uint32_t>(lags / 2), out.mutable_data() + i, &err);
        if (st != TR_OK) raise_status(st, err.message);
    }
    return out;
}

py::dtype trigger_dtype()
{
    return make_dtype({{"sample", "<i8"},
                       {"peak", "<f8"},
                       {"template", "<i4"},
                       {"snr", "<f4"},
                       {"re", "<f4"},
                       {"im", "<f4"}});
}

py::array spiir_triggers(const cfloat_array &snr, float threshold, unsigned int window)
{
    if (snr.ndim() != 2)
        throw py::value_error(
            "snr must be a two-dimensional array (samples x templates)");
    const size_t n = static_cast<size_t>(snr.shape(0));
    const size_t nt = static_cast<size_t>(snr.shape(1));
    if (nt == 0 || nt > UINT32_MAX)
        throw py::value_error("snr needs at least one template");
    tr_spiir_triggers_config cfg = tr_spiir_triggers_config_default();
    cfg.ntemplates = static_cast<uint32_t>(nt);
    cfg.threshold = threshold;
    cfg.window = window;
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    std::unique_ptr<tr_spiir_triggers, spiir_triggers_deleter> q(
        tr_spiir_triggers_create(&cfg, &err));
    if (!q) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    std::vector<tr_spiir_trigger> all, buf(std::max<size_t>(nt, 4096));
    const float *z = reinterpret_cast<const float *>(snr.data());
    size_t done = 0;
    while (done < n) {
        size_t consumed = 0, nout = 0;
        tr_spiir_triggers_process(q.get(), z + done * nt * 2, n - done, buf.data(),
                                  buf.size(), &consumed, &nout);
        all.insert(all.end(), buf.begin(), buf.begin() + nout);
        done += consumed;
    }
    size_t nout = 0;
    tr_spiir_triggers_flush(q.get(), buf.data(), buf.size(), &nout);
    all.insert(all.end(), buf.begin(), buf.begin() + nout);

    const py::dtype dt = trigger_dtype();
    py::array out(dt, std::vector<py::ssize_t>{static_cast<py::ssize_t>(all.size())});
    char *base = static_cast<char *>(out.mutable_data());
    const size_t itemsize = static_cast<size_t>(dt.itemsize());
    const size_t o_sample = field_offset(dt, "sample"), o_peak = field_offset(dt, "peak"),
                 o_t = field_offset(dt, "template"), o_snr = field_offset(dt, "snr"),
                 o_re = field_offset(dt, "re"), o_im = field_offset(dt, "im");
    for (size_t i = 0; i < all.size(); i++) {
        put<int64_t>(base, itemsize, i, o_sample, static_cast<int64_t>(all[i].sample));
        put<double>(base, itemsize, i, o_peak, all[i].peak);
        put<int32_t>(base, itemsize, i, o_t, static_cast<int32_t>(all[i].template_index));
        put<float>(base, itemsize, i, o_snr, all[i].snr);
        put<float>(base, itemsize, i, o_re, all[i].re);
        put<float>(base, itemsize, i, o_im, all[i].im);
    }
    return out;
}

int cuda_device_count()
{
    return tr_cuda_device_count(nullptr, 0);
}

/* ---- boxcar search: plan, predictor, search on arrays ---------------- */

using u32_array = py::array_t<uint32_t, py::array::c_style | py::array::forcecast>;

tr_boxcar_algorithm parse_algorithm(const std::string &name)
{
    const std::string s = lower(name);
    if (s == "boxdit") return TR_BOXCAR_BOXDIT;
    if (s == "igrid") return TR_BOXCAR_IGRID;
    if (s == "ideal") return TR_BOXCAR_IDEAL;
    throw py::value_error("algorithm must be 'boxdit', 'igrid' or 'ideal', not '" + name +
                          "'");
}

// The algorithm fields of a boxcar configuration from Python arguments.
tr_boxcar_config boxcar_config(const std::string &algorithm, uint32_t max_width,
                               const std::vector<int> &widths, uint32_t depth,
                               uint32_t layers)
{
    tr_boxcar_config cfg = tr_boxcar_config_default();
    cfg.algorithm = parse_algorithm(algorithm);
    cfg.max_width = max_width;
    if (cfg.algorithm == TR_BOXCAR_BOXDIT) {
        if (widths.empty() || widths.size() > TR_BOXCAR_MAX_LIST)
            throw py::value_error("widths: BoxDIT needs 1 to " +
                                  std::to_string(TR_BOXCAR_MAX_LIST) + " entries");
        for (size_t i = 0; i < widths.size(); i++) {
            if (widths[i] < 0)
                throw py::value_error("widths: entries must be positive, entry " +
                                      std::to_string(i) + " is " +
                                      std::to_string(widths[i]));
            cfg.widths[i] = static_cast<uint32_t>(widths[i]);
        }
        cfg.nwidths = static_cast<uint32_t>(widths.size());
    }
    cfg.depth = depth;
    cfg.layers = layers;
    return cfg;
}

struct plan_deleter {
    void operator()(tr_boxcar_plan *p) const { tr_boxcar_plan_destroy(p); }
};
using plan_ptr = std::unique_ptr<tr_boxcar_plan, plan_deleter>;

plan_ptr make_plan(const tr_boxcar_config &cfg)
{
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    plan_ptr p(tr_boxcar_plan_create(&cfg, &err));
    if (!p) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    return p;
}

template <typename V> py::array_t<V> to_array(const std::vector<V> &v)
{
    py::array_t<V> a(static_cast<py::ssize_t>(v.size()));
    if (!v.empty()) std::memcpy(a.mutable_data(), v.data(), v.size() * sizeof(V));
    return a;
}

py::dict boxcar_plan(const std::string &algorithm, uint32_t max_width,
                     const std::vector<int> &widths, uint32_t depth, uint32_t layers)
{
    const plan_ptr p =
        make_plan(boxcar_config(algorithm, max_width, widths, depth, layers));
    const uint32_t total = tr_boxcar_plan_list(p.get(), nullptr, nullptr, 0);
    std::vector<uint32_t> w(total), s(total);
    tr_boxcar_plan_list(p.get(), w.data(), s.data(), total);
    py::list stages;
    for (uint32_t i = 0; i < tr_boxcar_plan_stages(p.get()); i++) {
        const tr_boxcar_stage *st = tr_boxcar_plan_stage(p.get(), i);
        py::dict d;
        d["level"] = st->level;
        d["stride"] = st->stride;
        d["width_first"] = st->width_first;
        d["width_step"] = st->width_step;
        d["nwidths"] = st->nwidths;
        d["base"] = st->base;
        d["block"] = st->block;
        stages.append(d);
    }
    py::dict out;
    out["algorithm"] = tr_boxcar_algorithm_name(tr_boxcar_plan_algorithm(p.get()));
    out["lend"] = tr_boxcar_plan_lend(p.get());
    out["latency"] = tr_boxcar_plan_latency(p.get());
    out["depth"] = tr_boxcar_plan_depth(p.get());
    out["layers"] = tr_boxcar_plan_layers(p.get());
    out["boxcars_per_sample"] = tr_boxcar_plan_boxcars_per_sample(p.get());
    out["widths"] = to_array(w);
    out["separations"] = to_array(s);
    out["stages"] = stages;
    return out;
}

// Predictor over explicit boxcar widths and separations.
py::dict predict_lists(const std::vector<uint32_t> &w, const std::vector<uint32_t> &s,
                       uint32_t smax, bool exact)
{
    if (w.size() != s.size())
        throw py::value_error("widths and separations must have the same length");
    if (w.empty()) throw py::value_error("at least one boxcar width is needed");
    if (smax == 0) throw py::value_error("smax must be >= 1");
    const uint32_t nb = static_cast<uint32_t>(w.size());
    std::vector<double> rmax(smax), rmin(smax), p1(smax), pw(smax), mp1(smax), mpw(smax);
    tr_status st;
    {
        py::gil_scoped_release release;
        st = tr_boxcar_predict(w.data(), s.data(), nb, smax, rmax.data(), rmin.data(),
                               p1.data(), pw.data(), mp1.data(), mpw.data());
    }
    if (st != TR_OK)
        raise_status(st, "boxcar_predict: widths and separations must be >= 1");
    py::dict out;
    std::vector<uint32_t> S(smax);
    for (uint32_t k = 0; k < smax; k++)
        S[k] = k + 1;
    out["S"] = to_array(S);
    out["rsnr_max"] = to_array(rmax);
    out["rsnr_min"] = to_array(rmin);
    out["psi_1"] = to_array(p1);
    out["psi_w"] = to_array(pw);
    out["mean_psi_1"] = to_array(mp1);
    out["mean_psi_w"] = to_array(mpw);
    if (exact) {
        std::vector<double> emax(smax), emin(smax);
        std::vector<uint32_t> bw(smax);
        {
            py::gil_scoped_release release;
            st = tr_boxcar_predict_exact(w.data(), s.data(), nb, smax, emax.data(),
                                         emin.data(), bw.data());
        }
        if (st != TR_OK)
            raise_status(st, "boxcar_predict: exact bounds need separations that are "
                             "powers of two");
        out["exact_rsnr_max"] = to_array(emax);
        out["exact_rsnr_min"] = to_array(emin);
        out["best_width"] = to_array(bw);
    }
    return out;
}

py::dict boxcar_predict(const std::string &algorithm, uint32_t max_width,
                        const std::vector<int> &widths, uint32_t depth, uint32_t layers,
                        uint32_t smax, bool exact)
{
    const plan_ptr p =
        make_plan(boxcar_config(algorithm, max_width, widths, depth, layers));
    const uint32_t total = tr_boxcar_plan_list(p.get(), nullptr, nullptr, 0);
    std::vector<uint32_t> w(total), s(total);
    tr_boxcar_plan_list(p.get(), w.data(), s.data(), total);
    return predict_lists(w, s, smax ? smax : tr_boxcar_plan_lend(p.get()), exact);
}

py::dict boxcar_predict_list(const u32_array &widths, const u32_array &separations,
                             uint32_t smax, bool exact)
{
    if (widths.ndim() != 1 || separations.ndim() != 1)
        throw py::value_error("widths and separations must be one-dimensional");
    std::vector<uint32_t> w(widths.data(), widths.data() + widths.shape(0));
    std::vector<uint32_t> s(separations.data(),
                            separations.data() + separations.shape(0));
    return predict_lists(w, s, smax, exact);
}

struct boxcar_deleter {
    void operator()(tr_boxcar *q) const { tr_boxcar_destroy(q); }
};

tr_boxcar_norm_mode parse_norm_mode(const std::string &name)
{
    const std::string s = lower(name);
    if (s == "white") return TR_BOXCAR_NORM_WHITE;
    if (s == "levels") return TR_BOXCAR_NORM_LEVELS;
    if (s == "fixed") return TR_BOXCAR_NORM_FIXED;
    throw py::value_error("norm_mode must be 'white', 'levels' or 'fixed', not '" + name +
                          "'");
}

// The search on a whole array: x of shape (n,) or (n, nchan), time-major.
// Returns (snr, width) of the same shape, position p at index p (the latency
// is removed; with flush the last positions are evaluated inside the data).
py::tuple boxcar_search_array(const float_array &x, const std::string &algorithm,
                              uint32_t max_width, const std::vector<int> &widths,
                              uint32_t depth, uint32_t layers,
                              const std::string &norm_mode, double reject_sigma,
                              uint32_t window, uint32_t history, uint32_t baseline_window,
                              const std::string &baseline_mode, double fixed_mean,
                              double fixed_sigma, const std::string &backend,
                              const std::string &variant)
{
    if (x.ndim() != 1 && x.ndim() != 2)
        throw py::value_error("x must have shape (n,) or (n, nchan)");
    const size_t n = static_cast<size_t>(x.shape(0));
    const uint32_t nchan = x.ndim() == 2 ? static_cast<uint32_t>(x.shape(1)) : 1;
    tr_boxcar_config cfg = boxcar_config(algorithm, max_width, widths, depth, layers);
    cfg.nchan = nchan;
    cfg.norm.mode = parse_norm_mode(norm_mode);
    cfg.norm.reject_sigma = reject_sigma;
    cfg.norm.window = window;
    cfg.norm.history = history;
    const std::string bm = lower(baseline_mode);
    if (bm != "median" && bm != "block")
        throw py::value_error("baseline_mode must be 'median' or 'block', not '" +
                              baseline_mode + "'");
    cfg.norm.baseline = !baseline_window ? TR_BOXCAR_BASELINE_NONE
                        : bm == "block"  ? TR_BOXCAR_BASELINE_BLOCK_MEDIAN
                                         : TR_BOXCAR_BASELINE_MEDIAN;
    if (baseline_window) cfg.norm.baseline_window = baseline_window;
    cfg.norm.fixed_mean = fixed_mean;
    cfg.norm.fixed_sigma = fixed_sigma;
    cfg.backend = parse_backend(backend);
    cfg.variant = parse_variant(variant);

    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    std::unique_ptr<tr_boxcar, boxcar_deleter> q(tr_boxcar_create(&cfg, &err));
    if (!q) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);

    std::vector<py::ssize_t> shape{static_cast<py::ssize_t>(n)};
    if (x.ndim() == 2) shape.push_back(static_cast<py::ssize_t>(nchan));
    py::array_t<float> snr(shape);
    py::array_t<int32_t> width(shape);
    const uint32_t lat = tr_boxcar_latency(q.get());
    tr_status st = TR_OK;
    std::string message;
    {
        py::gil_scoped_release release;
        // Output k of the stream is position k - lat: write positions straight
        // into place, the first lat outputs (negative positions) into scratch.
        std::vector<float> s_scratch(static_cast<size_t>(lat) * nchan);
        std::vector<int32_t> w_scratch(static_cast<size_t>(lat) * nchan);
        float *ys = snr.mutable_data();
        int32_t *ws = width.mutable_data();
        const size_t head = std::min<size_t>(n, lat);
        st = tr_boxcar_process(q.get(), x.data(), head, s_scratch.data(),
                               w_scratch.data());
        if (st == TR_OK && n > head)
            st = tr_boxcar_process(q.get(), x.data() + head * nchan, n - head, ys, ws);
        if (st == TR_OK) {
            // flush: the last lat positions n - lat .. n - 1 (negative ones dropped)
            st = tr_boxcar_flush(q.get(), s_scratch.data(), w_scratch.data());
            if (st == TR_OK) {
                const size_t drop = lat > n ? lat - n : 0;
                const size_t keep = lat - drop;
                std::memcpy(ys + (n - keep) * nchan, s_scratch.data() + drop * nchan,
                            keep * nchan * sizeof(float));
                std::memcpy(ws + (n - keep) * nchan, w_scratch.data() + drop * nchan,
                            keep * nchan * sizeof(int32_t));
            }
        }
        if (st != TR_OK) message = tr_boxcar_last_error(q.get());
    }
    if (st != TR_OK) raise_status(st, message);
    // what was done differently from the settings (a short stream ...)
    if (tr_boxcar_warnings(q.get()))
        py::module_::import("warnings")
            .attr("warn")(std::string("boxcar_search: ") + tr_boxcar_warning(q.get()),
                          py::module_::import("builtins").attr("RuntimeWarning"));
    return py::make_tuple(snr, width);
}

struct candidates_deleter {
    void operator()(tr_candidates *q) const { tr_candidates_destroy(q); }
};

py::dtype candidate_dtype()
{
    return make_dtype({{"start", "<i8"},
                       {"peak", "<i8"},
                       {"first", "<i8"},
                       {"end", "<i8"},
                       {"members", "<u8"},
                       {"snr", "<f4"},
                       {"width", "<u4"},
                       {"channel", "<u4"},
                       {"chan_lo", "<u4"},
                       {"chan_hi", "<u4"},
                       {"width_lo", "<u4"},
                       {"width_hi", "<u4"},
                       {"truncated", "<i4"}});
}

// Friends-of-friends clustering of whole search outputs (<transient/candidates.h>).
py::array boxcar_candidates(const float_array &snr, const py::object &width,
                            float threshold, uint32_t link_time, uint32_t link_chan,
                            double link_width, int64_t start_position, uint64_t max_span)
{
    using i4_array = py::array_t<int32_t, py::array::c_style | py::array::forcecast>;
    if (snr.ndim() != 1 && snr.ndim() != 2)
        throw py::value_error("snr must have shape (n,) or (n, nchan)");
    const size_t n = static_cast<size_t>(snr.shape(0));
    const uint32_t nchan = snr.ndim() == 2 ? static_cast<uint32_t>(snr.shape(1)) : 1;
    i4_array w;
    if (!width.is_none()) {
        w = i4_array::ensure(width);
        if (!w) throw py::value_error("width must be an integer array");
        if (w.ndim() != snr.ndim() || w.size() != snr.size() ||
            (w.ndim() >= 1 && w.shape(0) != snr.shape(0)))
            throw py::value_error("width must have the shape of snr");
    }
    tr_candidates_config cfg = tr_candidates_config_default();
    cfg.nchan = nchan;
    cfg.threshold = threshold;
    cfg.link_time = link_time;
    cfg.link_chan = link_chan;
    cfg.link_width = link_width;
    cfg.start_position = start_position;
    cfg.max_span = max_span;
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    std::unique_ptr<tr_candidates, candidates_deleter> q(
        tr_candidates_create(&cfg, &err));
    if (!q) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);

    std::vector<tr_candidate> all;
    tr_status st;
    std::string message;
    {
        py::gil_scoped_release release;
        st = tr_candidates_process(q.get(), snr.data(), w ? w.data() : nullptr, n);
        if (st == TR_OK) st = tr_candidates_flush(q.get());
        if (st == TR_OK) {
            std::vector<tr_candidate> chunk(4096);
            size_t k;
            while ((k = tr_candidates_read(q.get(), chunk.data(), chunk.size())) > 0)
                all.insert(all.end(), chunk.begin(), chunk.begin() + k);
        } else {
            message = tr_candidates_last_error(q.get());
        }
    }
    if (st != TR_OK) raise_status(st, message);

    const py::dtype dt = candidate_dtype();
    py::array out(dt, std::vector<py::ssize_t>{static_cast<py::ssize_t>(all.size())});
    char *base = static_cast<char *>(out.mutable_data());
    const size_t itemsize = static_cast<size_t>(dt.itemsize());
    const size_t o_start = field_offset(dt, "start"), o_peak = field_offset(dt, "peak"),
                 o_first = field_offset(dt, "first"), o_end = field_offset(dt, "end"),
                 o_members = field_offset(dt, "members"), o_snr = field_offset(dt, "snr"),
                 o_width = field_offset(dt, "width"),
                 o_chan = field_offset(dt, "channel"),
                 o_clo = field_offset(dt, "chan_lo"), o_chi = field_offset(dt, "chan_hi"),
                 o_wlo = field_offset(dt, "width_lo"),
                 o_whi = field_offset(dt, "width_hi"),
                 o_trunc = field_offset(dt, "truncated");
    for (size_t i = 0; i < all.size(); i++) {
        const tr_candidate &e = all[i];
        put<int64_t>(base, itemsize, i, o_start, e.start);
        put<int64_t>(base, itemsize, i, o_peak, e.peak);
        put<int64_t>(base, itemsize, i, o_first, e.first);
        put<int64_t>(base, itemsize, i, o_end, e.end);
        put<uint64_t>(base, itemsize, i, o_members, e.members);
        put<float>(base, itemsize, i, o_snr, e.snr);
        put<uint32_t>(base, itemsize, i, o_width, e.width);
        put<uint32_t>(base, itemsize, i, o_chan, e.channel);
        put<uint32_t>(base, itemsize, i, o_clo, e.chan_lo);
        put<uint32_t>(base, itemsize, i, o_chi, e.chan_hi);
        put<uint32_t>(base, itemsize, i, o_wlo, e.width_lo);
        put<uint32_t>(base, itemsize, i, o_whi, e.width_hi);
        put<int32_t>(base, itemsize, i, o_trunc, e.truncated);
    }
    return out;
}

} // namespace

void bind_core(py::module &m)
{
    m.def("find_edges", &find_edges, py::arg("x"), py::arg("low"), py::arg("mid"),
          py::arg("high"), py::arg("backend") = "cpu", py::arg("variant") = "fast",
          R"doc(
Locate the transitions of x (1-D, converted to float32) with fixed reference
levels low < mid < high, per IEEE Std 181 (see <transient/edges.h>).

backend: 'cpu', 'cuda' or 'auto'; variant: 'fast', 'reference' (CPU) or
'paper' (CUDA).

Returns a numpy structured array with fields
    time      float64  interpolated mid-crossing time in samples (NaN if hidden)
    sample    uint64   index of the first sample in the new state
    polarity  int8     +1 rising, -1 falling
the types of edge_arrays() and of the block's tags and messages (GNU Radio's
sample offsets are uint64).

Raises ValueError on invalid arguments, RuntimeError if the backend fails.)doc");

    m.def("estimate_state_levels", &estimate_state_levels, py::arg("x"),
          py::arg("bins") = 100, py::arg("tolerance_pct") = 10.0,
          py::arg("mid_pct") = 50.0,
          R"doc(
Estimate the state levels of x by the IEEE Std 181 histogram mode method.

Returns a dict with low_level and high_level (the state levels) and low, mid and
high (the reference levels for find_edges). Raises ValueError on invalid
arguments or when x has fewer than two distinct finite samples.)doc");

    m.def("edges_to_pulses", &edges_to_pulses, py::arg("edges"),
          R"doc(
Pulses between consecutive transitions of edges (as returned by find_edges).

Returns a numpy structured array of len(edges) - 1 records with fields
start, width, period, duty (float64; NaN where undefined) and polarity (int8,
+1 high pulse opened by a rising edge, -1 low pulse).)doc");

    m.def("spiir_filter", &spiir_filter, py::arg("x"), py::arg("a1"), py::arg("b0"),
          py::arg("delay"), py::arg("level"), py::arg("counts"), py::arg("dt"),
          py::arg("multirate") = false, py::arg("backend") = "cpu",
          py::arg("variant") = "fast",
          R"doc(
Filter x (1-D; real -> float32, complex -> complex64) with a SPIIR bank given
as flat arrays (see <transient/spiir.h>): a1, b0 (complex), delay and
level (integers; level None or empty = all 0), counts[t] filters of template
t, and the sampling interval dt. SpiirBank.arrays() of
gnuradio.transient.spiir_bank gives (a1, b0, delay, level, counts).

multirate: run each filter at rate / 2^level (output lags by spiir_latency()).
backend: 'cpu', 'cuda' or 'auto'; variant: 'fast', 'reference' or 'paper'.

Returns the complex SNR as a complex64 array of shape (len(x), templates).
Raises ValueError for an invalid bank, RuntimeError if the backend fails.)doc");

    m.def("spiir_latency", &spiir_latency, py::arg("a1"), py::arg("b0"), py::arg("delay"),
          py::arg("level"), py::arg("counts"), py::arg("dt"),
          "Samples by which the multirate output of this bank lags the single-rate one "
          "(tr_spiir_latency).");

    m.def("spiir_triggers", &spiir_triggers, py::arg("snr"), py::arg("threshold"),
          py::arg("window"),
          R"doc(
Triggers of an SNR array (samples x templates, as spiir_filter returns it):
per template, the peak of every cluster of |SNR| > threshold, a cluster ending
window samples after its peak (<transient/spiir_triggers.h>); open
clusters at the end are included.

Returns a numpy structured array with fields sample (int64, peak index), peak
(float64, interpolated peak position), template (int32), snr (float32, |z|), re
and im (float32, z at the peak), in the order they are decided.)doc");

    m.def("spiir_autochisq", &spiir_autochisq, py::arg("snr"), py::arg("sample"),
          py::arg("template"), py::arg("autocorr"),
          R"doc(
Autocorrelation chi-square of triggers (<transient/spiir_chisq.h>, gstlal's
autochisq): for trigger i, peak row sample[i] of template template[i] in snr
(samples x templates complex64, as spiir_filter returns it) and that template's
row of autocorr (templates x (2 half + 1) complex128, lag -half first, 1 at the
centre), sum |A[j] z[p] - z[p + j]|^2 / (2 n - sum |A[j]|^2) over the n lags
inside snr. Returns float64 chi-square per trigger (NaN where the window holds
a non-finite value).)doc");

    m.def("boxcar_plan", &boxcar_plan, py::arg("algorithm") = "boxdit",
          py::arg("max_width") = 256,
          py::arg("widths") = std::vector<int>{32, 16, 16, 16, 8}, py::arg("depth") = 1,
          py::arg("layers") = 0,
          R"doc(
The boxcars a search configuration evaluates (<transient/boxcar.h>).

algorithm: 'boxdit', 'igrid' or 'ideal'; max_width: widest pulse searched;
widths: BoxDIT per-iteration maximum widths (even, the last repeats); depth,
layers: IGRID IG(depth) with layers per step (0 = 2^(depth+1)).

Returns a dict: algorithm, lend (L_end), latency, depth, layers,
boxcars_per_sample, widths and separations (uint32 arrays, every evaluated
width in evaluation order with its separation L_s) and stages (list of dicts:
level, stride, width_first, width_step, nwidths, base, block). ValueError on
an invalid configuration.)doc");

    m.def("boxcar_predict", &boxcar_predict, py::arg("algorithm") = "boxdit",
          py::arg("max_width") = 256,
          py::arg("widths") = std::vector<int>{32, 16, 16, 16, 8}, py::arg("depth") = 1,
          py::arg("layers") = 0, py::arg("smax") = 0, py::arg("exact") = false,
          R"doc(
Predicted sensitivity of a search configuration (<transient/boxcar_predict.h>,
paper Appendix A) for rectangular pulses of width S = 1 .. smax (0: L_end),
relative to the true S/N (C = 1):

    S            pulse widths 1..smax
    rsnr_max     eq. 24, best case (attained)
    rsnr_min     eq. 31, worst case of the best single width
    psi_1        eq. 9, systematic loss 1 - rsnr_max
    psi_w        eq. 8, worst-case loss 1 - rsnr_min
    mean_psi_1, mean_psi_w   eq. 19, cumulative means over S' = 1..S
  with exact=True also
    exact_rsnr_max, exact_rsnr_min, best_width   the true extremes of the
                 noise-free model over every pulse position

All arrays are numpy (float64, S and best_width uint32). ValueError on an
invalid configuration.)doc");

    m.def("boxcar_predict_list", &boxcar_predict_list, py::arg("widths"),
          py::arg("separations"), py::arg("smax"), py::arg("exact") = false,
          R"doc(
boxcar_predict for an explicit set of boxcar widths and their separations
(arrays of equal length, entries >= 1; exact=True needs separations that are
powers of two).)doc");

    m.def("boxcar_search", &boxcar_search_array, py::arg("x"),
          py::arg("algorithm") = "boxdit", py::arg("max_width") = 256,
          py::arg("widths") = std::vector<int>{32, 16, 16, 16, 8}, py::arg("depth") = 1,
          py::arg("layers") = 0, py::arg("norm_mode") = "white",
          py::arg("reject_sigma") = 3.0, py::arg("window") = 16384,
          py::arg("norm_history") = 4, py::arg("baseline_window") = 0,
          py::arg("baseline_mode") = "median", py::arg("fixed_mean") = 0.0,
          py::arg("fixed_sigma") = 1.0, py::arg("backend") = "cpu",
          py::arg("variant") = "fast",
          R"doc(
Boxcar search of a whole array x of shape (n,) or (n, nchan) (float32,
time-major: channels in the last axis). Returns (snr, width) of the same shape:
snr[p] is the best S/N of the evaluated boxcars that START at sample p and
width[p] (int32) that boxcar's width; the core's latency is removed and the
last samples are evaluated with the boxcars that fit inside the data. The
first statistics window is normalised by its own statistics; an array shorter
than the window by the statistics of the whole array, with a RuntimeWarning
that says so (also when it is shorter than L_end, or a channel had no usable
statistics).

Parameters as in the block boxcar_search_ff; baseline_window 0 = no baseline
removal, baseline_mode 'median' (running) or 'block' (median of 16 block
medians); variant 'fast', 'reference' (CPU) or 'paper' (CUDA). ValueError on
invalid arguments, RuntimeError if the backend fails.)doc");

    m.def("boxcar_candidates", &boxcar_candidates, py::arg("snr"),
          py::arg("width") = py::none(), py::arg("threshold") = 6.0,
          py::arg("link_time") = 0, py::arg("link_chan") = 1, py::arg("link_width") = 0.0,
          py::arg("start_position") = 0, py::arg("max_span") = 0,
          R"doc(
Candidates of a whole search output (<transient/candidates.h>): the
values of snr (shape (n,) or (n, nchan), e.g. from boxcar_search) at or above
threshold, clustered by friends-of-friends into events. Two peaks are friends
when the gap between their boxcars [p, p + width) is at most link_time
samples, their channels are at most link_chan apart and (link_width > 0) the
ratio of their widths is at most link_width. width: int array of the shape of
snr (None: width 1). start_position: position of snr[0]; max_span > 0 closes
events that span more samples (marked truncated).

Returns a numpy structured array, one record per event in the order the events
closed: start, peak (start + (width - 1) // 2), first, end (int64), members
(uint64), snr (float32), width, channel, chan_lo, chan_hi, width_lo, width_hi
(uint32) and truncated (int32); start, width, snr and channel are those of
the member with the highest S/N. ValueError on invalid arguments.)doc");

    m.def("version", &tr_version, "Version of libtransient as 'major.minor.patch'.");
    m.def(
        "cuda_compiled", []() { return tr_cuda_compiled() != 0; },
        "True if libtransient was built with the CUDA backend.");
    m.def("cuda_device_count", &cuda_device_count,
          "Number of usable CUDA devices (0 without CUDA support, driver or GPU).");
}
