/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/*
 * Python over the core's PSD functions and whitening, on numpy arrays
 * (<transient/whiten.h>), so that a program can whiten a strain series
 * without a flowgraph:
 *   psd_welch(x, rate, seglen)           Welch median PSD (scipy's average='median')
 *   psd_from_file(path, rate, nfft, asd) two-column ASCII noise curve on the grid
 *   psd_design(rate, nfft)               the Advanced LIGO design fit
 *   psd_frequencies(rate, nfft)          the grid's frequencies
 *   whiten(x, rate, psd, ...)            whitened copy of x, aligned with x
 *   Whitener(rate, psd, ...)             the streaming object
 */

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <transient/whiten.h>

#include "core_util_python.h"

#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace tr_python;

namespace
{

using farray = py::array_t<float, py::array::c_style | py::array::forcecast>;
using darray = py::array_t<double, py::array::c_style | py::array::forcecast>;

struct whiten_deleter {
    void operator()(tr_whiten *q) const { tr_whiten_destroy(q); }
};

py::array_t<double> grid_array(size_t nfft)
{
    if (nfft < 4 || nfft % 2 || nfft > TR_PSD_MAX_NFFT)
        throw py::value_error("nfft must be even and in [4, 2^26], got " +
                              std::to_string(nfft));
    return py::array_t<double>(static_cast<py::ssize_t>(tr_psd_len(nfft)));
}

void check(tr_status st, const tr_error &err)
{
    if (st != TR_OK) raise_status(st, err.message);
}

py::array_t<double> psd_welch(farray x, double rate, size_t seglen)
{
    if (x.ndim() != 1) throw py::value_error("psd_welch: x must be one-dimensional");
    py::array_t<double> psd = grid_array(seglen);
    tr_error err;
    tr_status st;
    {
        py::gil_scoped_release release;
        st = tr_psd_welch(x.data(), static_cast<size_t>(x.size()), rate, seglen,
                          psd.mutable_data(), &err);
    }
    check(st, err);
    return psd;
}

py::array_t<double> psd_from_file(const std::string &path, double rate, size_t nfft,
                                  bool asd)
{
    py::array_t<double> psd = grid_array(nfft);
    tr_error err;
    const tr_status st =
        tr_psd_from_file(path.c_str(), asd ? 1 : 0, rate, nfft, psd.mutable_data(), &err);
    // A file that cannot be read is a bad argument for the caller too.
    if (st == TR_ERR_IO) raise_status(TR_ERR_INVALID, err.message);
    check(st, err);
    return psd;
}

py::array_t<double> psd_design(double rate, size_t nfft)
{
    py::array_t<double> psd = grid_array(nfft);
    tr_error err;
    check(tr_psd_design(rate, nfft, psd.mutable_data(), &err), err);
    return psd;
}

py::array_t<double> psd_frequencies(double rate, size_t nfft)
{
    py::array_t<double> f = grid_array(nfft);
    double *p = f.mutable_data();
    for (size_t k = 0; k < tr_psd_len(nfft); ++k)
        p[k] = static_cast<double>(k) * rate / static_cast<double>(nfft);
    return f;
}

class whitener
{
  public:
    whitener(double rate, darray psd, double fmin, size_t half_len, size_t fft_len,
             const std::string &backend, const std::string &variant, int device,
             size_t batch)
    {
        if (psd.ndim() != 1 || psd.size() < 3)
            throw py::value_error(
                "Whitener: psd must be one-dimensional with nfft / 2 + 1 >= 3 values");
        tr_whiten_config c = tr_whiten_config_default();
        c.rate = rate;
        c.psd = psd.data();
        c.nfft = 2 * (static_cast<size_t>(psd.size()) - 1);
        c.fmin = fmin;
        c.half_len = half_len;
        c.fft_len = fft_len;
        c.backend = parse_backend(backend);
        c.variant = parse_variant(variant);
        c.device = device;
        c.batch = batch;
        tr_error err;
        q_.reset(tr_whiten_create(&c, &err));
        if (!q_) raise_status(err.code, err.message);
    }

    py::array_t<float> process(farray x)
    {
        if (x.ndim() != 1) throw py::value_error("Whitener: x must be one-dimensional");
        py::array_t<float> y(x.size());
        tr_status st;
        {
            py::gil_scoped_release release;
            st = tr_whiten_process(q_.get(), x.data(), static_cast<size_t>(x.size()),
                                   y.mutable_data());
        }
        if (st != TR_OK) raise_status(st, tr_whiten_last_error(q_.get()));
        return y;
    }

    void reset() { tr_whiten_reset(q_.get()); }

    py::array_t<double> taps() const
    {
        const size_t n = 2 * tr_whiten_half_len(q_.get()) + 1;
        py::array_t<double> t(static_cast<py::ssize_t>(n));
        tr_whiten_taps(q_.get(), t.mutable_data(), n);
        return t;
    }

    uint64_t latency() const { return tr_whiten_latency(q_.get()); }
    uint64_t position() const { return tr_whiten_position(q_.get()); }
    uint64_t gated() const { return tr_whiten_gated(q_.get()); }
    size_t half_len() const { return tr_whiten_half_len(q_.get()); }
    size_t fft_len() const { return tr_whiten_fft_len(q_.get()); }
    std::string backend() const { return tr_backend_name(tr_whiten_backend(q_.get())); }

