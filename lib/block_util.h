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

#include <gnuradio/block.h>
#include <gnuradio/logger.h>
#include <transient/common.h>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

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

//! msg_format of a block's "detects" messages: true for "vectors" (uniform
//! vectors per message), false for "dicts" (a dict per event);
//! std::invalid_argument "<who>: msg_format must be ..." otherwise.
bool parse_msg_format(const char *who, const std::string &name);

//! A core failure as an exception: std::invalid_argument for TR_ERR_INVALID
//! (ValueError in Python), std::runtime_error otherwise; the message is
//! "<who>: " + the core's message (or the status's description).
[[noreturn]] void throw_status(const char *who, tr_status st, const char *what);

//! Why backend AUTO runs on the CPU, for the one log line a block writes.
std::string cpu_fallback_reason(int device);

//! Logs that backend AUTO runs on the CPU: at info level the first time a
//! reason comes up in the process, at debug level after that (a flow graph of
//! many blocks says it once).
void log_cpu_fallback(const gr::logger_ptr &logger, int device);

//! Output buffer size in items for a block on the CPU backend: `batch`
//! items, but at most 64 MiB per output (item_bytes each), at least 1. A large
//! output buffer lets the scheduler hand the block large chunks (the default
//! buffer of 32 KiB means a call per few thousand samples); it adds no latency.
long cpu_output_buffer_items(size_t batch, size_t item_bytes);

//! set_min_output_buffer(items) on every output port of `b`, port by port
//! (the form for all ports logs an info line per block).
void set_min_output_buffers(gr::block &b, long items);

//! Page-locks (cudaHostRegister) the host memory of a block's GNU Radio
//! buffers, so that the core's copies between them and the GPU run as DMA from
//! pinned memory instead of going through a staging copy. pin() registers the
//! block's double-mapped input and output buffers (both mappings) the first
//! time it is called in a run; unpin() (from stop() and the destructor) undoes
//! it. Registrations are counted per address in the process, so blocks that
//! share a buffer (fan-out, chains) can pin and unpin it in any order. Buffers
//! of other mapping types (custom device buffers) are left alone. Without
//! CUDA, or with the environment variable GR_TRANSIENT_PIN_BUFFERS=0, it does
//! nothing; failures only log once and leave the staging path in use.
class buffer_pins
{
  public:
    buffer_pins() = default;
    ~buffer_pins() { unpin(); }
    buffer_pins(const buffer_pins &) = delete;
    buffer_pins &operator=(const buffer_pins &) = delete;

    //! Registers the buffers of `b` (no-op after the first call of a run).
    void pin(gr::block &b, const gr::logger_ptr &log);
    //! Registers [p, p + bytes) as well (a block's own staging vector).
    bool pin_range(const void *p, size_t bytes);
    //! Releases every registration this object made.
    void unpin();
    //! Bytes registered by this object.
    size_t pinned_bytes() const { return d_bytes; }

  private:
    std::vector<const void *> d_regs;
    size_t d_bytes = 0;
    bool d_done = false;
    bool d_warned = false;
};

//! Copies memory on worker threads while the caller does something else (a
//! block's pass-through copy overlapped with its core call): start() returns
//! at once, wait() returns when the copy is complete. Large copies are split
//! over up to 4 threads (half the cores): one thread copies about 10 GB/s,
//! less than PCIe moves. Copies of less than 256 KiB run in start() itself.
class async_copy
{
  public:
    async_copy();
    ~async_copy();
    async_copy(const async_copy &) = delete;
    async_copy &operator=(const async_copy &) = delete;

    void start(void *dst, const void *src, size_t bytes);
    void wait();

  private:
    void run(int i);
    const int d_nthreads;
    std::vector<std::thread> d_threads;
    std::mutex d_m;
    std::condition_variable d_cv, d_done;
    char *d_dst = nullptr;
    const char *d_src = nullptr;
    size_t d_bytes = 0;
    int d_pending = 0;
    unsigned long d_gen = 0;
    bool d_stop = false;
};

} // namespace detail
} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_BLOCK_UTIL_H */
