/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/*
 * Python over the core's filterbank reader and dedispersion, on numpy arrays:
 *   Filterbank(path): .header (dict), .nsamples, .position, read(n),
 *                     read_raw(n), seek(i), close(); a context manager
 *   dedisp_dm_list(nchan, fch1, foff, tsamp, dm_min, dm_max, tolerance,
 *                  pulse_width)
 *   dedisperse(x, fch1, foff, tsamp, dm_min, dm_max, dms, tolerance,
 *              pulse_width, mask, zero_dm, mean, backend, variant)
 */

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <transient/dedisp.h>
#include <transient/filterbank.h>

#include "core_util_python.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace tr_python;

namespace
{

struct filterbank_deleter {
    void operator()(tr_filterbank *f) const { tr_filterbank_close(f); }
};

struct dedisp_deleter {
    void operator()(tr_dedisp *q) const { tr_dedisp_destroy(q); }
};

class filterbank
{
  public:
    explicit filterbank(const std::string &path)
    {
        tr_error err;
        err.code = TR_OK;
        err.message[0] = '\0';
        f_.reset(tr_filterbank_open(path.c_str(), &err));
        // A file that is not a valid filterbank is bad input: ValueError.
        if (!f_)
            raise_status(err.code == TR_ERR_NOMEM ? err.code : TR_ERR_INVALID,
                         err.message);
    }

    py::dict header() const
    {
        const tr_filterbank_header *h = get();
        py::dict d;
        d["source_name"] = std::string(h->source_name);
        d["rawdatafile"] = std::string(h->rawdatafile);
        d["telescope_id"] = h->telescope_id;
        d["machine_id"] = h->machine_id;
        d["data_type"] = h->data_type;
        d["barycentric"] = h->barycentric;
        d["pulsarcentric"] = h->pulsarcentric;
        d["nbeams"] = h->nbeams;
        d["ibeam"] = h->ibeam;
        d["az_start"] = h->az_start;
        d["za_start"] = h->za_start;
        d["src_raj"] = h->src_raj;
        d["src_dej"] = h->src_dej;
        d["tstart"] = h->tstart;
        d["tsamp"] = h->tsamp;
        d["fch1"] = h->fch1;
        d["foff"] = h->foff;
        d["refdm"] = h->refdm;
        d["period"] = h->period;
        d["nbits"] = h->nbits;
        d["nchans"] = h->nchans;
        d["nifs"] = h->nifs;
        d["nsamples"] = h->nsamples;
        d["header_bytes"] = h->header_bytes;
        return d;
    }

    uint64_t nsamples() const { return get()->nsamples; }
    uint64_t position() const
    {
        get();
        return tr_filterbank_position(f_.get());
    }

    py::array_t<float> read(size_t n)
    {
        const tr_filterbank_header *h = get();
        n = available(n);
        py::array_t<float> x(
            {static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(h->nchans)});
        size_t got = 0;
        tr_status st;
        {
            py::gil_scoped_release release;
            st = tr_filterbank_read(f_.get(), x.mutable_data(), n, &got);
        }
        if (st != TR_OK) raise_status(st, tr_filterbank_last_error(f_.get()));
        return x;
    }

    py::array_t<uint8_t> read_raw(size_t n)
    {
        const tr_filterbank_header *h = get();
        n = available(n);
        py::array_t<uint8_t> raw(
            {static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(h->spectrum_bytes)});
        size_t got = 0;
        const tr_status st =
            tr_filterbank_read_raw(f_.get(), raw.mutable_data(), n, &got);
        if (st != TR_OK) raise_status(st, tr_filterbank_last_error(f_.get()));
        return raw;
    }

    void seek(uint64_t i)
    {
        const tr_status st = tr_filterbank_seek(get_mut(), i);
        if (st != TR_OK) raise_status(st, tr_filterbank_last_error(f_.get()));
    }

    void close() { f_.reset(); }

