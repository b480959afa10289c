/*
 * SIGPROC filterbank (.fil) reader: header parsing with validation and
 * streaming of spectra as float32.
 *
 * Format: D. R. Lorimer, "SIGPROC: pulsar signal processing programs"
 * (sigproc.sourceforge.net), the header as its filterbank program writes it.
 *
 * Header
 *   The file starts with the string HEADER_START and ends its header with
 *   HEADER_END; every string (keywords and string values) is written as a
 *   little-endian int32 length followed by that many bytes. After a keyword
 *   comes its value: a string (source_name, rawdatafile), an int32
 *   (telescope_id, machine_id, data_type, barycentric, pulsarcentric, nbits,
 *   nsamples, nchans, nifs, nbeams, ibeam) or a float64 (az_start, za_start,
 *   src_raj, src_dej, tstart, tsamp, fch1, foff, refdm, period), all
 *   little-endian. An unknown keyword is an error that names it (its value's
 *   size cannot be known, so the rest of the header cannot be read).
 *
 * Validation (before anything is allocated from a header value)
 *   nbits in {1, 2, 4, 8, 16, 32}; nchans >= 1 and nchans * nbits a multiple of
 *   8 (spectra start on byte boundaries) and one spectrum no larger than the
 *   data of the file; tsamp > 0 and finite; foff != 0 and finite; fch1 finite;
 *   nifs = 1 (absent means 1: files with several IFs/polarisations are
 *   rejected with a message, not read as channels); the data size a whole
 *   number of spectra; nsamples, when present and non-zero, equal to the
 *   number of spectra in the file. Each failure has its own message naming
 *   the file (or "filterbank" for a buffer), the keyword and the value.
 *
 * Data
 *   Spectra follow the header, one after the other, channels in file order
 *   (channel c at frequency fch1 + c * foff, either sign of foff). Sample
 *   values: nbits 1, 2, 4 packed into bytes with the first channel in the
 *   most significant bits (sigpyproc's default bit order "big"); nbits 8
 *   unsigned bytes; nbits 16 little-endian unsigned int16; nbits 32
 *   little-endian float32. tr_filterbank_read converts them to float32
 *   time-major x[k * nchans + c]; tr_filterbank_read_raw returns the packed
 *   bytes (for unpacking on a GPU after a smaller PCIe copy, see
 *   tr_dedisp_process_raw). Files are read in the caller's chunks with 64-bit
 *   positions, so a file larger than memory streams.
 */
#ifndef TRANSIENT_FILTERBANK_H
#define TRANSIENT_FILTERBANK_H

#include <transient/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Longest string value kept (longer ones are an error), NUL included. */
#define TR_FILTERBANK_STRING_LEN 256
/* Longest header accepted, in bytes (a real header is a few hundred). */
#define TR_FILTERBANK_MAX_HEADER (1u << 20)

/* The header of a filterbank file; absent keywords keep the values noted. */
typedef struct {
    char source_name[TR_FILTERBANK_STRING_LEN]; /* "" when absent */
    char rawdatafile[TR_FILTERBANK_STRING_LEN]; /* "" when absent */
    int32_t telescope_id;                       /* -1 when absent */
    int32_t machine_id;                         /* -1 when absent */
    int32_t data_type;                          /* 1 = filterbank; 0 when absent */
    int32_t barycentric;                        /* 0 when absent */
    int32_t pulsarcentric;                      /* 0 when absent */
    int32_t nbeams;                             /* 1 when absent */
    int32_t ibeam;                              /* 0 when absent */
    double az_start;                            /* degrees, 0 when absent */
    double za_start;                            /* degrees, 0 when absent */
    double src_raj;                             /* hhmmss.s, 0 when absent */
    double src_dej;                             /* ddmmss.s, 0 when absent */
    double tstart;           /* MJD of the first sample, 0 when absent */
    double tsamp;            /* sampling time in s (required) */
    double fch1;             /* MHz, centre of channel 0 (required) */
    double foff;             /* MHz, channel c at fch1 + c * foff
                                (required, either sign) */
    double refdm;            /* pc cm^-3, 0 when absent */
    double period;           /* s, 0 when absent */
    uint32_t nbits;          /* bits per sample (required) */
    uint32_t nchans;         /* channels per spectrum (required) */
    uint32_t nifs;           /* IFs, always 1 after validation */
    uint64_t nsamples;       /* spectra in the file (from its size) */
    uint64_t header_bytes;   /* bytes before the first spectrum */
    uint64_t spectrum_bytes; /* bytes of one packed spectrum */
} tr_filterbank_header;

/*
 * Parse and validate a header from the first `len` bytes of a file whose
 * total size is file_bytes (the data size checks use it). TR_ERR_IO with a
 * message in err when the bytes are not a valid header (truncated: "ends
 * before HEADER_END"), TR_ERR_INVALID when a value is out of range,
 * TR_ERR_UNSUPPORTED for nifs > 1. `name` (NULL: "filterbank") starts the
 * messages.
 */
tr_status tr_filterbank_parse_header(const void *buf, size_t len, uint64_t file_bytes,
                                     const char *name, tr_filterbank_header *h,
                                     tr_error *err);

/*
 * Convert n packed samples of `nbits` (1, 2, 4, 8, 16, 32; packed as in the
 * file, first sample in the most significant bits of a byte for nbits < 8)
 * to float32. n * nbits must be a multiple of 8.
 */
tr_status tr_filterbank_unpack(const void *raw, uint32_t nbits, size_t n, float *out);

/* Highest channel centre frequency in MHz: fch1, or fch1 + (nchans-1)*foff when foff > 0.
 */
double tr_filterbank_fmax(const tr_filterbank_header *h);

typedef struct tr_filterbank tr_filterbank;

/* Open and validate a file; NULL with err filled (message names the file). */
tr_filterbank *tr_filterbank_open(const char *path, tr_error *err);
void tr_filterbank_close(tr_filterbank *f);

const tr_filterbank_header *tr_filterbank_get_header(const tr_filterbank *f);

/*
 * Read up to nmax spectra from the current position as float32
 * x[k * nchans + c]; *nread (may be NULL) gets the number read (0 at the end
 * of the file; fewer than nmax only at the end). TR_ERR_IO when the file
 * cannot be read (shrunk since open, I/O error).
 */
tr_status tr_filterbank_read(tr_filterbank *f, float *x, size_t nmax, size_t *nread);

/* The same without conversion: nread * spectrum_bytes packed bytes. */
tr_status tr_filterbank_read_raw(tr_filterbank *f, void *raw, size_t nmax, size_t *nread);

/* Go to spectrum `spectrum` (<= nsamples). */
tr_status tr_filterbank_seek(tr_filterbank *f, uint64_t spectrum);

/* Index of the next spectrum to be read. */
uint64_t tr_filterbank_position(const tr_filterbank *f);

const char *tr_filterbank_last_error(const tr_filterbank *f);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_FILTERBANK_H */
