/*
 * Read-ahead of a filterbank's packed spectra (frb_reader.h): two buffers,
 * one filled by the reading thread while the caller holds the other.
 */
#define _POSIX_C_SOURCE 200809L /* pthreads */
#include "frb_reader.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { NSLOT = 2 };

typedef struct {
    uint8_t *raw;
    size_t got;    /* spectra in raw */
    tr_status st;  /* status of the read that filled it */
    int full;      /* filled, not yet handed out and released */
    char msg[256]; /* the reader's message when st != TR_OK */
} slot;

struct frb_reader {
    tr_filterbank *fb;
    const tr_frb *frb; /* the buffers' allocator */
    size_t block;
    uint64_t left; /* spectra still to read */
    slot s[NSLOT];
    int next; /* slot the caller takes next */
    int held; /* slot the caller holds, or -1 */
    int stop; /* the caller wants the thread to end */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_t thread;
};

static void *reader_main(void *arg)
{
    frb_reader *r = (frb_reader *)arg;
    for (int i = 0;; i = (i + 1) % NSLOT) {
        slot *s = &r->s[i];
        pthread_mutex_lock(&r->mu);
        while (s->full && !r->stop)
            pthread_cond_wait(&r->cv, &r->mu);
        const int stop = r->stop;
        pthread_mutex_unlock(&r->mu);
        if (stop) return NULL;
        const size_t want = r->left < r->block ? (size_t)r->left : r->block;
        size_t got = 0;
        const tr_status st =
            want ? tr_filterbank_read_raw(r->fb, s->raw, want, &got) : TR_OK;
        if (st != TR_OK) {
            strncpy(s->msg, tr_filterbank_last_error(r->fb), sizeof s->msg - 1);
            s->msg[sizeof s->msg - 1] = '\0';
        }
        r->left -= got;
        pthread_mutex_lock(&r->mu);
        s->got = got;
        s->st = st;
        s->full = 1;
        pthread_cond_broadcast(&r->cv);
        pthread_mutex_unlock(&r->mu);
        /* the end of the data (an empty block) or an error is the last slot */
        if (got == 0 || st != TR_OK) return NULL;
    }
}

static void free_slots(frb_reader *r)
{
    for (int i = 0; i < NSLOT; i++)
        tr_frb_host_free(r->frb, r->s[i].raw);
}

frb_reader *frb_reader_start(tr_filterbank *fb, const tr_frb *q, size_t block,
                             size_t spectrum_bytes, uint64_t total)
{
    if (!fb || block == 0 || spectrum_bytes == 0 || block > SIZE_MAX / spectrum_bytes)
        return NULL;
    frb_reader *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->fb = fb;
    r->frb = q;
    r->block = block;
    r->left = total;
    r->held = -1;
    for (int i = 0; i < NSLOT; i++)
        if (!(r->s[i].raw = tr_frb_host_alloc(q, block * spectrum_bytes))) {
            free_slots(r);
            free(r);
            return NULL;
        }
    pthread_mutex_init(&r->mu, NULL);
    pthread_cond_init(&r->cv, NULL);
    if (pthread_create(&r->thread, NULL, reader_main, r) != 0) {
        pthread_cond_destroy(&r->cv);
        pthread_mutex_destroy(&r->mu);
        free_slots(r);
        free(r);
        return NULL;
    }
    return r;
}

tr_status frb_reader_next(frb_reader *r, const uint8_t **raw, size_t *got,
                          const char **msg)
{
    pthread_mutex_lock(&r->mu);
    if (r->held >= 0) {
        r->s[r->held].full = 0; /* released: the thread may fill it again */
        r->held = -1;
        pthread_cond_broadcast(&r->cv);
    }
    slot *s = &r->s[r->next];
    while (!s->full)
        pthread_cond_wait(&r->cv, &r->mu);
    r->held = r->next;
    r->next = (r->next + 1) % NSLOT;
    pthread_mutex_unlock(&r->mu);
    *raw = s->raw;
    *got = s->got;
    *msg = s->msg;
    return s->st;
}

void frb_reader_stop(frb_reader *r)
{
    if (!r) return;
    pthread_mutex_lock(&r->mu);
    r->stop = 1;
    pthread_cond_broadcast(&r->cv);
    pthread_mutex_unlock(&r->mu);
    pthread_join(r->thread, NULL);
    pthread_cond_destroy(&r->cv);
    pthread_mutex_destroy(&r->mu);
    free_slots(r);
    free(r);
}
