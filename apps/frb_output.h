/*
 * Writers of transient-frb: the candidates of an FRB search as CSV, JSON or
 * Heimdall's .cand lines.
 */
#ifndef TRANSIENT_APPS_FRB_OUTPUT_H
#define TRANSIENT_APPS_FRB_OUTPUT_H

#include <transient/filterbank.h>
#include <transient/frb.h>

#include <stdio.h>

/* What the run did, for the JSON summary. */
typedef struct {
    const char *path; /* the filterbank */
    const tr_filterbank_header *hdr;
    const tr_frb *frb;      /* the search (plan, counters) */
    const char *backend;    /* backend name */
    const char *devices;    /* the CUDA devices used, a JSON array ([] on the CPU) */
    double seconds;         /* wall time from open to the last candidate */
    double setup_seconds;   /* of which: open, plan and create (device set-up) */
    double read_wait;       /* of which: waiting for the file (read-ahead) */
    double process;         /* of which: in tr_frb_process_raw */
    double flush;           /* of which: in tr_frb_flush (the end of the data) */
    uint64_t start;         /* first spectrum searched */
    uint64_t spectra;       /* spectra searched */
    const char *parameters; /* the options as a JSON object */
} frb_run_info;

typedef enum { FRB_OUT_CSV = 0, FRB_OUT_JSON = 1, FRB_OUT_CAND = 2 } frb_out_format;

/* Format from a file name's suffix (.csv, .json, .cand); -1 when none fits. */
int frb_out_format_of(const char *path);

/*
 * Write n candidates to f. CSV: the header line dm,time,sample,width,snr,
 * members,dm_index,start,dm_index_lo,dm_index_hi,first,end then one line per
 * candidate. JSON: an object with "file", "header", "plan", "processed" and
 * "candidates". .cand (Heimdall): snr sample time filter dm_index dm members
 * first end, with filter = round(log2(width)).
 * Returns 0, or -1 when writing failed.
 */
int frb_write(FILE *f, frb_out_format fmt, const tr_frb_candidate *c, size_t n,
              const frb_run_info *info);

#endif /* TRANSIENT_APPS_FRB_OUTPUT_H */
