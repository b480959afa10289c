/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: what every block shell does the same way.
 */

#include "block_util.h"

#include <gnuradio/block_detail.h>
#include <gnuradio/buffer.h>
#include <gnuradio/buffer_reader.h>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <stdexcept>
#ifdef GR_TRANSIENT_HAVE_CUDART
#include <cuda_runtime_api.h>
#endif

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

bool parse_msg_format(const char *who, const std::string &name)
{
    if (name == "dicts") return false;
    if (name == "vectors") return true;
    throw std::invalid_argument(std::string(who) +
                                ": msg_format must be \"dicts\" or \"vectors\", got \"" +
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

void log_cpu_fallback(const gr::logger_ptr &logger, int device)
{
    static std::mutex mutex;
    static std::set<std::string> said;
    const std::string why = cpu_fallback_reason(device);
    bool first;
    {
        std::lock_guard<std::mutex> lock(mutex);
        first = said.insert(why).second;
    }
    if (first)
        logger->info("backend auto: falling back to the CPU ({})", why);
    else
        logger->debug("backend auto: falling back to the CPU ({})", why);
}

long cpu_output_buffer_items(size_t batch, size_t item_bytes)
{
    const size_t cap = (size_t(64) << 20) / std::max<size_t>(item_bytes, 1);
    return static_cast<long>(std::max<size_t>(1, std::min(batch, cap)));
}

void set_min_output_buffers(gr::block &b, long items)
{
    const int n = std::max(1, b.output_signature()->max_streams());
    for (int i = 0; i < n; i++)
        b.set_min_output_buffer(i, items);
}

/* ---- buffer_pins ------------------------------------------------------ */

namespace
{

// Registrations of the process: address -> (bytes, users).
std::mutex g_pin_mutex;
std::map<const void *, std::pair<size_t, int>> g_pins;

bool pinning_enabled()
{
    const char *v = std::getenv("GR_TRANSIENT_PIN_BUFFERS");
    return !(v && std::strcmp(v, "0") == 0);
}

// Registers [p, p + bytes) or counts one more user; false with `why` set when
// the range cannot be registered.
bool pin_add(const void *p, size_t bytes, std::string &why)
{
#ifdef GR_TRANSIENT_HAVE_CUDART
    std::lock_guard<std::mutex> lk(g_pin_mutex);
    auto it = g_pins.find(p);
    if (it != g_pins.end()) {
        if (it->second.first != bytes) {
            why = "a different range is registered at that address";
            return false;
        }
        it->second.second++;
        return true;
    }
    const cudaError_t e =
        cudaHostRegister(const_cast<void *>(p), bytes, cudaHostRegisterDefault);
    if (e != cudaSuccess) {
        why = cudaGetErrorString(e);
        (void)cudaGetLastError();
        return false;
    }
    g_pins.emplace(p, std::make_pair(bytes, 1));
    return true;
#else
    (void)p;
    (void)bytes;
    why = "built without the CUDA runtime";
    return false;
#endif
}

void pin_release(const void *p)
{
#ifdef GR_TRANSIENT_HAVE_CUDART
    std::lock_guard<std::mutex> lk(g_pin_mutex);
    auto it = g_pins.find(p);
    if (it == g_pins.end()) return;
    if (--it->second.second > 0) return;
    g_pins.erase(it);
    if (cudaHostUnregister(const_cast<void *>(p)) != cudaSuccess)
        (void)cudaGetLastError();
#else
    (void)p;
#endif
}

} // namespace

bool buffer_pins::pin_range(const void *p, size_t bytes)
{
    if (!p || bytes == 0 || !pinning_enabled()) return false;
    std::string why;
    if (!pin_add(p, bytes, why)) return false;
    d_regs.push_back(p);
    d_bytes += bytes;
    return true;
}

void buffer_pins::pin(gr::block &b, const gr::logger_ptr &log)
{
    if (d_done) return;
    d_done = true;
    if (!pinning_enabled()) return;
    const gr::block_detail_sptr det = b.detail();
    if (!det) return;
    std::vector<gr::buffer_sptr> bufs;
    for (int i = 0; i < det->ninputs(); i++)
        if (det->input(i)) bufs.push_back(det->input(i)->buffer());
    for (int i = 0; i < det->noutputs(); i++)
        bufs.push_back(det->output(i));
    for (const gr::buffer_sptr &buf : bufs) {
        if (!buf || buf->get_mapping_type() != gr::buffer_mapping_type::double_mapped)
            continue;
        // Both mappings of the circular buffer: a copy may run past the end of
        // the first into the second.
        const size_t bytes =
            2 * static_cast<size_t>(buf->bufsize()) * buf->get_sizeof_item();
        std::string why;
        if (pin_add(buf->base(), bytes, why)) {
            d_regs.push_back(buf->base());
            d_bytes += bytes;
        } else if (!d_warned && log) {
            d_warned = true;
            log->warn("buffers not page-locked ({}); copies to the GPU are "
                      "staged",
                      why);
        }
    }
}

void buffer_pins::unpin()
{
    for (const void *p : d_regs)
        pin_release(p);
    d_regs.clear();
    d_bytes = 0;
    d_done = false;
}

/* ---- async_copy ------------------------------------------------------- */

namespace
{
int copy_threads()
{
    const unsigned hc = std::thread::hardware_concurrency();
    return static_cast<int>(std::max(1u, std::min(4u, hc / 2)));
}
} // namespace

async_copy::async_copy() : d_nthreads(copy_threads()) {}

async_copy::~async_copy()
{
    {
        std::lock_guard<std::mutex> lk(d_m);
        d_stop = true;
    }
    d_cv.notify_all();
    for (auto &t : d_threads)
        t.join();
}

void async_copy::run(int i)
{
    unsigned long seen = 0;
    std::unique_lock<std::mutex> lk(d_m);
    for (;;) {
        d_cv.wait(lk, [&] { return d_stop || d_gen != seen; });
        if (d_stop) return;
        seen = d_gen;
        // Slice i of d_nthreads, 64-byte aligned boundaries.
        const size_t per = (d_bytes / d_nthreads + 63) & ~size_t(63);
        const size_t a = std::min(per * i, d_bytes);
        const size_t b = std::min(per * (i + 1), d_bytes);
        char *dst = d_dst;
        const char *src = d_src;
        lk.unlock();
        if (b > a) std::memcpy(dst + a, src + a, b - a);
        lk.lock();
        if (--d_pending == 0) d_done.notify_all();
    }
}

void async_copy::start(void *dst, const void *src, size_t bytes)
{
    wait();
    if (bytes < (size_t(1) << 18)) {
        if (bytes) std::memcpy(dst, src, bytes);
        return;
    }
    std::lock_guard<std::mutex> lk(d_m);
    if (d_threads.empty()) {
        for (int i = 0; i < d_nthreads; i++)
            d_threads.emplace_back([this, i] { run(i); });
    }
    d_dst = static_cast<char *>(dst);
    d_src = static_cast<const char *>(src);
    d_bytes = bytes;
    d_pending = d_nthreads;
    d_gen++;
    d_cv.notify_all();
}

void async_copy::wait()
{
    std::unique_lock<std::mutex> lk(d_m);
    d_done.wait(lk, [this] { return d_pending == 0; });
}

} // namespace detail
} // namespace transient
} // namespace gr