  private:
    std::unique_ptr<tr_whiten, whiten_deleter> q_;
};

/* The whole array at once: x, then D zeros to push its end out, output
 * shifted back by D so that y[i] is the whitened x[i]. */
py::array_t<float> whiten_array(farray x, double rate, darray psd, double fmin,
                                size_t half_len, size_t fft_len,
                                const std::string &backend, const std::string &variant)
{
    if (x.ndim() != 1) throw py::value_error("whiten: x must be one-dimensional");
    whitener w(rate, psd, fmin, half_len, fft_len, backend, variant, 0, 8);
    const size_t n = static_cast<size_t>(x.size());
    const size_t d = static_cast<size_t>(w.latency());
    std::vector<float> in(n + d, 0.0f);
    std::copy(x.data(), x.data() + n, in.begin());
    farray all(static_cast<py::ssize_t>(n + d), in.data());
    py::array_t<float> y = w.process(all);
    return py::array_t<float>(static_cast<py::ssize_t>(n), y.data() + d);
}

} // namespace

void bind_whiten(py::module &m)
{
    m.def("psd_welch", &psd_welch, py::arg("x"), py::arg("rate"), py::arg("seglen"),
          "One-sided PSD of x (sampled at rate Hz) by Welch's method with median\n"
          "averaging, as scipy.signal.welch(x, rate, nperseg=seglen, average='median'):\n"
          "Hann window, 50 % overlap, each segment minus its mean, the median over\n"
          "segments divided by its bias. seglen even, len(x) >= seglen. Returns\n"
          "seglen // 2 + 1 values (unit^2/Hz) at k * rate / seglen.");
    m.def(
        "psd_from_file", &psd_from_file, py::arg("path"), py::arg("rate"),
        py::arg("nfft"), py::arg("asd") = true,
        "PSD from a two-column ASCII file (frequency in Hz, then ASD when asd=True,\n"
        "as LIGO distributes its noise curves, else PSD), interpolated in log-log onto\n"
        "the grid k * rate / nfft (nfft // 2 + 1 values); the end values are held\n"
        "outside the file's range. ValueError names the file and line of a bad row.");
    m.def("psd_design", &psd_design, py::arg("rate"), py::arg("nfft"),
          "The Advanced LIGO design fit of Sathyaprakash & Schutz, Living Rev. Relativ.\n"
          "12, 2 (2009), on the grid k * rate / nfft: strain^2/Hz, +inf below 10 Hz\n"
          "(whiten with fmin >= 10 Hz).");
    m.def("psd_frequencies", &psd_frequencies, py::arg("rate"), py::arg("nfft"),
          "The frequencies k * rate / nfft, k = 0 .. nfft // 2, of the PSD functions.");
    m.def(
        "whiten", &whiten_array, py::arg("x"), py::arg("rate"), py::arg("psd"),
        py::arg("fmin") = 15.0, py::arg("half_len") = 0, py::arg("fft_len") = 0,
        py::arg("backend") = "auto", py::arg("variant") = "fast",
        "Whitened copy of x (float32, same length, y[i] the whitened x[i]): the\n"
        "inverse-ASD filter of psd (nfft // 2 + 1 values on the grid k * rate / nfft),\n"
        "truncated to 2 half_len + 1 taps (0: nfft // 2 - 1 each side) with a Hann "
        "taper,\n"
        "frequencies below fmin removed, scaled so that noise with that PSD comes out\n"
        "with unit variance per frequency bin. Zeros are assumed before and after x\n"
        "(the first and last half_len outputs see them). NaN/Inf samples gate the\n"
        "outputs within half_len of them to 0. See Whitener for streaming.");
    py::class_<whitener>(
        m, "Whitener",
        "Streaming whitening (the core's tr_whiten): process(x) consumes\n"
        "len(x) samples and returns as many, output i being the whitened\n"
        "sample `latency` positions earlier (0 before the stream's start);\n"
        "the result does not depend on how the stream is cut into calls.")
        .def(
            py::init<double, darray, double, size_t, size_t, const std::string &,
                     const std::string &, int, size_t>(),
            py::arg("rate"), py::arg("psd"), py::arg("fmin") = 15.0,
            py::arg("half_len") = 0, py::arg("fft_len") = 0, py::arg("backend") = "auto",
            py::arg("variant") = "fast", py::arg("device") = 0, py::arg("batch") = 8,
            "rate in Hz; psd: nfft // 2 + 1 one-sided values on k * rate / nfft; fmin:\n"
            "Hz removed below; half_len: filter taps each side (0: nfft // 2 - 1);\n"
            "fft_len: overlap-save FFT length (0: power of two >= 2 L); backend 'auto',\n"
            "'cpu' or 'cuda'; variant 'fast' or 'reference'; batch: CUDA blocks per "
            "call.")
        .def("process", &whitener::process, py::arg("x"),
             "Whiten the next len(x) samples; returns float32 of the same length.")
        .def("reset", &whitener::reset, "Back to position 0 with an empty history.")
        .def("taps", &whitener::taps, "The filter h[-half_len .. half_len] (float64).")
        .def_property_readonly("latency", &whitener::latency,
                               "Samples between an input and its whitened output.")
        .def_property_readonly("position", &whitener::position, "Samples consumed.")
        .def_property_readonly("gated", &whitener::gated,
                               "Outputs written as 0 because of NaN/Inf input.")
        .def_property_readonly("half_len", &whitener::half_len, "Taps each side.")
        .def_property_readonly("fft_len", &whitener::fft_len, "Overlap-save FFT length.")
        .def_property_readonly("backend", &whitener::backend,
                               "'cpu' or 'cuda': where it runs.");
}
