/*
 * Read-ahead of a filterbank's packed spectra for transient-frb: a thread
 * reads the next block while the search works on the current one, so that
 * the disk (or page cache) and the search overlap.
 */
#ifndef TRANSIENT_APPS_FRB_READER_H
#define TRANSIENT_APPS_FRB_READER_H

#include <transient/filterbank.h>
#include <transient/frb.h>

#include <stddef.h>
#include <stdint.h>

typedef struct frb_reader frb_reader;

/* Reads `total` spectra of fb from its current position, in blocks of
 * `block`, into buffers of tr_frb_host_alloc (page-locked for q's GPU). NULL
 * when out of memory or no thread can start. */
frb_reader *frb_reader_start(tr_filterbank *fb, const tr_frb *q, size_t block,
                             size_t spectrum_bytes, uint64_t total);

/* The next block: *raw (valid until the next call) holds *got spectra, 0 at
 * the end of the data. Returns TR_OK, or the reader's status with *msg its
 * message. */
tr_status frb_reader_next(frb_reader *r, const uint8_t **raw, size_t *got,
                          const char **msg);

/* Stops the thread (also before the end) and frees everything. */
void frb_reader_stop(frb_reader *r);

#endif /* TRANSIENT_APPS_FRB_READER_H */
