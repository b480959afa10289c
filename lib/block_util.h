/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: what every block shell does the same way (not installed):
 * parameter names, core status codes as exceptions, the AUTO fallback reason.
 */

#ifndef INCLUDED_TRANSIENT_BLOCK_UTIL_H
#define INCLUDED_TRANSIENT_BLOCK_UTIL_H

#include <transient/common.h>
#include <string>

namespace gr
{
namespace transient
{
namespace detail
{

//! Lower-case copy of a parameter value (option names are case-insensitive).
std::string lower(const std::string &s);

//! "auto", "cpu" or "cuda"; std::invalid_argument "<who>: backend must be ..."
tr_backend parse_backend(const char *who, const std::string &name);

//! A core failure as an exception: std::invalid_argument for TR_ERR_INVALID
//! (ValueError in Python), std::runtime_error otherwise; the message is
//! "<who>: " + the core's message (or the status's description).
[[noreturn]] void throw_status(const char *who, tr_status st, const char *what);

//! Why backend AUTO runs on the CPU, for the one log line a block writes.
std::string cpu_fallback_reason(int device);

} // namespace detail
} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_BLOCK_UTIL_H */
