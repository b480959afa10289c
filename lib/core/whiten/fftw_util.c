/*
 * FFTW plumbing of the PSD functions and the whitening filter.
 *
 * FFTW's planner is not thread-safe: GNU Radio blocks create their objects
 * from several threads, and GNU Radio's own FFT blocks plan too. Making the
 * planners thread-safe once per process (FFTW >= 3.3.5) protects every
 * planner call, ours and theirs.
 */
#include "common/core_util.h"
#include "whiten/whiten_internal.h"

#include <pthread.h>

static pthread_once_t ready_once = PTHREAD_ONCE_INIT;

static void make_safe(void)
{
    fftw_make_planner_thread_safe();
    fftwf_make_planner_thread_safe();
}

void tr_fftw_ready(void)
{
    pthread_once(&ready_once, make_safe);
}

tr_status tr_dft_make(tr_dft *d, size_t n, int inverse, const char *who, tr_error *err)
{
    tr_fftw_ready();
    d->real = (double *)fftw_malloc(n * sizeof *d->real);
    d->cplx = (fftw_complex *)fftw_malloc((n / 2 + 1) * sizeof *d->cplx);
    d->plan = NULL;
    if (d->real && d->cplx)
        d->plan = inverse ? fftw_plan_dft_c2r_1d((int)n, d->cplx, d->real, FFTW_ESTIMATE)
                          : fftw_plan_dft_r2c_1d((int)n, d->real, d->cplx, FFTW_ESTIMATE);
    if (d->plan) return TR_OK;
    tr_dft_free(d);
    return tr_fail(err, TR_ERR_NOMEM, "%s: cannot allocate a transform of %zu points",
                   who, n);
}

void tr_dft_free(tr_dft *d)
{
    if (d->plan) fftw_destroy_plan(d->plan);
    fftw_free(d->real);
    fftw_free(d->cplx);
    d->real = NULL;
    d->cplx = NULL;
    d->plan = NULL;
}
