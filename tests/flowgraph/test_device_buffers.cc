/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: device-resident buffers in a GNU Radio flow graph (GPU test,
 * exits 77 without a usable GPU). docs/device-buffers.md.
 *
 *   test_device_buffers [case]     case: all (default) or one of the names
 *                                  below; each case can run in its own process
 *
 * Equality cases: the chain power_cf -> boxcar_search_ff with device buffers
 * (device to device), power_cf's device output read by a host block (device
 * to host: boxcar_search_ff without device buffers, a vector sink), and a host
 * source feeding the device-buffer boxcar give bit-identical S/N, widths and
 * pulse tags to the same chain with host buffers (the CUDA core is
 * deterministic); a host output may fan out to a device-buffer boxcar and a
 * host block. Refusal cases: fan-out of a device output and a reader with
 * history (power_cf ends its stream and reports why), and the configurations
 * refused at construction. The case single_mapped needs no GPU: it runs
 * boxcar_search_ff on GNU Radio's single-mapped host_buffer.
 */

#include <gnuradio/blocks/moving_average.h>
#include <gnuradio/host_buffer.h>
#include <gnuradio/sync_block.h>
#include <gnuradio/blocks/null_sink.h>
#include <gnuradio/blocks/vector_sink.h>
#include <gnuradio/blocks/vector_source.h>
#include <gnuradio/top_block.h>
#include <gnuradio/transient/boxcar_search_ff.h>
#include <gnuradio/transient/power_cf.h>
#include <pmt/pmt.h>
#include <transient/common.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

namespace tr = gr::transient;

