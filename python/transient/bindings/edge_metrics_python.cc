/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/*
 * IEEE Std 181 edge metrics on numpy arrays (<transient/edge_metrics.h>):
 *   edge_metrics(x, low, mid, high, ...)   one record per transition
 *   edge_tie(times, ui=0, window=0)        time-interval error, RMS, peak-to-peak
 */

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <transient/transient.h>

#include "core_util_python.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace py = pybind11;
using namespace tr_python;

namespace
{

using float_array = py::array_t<float, py::array::c_style | py::array::forcecast>;
using double_array = py::array_t<double, py::array::c_style | py::array::forcecast>;

constexpr size_t k_chunk = size_t(1) << 20;

// The record fields in the order of tr_edge_metric after polarity and flags.
const char *const k_double_fields[] = {
    "start",     "end",        "duration",      "duration2",      "slew",
    "overshoot", "undershoot", "pre_overshoot", "pre_undershoot", "settling",
    "width",     "period",     "duty"};

py::dtype metric_dtype()
{
    py::list spec;
    spec.append(py::make_tuple("time", "<f8"));
    spec.append(py::make_tuple("sample", "<u8"));
    spec.append(py::make_tuple("polarity", "<i1"));
    spec.append(py::make_tuple("flags", "<u4"));
    for (const char *f : k_double_fields)
        spec.append(py::make_tuple(f, "<f8"));
    return py::dtype::from_args(spec);
}

struct edges_deleter {
    void operator()(tr_edges *q) const { tr_edges_destroy(q); }
};

void check(tr_status st, tr_edges *q)
{
    if (st != TR_OK) raise_status(st, tr_edges_last_error(q));
}

py::array edge_metrics(const float_array &x, float low, float mid, float high,
                       double low_level, double high_level, double tolerance_pct,
                       std::pair<double, double> ref, std::pair<double, double> ref2,
                       double region_factor, double settle_pct, size_t window,
                       const std::string &backend, const std::string &variant)
{
    if (x.ndim() != 1) throw py::value_error("x must be a one-dimensional array");
    const size_t n = static_cast<size_t>(x.shape(0));
    const float *data = x.data();
    tr_edges_config cfg = tr_edges_config_default();
    cfg.low = low;
    cfg.mid = mid;
    cfg.high = high;
    cfg.tolerance_pct = tolerance_pct;
    cfg.backend = parse_backend(backend);
    cfg.variant = parse_variant(variant);
    cfg.metrics = 1;
    tr_edge_metrics_config &mc = cfg.metrics_cfg;
    mc.low_level = low_level;
    mc.high_level = high_level;
    mc.ref_low_pct = ref.first;
    mc.ref_high_pct = ref.second;
    mc.ref2_low_pct = ref2.first;
    mc.ref2_high_pct = ref2.second;
    mc.region_factor = region_factor;
    mc.settle_pct = settle_pct;
    mc.window = window;
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    std::unique_ptr<tr_edges, edges_deleter> q(tr_edges_create(&cfg, &err));
    if (!q) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);

