/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * transient-flowgraph-bench: the detectors in a GNU Radio flow graph
 * (source -> detector block -> sink, C++, no Python), against the
 * host-to-device bandwidth and against the core library on the same data.
 *
 *   transient-flowgraph-bench [--detector LIST] [--backend LIST] [--seconds S]
 *                             [--boxcar-nchan LIST] [--spiir T,L] [--kalman-M M]
 *                             [--frb-nchan N]
 *                             [--edge-spacing MIN,MAX] [--edge-output MODE]
 *                             [--edge-msg dicts|vectors|both]
 *                             [--boxcar-norm MODE] [--boxcar-output MODE]
 *                             [--boxcar-spacing N] [--boxcar-msg dicts|vectors]
 *                             [--spiir-output MODE] [--spiir-msg dicts|vectors]
 *                             [--batch N] [--pin on|off|both] [--quick] [--json]
 *
 * LIST is comma separated: detectors edges,boxcar,spiir,kalman,frb (default all),
 * backends cpu,cuda (default both; cuda is left out when no GPU is usable).
 * Signals and parameters: edges, a two-level pulse train with noise and
 * ringing (bench/signals.h) with MIN to MAX samples between transitions
 * (default 20000,200000; every transition costs the block a tag and a message
 * entry), fixed levels, with the pass-through output into the sink and
 * "detects" not connected (tags only) and, after it, without the output and
 * with "detects" into a message sink that counts the transitions (messages
 * only; field "passthrough"; --edge-output pass, none or both, the default;
 * those messages in the block's msg_format "dicts", the default, or "vectors",
 * or each in turn with --edge-msg both; field "msg_format");
 * boxcar, unit white noise with a pulse every 8192
 * samples (--boxcar-spacing; every pulse is an event, a message entry in
 * the --boxcar-msg format, "dicts" by default; field "msg_format"),
 * BoxDIT 32,16,16,16,8 up to width 256, normalisation "white"
 * (--boxcar-norm; "fixed" uses mean 0, sigma 1), 1 and 64 channels
 * (--boxcar-nchan), with the S/N and width outputs into the sink and, after
 * it, without outputs (candidates on "detects" into a message sink that
 * counts them; with CUDA the S/N stay on the GPU and are clustered there;
 * its core line is the search and clustering with the same split:
 * tr_boxcar_search_candidates_pipelined on CUDA; field "outputs"; --boxcar-output
 * snr, none or both, the default); spiir, a random bank of T templates of L
 * filters (default 256 x 64; poles near the unit circle, delays up to 4096)
 * on white noise with an impulse every 16384 samples, with the SNR output
 * into the sink and, after it, without the output (triggers on "detects" in
 * the --spiir-msg format, "dicts" by default, into a message sink that counts
 * them; with CUDA the SNR stays on the GPU and the triggers are searched
 * there, and a second block line searches them on the host as the block did
 * before, GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS=0; its core line is the filter
 * and the trigger search with the same split; fields "output" and
 * "triggers_on"; --spiir-output snr, none or both, the default); kalman, M = 92 (N_s =
 * M / 2), AR(1) noise 0.5 and target 0.9, a burst every 2000 samples; frb,
 * frb_search_f (a sink: candidates on "detects") with its defaults on N
 * channels (default 1024; --quick: 64) over 300 MHz below 1500 MHz at 64 us,
 * DM 0-1000, unit white noise spectra with a burst at DM 500 every 65536
 * spectra (samples are spectra; the core is tr_frb with the same settings).
 *
 * Source: a vector source that writes its test signal into its own output
 * ring during the first ring's worth of items and afterwards produces items
 * without writing them (GNU Radio's ring keeps the data: item k is signal item
 * k mod ring size), so that the flow graph measures the detector, not the
 * source. The ring holds at least 64 MiB and 4 batches. Sink: takes every
 * item of every output of the block without touching it.
 *
 * Per case the core object with the block's settings (same backend, variant
 * FAST, batch) first processes the same signal from pageable memory in calls
 * of `batch` samples for S seconds (core_samples_per_s); then the flow graph
 * runs for about as long as the core line it is compared with (the line
 * without outputs for a block without outputs) (samples_per_s, wall time from
 * start() to the end of wait(); block construction is not timed). A flow
 * graph still running after 10 S + 1 seconds is stopped and its rate is what
 * went through by then ("stopped_at_limit": true).
 *
 * Ceilings, measured in the same run: "h2d_pinned_bw" (cudaMemcpyAsync from
 * pinned host memory to the device, tr_bench_h2d_bw) for the CUDA backend,
 * "host_memcpy_bw" (one thread's memcpy between two 256 MiB buffers) for the
 * CPU backend; ceiling_samples_per_s = ceiling / bytes_per_sample (input
 * bytes per sample: 4 per channel), ratio = samples_per_s / that.
 *
 * --pin both also runs each CUDA flow graph with the block's page-locking of
 * its GNU Radio buffers turned off (GR_TRANSIENT_PIN_BUFFERS=0, the staging
 * path), field "pinned_buffers". --quick: small rings and 0.05 s per case (a
 * smoke test, not a measurement).
 *
 * Core lines of boxcar and spiir also give the rate of the host stage that
 * limits them alone: "norm_samples_per_s" (the boxcar normalisation,
 * tr_boxcar_norm_process, which runs on the CPU before the search with every
 * backend) and "triggers_samples_per_s" (the SPIIR trigger search over the SNR
 * of all templates, which the block runs on the CPU).
 *
 * Output: a table, or JSON lines with --json: one "env" line, then per case
 * one "overhead" line (the replaying source straight into the sink, no
 * detector: what the source and the scheduler alone reach with that ring) and
 * one "flowgraph" line per backend and path ("core" and "block").
 */

#include "bench_device.h"
#include "flowgraph_blocks.h"
#include "flowgraph_cases.h"

#include <gnuradio/constants.h>
#include <gnuradio/top_block.h>
#include <pmt/pmt.h>
#include <transient/common.h>

#include <unistd.h>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace
{

// Results go here: the original standard output. Standard output itself is
// sent to standard error, so that GNU Radio's log lines (written to stdout)
// never mix with the JSON lines.
FILE *g_out = stdout;

struct options {
    std::vector<std::string> detectors{"edges", "boxcar", "spiir", "kalman", "frb"};
    std::vector<std::string> backends;
    std::vector<unsigned> boxcar_nchan{1, 64};
    unsigned frb_nchan = 1024;
    unsigned spiir_templates = 256, spiir_filters = 64;
    unsigned kalman_M = 92;
    double edge_min = 20000, edge_max = 200000;
    std::string edge_output = "both"; // "pass", "none" or "both"
    std::string edge_msg = "dicts";   // without the output: "dicts", "vectors" or "both"
    std::string boxcar_norm = "white";
    std::string boxcar_output = "both"; // "snr", "none" or "both"
    size_t boxcar_spacing = 8192;       // samples between pulses
    std::string boxcar_msg = "dicts";   // "detects" as "dicts" or "vectors"
    std::string spiir_output = "both";  // "snr", "none" or "both"
    std::string spiir_msg = "dicts";    // without the output: "dicts" or "vectors"
    size_t batch = 0;                   // 0: per detector default
    double seconds = 2.0;
    std::string pin = "on";
    bool quick = false;
    bool json = false;
};

double now()
{
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
}

std::vector<std::string> split(const std::string &s)
{
    std::vector<std::string> r;
    std::stringstream ss(s);
    std::string t;
    while (std::getline(ss, t, ','))
        if (!t.empty()) r.push_back(t);
    return r;
}

/* --help (msg NULL): the usage on the real stdout (g_out), exit status 0; a bad
 * option: the message and the usage on stderr, exit status 2. */
[[noreturn]] void usage(const char *msg)
{
    FILE *f = msg ? stderr : g_out;
    if (msg) std::fprintf(stderr, "transient-flowgraph-bench: %s\n", msg);
    std::fprintf(
        f, "usage: transient-flowgraph-bench [--detector edges,boxcar,spiir,kalman,frb]\n"
           "  [--backend cpu,cuda] [--seconds S] [--boxcar-nchan 1,64] [--spiir T,L]\n"
           "  [--frb-nchan N]\n"
           "  [--kalman-M M] [--edge-spacing MIN,MAX] [--edge-output pass|none|both]\n"
           "  [--edge-msg dicts|vectors|both]\n"
           "  [--boxcar-norm white|levels|fixed] [--boxcar-output snr|none|both]\n"
           "  [--boxcar-spacing N] [--boxcar-msg dicts|vectors]\n"
           "  [--spiir-output snr|none|both] [--spiir-msg dicts|vectors]\n"
           "  [--batch N] [--pin on|off|both] [--quick] [--json] [--version]\n"
           "The detector blocks in C++ GNU Radio flow graphs, timed against the\n"
           "host-to-device bandwidth and against their core library on the same data.\n");
    std::fflush(f);
    std::exit(msg ? 2 : 0);
}

std::string json_str(const std::string &s)
{
    std::string r = "\"";
    for (char ch : s) {
        if (ch == '"' || ch == '\\') {
            r += '\\';
            r += ch;
        } else if ((unsigned char)ch < 0x20) {
            char b[8];
            std::snprintf(b, sizeof b, "\\u%04x", ch);
            r += b;
        } else {
            r += ch;
        }
    }
    return r + "\"";
}

std::string num(double v)
{
    if (!std::isfinite(v)) return "null";
    char b[64];
    std::snprintf(b, sizeof b, "%.6g", v);
    return b;
}

std::string cpu_model()
{
    std::ifstream f("/proc/cpuinfo");
    std::string line;
    while (std::getline(f, line)) {
        if (line.rfind("model name", 0) == 0) {
            const size_t p = line.find(':');
            if (p != std::string::npos) {
                std::string m = line.substr(p + 1);
                m.erase(0, m.find_first_not_of(' '));
                return m;
            }
        }
    }
    return "unknown";
}

double host_memcpy_bw()
{
    const size_t bytes = (size_t)256 << 20;
    std::vector<char> a(bytes, 1), b(bytes, 0);
    std::vector<double> r;
    for (int i = 0; i < 4; i++) {
        const double t0 = now();
        std::memcpy(b.data(), a.data(), bytes);
        const double t = now() - t0;
        if (i > 0) r.push_back((double)bytes / t);
    }
    std::sort(r.begin(), r.end());
    return r[r.size() / 2];
}

struct env_info {
    bool cuda = false;
    std::string gpu;
    double h2d = NAN, d2h = NAN, memcpy_bw = NAN;
};

struct result {
    uint64_t samples = 0;
    double seconds = 0;
    double rate() const { return seconds > 0 ? (double)samples / seconds : NAN; }
    // One host stage of the block measured alone (what limits it), or none.
    std::string stage;
    double stage_rate = NAN;
};

// The boxcar normalisation alone (tr_boxcar_norm_process on the CPU, which
// every backend runs before the search), `batch` samples per call.
double boxcar_norm_rate(const trfg::det_case &c, const std::vector<float> &x,
                        size_t period, double seconds)
{
    const tr_boxcar_norm_config n = trfg::boxcar_norm_config(c);
    tr_error err;
    tr_boxcar_norm *q =
        tr_boxcar_norm_create(&n, c.nchan, trfg::k_boxcar_max_width, 1024, &err);
    if (!q) throw std::runtime_error(std::string("boxcar norm: ") + err.message);
    std::vector<float> y(c.batch * c.nchan);
    uint64_t samples = 0;
    size_t pos = 0;
    const double t0 = now();
    double t = 0;
    do {
        const size_t m = std::min(c.batch, period - pos);
        tr_boxcar_norm_process(q, x.data() + pos * c.nchan, m, y.data());
        samples += m;
        pos = (pos + m) % period;
        t = now() - t0;
    } while (t < seconds);
    tr_boxcar_norm_destroy(q);
    return (double)samples / t;
}

// The SPIIR trigger search alone (tr_spiir_triggers_process on the CPU, run by
// the block over every SNR sample) over n samples of SNR output.
double spiir_trigger_rate(const trfg::det_case &c, const float *snr, size_t n,
                          double seconds)
{
    tr_spiir_triggers_config tc = tr_spiir_triggers_config_default();
    tc.ntemplates = c.templates;
    tc.threshold = trfg::k_spiir_threshold;
    tc.window = (uint32_t)trfg::k_spiir_window;
    tr_error err;
    tr_spiir_triggers *q = tr_spiir_triggers_create(&tc, &err);
    if (!q) throw std::runtime_error(std::string("spiir triggers: ") + err.message);
    std::vector<tr_spiir_trigger> out(std::max<size_t>(4 * c.templates, 1024));
    uint64_t samples = 0;
    const double t0 = now();
    double t = 0;
    do {
        size_t done = 0;
        while (done < n) {
            size_t consumed = 0, nout = 0;
            tr_spiir_triggers_process(q, snr + done * 2 * c.templates, n - done,
                                      out.data(), out.size(), &consumed, &nout);
            done += consumed;
            if (consumed == 0 && nout == 0) break;
        }
        samples += n;
        t = now() - t0;
    } while (t < seconds);
    tr_spiir_triggers_destroy(q);
    return (double)samples / t;
}

// The split of work of the SPIIR block without its SNR output: the filter,
// then the trigger search over every SNR sample. With CUDA the samples go up
// (from pageable memory), the SNR stays on the device and is searched there
// (tr_spiir_process_device, tr_spiir_triggers_process_device): only the
// triggers come back.
class spiir_sink_core
{
  public:
    spiir_sink_core(const trfg::det_case &c, tr_backend be)
        : d_nt(c.templates), d_q(trfg::make_spiir(c, be))
    {
        try {
            init(c);
        } catch (...) {
            release();
            throw;
        }
    }
    ~spiir_sink_core() { release(); }
    spiir_sink_core(const spiir_sink_core &) = delete;
    spiir_sink_core &operator=(const spiir_sink_core &) = delete;

    //! Processes n <= batch samples of x; returns the triggers decided.
    size_t process(const float *x, size_t n)
    {
        const float *z = d_host_snr.data();
        if (d_dev) {
            if (tr_bench_dev_upload(d_x, x, n * sizeof(float)) != TR_OK)
                fail(tr_bench_last_error());
            if (tr_spiir_process_device(d_q, (const float *)d_x, n, (float *)d_snr) !=
                TR_OK)
                fail(tr_spiir_last_error(d_q));
            z = (const float *)d_snr;
        } else if (tr_spiir_process(d_q, x, n, d_host_snr.data()) != TR_OK) {
            fail(tr_spiir_last_error(d_q));
        }
        // d_out holds the device list (max(65536, 4 ntemplates)): one search
        // call per piece unless it decides more triggers than that.
        size_t found = 0;
        for (size_t k = 0, used = 0, nout = 0; k < n; k += used, found += nout) {
            const tr_status st =
                d_dev
                    ? tr_spiir_triggers_process_device(d_trig, z + k * 2 * d_nt, n - k,
                                                       d_out.data(), d_out.size(), &used,
                                                       &nout)
                    : tr_spiir_triggers_process(d_trig, z + k * 2 * d_nt, n - k,
                                                d_out.data(), d_out.size(), &used, &nout);
            if (st != TR_OK) fail(tr_spiir_triggers_last_error(d_trig));
        }
        return found;
    }

  private:
    void init(const trfg::det_case &c)
    {
        d_dev = tr_spiir_backend(d_q) == TR_BACKEND_CUDA;
        tr_spiir_triggers_config tc = tr_spiir_triggers_config_default();
        tc.ntemplates = c.templates;
        tc.threshold = trfg::k_spiir_threshold;
        tc.window = (uint32_t)trfg::k_spiir_window;
        if (d_dev) tc.backend = TR_BACKEND_CUDA;
        tr_error err;
        d_trig = tr_spiir_triggers_create(&tc, &err);
        if (!d_trig) fail(err.message);
        d_out.resize(std::max<size_t>(65536, 4 * (size_t)d_nt));
        const size_t snr_bytes = c.batch * d_nt * 2 * sizeof(float);
        if (d_dev) {
            if (tr_bench_dev_alloc(0, c.batch * sizeof(float), &d_x) != TR_OK ||
                tr_bench_dev_alloc(0, snr_bytes, &d_snr) != TR_OK)
                fail(tr_bench_last_error());
        } else {
            d_host_snr.resize(snr_bytes / sizeof(float));
        }
    }
    void release()
    {
        tr_bench_dev_free(d_x);
        tr_bench_dev_free(d_snr);
        if (d_trig) tr_spiir_triggers_destroy(d_trig);
        tr_spiir_destroy(d_q);
    }

  private:
    [[noreturn]] void fail(const char *what) const
    {
        throw std::runtime_error(std::string("spiir core without output: ") +
                                 (what ? what : "?"));
    }
    const unsigned d_nt;
    tr_spiir *d_q = nullptr;
    tr_spiir_triggers *d_trig = nullptr;
    bool d_dev = false;
    void *d_x = nullptr, *d_snr = nullptr; // device (CUDA)
    std::vector<float> d_host_snr;         // host (CPU)
    std::vector<tr_spiir_trigger> d_out;
};

// core.process over the pattern's first `period` items, `batch` per call,
// for about `seconds`; *pos: where the last call ended in the period.
template <class Core>
result time_core(Core &core, const trfg::det_case &c, const std::vector<float> &x,
                 size_t period, double seconds, size_t *pos)
{
    const size_t nc = trfg::item_floats(c);
    // Warm-up: one batch (first-call allocations, statistics).
    core.process(x.data(), std::min(c.batch, period));
    result r;
    const double t0 = now();
    *pos = 0;
    do {
        const size_t n = std::min(c.batch, period - *pos);
        core.process(x.data() + *pos * nc, n);
        r.samples += n;
        *pos += n;
        if (*pos == period) *pos = 0;
        r.seconds = now() - t0;
    } while (r.seconds < seconds);
    return r;
}

// The core over the pattern's first `period` items, `batch` per call, for
// about `seconds` (at least one period).
result run_core(const trfg::det_case &c, tr_backend be, const std::vector<float> &x,
                size_t period, double seconds)
{
    size_t pos = 0;
    if (c.detector == "spiir" && !c.spiir_output) {
        spiir_sink_core core(c, be);
        return time_core(core, c, x, period, seconds, &pos);
    }
    trfg::core_runner core(c, be);
    result r = time_core(core, c, x, period, seconds, &pos);
    if (c.detector == "boxcar") {
        r.stage = "norm";
        r.stage_rate = boxcar_norm_rate(c, x, period, seconds / 2);
    } else if (c.detector == "spiir") {
        // The last call's output: `batch` samples (or the period's rest).
        r.stage = "triggers";
        const size_t last = (pos == 0 ? period : pos) % c.batch;
        r.stage_rate =
            spiir_trigger_rate(c, core.snr(), last ? last : c.batch, seconds / 2);
    }
    return r;
}

struct block_result : result {
    uint64_t period = 0;
    uint64_t ring = 0;
    bool replay = false;
    bool stopped = false;    // stopped at the time limit before the source was done
    int64_t detections = -1; // without output: detections in the messages
    std::string triggers_on; // spiir without output: "device" or "host"
};

// Counts the detections of the "detects" messages it receives on "in": edges
// transitions and SPIIR triggers (dicts or vectors), boxcar and frb
// candidates ("pulses").
class msg_counter : public gr::block
{
  public:
    typedef std::shared_ptr<msg_counter> sptr;
    static sptr make() { return gnuradio::make_block_sptr<msg_counter>(); }
    msg_counter()
        : gr::block("msg_counter", gr::io_signature::make(0, 0, 0),
                    gr::io_signature::make(0, 0, 0))
    {
        message_port_register_in(pmt::mp("in"));
        set_msg_handler(pmt::mp("in"), [this](const pmt::pmt_t &m) {
            const pmt::pmt_t e = pmt::dict_ref(m, d_key, pmt::PMT_NIL);
            if (pmt::is_vector(e)) d_count += pmt::length(e); // msg_format "dicts"
            const pmt::pmt_t s = pmt::dict_ref(m, d_key_sample, pmt::PMT_NIL);
            if (pmt::is_u64vector(s) || pmt::is_s64vector(s))
                d_count += pmt::length(s); // "vectors" (edges, spiir)
            const pmt::pmt_t t = pmt::dict_ref(m, d_key_triggers, pmt::PMT_NIL);
            if (pmt::is_vector(t)) d_count += pmt::length(t); // spiir "dicts"
            const pmt::pmt_t p = pmt::dict_ref(m, d_key_pulses, pmt::PMT_NIL);
            if (pmt::is_vector(p)) d_count += pmt::length(p); // boxcar, frb candidates
        });
    }
    uint64_t count() const { return d_count.load(); }

  private:
    const pmt::pmt_t d_key = pmt::mp("edges");
    const pmt::pmt_t d_key_sample = pmt::mp("sample");
    const pmt::pmt_t d_key_pulses = pmt::mp("pulses");
    const pmt::pmt_t d_key_triggers = pmt::mp("triggers");
    std::atomic<uint64_t> d_count{0};
};

// Runs a flow graph until its source is done or `limit` seconds have passed
// (then stops it: the rate is what went through in the time it ran). `count`
// gives the samples through so far.
template <class F>
void run_bounded(gr::top_block_sptr tb, F count, uint64_t total, double limit)
{
    const double t0 = now();
    tb->start();
    while (count() < total && now() - t0 < limit)
        usleep(2000);
    if (count() < total) tb->stop();
    tb->wait();
}

block_result run_block(const trfg::det_case &c, const std::string &backend,
                       std::shared_ptr<const std::vector<float>> pattern, size_t ring,
                       uint64_t total, double limit)
{
    std::vector<int> out_sizes;
    gr::block_sptr blk = trfg::make_block(c, backend, out_sizes);
    const unsigned vlen = (unsigned)trfg::item_floats(c);
    auto src = trfg::ring_source::make(pattern, vlen, total, ring, true);
    gr::top_block_sptr tb = gr::make_top_block("transient_flowgraph_bench");
    tb->connect(src, 0, blk, 0);
    block_result r;
    double t0 = 0;
    if (out_sizes.empty()) {
        // Edges, boxcar or spiir without outputs, frb: the block is the end of the
        // stream and reports on "detects"; samples through = samples it consumed.
        auto msgs = msg_counter::make();
        tb->msg_connect(blk, "detects", msgs, "in");
        t0 = now();
        run_bounded(
            tb, [&] { return blk->nitems_read(0); }, total, limit);
        r.seconds = now() - t0;
        r.samples = blk->nitems_read(0);
        r.detections = (int64_t)msgs->count();
    } else {
        auto snk = trfg::count_sink::make(out_sizes);
        for (size_t i = 0; i < out_sizes.size(); i++)
            tb->connect(blk, (int)i, snk, (int)i);
        t0 = now();
        run_bounded(
            tb, [&] { return snk->count(); }, total, limit);
        r.seconds = now() - t0;
        r.samples = snk->count();
    }
    r.period = src->period();
    r.ring = src->ring_items();
    r.replay = !src->wrote_all();
    r.stopped = r.samples < total && r.seconds >= limit;
    if (r.samples != total && !r.stopped)
        throw std::runtime_error(c.detector + " block: " + std::to_string(r.samples) +
                                 " samples out of " + std::to_string(total));
    return r;
}

// The flow graph without a detector: replaying source -> sink, the rate the
// source and the scheduler alone reach for this item size and ring.
result run_overhead(unsigned vlen, std::shared_ptr<const std::vector<float>> pattern,
                    size_t ring, uint64_t total)
{
    auto src = trfg::ring_source::make(pattern, vlen, total, ring, true);
    auto snk = trfg::count_sink::make(std::vector<int>(1, (int)(sizeof(float) * vlen)));
    gr::top_block_sptr tb = gr::make_top_block("transient_flowgraph_overhead");
    tb->connect(src, 0, snk, 0);
    const double t0 = now();
    tb->start();
    tb->wait();
    result r;
    r.seconds = now() - t0;
    r.samples = snk->count();
    return r;
}

size_t default_batch(const trfg::det_case &c, bool quick)
{
    if (quick) return 4096;
    if (c.detector == "boxcar") return c.nchan > 1 ? 65536 : (size_t)1 << 20;
    if (c.detector == "spiir") return 8192;
    if (c.detector == "frb") return 16384; // tr_frb's block
    return (size_t)1 << 20;
}

void emit(const options &o, const env_info &env, const trfg::det_case &c,
          const std::string &backend, const std::string &path, const result &r,
          double core_rate, const block_result *br, int pinned)
{
    const double bps = (double)trfg::in_item_bytes(c);
    const bool cuda = backend == "cuda";
    const double ceiling_bw = cuda ? env.h2d : env.memcpy_bw;
    const double ceil_sps = ceiling_bw / bps;
    const double rate = r.rate();
    if (o.json) {
        std::string s =
            "{\"type\":\"flowgraph\",\"detector\":" + json_str(c.detector) +
            ",\"backend\":" + json_str(backend) + ",\"path\":" + json_str(path) +
            ",\"batch\":" + std::to_string(c.batch) +
            ",\"samples\":" + std::to_string(r.samples) +
            ",\"seconds\":" + num(r.seconds) + ",\"samples_per_s\":" + num(rate) +
            ",\"bytes_per_sample\":" + num(bps) +
            ",\"ceiling\":" + json_str(cuda ? "h2d_pinned_bw" : "host_memcpy_bw") +
            ",\"ceiling_bytes_per_s\":" + num(ceiling_bw) +
            ",\"ceiling_samples_per_s\":" + num(ceil_sps) +
            ",\"ratio\":" + num(rate / ceil_sps) +
            ",\"core_samples_per_s\":" + num(core_rate) +
            ",\"block_over_core\":" + num(rate / core_rate);
        if (br) {
            s += ",\"pinned_buffers\":" + std::string(pinned ? "true" : "false");
            s += ",\"source\":" +
                 json_str(br->replay ? "ring_replay" : "write_every_item");
            s += ",\"source_period\":" + std::to_string(br->period);
            s += ",\"ring_items\":" + std::to_string(br->ring);
            if (br->stopped) s += ",\"stopped_at_limit\":true";
        }
        if (c.detector == "edges" && br) {
            s += ",\"passthrough\":" + std::string(c.edge_passthrough ? "true" : "false");
            s += ",\"detects_connected\":" +
                 std::string(c.edge_passthrough ? "false" : "true");
            if (br->detections >= 0)
                s += ",\"detections\":" + std::to_string(br->detections) +
                     ",\"msg_format\":" + json_str(c.edge_msg_format);
        }
        if (c.detector == "edges")
            s += ",\"edge_spacing\":[" + num(c.edge_min_width) + "," +
                 num(c.edge_max_width) +
                 "],\"levels\":\"fixed\",\"low\":" + num(c.edge_levels[0]) +
                 ",\"mid\":" + num(c.edge_levels[1]) +
                 ",\"high\":" + num(c.edge_levels[2]);
        if (c.detector == "boxcar" && br && br->detections >= 0)
            s += ",\"detections\":" + std::to_string(br->detections);
        if (c.detector == "boxcar")
            s += ",\"outputs\":" + std::string(c.boxcar_outputs ? "true" : "false") +
                 ",\"nchan\":" + std::to_string(c.nchan) +
                 ",\"algorithm\":\"boxdit\",\"widths\":[32,16,16,16,8],\"max_width\":" +
                 std::to_string(trfg::k_boxcar_max_width) +
                 ",\"norm\":" + json_str(c.boxcar_norm) +
                 ",\"threshold\":" + num(trfg::k_boxcar_threshold) +
                 ",\"pulse_spacing\":" + std::to_string(c.boxcar_spacing) +
                 ",\"msg_format\":" + json_str(c.boxcar_msg_format);
        if (c.detector == "spiir" && br && br->detections >= 0)
            s += ",\"detections\":" + std::to_string(br->detections) +
                 ",\"msg_format\":" + json_str(c.spiir_msg_format);
        if (c.detector == "spiir" && !c.spiir_output)
            s += ",\"triggers_on\":" + json_str(br     ? br->triggers_on
                                                : cuda ? "device"
                                                       : "host");
        if (c.detector == "spiir")
            s += ",\"output\":" + std::string(c.spiir_output ? "true" : "false") +
                 ",\"templates\":" + std::to_string(c.templates) +
                 ",\"filters\":" + std::to_string(c.filters) +
                 ",\"output_bytes_per_sample\":" + std::to_string(8 * c.templates) +
                 ",\"threshold\":" + num(trfg::k_spiir_threshold) +
                 ",\"window\":" + std::to_string(trfg::k_spiir_window);
        if (c.detector == "frb")
            s += ",\"nchan\":" + std::to_string(c.nchan) +
                 ",\"fch1\":" + num(trfg::k_frb_fch1) +
                 ",\"bandwidth\":" + num(trfg::k_frb_band) +
                 ",\"tsamp\":" + num(trfg::k_frb_tsamp) +
                 ",\"dm_max\":" + num(trfg::k_frb_dm_max) +
                 ",\"max_width\":1024,\"zero_dm\":true";
        if (br && br->detections >= 0 && c.detector == "frb")
            s += ",\"detections\":" + std::to_string(br->detections);
        if (c.detector == "kalman")
            s += ",\"M\":" + std::to_string(c.M) + ",\"Ns\":" + std::to_string(c.M / 2) +
                 ",\"noise_ar\":[0.5],\"target_ar\":[0.9]";
        if (!r.stage.empty())
            s += ",\"" + r.stage + "_samples_per_s\":" + num(r.stage_rate);
        if (o.quick) s += ",\"quick\":true";
        s += "}";
        std::fprintf(g_out, "%s\n", s.c_str());
    } else {
        std::string note;
        if (br && !c.edge_passthrough)
            note = "  (no output, detects: " + c.edge_msg_format + ")";
        if (c.detector == "spiir" && !c.spiir_output)
            note = "  (no output, triggers on the " +
                   std::string(br     ? br->triggers_on
                               : cuda ? "device"
                                      : "host") +
                   ")";
        char name[64];
        std::snprintf(name, sizeof name, "%s%s", c.detector.c_str(),
                      trfg::item_floats(c) > 1 || c.detector == "boxcar"
                          ? ("/" + std::to_string(c.nchan)).c_str()
                          : "");
        std::fprintf(g_out,
                     "%-10s %-4s %-5s%s batch %8zu  %10.4g samples/s  ceiling %10.4g  "
                     "ratio %6.3f  block/core %6.3f%s\n",
                     name, backend.c_str(), path.c_str(),
                     br && cuda ? (pinned ? "+pin" : "-pin") : "    ", c.batch, rate,
                     ceil_sps, rate / ceil_sps, rate / core_rate, note.c_str());
    }
    std::fflush(g_out);
}

} // namespace

int main(int argc, char **argv)
{
    {
        const int fd = dup(1);
        if (fd >= 0) {
            FILE *f = fdopen(fd, "w");
            if (f && dup2(2, 1) >= 0) g_out = f;
        }
    }
    options o;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        auto val = [&]() -> std::string {
            if (i + 1 >= argc) usage(("missing value after " + a).c_str());
            return argv[++i];
        };
        if (a == "--detector")
            o.detectors = split(val());
        else if (a == "--backend")
            o.backends = split(val());
        else if (a == "--seconds")
            o.seconds = std::atof(val().c_str());
        else if (a == "--frb-nchan")
            o.frb_nchan = (unsigned)std::atoi(val().c_str());
        else if (a == "--boxcar-nchan") {
            o.boxcar_nchan.clear();
            for (auto &s : split(val()))
                o.boxcar_nchan.push_back((unsigned)std::atoi(s.c_str()));
        } else if (a == "--spiir") {
            auto v = split(val());
            if (v.size() != 2) usage("--spiir needs T,L");
            o.spiir_templates = (unsigned)std::atoi(v[0].c_str());
            o.spiir_filters = (unsigned)std::atoi(v[1].c_str());
        } else if (a == "--kalman-M")
            o.kalman_M = (unsigned)std::atoi(val().c_str());
        else if (a == "--edge-spacing") {
            auto v = split(val());
            if (v.size() != 2) usage("--edge-spacing needs MIN,MAX");
            o.edge_min = std::atof(v[0].c_str());
            o.edge_max = std::atof(v[1].c_str());
        } else if (a == "--edge-output")
            o.edge_output = val();
        else if (a == "--boxcar-output")
            o.boxcar_output = val();
        else if (a == "--spiir-output")
            o.spiir_output = val();
        else if (a == "--spiir-msg")
            o.spiir_msg = val();
        else if (a == "--edge-msg")
            o.edge_msg = val();
        else if (a == "--boxcar-norm")
            o.boxcar_norm = val();
        else if (a == "--boxcar-msg")
            o.boxcar_msg = val();
        else if (a == "--boxcar-spacing") {
            o.boxcar_spacing = (size_t)std::atoll(val().c_str());
            if (o.boxcar_spacing < 512) usage("--boxcar-spacing needs N >= 512");
        } else if (a == "--batch")
            o.batch = (size_t)std::atoll(val().c_str());
        else if (a == "--pin")
            o.pin = val();
        else if (a == "--quick")
            o.quick = true;
        else if (a == "--json")
            o.json = true;
        else if (a == "--help" || a == "-h")
            usage(nullptr);
        else if (a == "--version") {
            std::fprintf(g_out, "transient-flowgraph-bench %s\n", tr_version());
            std::fflush(g_out);
            return 0;
        } else
            usage(("unknown option " + a).c_str());
    }
    if (o.pin != "on" && o.pin != "off" && o.pin != "both")
        usage("--pin: on, off or both");
    if (!(o.seconds > 0)) usage("--seconds must be > 0");
    if (o.edge_output != "pass" && o.edge_output != "none" && o.edge_output != "both")
        usage("--edge-output: pass, none or both");
    if (o.boxcar_output != "snr" && o.boxcar_output != "none" &&
        o.boxcar_output != "both")
        usage("--boxcar-output: snr, none or both");
    if (o.spiir_output != "snr" && o.spiir_output != "none" && o.spiir_output != "both")
        usage("--spiir-output: snr, none or both");
    if (o.boxcar_msg != "dicts" && o.boxcar_msg != "vectors")
        usage("--boxcar-msg: dicts or vectors");
    if (o.spiir_msg != "dicts" && o.spiir_msg != "vectors")
        usage("--spiir-msg: dicts or vectors");
    if (o.edge_msg != "dicts" && o.edge_msg != "vectors" && o.edge_msg != "both")
        usage("--edge-msg: dicts, vectors or both");
    if (o.quick) o.seconds = std::min(o.seconds, 0.05);
    for (auto &d : o.detectors)
        if (d != "edges" && d != "boxcar" && d != "spiir" && d != "kalman" && d != "frb")
            usage(("unknown detector " + d).c_str());

    env_info env;
    char why[256] = "";
    env.cuda = tr_cuda_device_count(why, sizeof why) > 0;
    if (o.backends.empty()) {
        o.backends.push_back("cpu");
        if (env.cuda) o.backends.push_back("cuda");
    }
    for (auto &b : o.backends) {
        if (b != "cpu" && b != "cuda") usage(("unknown backend " + b).c_str());
        if (b == "cuda" && !env.cuda) {
            std::fprintf(stderr, "transient-flowgraph-bench: no usable CUDA device: %s\n",
                         why);
            return 77;
        }
    }
    tr_bench_device_info info;
    std::memset(&info, 0, sizeof info);
    if (env.cuda) {
        if (tr_bench_device_info_get(0, &info) == TR_OK) env.gpu = info.name;
        const size_t bytes = o.quick ? (size_t)16 << 20 : (size_t)256 << 20;
        if (tr_bench_h2d_bw(0, bytes, 5, &env.h2d) != TR_OK) env.h2d = NAN;
        if (tr_bench_d2h_bw(0, bytes, 5, &env.d2h) != TR_OK) env.d2h = NAN;
    }
    env.memcpy_bw = host_memcpy_bw();
    const long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    if (o.json) {
        std::fprintf(
            g_out,
            "{\"type\":\"env\",\"gpu\":%s,\"h2d_pinned_bw\":%s,\"d2h_pinned_bw\":%s,"
            "\"host_memcpy_bw\":%s,\"cpu_model\":%s,\"cpus\":%ld,"
            "\"cuda_driver\":%d,\"cuda_runtime\":%d,\"sm_count\":%d,"
            "\"gnuradio\":%s,\"transient\":%s,\"seconds_per_case\":%s,"
            "\"pin\":%s}\n",
            env.cuda ? json_str(env.gpu).c_str() : "null", num(env.h2d).c_str(),
            num(env.d2h).c_str(), num(env.memcpy_bw).c_str(),
            json_str(cpu_model()).c_str(), ncpu, info.driver_version,
            info.runtime_version, info.sm_count, json_str(gr::version()).c_str(),
            json_str(tr_version()).c_str(), num(o.seconds).c_str(),
            json_str(o.pin).c_str());
    } else {
        std::fprintf(g_out,
                     "GPU %s, H2D pinned %.3g GB/s, D2H pinned %.3g GB/s, host memcpy "
                     "%.3g GB/s, CPU %s (%ld), GNU Radio %s\n",
                     env.cuda ? env.gpu.c_str() : "none", env.h2d / 1e9, env.d2h / 1e9,
                     env.memcpy_bw / 1e9, cpu_model().c_str(), ncpu,
                     gr::version().c_str());
    }
    std::fflush(g_out);

    // The cases.
    std::vector<trfg::det_case> cases;
    for (auto &d : o.detectors) {
        if (d == "boxcar") {
            for (unsigned nc : o.boxcar_nchan) {
                trfg::det_case c;
                c.detector = d;
                c.nchan = nc;
                c.boxcar_norm = o.boxcar_norm;
                c.boxcar_spacing = o.boxcar_spacing;
                c.boxcar_msg_format = o.boxcar_msg;
                cases.push_back(c);
            }
            continue;
        }
        trfg::det_case c;
        c.detector = d;
        c.templates = o.quick ? 16 : o.spiir_templates;
        c.filters = o.quick ? 8 : o.spiir_filters;
        c.M = o.kalman_M;
        c.spiir_msg_format = o.spiir_msg;
        c.edge_min_width = o.edge_min;
        c.edge_max_width = o.edge_max;
        c.nchan = d == "frb" ? (o.quick ? 64 : o.frb_nchan) : 1;
        cases.push_back(c);
    }

    char bank_path[] = "/tmp/transient-fg-bank-XXXXXX";
    bool have_bank = false;
    int status = 0;
    for (auto &c : cases) {
        c.batch = o.batch ? o.batch : default_batch(c, o.quick);
        try {
            if (c.detector == "spiir" && !have_bank) {
                const int fd = mkstemp(bank_path);
                if (fd < 0) throw std::runtime_error("cannot create a temporary file");
                close(fd);
                have_bank = true;
            }
            if (c.detector == "spiir") trfg::make_spiir_bank(c, bank_path, 7);
            const size_t item = (size_t)trfg::in_item_bytes(c);
            // Ring: >= 64 MiB and 4 batches (quick: 4 batches), whole batches.
            size_t ring = o.quick
                              ? 4 * c.batch
                              : std::max<size_t>(4 * c.batch, ((size_t)64 << 20) / item);
            ring = (ring + c.batch - 1) / c.batch * c.batch;
            // GNU Radio rounds the ring up to whole pages: room for that.
            const size_t pattern_items = ring + ring / 4 + 65536;
            auto pattern = std::make_shared<std::vector<float>>(
                trfg::make_signal(c, pattern_items, 11));

            {
                // Source and scheduler alone, with the same ring.
                const unsigned vlen = (unsigned)trfg::item_floats(c);
                const uint64_t total = (o.quick ? 4 : 64) * (uint64_t)ring;
                const result ov = run_overhead(vlen, pattern, ring, total);
                if (o.json)
                    std::fprintf(
                        g_out,
                        "{\"type\":\"overhead\",\"what\":\"source_to_sink\","
                        "\"detector\":%s,\"item_bytes\":%zu,\"ring_items\":%zu,"
                        "\"samples\":%llu,\"seconds\":%s,\"samples_per_s\":%s}\n",
                        json_str(c.detector).c_str(), item, ring,
                        (unsigned long long)ov.samples, num(ov.seconds).c_str(),
                        num(ov.rate()).c_str());
                else
                    std::fprintf(g_out,
                                 "%-10s source->sink (no detector): %.4g samples/s\n",
                                 c.detector.c_str(), ov.rate());
                std::fflush(g_out);
            }
            for (auto &backend : o.backends) {
                const tr_backend be =
                    backend == "cuda" ? TR_BACKEND_CUDA : TR_BACKEND_CPU;
                const result core = run_core(c, be, *pattern, ring, o.seconds);
                emit(o, env, c, backend, "core", core, core.rate(), nullptr, 0);
                // The flow graph for about as long as the core line it is
                // compared with (at least 4 batches, whole batches).
                auto samples_for = [&](double rate) {
                    double want = std::max(rate * o.seconds, (double)(4 * c.batch));
                    uint64_t t = (uint64_t)want;
                    if (o.quick) t = std::min<uint64_t>(t, 4 * ring);
                    return (t + c.batch - 1) / c.batch * c.batch;
                };
                const uint64_t total = samples_for(core.rate());
                // Page-locked GNU Radio buffers on (1) and/or off (0).
                std::vector<int> pins;
                if (backend == "cuda" && o.pin != "on") {
                    if (o.pin == "both") pins.push_back(1);
                    pins.push_back(0);
                } else {
                    pins.push_back(1);
                }
                const bool pass_case =
                    (c.detector != "edges" || o.edge_output != "none") &&
                    (c.detector != "boxcar" || o.boxcar_output != "none") &&
                    (c.detector != "spiir" || o.spiir_output != "none");
                for (int pin : pins) {
                    if (!pass_case) break;
                    setenv("GR_TRANSIENT_PIN_BUFFERS", pin ? "1" : "0", 1);
                    const block_result br =
                        run_block(c, backend, pattern, ring, total, 10 * o.seconds + 1);
                    emit(o, env, c, backend, "block", br, core.rate(), &br,
                         backend == "cuda" ? pin : 0);
                }
                const bool no_output_case =
                    c.detector == "edges" && o.edge_output != "pass";
                for (const char *fmt : {"dicts", "vectors"}) {
                    if (!no_output_case || (o.edge_msg != "both" && o.edge_msg != fmt))
                        continue;
                    // Without the pass-through output, detects connected
                    // (page-locked buffers as by default; same core line).
                    trfg::det_case cn = c;
                    cn.edge_passthrough = false;
                    cn.edge_msg_format = fmt;
                    setenv("GR_TRANSIENT_PIN_BUFFERS", "1", 1);
                    const block_result br =
                        run_block(cn, backend, pattern, ring, total, 10 * o.seconds + 1);
                    emit(o, env, cn, backend, "block", br, core.rate(), &br,
                         backend == "cuda" ? 1 : 0);
                }
                // Without outputs: boxcar candidates only (with CUDA clustered
                // on the device), spiir triggers only (with CUDA searched on
                // the device and, for comparison, on the host); a core line
                // with the same split of work, then the block.
                const bool sink_case =
                    (c.detector == "boxcar" && o.boxcar_output != "snr") ||
                    (c.detector == "spiir" && o.spiir_output != "snr");
                std::vector<std::string> places{""};
                if (c.detector == "spiir")
                    places = backend == "cuda"
                                 ? std::vector<std::string>{"device", "host"}
                                 : std::vector<std::string>{"host"};
                if (sink_case) {
                    trfg::det_case cn = c;
                    cn.boxcar_outputs = false;
                    cn.spiir_output = false;
                    const result cc = run_core(cn, be, *pattern, ring, o.seconds);
                    emit(o, env, cn, backend, "core", cc, cc.rate(), nullptr, 0);
                    // as long as this core line: the search without outputs
                    // may be much faster than with them
                    const uint64_t total_cn = samples_for(cc.rate());
                    setenv("GR_TRANSIENT_PIN_BUFFERS", "1", 1);
                    for (const std::string &on : places) {
                        if (backend == "cuda" && on == "host")
                            setenv("GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS", "0", 1);
                        block_result br = run_block(cn, backend, pattern, ring, total_cn,
                                                    10 * o.seconds + 1);
                        unsetenv("GR_TRANSIENT_SPIIR_DEVICE_TRIGGERS");
                        br.triggers_on = on;
                        emit(o, env, cn, backend, "block", br, cc.rate(), &br,
                             backend == "cuda" ? 1 : 0);
                    }
                }
                unsetenv("GR_TRANSIENT_PIN_BUFFERS");
            }
        } catch (const std::exception &e) {
            std::fprintf(stderr, "transient-flowgraph-bench: %s: %s\n",
                         c.detector.c_str(), e.what());
            status = 1;
        }
    }
    if (have_bank) unlink(bank_path);
    return status;
}
