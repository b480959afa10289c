/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/*
 * Kalman model files read into numpy arrays (tr_kalman_model_load), to inspect
 * what a model file holds (e.g. one written by kalman_detector_ff.save_model
 * from fitted parameters, gnuradio.transient.kalman_fit):
 *   kalman_model_load(path) -> {"Q", "M", "A", "K", "sigma"}
 */

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <transient/kalman.h>

#include "core_util_python.h"

#include <algorithm>
#include <memory>
#include <string>

namespace py = pybind11;
using namespace tr_python;

namespace
{

struct model_deleter {
    void operator()(tr_kalman_model *m) const { tr_kalman_model_destroy(m); }
};
using model_ptr = std::unique_ptr<tr_kalman_model, model_deleter>;

py::dict model_load(const std::string &path)
{
    tr_error err;
    model_ptr m(tr_kalman_model_load(path.c_str(), &err));
    if (!m) raise_status(err.code, err.message);
    const size_t Q = tr_kalman_model_Q(m.get()), M = tr_kalman_model_M(m.get());
    const size_t S = 2 * Q;
    py::array_t<double> A({S, S}), K({M, S}), sigma(M);
    const double *a = tr_kalman_model_A(m.get());
    std::copy(a, a + S * S, A.mutable_data());
    for (size_t k = 1; k <= M; k++) {
        const double *g = tr_kalman_model_gain(m.get(), static_cast<uint32_t>(k));
        std::copy(g, g + S, K.mutable_data() + (k - 1) * S);
        sigma.mutable_data()[k - 1] =
            tr_kalman_model_sigma(m.get(), static_cast<uint32_t>(k));
    }
    py::dict out;
    out["Q"] = Q;
    out["M"] = M;
    out["A"] = A;
    out["K"] = K;
    out["sigma"] = sigma;
    return out;
}

} // namespace

void bind_kalman_model(py::module &m)
{
    m.def("kalman_model_load", &model_load, py::arg("path"),
          R"doc(
Read a Kalman model file (tr_kalman_model_load): a dict with Q, M, A
(2Q x 2Q), K (M x 2Q: K_1 .. K_M) and sigma (M: Sigma_1 .. Sigma_M).
RuntimeError when the file is missing, truncated or invalid.)doc");
}
