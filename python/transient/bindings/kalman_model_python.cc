/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/*
 * Kalman model files from Python, designed by libtransient itself
 * (tr_kalman_model_design, tr_kalman_model_save, tr_kalman_model_load), so that
 * a model fitted from data (gnuradio.transient.kalman_fit) is the one the
 * detector would design from the same parameters:
 *   kalman_model_save(path, M, noise_ar, noise_var, meas_var, target_ar,
 *                     target_var, envelope, env_param, env_user)
 *   kalman_model_load(path) -> {"Q", "M", "A", "K", "sigma"}
 */

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <transient/kalman.h>

#include "core_util_python.h"

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

namespace py = pybind11;
using namespace tr_python;

namespace
{

struct model_deleter {
    void operator()(tr_kalman_model *m) const { tr_kalman_model_destroy(m); }
};
using model_ptr = std::unique_ptr<tr_kalman_model, model_deleter>;

tr_kalman_envelope parse_envelope(const std::string &name)
{
    const std::string s = lower(name);
    if (s == "rect") return TR_KALMAN_ENV_RECT;
    if (s == "exp") return TR_KALMAN_ENV_EXP;
    if (s == "gauss") return TR_KALMAN_ENV_GAUSS;
    if (s == "raised_cosine") return TR_KALMAN_ENV_RAISED_COSINE;
    if (s == "user") return TR_KALMAN_ENV_USER;
    throw py::value_error("envelope must be 'rect', 'exp', 'gauss', 'raised_cosine' or "
                          "'user', not '" +
                          name + "'");
}

void model_save(const std::string &path, unsigned int M,
                const std::vector<double> &noise_ar, double noise_var, double meas_var,
                const std::vector<double> &target_ar, double target_var,
                const std::string &envelope, double env_param,
                const std::vector<double> &env_user)
{
    tr_kalman_design d = tr_kalman_design_default();
    d.M = M;
    d.noise_order = static_cast<uint32_t>(noise_ar.size());
    d.noise_ar = noise_ar.data();
    d.noise_var = noise_var;
    d.meas_var = meas_var;
    d.target_order = static_cast<uint32_t>(target_ar.size());
    d.target_ar = target_ar.data();
    d.target_var = target_var;
    d.envelope = parse_envelope(envelope);
    d.env_param = env_param;
    if (d.envelope == TR_KALMAN_ENV_USER) {
        if (env_user.size() + 1 != M)
            throw py::value_error("env_user must hold M-1 = " + std::to_string(M - 1) +
                                  " values, not " + std::to_string(env_user.size()));
        d.env_user = env_user.data();
    }
    tr_error err;
    model_ptr m;
    {
        py::gil_scoped_release release;
        m.reset(tr_kalman_model_design(&d, &err));
    }
    if (!m) raise_status(err.code, err.message);
    if (tr_kalman_model_save(m.get(), path.c_str(), &err) != TR_OK)
        raise_status(err.code, err.message);
}

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
    m.def("kalman_model_save", &model_save, py::arg("path"), py::arg("M"),
          py::arg("noise_ar"), py::arg("noise_var"), py::arg("meas_var"),
          py::arg("target_ar"), py::arg("target_var"), py::arg("envelope") = "rect",
          py::arg("env_param") = 10.0, py::arg("env_user") = std::vector<double>{},
          R"doc(
Design a Kalman-bank model with libtransient (tr_kalman_model_design: the
noise-only Riccati steady state, then the M-1 hypotheses) and write it to
path in the model-file format kalman_detector_ff(model_file=...) loads
(share/doc/gr-transient/kalman.md). AR convention x_t = sum_i a[i] x_{t-1-i}
+ w_t. envelope: 'rect', 'exp', 'gauss', 'raised_cosine' (env_param: decay
constant or width in samples) or 'user' (env_user: M-1 values >= 0).
ValueError on an invalid design (unstable AR, non-positive variances ...),
RuntimeError when the file cannot be written.)doc");
    m.def("kalman_model_load", &model_load, py::arg("path"),
          R"doc(
Read a Kalman model file (tr_kalman_model_load): a dict with Q, M, A
(2Q x 2Q), K (M x 2Q: K_1 .. K_M) and sigma (M: Sigma_1 .. Sigma_M).
RuntimeError when the file is missing, truncated or invalid.)doc");
}
