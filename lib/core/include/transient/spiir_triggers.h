/*
 * Triggers of a SPIIR filter bank: the peaks of |SNR| over a threshold, one per
 * cluster and template.
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs"
 * (the SNR z of equation 8; the triggers are what a search takes from it).
 *
 * Definition, per template t, on the SNR stream z[k, t] of tr_spiir_process:
 *   - a sample with |z| > threshold starts a cluster (when none is open) and
 *     becomes its candidate; a later sample with a larger |z| (> threshold)
 *     replaces the candidate (equal values keep the earlier one);
 *   - a cluster ends at the sample `window` samples after its candidate, when
 *     no larger value came: its candidate is then a trigger. So every trigger is
 *     the maximum of |z| from its cluster's start to `window` samples after it,
 *     and triggers of one template are more than `window` samples apart.
 *   - A trigger is therefore decided `window` samples after its peak
 *     (tr_spiir_triggers_flush decides the open clusters at the end of a stream).
 * |z| = sqrt(re^2 + im^2) in double from the float pair (compared with the
 * threshold as squares). Non-finite |z| never exceeds the threshold. The peak's
 * fractional position is refined by a parabola through |z| at the peak and its two
 * neighbours (when both exist and the peak is a strict local maximum; otherwise it is the
 * peak sample itself). The triggers do not depend on how the stream is split into calls.
 *
 * Variants (the same triggers, bit for bit, and the same consumed / nout for
 * every call): REFERENCE, the plain loop over samples and templates; FAST (the
 * default), which compares |z|^2 in float against a per-template bound (the
 * threshold, or the open cluster's candidate when larger) made smaller by a
 * relative 2^-20, so that a sample it passes over cannot start or move a
 * cluster (AVX2 or a generic loop, chosen at run time), decides only the
 * samples it cannot pass over in double as the reference does, and splits the
 * templates over `nthreads` threads (a persistent pool owned by the object;
 * the triggers of all threads are merged in the reference's order).
 *
 * CUDA backend (the same triggers, consumed and nout, bit for bit): SNR that is
 * already on the GPU (tr_spiir_process_device) is scanned there by
 * tr_spiir_triggers_process_device, one thread per template with the
 * reference's decisions in double; only the decided clusters cross PCIe
 * (docs/spiir.md). The open clusters stay where the last call left them and
 * move between host and device when the calls switch.
 */
#ifndef TRANSIENT_SPIIR_TRIGGERS_H
#define TRANSIENT_SPIIR_TRIGGERS_H

#include <transient/common.h>
#include <transient/spiir.h>

#ifdef __cplusplus
extern "C" {
#endif

/* One trigger. */
typedef struct {
    uint64_t sample; /* index of the peak in the SNR stream (from 0 or the last reset) */
    double peak;     /* interpolated peak position in samples, within sample +- 0.5 */
    uint32_t template_index; /* template t */
    float snr;               /* |z| at the peak */
    float re, im;            /* z at the peak */
    uint32_t reserved;       /* 0 */
} tr_spiir_trigger;

typedef struct {
    uint32_t ntemplates; /* templates per SNR sample (1..TR_SPIIR_MAX_TEMPLATES) */
    float threshold;     /* |z| above this starts or extends a cluster (finite, >= 0) */
    uint32_t window;     /* samples after a peak that end its cluster (>= 1) */
    tr_variant variant;  /* FAST (default) or REFERENCE (CPU; PAPER is refused) */
    uint32_t nthreads;   /* FAST on the CPU: threads over the templates, the
                            caller's included (0: automatic, min(cores, 8,
                            ntemplates / 32), at least 1; at most 64) */
    tr_backend backend;  /* where the scan may run (default AUTO): CPU; CUDA (device
                            and host SNR on the GPU, an error at create without
                            one); AUTO (host SNR on the CPU, device SNR on the GPU
                            when one is usable, its context made at the first such
                            call) */
    int device;          /* CUDA device index (default 0) */
    size_t device_capacity; /* CUDA: triggers the device list holds per scan round
                               (0: automatic, max(65536, 4 ntemplates); else at
                               least ntemplates); a fuller round is cut and resumed */
} tr_spiir_triggers_config;

typedef struct tr_spiir_triggers tr_spiir_triggers;

/* ntemplates 1, threshold 8, window 64, FAST, nthreads 0 (automatic), backend
 * AUTO, device 0, device_capacity 0 (automatic). */
tr_spiir_triggers_config tr_spiir_triggers_config_default(void);

tr_spiir_triggers *tr_spiir_triggers_create(const tr_spiir_triggers_config *cfg,
                                            tr_error *err);
void tr_spiir_triggers_destroy(tr_spiir_triggers *q);

/* Forget open clusters; the sample index starts again at 0. */
tr_status tr_spiir_triggers_reset(tr_spiir_triggers *q);

/*
 * Scan n SNR samples, laid out as tr_spiir_process writes them
 * (snr[(k * ntemplates + t) * 2 + {0, 1}]). Triggers decided go to out[], in
 * the order of the sample that decides them, then of template. A sample can
 * decide up to ntemplates triggers: the call stops before a sample when fewer
 * than ntemplates slots are left in out (cap), and *consumed says how many
 * samples were scanned (call again with the rest). cap >= ntemplates
 * guarantees progress. *nout = triggers written. FAST scans whole stretches
 * of samples at once (on its threads) while cap leaves room for at least two
 * triggers per template more than that stretch can decide, and falls back to
 * the per-sample loop near the end of cap: give a cap of several times
 * ntemplates (for example ntemplates * (8192 / (window + 1) + 2)).
 */
tr_status tr_spiir_triggers_process(tr_spiir_triggers *q, const float *snr, size_t n,
                                    tr_spiir_trigger *out, size_t cap, size_t *consumed,
                                    size_t *nout);

/*
 * The same with SNR in device memory (tr_spiir_process_device's output,
 * 8-byte aligned, complete: the call does not wait for other streams),
 * scanned on the GPU; out is host memory. Needs the CUDA
 * backend, or AUTO with a usable GPU (TR_ERR_UNSUPPORTED otherwise).
 */
tr_status tr_spiir_triggers_process_device(tr_spiir_triggers *q, const float *d_snr,
                                           size_t n, tr_spiir_trigger *out, size_t cap,
                                           size_t *consumed, size_t *nout);

/*
 * End of stream: decide every open cluster now (at most ntemplates triggers,
 * in template order; cap >= ntemplates required). The clusters are closed.
 */
tr_status tr_spiir_triggers_flush(tr_spiir_triggers *q, tr_spiir_trigger *out, size_t cap,
                                  size_t *nout);

/* New threshold (finite, >= 0), used from the next sample; open clusters stay. */
tr_status tr_spiir_triggers_set_threshold(tr_spiir_triggers *q, float threshold);
float tr_spiir_triggers_threshold(const tr_spiir_triggers *q);
uint32_t tr_spiir_triggers_window(const tr_spiir_triggers *q);
uint64_t tr_spiir_triggers_position(const tr_spiir_triggers *q); /* samples scanned */
uint32_t tr_spiir_triggers_nthreads(const tr_spiir_triggers *q); /* threads in use */
/* CUDA when device SNR is accepted (the CUDA backend, or AUTO with a usable GPU),
 * else CPU. */
tr_backend tr_spiir_triggers_backend(const tr_spiir_triggers *q);
const char *tr_spiir_triggers_last_error(const tr_spiir_triggers *q);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_SPIIR_TRIGGERS_H */
