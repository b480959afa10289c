/*
 * libFuzzer target: the Kalman detector (tr_kalman_model_design,
 * tr_kalman). AR coefficients, variances, envelope, hypotheses and decision
 * settings from the input, any samples; REFERENCE or FAST in random chunks,
 * events read as they come. Bad models must be refused by design or create;
 * every process call must succeed and events come in order.
 */
#include <transient/kalman.h>

#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fz_input in = fz_open(data, size);
    double noise_ar[2], target_ar[2];
    tr_kalman_design d = tr_kalman_design_default();
    d.M = fz_range(&in, 0, 24);
    d.noise_order = fz_range(&in, 0, 2);
    d.target_order = fz_range(&in, 0, 2);
    for (int i = 0; i < 2; i++) {
        noise_ar[i] = (double)fz_f32(&in);
        target_ar[i] = (double)fz_f32(&in);
    }
    d.noise_ar = noise_ar;
    d.target_ar = target_ar;
    d.noise_var = (double)fz_f32(&in);
    d.meas_var = fz_range(&in, 0, 4) / 4.0;
    d.target_var = (double)fz_f32(&in);
    d.envelope = (tr_kalman_envelope)fz_range(&in, 0, 3);
    d.env_param = fz_range(&in, 0, 20);
    d.riccati_max_iter = 2000; /* bounded time per input */
    tr_kalman_config cfg = tr_kalman_config_default();
    cfg.backend = TR_BACKEND_CPU;
    cfg.variant = fz_range(&in, 0, 1) ? TR_VARIANT_REFERENCE : TR_VARIANT_FAST;
    cfg.Ns = fz_range(&in, 0, 24);
    cfg.alpha = fz_range(&in, 0, 1000) / 1000.0;
    cfg.threshold = (double)fz_f32(&in);
    cfg.max_events = fz_range(&in, 0, 8);
    fz_seed_chunks(&in);
    size_t n;
    float *x = fz_floats(&in, &n);
    tr_error err;
    tr_kalman_model *m = tr_kalman_model_design(&d, &err);
    tr_kalman *q = m ? tr_kalman_create(&cfg, m, &err) : NULL;
    if (q) {
        float *llr = (float *)malloc((n + 1) * sizeof *llr);
        uint8_t *dec = (uint8_t *)malloc(n + 1);
        tr_kalman_event ev[4];
        uint64_t last = 0;
        size_t k = 0;
        while (k < n) {
            const size_t c = fz_chunk(&in, 64);
            const size_t len = c < n - k ? c : n - k;
            FZ_REQUIRE(tr_kalman_process(q, x + k, len, llr, dec) == TR_OK);
            k += len;
            size_t got;
            while ((got = tr_kalman_events(q, ev, 4)) > 0)
                for (size_t i = 0; i < got; i++) {
                    FZ_REQUIRE(ev[i].start >= last && ev[i].start < k);
                    FZ_REQUIRE(ev[i].type != TR_KALMAN_EVENT_END ||
                               (ev[i].end > ev[i].start && ev[i].end <= k));
                    last = ev[i].start;
                }
        }
        free(llr);
        free(dec);
    }
    tr_kalman_destroy(q);
    tr_kalman_model_destroy(m);
    free(x);
    return 0;
}
