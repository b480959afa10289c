/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: what every block shell does the same way.
 */

#include "block_util.h"
#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace gr
{
namespace transient
{
namespace detail
{

std::string lower(const std::string &s)
{
    std::string r(s);
    std::transform(r.begin(), r.end(), r.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return r;
}

tr_backend parse_backend(const char *who, const std::string &name)
{
    const std::string s = lower(name);
    if (s == "auto") return TR_BACKEND_AUTO;
    if (s == "cpu") return TR_BACKEND_CPU;
    if (s == "cuda") return TR_BACKEND_CUDA;
    throw std::invalid_argument(
        std::string(who) + ": backend must be \"auto\", \"cpu\" or \"cuda\", not \"" +
        name + "\"");
}

void throw_status(const char *who, tr_status st, const char *what)
{
    const std::string msg =
        std::string(who) + ": " + (what && *what ? what : tr_strerror(st));
    if (st == TR_ERR_INVALID) throw std::invalid_argument(msg);
    throw std::runtime_error(msg);
}

std::string cpu_fallback_reason(int device)
{
    char why[TR_ERROR_MESSAGE_LEN];
    why[0] = '\0';
    const int ndev = tr_cuda_device_count(why, sizeof(why));
    if (why[0]) return why;
    if (!tr_cuda_compiled()) return "built without CUDA support";
    if (ndev > 0 && (device < 0 || device >= ndev))
        return "CUDA device " + std::to_string(device) + " does not exist (" +
               std::to_string(ndev) + " usable)";
    return "no usable CUDA device";
}

} // namespace detail
} // namespace transient
} // namespace gr
