/*
 * One rate of a SPIIR filter bank on the CPU (spiir_level.h): the delay line
 * and the non-finite input policy around the variants' kernels.
 */
#include "spiir/spiir_level.h"

#include "common/core_util.h"
#include "spiir/spiir_variants.h"

#include <stdlib.h>
#include <string.h>

/* Fewest new samples the delay line holds beyond its history: sliding the
 * history to the front then costs at most one copy per new sample. */
#define LINE_SPAN 4096

struct tr_spiir_level {
    const tr_spiir_bank *bank; /* not owned */
    int cplx;                  /* complex input */
    tr_spiir_ref *ref;         /* reference variant, or NULL */
    tr_spiir_cpu *fast;        /* optimized variant, or NULL */
    float *line_re;            /* delay line: cleaned samples, real part */
    float *line_im;            /* imaginary part (complex input only) */
    size_t line_cap;           /* samples the line holds */
    size_t head; /* next sample goes here; the max_delay before are history */
};

void tr_spiir_level_destroy(tr_spiir_level *v)
{
    if (!v) return;
    tr_spiir_ref_destroy(v->ref);
    tr_spiir_cpu_destroy(v->fast);
    free(v->line_re);
    free(v->line_im);
    free(v);
}

tr_spiir_level *tr_spiir_level_create(const tr_spiir_bank *bank, int complex_input,
                                      tr_variant variant, tr_error *err)
{
    /* The history plus at least LINE_SPAN new samples, and never shorter than
     * the history itself (see LINE_SPAN). Below 2^26 samples: the optimized
     * variant indexes the line with 32-bit integers. */
    const size_t hist = (size_t)bank->max_delay;
    const size_t cap = hist + (hist > LINE_SPAN ? hist : LINE_SPAN);
    tr_spiir_level *v = calloc(1, sizeof *v);
    if (v) {
        v->bank = bank;
        v->cplx = complex_input;
        if (variant == TR_VARIANT_REFERENCE)
            v->ref = tr_spiir_ref_create(bank);
        else
            v->fast = tr_spiir_cpu_create(bank);
        v->line_cap = cap;
        v->line_re = calloc(cap, sizeof(float));
        if (complex_input) v->line_im = calloc(cap, sizeof(float));
        v->head = hist;
    }
    if (!v || (!v->ref && !v->fast) || !v->line_re || (complex_input && !v->line_im)) {
        tr_spiir_level_destroy(v);
        tr_fail(err, TR_ERR_NOMEM,
                "spiir: cannot allocate the filter states and a delay line of %zu "
                "samples",
                cap);
        return NULL;
    }
    return v;
}

void tr_spiir_level_reset(tr_spiir_level *v)
{
    if (v->ref) tr_spiir_ref_reset(v->ref);
    if (v->fast) tr_spiir_cpu_reset(v->fast);
    memset(v->line_re, 0, v->line_cap * sizeof(float));
    if (v->line_im) memset(v->line_im, 0, v->line_cap * sizeof(float));
    v->head = (size_t)v->bank->max_delay;
}

void tr_spiir_level_run(tr_spiir_level *v, const float *x, size_t n, float *snr,
                        uint64_t *nonfinite)
{
    const size_t hist = (size_t)v->bank->max_delay;
    const size_t per_sample = (size_t)v->bank->ntemplates * 2;
    size_t done = 0;
    while (done < n) {
        if (v->head == v->line_cap) {
            /* Keep the newest max_delay samples as the history. */
            memmove(v->line_re, v->line_re + v->head - hist, hist * sizeof(float));
            if (v->cplx)
                memmove(v->line_im, v->line_im + v->head - hist, hist * sizeof(float));
            v->head = hist;
        }
        const size_t m =
            n - done < v->line_cap - v->head ? n - done : v->line_cap - v->head;
        uint64_t bad = 0;
        if (v->cplx) {
            const float *xs = x + 2 * done;
            for (size_t i = 0; i < m; i++) {
                v->line_re[v->head + i] = tr_spiir_take(xs[2 * i], &bad);
                v->line_im[v->head + i] = tr_spiir_take(xs[2 * i + 1], &bad);
            }
        } else {
            for (size_t i = 0; i < m; i++)
                v->line_re[v->head + i] = tr_spiir_take(x[done + i], &bad);
        }
        *nonfinite += bad;
        float *out = snr + done * per_sample;
        if (v->ref)
            tr_spiir_ref_run(v->ref, v->line_re, v->line_im, v->head, m, out);
        else
            tr_spiir_cpu_run(v->fast, v->line_re, v->line_im, v->head, m, out);
        v->head += m;
        done += m;
    }
}
