/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* What the core helpers' binding files share: option names to core enums and
 * core status codes to Python exceptions. */
#ifndef TRANSIENT_CORE_UTIL_PYTHON_H
#define TRANSIENT_CORE_UTIL_PYTHON_H

#include <pybind11/pybind11.h>

#include <transient/common.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>
#include <string>

namespace tr_python
{

namespace py = pybind11;

inline std::string lower(std::string s)
{
    std::transform(s.begin(), s.end(), s.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

inline tr_backend parse_backend(const std::string &name)
{
    const std::string s = lower(name);
    if (s == "auto") return TR_BACKEND_AUTO;
    if (s == "cpu") return TR_BACKEND_CPU;
    if (s == "cuda") return TR_BACKEND_CUDA;
    throw py::value_error("backend must be 'auto', 'cpu' or 'cuda', not '" + name + "'");
}

inline tr_variant parse_variant(const std::string &name)
{
    const std::string s = lower(name);
    if (s == "fast") return TR_VARIANT_FAST;
    if (s == "reference") return TR_VARIANT_REFERENCE;
    if (s == "paper") return TR_VARIANT_PAPER;
    throw py::value_error("variant must be 'fast', 'reference' or 'paper', not '" + name +
                          "'");
}

// ValueError for invalid input, RuntimeError for everything else.
[[noreturn]] inline void raise_status(tr_status st, const std::string &message)
{
    const std::string msg = message.empty() ? std::string(tr_strerror(st)) : message;
    if (st == TR_ERR_INVALID) throw py::value_error(msg);
    throw std::runtime_error(msg);
}

} // namespace tr_python

#endif /* TRANSIENT_CORE_UTIL_PYTHON_H */