  private:
    /* At most n, and no more than the spectra left. */
    size_t available(size_t n) const
    {
        const uint64_t left = get()->nsamples - tr_filterbank_position(f_.get());
        return n > left ? static_cast<size_t>(left) : n;
    }
    const tr_filterbank_header *get() const
    {
        if (!f_) throw py::value_error("filterbank: the file is closed");
        return tr_filterbank_get_header(f_.get());
    }
    tr_filterbank *get_mut()
    {
        get();
        return f_.get();
    }
    std::unique_ptr<tr_filterbank, filterbank_deleter> f_;
};

tr_dedisp_plan_config plan_of(uint32_t nchan, double fch1, double foff, double tsamp,
                              double dm_min, double dm_max, double tolerance,
                              double pulse_width)
{
    tr_dedisp_plan_config c = tr_dedisp_plan_config_default();
    c.nchan = nchan;
    c.fch1 = fch1;
    c.foff = foff;
    c.tsamp = tsamp;
    c.dm_min = dm_min;
    c.dm_max = dm_max;
    c.tolerance = tolerance;
    c.pulse_width = pulse_width;
    return c;
}

py::array_t<double> dm_list(uint32_t nchan, double fch1, double foff, double tsamp,
                            double dm_min, double dm_max, double tolerance,
                            double pulse_width)
{
    const tr_dedisp_plan_config c =
        plan_of(nchan, fch1, foff, tsamp, dm_min, dm_max, tolerance, pulse_width);
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    const size_t n = tr_dedisp_dm_list(&c, nullptr, 0, &err);
    if (n == 0) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    py::array_t<double> out(static_cast<py::ssize_t>(n));
    tr_dedisp_dm_list(&c, out.mutable_data(), n, &err);
    return out;
}

using float2d = py::array_t<float, py::array::c_style | py::array::forcecast>;
using f8 = py::array_t<double, py::array::c_style | py::array::forcecast>;
using u1 = py::array_t<uint8_t, py::array::c_style | py::array::forcecast>;

py::tuple dedisperse(const float2d &x, double fch1, double foff, double tsamp,
                     double dm_min, double dm_max, std::optional<f8> dms,
                     double tolerance, double pulse_width, std::optional<u1> mask,
                     bool zero_dm, bool mean, const std::string &backend,
                     const std::string &variant)
{
    if (x.ndim() != 2) throw py::value_error("x must have shape (n, nchan)");
    const size_t n = static_cast<size_t>(x.shape(0));
    tr_dedisp_config cfg = tr_dedisp_config_default();
    cfg.plan = plan_of(static_cast<uint32_t>(x.shape(1)), fch1, foff, tsamp, dm_min,
                       dm_max, tolerance, pulse_width);
    if (dms) {
        if (dms->ndim() != 1) throw py::value_error("dms must be one-dimensional");
        cfg.plan.dm_list = dms->data();
        cfg.plan.ndm_list = static_cast<uint32_t>(dms->shape(0));
    }
    if (mask) {
        if (mask->ndim() != 1 || mask->shape(0) != x.shape(1))
            throw py::value_error("mask must have one entry per channel");
        cfg.mask = mask->data();
    }
    cfg.zero_dm = zero_dm;
    cfg.scale = mean ? TR_DEDISP_MEAN : TR_DEDISP_SUM;
    cfg.backend = parse_backend(backend);
    cfg.variant = parse_variant(variant);
    tr_error err;
    err.code = TR_OK;
    err.message[0] = '\0';
    std::unique_ptr<tr_dedisp, dedisp_deleter> q(tr_dedisp_create(&cfg, &err));
    if (!q) raise_status(err.code == TR_OK ? TR_ERR_INVALID : err.code, err.message);
    const size_t ndm = tr_dedisp_ndm(q.get()), L = tr_dedisp_latency(q.get());
    // The core's stream is n + L outputs, the first L (positions < 0) zero.
    std::vector<float> all((n + L) * ndm);
    tr_status st;
    {
        py::gil_scoped_release release;
        st = tr_dedisp_process(q.get(), x.data(), n, all.data());
        if (st == TR_OK) st = tr_dedisp_flush(q.get(), all.data() + n * ndm);
    }
    if (st != TR_OK) raise_status(st, tr_dedisp_last_error(q.get()));
    py::array_t<float> y({static_cast<py::ssize_t>(n), static_cast<py::ssize_t>(ndm)});
    if (n) std::memcpy(y.mutable_data(), all.data() + L * ndm, n * ndm * sizeof(float));
    py::array_t<double> trials(static_cast<py::ssize_t>(ndm));
    std::memcpy(trials.mutable_data(), tr_dedisp_dms(q.get()), ndm * sizeof(double));
    return py::make_tuple(y, trials);
}

} // namespace

void bind_dedisp(py::module &m)
{
    py::class_<filterbank>(m, "Filterbank", R"doc(
SIGPROC filterbank file (the core's streaming reader, lib/core/io): the header
is validated against the file size on opening (ValueError naming the file and
the problem otherwise). read(n) returns up to n spectra as float32 of shape
(n, nchans), channels in file order (channel c at fch1 + c * foff); read_raw(n)
the packed bytes (n, spectrum_bytes); both advance the position.
)doc")
        .def(py::init<const std::string &>(), py::arg("path"))
        .def_property_readonly("header", &filterbank::header)
        .def_property_readonly("nsamples", &filterbank::nsamples)
        .def_property_readonly("position", &filterbank::position)
        .def("read", &filterbank::read, py::arg("n"))
        .def("read_raw", &filterbank::read_raw, py::arg("n"))
        .def("seek", &filterbank::seek, py::arg("spectrum"))
        .def("close", &filterbank::close)
        .def("__enter__", [](filterbank &f) -> filterbank & { return f; })
        .def("__exit__", [](filterbank &f, py::args) { f.close(); });

    m.def("dedisp_dm_list", &dm_list, py::arg("nchan"), py::arg("fch1"), py::arg("foff"),
          py::arg("tsamp"), py::arg("dm_min") = 0.0, py::arg("dm_max") = 1000.0,
          py::arg("tolerance") = 1.25, py::arg("pulse_width") = 40.0,
          R"doc(
dedisp's (and Heimdall's) DM trial list for a header: float64 array of trials
in pc cm^-3, from dm_min up to the first trial >= dm_max (share/doc/gr-transient/dedisp.md).
pulse_width in microseconds, tsamp in seconds, frequencies in MHz.
)doc");

    m.def("dedisperse", &dedisperse, py::arg("x"), py::arg("fch1"), py::arg("foff"),
          py::arg("tsamp"), py::arg("dm_min") = 0.0, py::arg("dm_max") = 1000.0,
          py::arg("dms") = py::none(), py::arg("tolerance") = 1.25,
          py::arg("pulse_width") = 40.0, py::arg("mask") = py::none(),
          py::arg("zero_dm") = false, py::arg("mean") = false, py::arg("backend") = "cpu",
          py::arg("variant") = "fast",
          R"doc(
Dedisperse spectra x of shape (n, nchan) (float32, time-major). Returns
(y, dms): y of shape (n, ndm), y[p, d] = sum over the channels (mask: non-zero
= used) of x[p + delay_c(dms[d]), c], the arrival time at the highest
frequency, spectra past the end counted as zero; dms the trials (dedisp's list
from dm_min..dm_max, or the given dms). zero_dm subtracts each spectrum's mean
over the used channels first; mean divides the sums by the number of used
channels. Delays: round(4.148808e3 DM (f_c^-2 - f_max^-2) / tsamp).
)doc");
}