namespace
{

int g_fail = 0;

void check(bool ok, const std::string &what)
{
    std::printf("%s: %s\n", ok ? "ok  " : "FAIL", what.c_str());
    if (!ok) g_fail++;
}

struct params {
    unsigned int nchan;
    size_t batch;
    size_t n; // samples per channel
};

std::vector<gr_complex> make_input(const params &p, unsigned seed)
{
    std::mt19937 rng(seed);
    std::normal_distribution<float> g(0.0f, 1.0f);
    std::vector<gr_complex> x(p.n * p.nchan);
    for (auto &v : x)
        v = gr_complex(g(rng), g(rng));
    // Pulses: a constant added to the real part over w samples of a channel.
    std::uniform_int_distribution<size_t> pos(0, p.n - 200);
    const int widths[] = {1, 3, 8, 20, 50};
    for (int k = 0; k < 40; k++) {
        const size_t t = pos(rng);
        const unsigned c = static_cast<unsigned>(k % p.nchan);
        const int w = widths[k % 5];
        for (int i = 0; i < w; i++)
            x[(t + i) * p.nchan + c] +=
                gr_complex(4.0f / std::sqrt(float(w)) + 1.5f, 0.0f);
    }
    return x;
}

std::vector<float> host_power(const std::vector<gr_complex> &x)
{
    std::vector<float> p(x.size());
    for (size_t i = 0; i < x.size(); i++) {
        const float re = x[i].real(), im = x[i].imag();
        const float a = re * re;
        const float b = im * im;
        p[i] = a + b; // the rounding of the kernel (no FMA)
    }
    return p;
}

tr::boxcar_search_ff::sptr make_boxcar(const params &p, bool dev,
                                       const std::string &norm = "fixed",
                                       const std::string &backend = "cuda")
{
    return tr::boxcar_search_ff::make(p.nchan, "boxdit", {32, 16, 16, 16, 8}, 1, 0, 64,
                                      6.0f, norm, 3.0, 16384, 4, 0, "median", 2.0, 2.0, 0,
                                      1, backend, 0, p.batch, dev);
}

struct result {
    std::vector<float> snr, width;
    std::vector<std::string> tags; // "offset:value" of every pulse tag
    uint64_t candidates = 0;
    double seconds = 0;
};

void collect(result &r, const gr::blocks::vector_sink_f::sptr &s0,
             const gr::blocks::vector_sink_f::sptr &s1,
             const tr::boxcar_search_ff::sptr &bx)
{
    r.snr = s0->data();
    r.width = s1->data();
    for (const gr::tag_t &t : s0->tags())
        if (pmt::eq(t.key, pmt::mp("pulse")))
            r.tags.push_back(std::to_string(t.offset) + ":" + pmt::write_string(t.value));
    r.candidates = bx->candidates();
}

// complex source -> power_cf -> boxcar_search_ff -> sinks; pw_dev, bx_dev:
// device buffers on power_cf, boxcar_search_ff (both: device to device).
result run_chain(const params &p, const std::vector<gr_complex> &x, bool pw_dev,
                 bool bx_dev)
{
    auto tb = gr::make_top_block("chain");
    auto src = gr::blocks::vector_source_c::make(x, false, p.nchan);
    auto pw = tr::power_cf::make(p.nchan, "cuda", 0, p.batch, pw_dev);
    auto bx = make_boxcar(p, bx_dev);
    auto s0 = gr::blocks::vector_sink_f::make(p.nchan);
    auto s1 = gr::blocks::vector_sink_f::make(p.nchan);
    tb->connect(src, 0, pw, 0);
    tb->connect(pw, 0, bx, 0);
    tb->connect(bx, 0, s0, 0);
    tb->connect(bx, 1, s1, 0);
    const auto t0 = std::chrono::steady_clock::now();
    tb->run();
    result r;
    r.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    collect(r, s0, s1, bx);
    return r;
}

// float source (host) -> boxcar_search_ff(device buffers): host to device.
result run_h2d(const params &p, const std::vector<float> &power)
{
    auto tb = gr::make_top_block("h2d");
    auto src = gr::blocks::vector_source_f::make(power, false, p.nchan);
    auto bx = make_boxcar(p, true);
    auto s0 = gr::blocks::vector_sink_f::make(p.nchan);
    auto s1 = gr::blocks::vector_sink_f::make(p.nchan);
    tb->connect(src, 0, bx, 0);
    tb->connect(bx, 0, s0, 0);
    tb->connect(bx, 1, s1, 0);
    tb->run();
    result r;
    collect(r, s0, s1, bx);
    return r;
}

// complex source -> power_cf(backend, device buffers dev) -> host sink.
std::vector<float> run_power(const params &p, const std::vector<gr_complex> &x,
                             const std::string &backend, bool dev)
{
    auto tb = gr::make_top_block("power");
    auto src = gr::blocks::vector_source_c::make(x, false, p.nchan);
    auto pw = tr::power_cf::make(p.nchan, backend, 0, p.batch, dev);
    auto snk = gr::blocks::vector_sink_f::make(p.nchan);
    tb->connect(src, 0, pw, 0);
    tb->connect(pw, 0, snk, 0);
    tb->run();
    return snk->data();
}

bool same_bits(const std::vector<float> &a, const std::vector<float> &b, size_t *first)
{
    if (a.size() != b.size()) {
        *first = 0;
        return false;
    }
    for (size_t i = 0; i < a.size(); i++)
        if (std::memcmp(&a[i], &b[i], sizeof(float)) != 0) {
            *first = i;
            return false;
        }
    return true;
}

void compare(const std::string &what, const result &host, const result &dev)
{
    size_t i = 0;
    const bool snr = same_bits(host.snr, dev.snr, &i);
    std::string why;
    if (host.snr.size() != dev.snr.size())
        why = ", host " + std::to_string(host.snr.size()) + " values";
    else if (!snr)
        why = ", first difference at " + std::to_string(i);
    check(snr, what + ": S/N bit-identical (" + std::to_string(dev.snr.size()) +
                   " values" + why + ")");
    const bool w = same_bits(host.width, dev.width, &i);
    check(w, what + ": widths identical");
    check(host.tags == dev.tags, what + ": pulse tags identical (" +
                                     std::to_string(dev.tags.size()) + " tags, host " +
                                     std::to_string(host.tags.size()) + ")");
    check(host.candidates == dev.candidates && host.candidates > 0,
          what + ": candidates " + std::to_string(dev.candidates) + " (host " +
              std::to_string(host.candidates) + ")");
}

bool case_chain(const params &p)
{
    const std::string tag = "nchan " + std::to_string(p.nchan) + ", batch " +
                            std::to_string(p.batch) + ", " + std::to_string(p.n) +
                            " samples";
    const std::vector<gr_complex> x = make_input(p, 7u + p.nchan);
    const result host = run_chain(p, x, false, false);
    const result dev = run_chain(p, x, true, true);
    check(host.snr.size() == p.n * p.nchan, "host chain: every sample out (" + tag + ")");
    compare("device to device (" + tag + ")", host, dev);
    std::printf("info: %s: host buffers %.3f s, device buffers %.3f s (one run each, "
                "includes flow graph start)\n",
                tag.c_str(), host.seconds, dev.seconds);

    // A host output into a device-buffer boxcar: copied as with host buffers.
    const std::vector<float> hp = host_power(x);
    const result h2d = run_h2d(p, hp);
    compare("host to device (" + tag + ")", host, h2d);

    // Device to host: power_cf's device output read by a host sink.
    const std::vector<float> d2h = run_power(p, x, "cuda", true);
    const std::vector<float> cuda_host = run_power(p, x, "cuda", false);
    size_t i = 0;
    check(same_bits(cuda_host, d2h, &i),
          "device to host: power_cf device buffer = host buffer (" + tag + ")");
    check(same_bits(hp, d2h, &i),
          "device to host: power = re*re + im*im of the host (" + tag + ")");
    const std::vector<float> cpu = run_power(p, x, "cpu", false);
    check(same_bits(hp, cpu, &i), "power_cf cpu = re*re + im*im (" + tag + ")");
    return true;
}

// A device output read by a block that reads host memory (boxcar_search_ff
// without device buffers, output multiple = batch): copied to the host.
void case_d2h_boxcar(const params &p)
{
    const std::string tag = "nchan " + std::to_string(p.nchan) + ", batch " +
                            std::to_string(p.batch) + ", " + std::to_string(p.n) +
                            " samples";
    const std::vector<gr_complex> x = make_input(p, 7u + p.nchan);
    compare("device output, host boxcar (" + tag + ")", run_chain(p, x, false, false),
            run_chain(p, x, true, false));
}

// Runs f, which must throw an exception whose message contains needle.
void expect_throw(const std::string &what, const std::string &needle,
                  const std::function<void()> &f)
{
    try {
        f();
        check(false, what + ": no exception");
    } catch (const std::exception &e) {
        const std::string m = e.what();
        check(m.find(needle) != std::string::npos, what + ": \"" + m + "\"");
    }
}

const params k_small{1, 4096, 50000};

// A copy whose output is GNU Radio's own single-mapped host_buffer (it
// simulates a device buffer in host memory): the single-mapped buffer
// behaviour without a GPU.
// With end_at_once it ends its stream at its first call, as power_cf does when
// it refuses its device buffer.
class sm_copy : public gr::sync_block
{
  public:
    explicit sm_copy(size_t itemsize, bool end_at_once = false)
        : gr::sync_block(
              "sm_copy", gr::io_signature::make(1, 1, int(itemsize)),
              gr::io_signature::make(1, 1, int(itemsize), gr::host_buffer::type)),
          d_size(itemsize), d_end(end_at_once)
    {
    }
    int work(int n, gr_vector_const_void_star &in, gr_vector_void_star &out) override
    {
        if (d_end) return WORK_DONE;
        std::memcpy(out[0], in[0], size_t(n) * d_size);
        return n;
    }

