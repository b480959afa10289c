/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

namespace py = pybind11;

// Headers for binding functions
/**************************************/
// The following comment block is used for
// gr_modtool to insert function prototypes
// Please do not delete
/**************************************/
// BINDING_FUNCTION_PROTOTYPES(
void bind_edge_localizer_f(py::module &m);
void bind_spiir_bank_fc(py::module &m);
void bind_spiir_bank_cc(py::module &m);
void bind_kalman_detector_ff(py::module &m);
void bind_boxcar_search_ff(py::module &m);
void bind_power_cf(py::module &m);
void bind_dedisperse_ff(py::module &m);
void bind_frb_search_f(py::module &m);
void bind_filterbank_source(py::module &m);
void bind_whiten_ff(py::module &m);
// ) END BINDING_FUNCTION_PROTOTYPES

// Core helpers on numpy arrays (core_python.cc, dedisp_python.cc, whiten_python.cc).
void bind_core(py::module &m);
void bind_dedisp(py::module &m);
void bind_whiten(py::module &m);

// import_array() is a macro that returns from the calling function; wrap it.
void *init_numpy()
{
    import_array();
    return NULL;
}

PYBIND11_MODULE(transient_python, m)
{
    // Initialize the numpy C API
    // (otherwise we will see segmentation faults)
    init_numpy();

    // Allow access to base block methods
    py::module::import("gnuradio.gr");

    /**************************************/
    // The following comment block is used for
    // gr_modtool to insert binding function calls
    // Please do not delete
    /**************************************/
    // BINDING_FUNCTION_CALLS(
    bind_edge_localizer_f(m);
    bind_spiir_bank_fc(m);
    bind_spiir_bank_cc(m);
    bind_kalman_detector_ff(m);
    bind_boxcar_search_ff(m);
    bind_power_cf(m);
    bind_dedisperse_ff(m);
    bind_frb_search_f(m);
    bind_filterbank_source(m);
    bind_whiten_ff(m);
    // ) END BINDING_FUNCTION_CALLS

    bind_core(m);
    bind_dedisp(m);
    bind_whiten(m);
}
