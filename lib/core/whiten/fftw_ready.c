/*
 * FFTW's planner is not thread-safe: GNU Radio blocks create their objects
 * from several threads, and GNU Radio's own FFT blocks plan too. Making the
 * planners thread-safe once per process (FFTW >= 3.3.5) protects every
 * planner call, ours and theirs.
 */
#include "whiten/whiten_internal.h"

#include <fftw3.h>
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