  private:
    size_t d_size;
    bool d_end;
};

// CPU: boxcar_search_ff reading a single-mapped buffer (items wrap at its end)
// gives what it gives on a double-mapped one, to the last sample.
void case_single_mapped()
{
    for (const params &p :
         {params{1, 65536, 4 * 65536 + 12345}, params{3, 4096, 100000}}) {
        const std::vector<float> hp = host_power(make_input(p, 9u + p.nchan));
        // 0: double-mapped; 1: single-mapped; 2: single-mapped, the boxcar in
        // multiples of the batch as with CUDA (it then waits for whole batches).
        result r[3];
        for (int sm = 0; sm < 3; sm++) {
            auto tb = gr::make_top_block("single_mapped");
            auto src = gr::blocks::vector_source_f::make(hp, false, p.nchan);
            auto bx = make_boxcar(p, false, "fixed", "cpu");
            if (sm == 2) bx->set_output_multiple(int(p.batch));
            auto s0 = gr::blocks::vector_sink_f::make(p.nchan);
            auto s1 = gr::blocks::vector_sink_f::make(p.nchan);
            if (sm) {
                auto cp = gnuradio::make_block_sptr<sm_copy>(sizeof(float) * p.nchan);
                tb->connect(src, 0, cp, 0);
                tb->connect(cp, 0, bx, 0);
            } else {
                tb->connect(src, 0, bx, 0);
            }
            tb->connect(bx, 0, s0, 0);
            tb->connect(bx, 1, s1, 0);
            tb->run();
            collect(r[sm], s0, s1, bx);
        }
        check(r[0].snr.size() == p.n * p.nchan, "double-mapped: every sample out");
        compare("single-mapped input (nchan " + std::to_string(p.nchan) + ", " +
                    std::to_string(p.n) + " samples, CPU)",
                r[0], r[1]);
        compare("single-mapped input, output multiple " + std::to_string(p.batch) +
                    " (nchan " + std::to_string(p.nchan) + ", CPU)",
                r[0], r[2]);
    }

    // A refused device buffer ends its writer's stream at once: the graphs that
    // are refused (fan-out, a reader with history) must then finish, not hang.
    {
        const params &p = k_small;
        auto tb = gr::make_top_block("refused");
        auto src =
            gr::blocks::vector_source_f::make(host_power(make_input(p, 5)), false, 1);
        auto cp = gnuradio::make_block_sptr<sm_copy>(sizeof(float), true);
        auto bx = make_boxcar(p, false, "fixed", "cpu");
        bx->set_output_multiple(int(p.batch));
        auto ma = gr::blocks::moving_average_ff::make(8, 1.0f);
        auto s0 = gr::blocks::vector_sink_f::make(1);
        auto s1 = gr::blocks::vector_sink_f::make(1);
        tb->connect(src, 0, cp, 0);
        tb->connect(cp, 0, bx, 0);
        tb->connect(cp, 0, ma, 0);
        tb->connect(ma, 0, s1, 0);
        tb->connect(bx, 0, s0, 0);
        tb->connect(bx, 1, gr::blocks::null_sink::make(sizeof(float)), 0);
        tb->run();
        check(s0->data().empty() && s1->data().empty(),
              "a single-mapped writer that ends at once: fan-out and history readers "
              "finish");
    }
}

// Not a test (not in "all"): wall time of the chain with host and with device
// buffers, outputs into null sinks, median of `reps` runs each.
void case_bench()
{
    const params p{1, size_t(1) << 20, size_t(1) << 26};
    std::vector<gr_complex> x(p.n);
    std::mt19937 rng(11);
    std::normal_distribution<float> g(0.0f, 1.0f);
    for (size_t i = 0; i < p.n; i += 4096) {
        const gr_complex v(g(rng), g(rng));
        for (size_t j = i; j < std::min(p.n, i + 4096); j++)
            x[j] = v * gr_complex(float(j - i) * 1e-4f, 1.0f);
    }
    const int reps = 3;
    for (int dev = 0; dev < 2; dev++) {
        std::vector<double> t;
        for (int r = 0; r < reps; r++) {
            auto tb = gr::make_top_block("bench");
            auto src = gr::blocks::vector_source_c::make(x, false, 1);
            src->set_min_output_buffer(long(2 * p.batch));
            auto pw = tr::power_cf::make(1, "cuda", 0, p.batch, dev == 1);
            auto bx = make_boxcar(p, dev == 1);
            tb->connect(src, 0, pw, 0);
            tb->connect(pw, 0, bx, 0);
            tb->connect(bx, 0, gr::blocks::null_sink::make(sizeof(float)), 0);
            tb->connect(bx, 1, gr::blocks::null_sink::make(sizeof(float)), 0);
            const auto t0 = std::chrono::steady_clock::now();
            tb->run();
            t.push_back(
                std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
                    .count());
        }
        std::sort(t.begin(), t.end());
        std::printf("bench: %s buffers: %zu samples, batch %zu, median %.3f s of %d, "
                    "%.1f Msamples/s\n",
                    dev ? "device" : "host", p.n, p.batch, t[reps / 2], reps,
                    double(p.n) / t[reps / 2] / 1e6);
    }
}

// The refused graphs run to their end at once: power_cf ends its stream and
// says why in device_buffers_error(); nothing reaches the readers.
void case_refuse_fanout()
{
    const params &p = k_small;
    auto tb = gr::make_top_block("fanout");
    auto src = gr::blocks::vector_source_c::make(make_input(p, 1), false, 1);
    auto pw = tr::power_cf::make(1, "cuda", 0, p.batch, true);
    auto bx = make_boxcar(p, true);
    auto snk = gr::blocks::vector_sink_f::make(1);
    auto s0 = gr::blocks::vector_sink_f::make(1);
    tb->connect(src, 0, pw, 0);
    tb->connect(pw, 0, bx, 0);
    tb->connect(pw, 0, snk, 0);
    tb->connect(bx, 0, s0, 0);
    tb->connect(bx, 1, gr::blocks::null_sink::make(sizeof(float)), 0);
    tb->run();
    const std::string e = pw->device_buffers_error();
    check(e.find("more than one reader") != std::string::npos,
          "fan-out of a device output refused: \"" + e + "\"");
    check(snk->data().empty() && s0->data().empty(),
          "fan-out: nothing reached the readers");
}

void case_refuse_history()
{
    const params &p = k_small;
    auto tb = gr::make_top_block("history");
    auto src = gr::blocks::vector_source_c::make(make_input(p, 2), false, 1);
    auto pw = tr::power_cf::make(1, "cuda", 0, p.batch, true);
    auto ma = gr::blocks::moving_average_ff::make(8, 1.0f);
    auto snk = gr::blocks::vector_sink_f::make(1);
    tb->connect(src, 0, pw, 0);
    tb->connect(pw, 0, ma, 0);
    tb->connect(ma, 0, snk, 0);
    tb->run();
    const std::string e = pw->device_buffers_error();
    check(e.find("history 8") != std::string::npos,
          "reader with history refused: \"" + e + "\"");
    check(snk->data().empty(), "history: nothing reached the reader");
    // The same blocks without device buffers run (the refusal is the buffer's).
    auto tb2 = gr::make_top_block("history_host");
    auto pw2 = tr::power_cf::make(1, "cuda", 0, p.batch, false);
    auto ma2 = gr::blocks::moving_average_ff::make(8, 1.0f);
    auto snk2 = gr::blocks::vector_sink_f::make(1);
    tb2->connect(gr::blocks::vector_source_c::make(make_input(p, 2), false, 1), 0, pw2,
                 0);
    tb2->connect(pw2, 0, ma2, 0);
    tb2->connect(ma2, 0, snk2, 0);
    tb2->run();
    check(snk2->data().size() == p.n && pw2->device_buffers_error().empty(),
          "history: host buffers run");
}

// A host output feeding a device-buffer boxcar and a host sink: no custom
// input type is involved, so GNU Radio keeps one host buffer with two readers.
void case_host_fanout()
{
    const params &p = k_small;
    const std::vector<float> hp = host_power(make_input(p, 3));
    auto tb = gr::make_top_block("host_fanout");
    auto src = gr::blocks::vector_source_f::make(hp, false, 1);
    auto bx = make_boxcar(p, true);
    auto snk = gr::blocks::vector_sink_f::make(1);
    auto s0 = gr::blocks::vector_sink_f::make(1);
    auto s1 = gr::blocks::vector_sink_f::make(1);
    tb->connect(src, 0, snk, 0);
    tb->connect(src, 0, bx, 0);
    tb->connect(bx, 0, s0, 0);
    tb->connect(bx, 1, s1, 0);
    tb->run();
    result r;
    collect(r, s0, s1, bx);
    const result ref = run_h2d(p, hp);
    size_t i = 0;
    check(same_bits(snk->data(), hp, &i),
          "host fan-out: the host sink gets every sample");
    check(same_bits(r.snr, ref.snr, &i) && r.tags == ref.tags,
          "host fan-out: the device-buffer boxcar gives the results without fan-out");
}

void case_refuse_config()
{
    const params &p = k_small;
    expect_throw("boxcar: device_buffers with backend cpu", "backend is \"cpu\"",
                 [&] { make_boxcar(p, true, "fixed", "cpu"); });
    expect_throw("boxcar: device_buffers with white statistics", "norm_mode \"fixed\"",
                 [&] { make_boxcar(p, true, "white", "cuda"); });
    expect_throw("boxcar_search_cf: device_buffers", "float input", [&] {
        tr::boxcar_search_cf::make(1, "boxdit", {32, 16, 16, 16, 8}, 1, 0, 64, 6.0f,
                                   "fixed", 3.0, 16384, 4, 0, "median", 2.0, 2.0, 0, 1,
                                   "cuda", 0, p.batch, true);
    });
    expect_throw("power_cf: device_buffers with backend cpu", "backend is \"cpu\"",
                 [&] { tr::power_cf::make(1, "cpu", 0, p.batch, true); });
    expect_throw("boxcar: set_norm_mode(white) with device buffers", "norm_mode",
                 [&] { make_boxcar(p, true)->set_norm_mode("white"); });
    expect_throw("boxcar: set_baseline_window with device buffers", "baseline",
                 [&] { make_boxcar(p, true)->set_baseline_window(101); });
    check(!make_boxcar(p, false)->device_buffers(),
          "boxcar: device buffers off by default");
    check(!tr::power_cf::make()->device_buffers(),
          "power_cf: device buffers off by default");
}

} // namespace

