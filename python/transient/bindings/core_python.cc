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
 *   version(), cuda_compiled(), cuda_device_count()
 */

#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <transient/transient.h>

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

namespace
{

using float_array = py::array_t<float, py::array::c_style | py::array::forcecast>;

// Transitions are collected in chunks of at most this many per process() call.
constexpr size_t k_edge_chunk = size_t(1) << 20;

std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

tr_backend parse_backend(const std::string &name)
{
    const std::string s = lower(name);
    if (s == "auto") return TR_BACKEND_AUTO;
    if (s == "cpu") return TR_BACKEND_CPU;
    if (s == "cuda") return TR_BACKEND_CUDA;
    throw py::value_error("backend must be 'auto', 'cpu' or 'cuda', not '" + name + "'");
}

tr_variant parse_variant(const std::string &name)
{
    const std::string s = lower(name);
    if (s == "fast") return TR_VARIANT_FAST;
    if (s == "reference") return TR_VARIANT_REFERENCE;
    if (s == "paper") return TR_VARIANT_PAPER;
    throw py::value_error("variant must be 'fast', 'reference' or 'paper', not '" + name +
                          "'");
}

// ValueError for invalid input, RuntimeError for everything else.
[[noreturn]] void raise_status(tr_status st, const std::string &message)
{
    const std::string msg = message.empty() ? std::string(tr_strerror(st)) : message;
    if (st == TR_ERR_INVALID) throw py::value_error(msg);
    throw std::runtime_error(msg);
}

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
    return make_dtype({{"time", "<f8"}, {"sample", "<i8"}, {"polarity", "<i4"}});
}

py::dtype pulse_dtype()
{
    return make_dtype({{"start", "<f8"},
                       {"width", "<f8"},
                       {"period", "<f8"},
                       {"duty", "<f8"},
                       {"polarity", "<i4"}});
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
        put<int64_t>(base, itemsize, i, o_sample, all[i].sample);
        put<int32_t>(base, itemsize, i, o_polarity, all[i].polarity);
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
    using i8 = py::array_t<int64_t, py::array::c_style | py::array::forcecast>;
    using i4 = py::array_t<int32_t, py::array::c_style | py::array::forcecast>;
    const f8 time = f8::ensure(edges[py::str("time")]);
    const i8 sample = i8::ensure(edges[py::str("sample")]);
    const i4 polarity = i4::ensure(edges[py::str("polarity")]);
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
        put<int32_t>(base, itemsize, i, o_polarity, p[i].polarity);
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

} // namespace

void bind_core(py::module &m)
{
    m.def("find_edges", &find_edges, py::arg("x"), py::arg("low"), py::arg("mid"),
          py::arg("high"), py::arg("backend") = "cpu", py::arg("variant") = "fast",
          R"doc(
Locate the transitions of x (1-D, converted to float32) with fixed reference
levels low < mid < high, per IEEE Std 181 (see include/transient/edges.h).

backend: 'cpu', 'cuda' or 'auto'; variant: 'fast', 'reference' (CPU) or
'paper' (CUDA).

Returns a numpy structured array with fields
    time      float64  interpolated mid-crossing time in samples (NaN if hidden)
    sample    int64    index of the first sample in the new state
    polarity  int32    +1 rising, -1 falling

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
start, width, period, duty (float64; NaN where undefined) and polarity (int32,
+1 high pulse opened by a rising edge, -1 low pulse).)doc");

    m.def("spiir_filter", &spiir_filter, py::arg("x"), py::arg("a1"), py::arg("b0"),
          py::arg("delay"), py::arg("level"), py::arg("counts"), py::arg("dt"),
          py::arg("multirate") = false, py::arg("backend") = "cpu",
          py::arg("variant") = "fast",
          R"doc(
Filter x (1-D; real -> float32, complex -> complex64) with a SPIIR bank given
as flat arrays (see include/transient/spiir.h): a1, b0 (complex), delay and
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
window samples after its peak (include/transient/spiir_triggers.h); open
clusters at the end are included.

Returns a numpy structured array with fields sample (int64, peak index), peak
(float64, interpolated peak position), template (int32), snr (float32, |z|), re
and im (float32, z at the peak), in the order they are decided.)doc");

    m.def("version", &tr_version, "Version of libtransient as 'major.minor.patch'.");
    m.def(
        "cuda_compiled", []() { return tr_cuda_compiled() != 0; },
        "True if libtransient was built with the CUDA backend.");
    m.def("cuda_device_count", &cuda_device_count,
          "Number of usable CUDA devices (0 without CUDA support, driver or GPU).");
}