    std::vector<tr_edge_metric> all;
    {
        py::gil_scoped_release release;
        std::vector<tr_edge> edges(std::max<size_t>(1, std::min(n, k_chunk)));
        std::vector<tr_edge_metric> chunk(edges.size());
        auto drain = [&]() {
            for (size_t got = chunk.size(); got == chunk.size();) {
                check(tr_edges_metrics_read(q.get(), chunk.data(), chunk.size(), &got),
                      q.get());
                all.insert(all.end(), chunk.begin(), chunk.begin() + got);
            }
        };
        size_t done = 0;
        while (done < n) {
            size_t consumed = 0, nout = 0;
            check(tr_edges_process(q.get(), data + done, n - done, edges.data(),
                                   edges.size(), &consumed, &nout),
                  q.get());
            drain();
            done += consumed;
        }
        for (size_t nout = edges.size(); nout == edges.size();) {
            check(tr_edges_flush(q.get(), edges.data(), edges.size(), &nout), q.get());
            drain();
        }
    }
    const py::dtype dt = metric_dtype();
    py::array out(dt, std::vector<py::ssize_t>{static_cast<py::ssize_t>(all.size())});
    char *base = static_cast<char *>(out.mutable_data());
    const size_t size = static_cast<size_t>(dt.itemsize());
    const py::dict fields = dt.attr("fields");
    auto offset = [&](const char *name) {
        return fields[name].cast<py::tuple>()[1].cast<size_t>();
    };
    const size_t o_time = offset("time"), o_sample = offset("sample");
    const size_t o_pol = offset("polarity"), o_flags = offset("flags");
    const size_t o_first = offset("start"); // the doubles follow contiguously
    for (size_t i = 0; i < all.size(); i++) {
        char *rec = base + i * size;
        const tr_edge_metric &r = all[i];
        const uint64_t sample = static_cast<uint64_t>(r.sample);
        const int8_t pol = static_cast<int8_t>(r.polarity);
        std::memcpy(rec + o_time, &r.time, sizeof r.time);
        std::memcpy(rec + o_sample, &sample, sizeof sample);
        std::memcpy(rec + o_pol, &pol, sizeof pol);
        std::memcpy(rec + o_flags, &r.flags, sizeof r.flags);
        std::memcpy(rec + o_first, &r.start,
                    sizeof(k_double_fields) / sizeof(char *) * 8);
    }
    return out;
}

py::tuple edge_tie(const double_array &times, double ui, size_t window)
{
    if (times.ndim() != 1) throw py::value_error("times must be a one-dimensional array");
    const size_t n = static_cast<size_t>(times.shape(0));
    py::array_t<double> tie(static_cast<py::ssize_t>(n));
    double rms = NAN, pp = NAN;
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    const tr_status st =
        tr_edge_tie(times.data(), n, ui, window, tie.mutable_data(), &rms, &pp, &err);
    if (st != TR_OK) raise_status(st, err.message);
    return py::make_tuple(tie, rms, pp);
}

} // namespace

void bind_edge_metrics(py::module &m)
{
    m.def("edge_metrics", &edge_metrics, py::arg("x"), py::arg("low"), py::arg("mid"),
          py::arg("high"), py::arg("low_level") = NAN, py::arg("high_level") = NAN,
          py::arg("tolerance_pct") = 10.0,
          py::arg("ref_levels") = std::make_pair(10.0, 90.0),
          py::arg("ref_levels2") = std::make_pair(20.0, 80.0),
          py::arg("region_factor") = 3.0, py::arg("settle_pct") = 2.0,
          py::arg("window") = 65536, py::arg("backend") = "cpu",
          py::arg("variant") = "fast",
          R"doc(
IEEE Std 181 metrics of every transition of x (1-D, float32) located with the
reference levels low < mid < high (as find_edges); see <transient/edge_metrics.h>.

low_level, high_level: the state levels (both NaN: from low and high with
tolerance_pct, i.e. low = low_level + tolerance_pct % of the amplitude);
ref_levels, ref_levels2: (lower, upper) reference levels in % of the amplitude;
region_factor: aberration regions in transition durations; settle_pct: the
settling band in % of the amplitude; window: samples each side of a transition
the metrics may use.

Returns a structured array, one record per transition, times in samples:
time, sample (uint64), polarity (int8), flags (uint32: 1 window clipped a
search, 2 the record ended first), start, end, duration (rise or fall time),
duration2 (second pair), slew (units per sample, signed), overshoot,
undershoot, pre_overshoot, pre_undershoot (% of amplitude), settling, width,
period, duty (NaN where undefined).)doc");

    m.def("edge_tie", &edge_tie, py::arg("times"), py::arg("ui") = 0.0,
          py::arg("window") = 0,
          R"doc(
Time-interval error of transition instants against an ideal clock fitted by
least squares (t = a + b m) over consecutive windows of `window` instants (0:
all). ui = 0: each instant is one clock period; ui > 0: the nominal unit
interval in samples, instants get m = round((t - t_first) / ui).

Returns (tie, rms, peak_to_peak); NaN instants get NaN.)doc");
}