int main(int argc, char **argv)
{
    const std::string which = argc > 1 ? argv[1] : "all";
    if (which == "single_mapped") { // needs no GPU
        try {
            case_single_mapped();
        } catch (const std::exception &e) {
            check(false, std::string("unexpected exception: ") + e.what());
        }
        std::printf("%s: %d failure(s)\n", which.c_str(), g_fail);
        return g_fail ? 1 : 0;
    }
    char why[TR_ERROR_MESSAGE_LEN];
    why[0] = '\0';
    if (tr_cuda_device_count(why, sizeof(why)) < 1) {
        std::printf("skip: no usable CUDA device (%s)\n", why);
        return 77;
    }
    char name[256];
    if (tr_cuda_device_name(0, name, sizeof(name)) == TR_OK)
        std::printf("device 0: %s\n", name);
    const bool all = which == "all";
    bool known = false;
    try {
        if (all || which == "chain") {
            known = true;
            case_chain(params{1, 65536, 4 * 65536 + 12345});
            case_chain(params{3, 4096, 100000});
            case_chain(params{1, 1000, 7777});
        }
        if (which == "bench") {
            known = true;
            case_bench();
        }
        if (all || which == "d2h_boxcar") {
            known = true;
            case_d2h_boxcar(params{1, 65536, 4 * 65536 + 12345});
            case_d2h_boxcar(params{3, 1000, 7777});
        }
        if (all || which == "config") {
            known = true;
            case_refuse_config();
        }
        if (all || which == "fanout") {
            known = true;
            case_refuse_fanout();
        }
        if (all || which == "history") {
            known = true;
            case_refuse_history();
        }
        if (all || which == "host_fanout") {
            known = true;
            case_host_fanout();
        }
    } catch (const std::exception &e) {
        check(false, std::string("unexpected exception: ") + e.what());
    }
    if (!known) {
        std::printf("unknown case %s (all, chain, d2h_boxcar, config, fanout, history, "
                    "host_fanout, bench)\n",
                    which.c_str());
        return 2;
    }
    std::printf("%s: %d failure(s)\n", which.c_str(), g_fail);
    return g_fail ? 1 : 0;
}
