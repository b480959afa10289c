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
 *   version(), cuda_compiled(), cuda_device_count()
 */

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <transient/transient.h>

#include <algorithm>
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

    m.def("version", &tr_version, "Version of libtransient as 'major.minor.patch'.");
    m.def(
        "cuda_compiled", []() { return tr_cuda_compiled() != 0; },
        "True if libtransient was built with the CUDA backend.");
    m.def("cuda_device_count", &cuda_device_count,
          "Number of usable CUDA devices (0 without CUDA support, driver or GPU).");
}
