/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: CUDA context of power_cf (not installed).
 */

#ifndef INCLUDED_TRANSIENT_POWER_CUDA_H
#define INCLUDED_TRANSIENT_POWER_CUDA_H

#include <cstddef>
#include <string>

namespace gr
{
namespace transient
{
namespace detail
{

struct power_cuda;

//! Stream and device staging for up to max_values complex values; NULL with
//! the reason in *err on failure.
power_cuda *power_cuda_create(int device, std::size_t max_values, std::string *err);
void power_cuda_destroy(power_cuda *p);

//! |z|^2 of n interleaved complex values (host memory at in); out is host
//! memory, or device memory when out_on_device. Returns when out is written;
//! false with the reason in *err on a CUDA failure.
bool power_cuda_run(power_cuda *p, const float *in, std::size_t n, float *out,
                    bool out_on_device, std::string *err);

} // namespace detail
} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_POWER_CUDA_H */
