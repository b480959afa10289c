/*
 * SIGPROC filterbank reader (<transient/filterbank.h>): header parsing and
 * validation, bit unpacking, chunked reads with 64-bit positions.
 *
 * Format: D. R. Lorimer, SIGPROC (sigproc.sourceforge.net), filterbank header
 * as written by its send_string/send_int/send_double; bit order of packed
 * samples as sigpyproc's default (first channel in the most significant bits).
 */
#define _POSIX_C_SOURCE   200809L
#define _FILE_OFFSET_BITS 64

#include "common/core_util.h"

#include <transient/filterbank.h>

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Longest keyword accepted (SIGPROC's are at most 13 characters). */
#define MAX_KEYWORD 64
/* Most channels accepted: keeps nchans * 4 bytes far from size_t overflow and a
 * spectrum buffer bounded whatever the file says. */
#define MAX_NCHANS ((uint32_t)1 << 24)
/* Packed bytes read per fread when converting to float. */
#define RAW_CHUNK ((size_t)1 << 20)

typedef enum { KW_STRING, KW_INT, KW_DOUBLE } kw_type;

typedef struct {
    const char *name;
    kw_type type;
    size_t offset; /* of the field in tr_filterbank_header */
} keyword;

#define KW(n, t)                                                                         \
    {                                                                                    \
#n, t, offsetof(tr_filterbank_header, n)                                         \
    }
static const keyword KEYWORDS[] = {
    KW(telescope_id, KW_INT),   KW(machine_id, KW_INT),     KW(data_type, KW_INT),
    KW(rawdatafile, KW_STRING), KW(source_name, KW_STRING), KW(barycentric, KW_INT),
    KW(pulsarcentric, KW_INT),  KW(az_start, KW_DOUBLE),    KW(za_start, KW_DOUBLE),
    KW(src_raj, KW_DOUBLE),     KW(src_dej, KW_DOUBLE),     KW(tstart, KW_DOUBLE),
    KW(tsamp, KW_DOUBLE),       KW(nbits, KW_INT),          KW(nsamples, KW_INT),
    KW(fch1, KW_DOUBLE),        KW(foff, KW_DOUBLE),        KW(nchans, KW_INT),
    KW(nifs, KW_INT),           KW(refdm, KW_DOUBLE),       KW(period, KW_DOUBLE),
    KW(nbeams, KW_INT),         KW(ibeam, KW_INT),
};
#undef KW

struct tr_filterbank {
    FILE *fp;
    char *path;
    tr_filterbank_header h;
    uint64_t position;  /* next spectrum */
    unsigned char *raw; /* conversion buffer, raw_cap bytes */
    size_t raw_cap;
    tr_error err;
};

/* ---- little-endian decoding ---- */

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static double le_double(const unsigned char *p)
{
    uint64_t u = (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

static float le_float(const unsigned char *p)
{
    uint32_t u = le32(p);
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- header ---- */

typedef struct {
    const unsigned char *buf;
    size_t len, pos;
    const char *name;
} cursor;

/* Next length-prefixed string into s (cap bytes, NUL added). */
static tr_status read_string(cursor *c, char *s, size_t cap, const char *what,
                             tr_error *err)
{
    if (c->len - c->pos < 4)
        return tr_fail(err, TR_ERR_IO,
                       "%s: header ends before HEADER_END (truncated at byte %zu)",
                       c->name, c->len);
    int32_t n = (int32_t)le32(c->buf + c->pos);
    if (n <= 0 || (size_t)n >= cap)
        return tr_fail(err, TR_ERR_IO,
                       "%s: bad string length %d for %s at byte %zu (not a SIGPROC "
                       "header?)",
                       c->name, (int)n, what, c->pos);
    if (c->len - c->pos - 4 < (size_t)n)
        return tr_fail(err, TR_ERR_IO,
                       "%s: header ends before HEADER_END (truncated at byte %zu)",
                       c->name, c->len);
    memcpy(s, c->buf + c->pos + 4, (size_t)n);
    s[n] = '\0';
    c->pos += 4 + (size_t)n;
    return TR_OK;
}

static tr_status read_value(cursor *c, const keyword *k, tr_filterbank_header *h,
                            tr_error *err)
{
    char *field = (char *)h + k->offset;
    if (k->type == KW_STRING)
        return read_string(c, field, TR_FILTERBANK_STRING_LEN, k->name, err);
    size_t bytes = k->type == KW_INT ? 4 : 8;
    if (c->len - c->pos < bytes)
        return tr_fail(err, TR_ERR_IO,
                       "%s: header ends before HEADER_END (truncated in the value of %s)",
                       c->name, k->name);
    if (k->type == KW_DOUBLE) {
        double v = le_double(c->buf + c->pos);
        memcpy(field, &v, sizeof v);
    } else {
        int32_t v = (int32_t)le32(c->buf + c->pos);
        /* nbits, nchans, nifs, nsamples are unsigned fields: negative values
         * are rejected here, before they can wrap. */
        if (!strcmp(k->name, "nbits") || !strcmp(k->name, "nchans") ||
            !strcmp(k->name, "nifs") || !strcmp(k->name, "nsamples")) {
            if (v < 0)
                return tr_fail(err, TR_ERR_INVALID, "%s: %s = %d is negative", c->name,
                               k->name, (int)v);
            if (!strcmp(k->name, "nsamples"))
                h->nsamples = (uint64_t)v;
            else
                memcpy(field, &(uint32_t){(uint32_t)v}, 4);
        } else {
            memcpy(field, &v, sizeof v);
        }
    }
    c->pos += bytes;
    return TR_OK;
}

static int finite_d(double v)
{
    return (v - v) == 0.0;
}

/* Checks of the values, in the order a reader needs them. */
static tr_status validate(const char *name, tr_filterbank_header *h, unsigned seen,
                          uint64_t file_bytes, tr_error *err)
{
    static const char *const required[] = {"nbits", "nchans", "tsamp", "fch1", "foff"};
    for (unsigned i = 0; i < 5; ++i)
        if (!(seen & (1u << i)))
            return tr_fail(err, TR_ERR_INVALID, "%s: required keyword %s missing", name,
                           required[i]);
    uint32_t nb = h->nbits;
    if (nb != 1 && nb != 2 && nb != 4 && nb != 8 && nb != 16 && nb != 32)
        return tr_fail(err, TR_ERR_INVALID,
                       "%s: nbits = %u: must be 1, 2, 4, 8, 16 or 32", name, nb);
    if (h->nchans < 1 || h->nchans > MAX_NCHANS)
        return tr_fail(err, TR_ERR_INVALID, "%s: nchans = %u: must be in 1..%u", name,
                       h->nchans, MAX_NCHANS);
    if (((uint64_t)h->nchans * nb) % 8 != 0)
        return tr_fail(err, TR_ERR_INVALID,
                       "%s: nchans = %u at nbits = %u does not fill whole bytes per "
                       "spectrum",
                       name, h->nchans, nb);
    if (h->nifs != 1)
        return tr_fail(err, TR_ERR_UNSUPPORTED,
                       "%s: nifs = %u: only one IF (total intensity) is supported", name,
                       h->nifs);
    if (!finite_d(h->tsamp) || h->tsamp <= 0)
        return tr_fail(err, TR_ERR_INVALID, "%s: tsamp = %g: must be > 0 and finite",
                       name, h->tsamp);
    if (!finite_d(h->foff) || h->foff == 0)
        return tr_fail(err, TR_ERR_INVALID, "%s: foff = %g: must be non-zero and finite",
                       name, h->foff);
    if (!finite_d(h->fch1))
        return tr_fail(err, TR_ERR_INVALID, "%s: fch1 = %g is not finite", name, h->fch1);
    h->spectrum_bytes = (uint64_t)h->nchans * nb / 8;
    uint64_t data = file_bytes - h->header_bytes;
    if (data == 0)
        return tr_fail(err, TR_ERR_INVALID, "%s: no spectra after the header", name);
    if (h->spectrum_bytes > data)
        return tr_fail(err, TR_ERR_INVALID,
                       "%s: nchans = %u: one spectrum (%llu bytes) is larger than the "
                       "data (%llu bytes)",
                       name, h->nchans, (unsigned long long)h->spectrum_bytes,
                       (unsigned long long)data);
    if (data % h->spectrum_bytes != 0)
        return tr_fail(err, TR_ERR_INVALID,
                       "%s: data size %llu bytes is not a whole number of %llu-byte "
                       "spectra (truncated file?)",
                       name, (unsigned long long)data,
                       (unsigned long long)h->spectrum_bytes);
    uint64_t n = data / h->spectrum_bytes;
    if (h->nsamples != 0 && h->nsamples != n)
        return tr_fail(err, TR_ERR_INVALID,
                       "%s: header says nsamples = %llu but the file holds %llu spectra",
                       name, (unsigned long long)h->nsamples, (unsigned long long)n);
    h->nsamples = n;
    return TR_OK;
}

tr_status tr_filterbank_parse_header(const void *buf, size_t len, uint64_t file_bytes,
                                     const char *name, tr_filterbank_header *h,
                                     tr_error *err)
{
    if (!name) name = "filterbank";
    if (!buf || !h)
        return tr_fail(err, TR_ERR_INVALID, "%s: NULL buffer or header", name);
    if (len > file_bytes)
        return tr_fail(err, TR_ERR_INVALID,
                       "%s: %zu header bytes given but the file has %llu", name, len,
                       (unsigned long long)file_bytes);
    memset(h, 0, sizeof *h);
    h->telescope_id = -1;
    h->machine_id = -1;
    h->nbeams = 1;
    h->nifs = 1;
    cursor c = {(const unsigned char *)buf, len, 0, name};
    char kw[MAX_KEYWORD];
    tr_status st = read_string(&c, kw, sizeof kw, "the first keyword", err);
    if (st != TR_OK) return st;
    if (strcmp(kw, "HEADER_START") != 0)
        return tr_fail(err, TR_ERR_IO, "%s: does not start with HEADER_START", name);
    /* Bits of the required keywords, in validate()'s order. */
    static const char *const required[] = {"nbits", "nchans", "tsamp", "fch1", "foff"};
    unsigned seen = 0;
    for (;;) {
        st = read_string(&c, kw, sizeof kw, "a keyword", err);
        if (st != TR_OK) return st;
        if (!strcmp(kw, "HEADER_END")) break;
        const keyword *k = NULL;
        for (size_t i = 0; i < sizeof KEYWORDS / sizeof KEYWORDS[0]; ++i)
            if (!strcmp(kw, KEYWORDS[i].name)) k = &KEYWORDS[i];
        if (!k)
            return tr_fail(err, TR_ERR_IO, "%s: unknown header keyword '%s' at byte %zu",
                           name, kw, c.pos);
        st = read_value(&c, k, h, err);
        if (st != TR_OK) return st;
        for (unsigned i = 0; i < 5; ++i)
            if (!strcmp(kw, required[i])) seen |= 1u << i;
    }
    h->header_bytes = c.pos;
    st = validate(name, h, seen, file_bytes, err);
    if (st == TR_OK) tr_clear(err);
    return st;
}

/* ---- samples ---- */

tr_status tr_filterbank_unpack(const void *raw, uint32_t nbits, size_t n, float *out)
{
    const unsigned char *b = (const unsigned char *)raw;
    if (n == 0) return TR_OK;
    if (!raw || !out) return TR_ERR_INVALID;
    switch (nbits) {
    case 1:
    case 2:
    case 4: {
        if ((n * nbits) % 8 != 0) return TR_ERR_INVALID;
        const unsigned per = 8 / nbits, mask = (1u << nbits) - 1;
        for (size_t i = 0; i < n; ++i) {
            unsigned shift = 8 - nbits * (unsigned)(i % per + 1);
            out[i] = (float)((b[i / per] >> shift) & mask);
        }
        return TR_OK;
    }
    case 8:
        for (size_t i = 0; i < n; ++i)
            out[i] = (float)b[i];
        return TR_OK;
    case 16:
        for (size_t i = 0; i < n; ++i)
            out[i] = (float)((unsigned)b[2 * i] | (unsigned)b[2 * i + 1] << 8);
        return TR_OK;
    case 32:
        for (size_t i = 0; i < n; ++i)
            out[i] = le_float(b + 4 * i);
        return TR_OK;
    default:
        return TR_ERR_INVALID;
    }
}

double tr_filterbank_fmax(const tr_filterbank_header *h)
{
    return h->foff > 0 ? h->fch1 + (double)(h->nchans - 1) * h->foff : h->fch1;
}

/* ---- the file ---- */

void tr_filterbank_close(tr_filterbank *f)
{
    if (!f) return;
    if (f->fp) fclose(f->fp);
    free(f->path);
    free(f->raw);
    free(f);
}

tr_filterbank *tr_filterbank_open(const char *path, tr_error *err)
{
    if (!path) {
        tr_fail(err, TR_ERR_INVALID, "filterbank: NULL path");
        return NULL;
    }
    tr_filterbank *f = (tr_filterbank *)calloc(1, sizeof *f);
    if (!f) {
        tr_fail(err, TR_ERR_NOMEM, "%s: out of memory", path);
        return NULL;
    }
    unsigned char *head = NULL;
    f->path = (char *)malloc(strlen(path) + 1);
    if (!f->path) {
        tr_fail(err, TR_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    strcpy(f->path, path);
    f->fp = fopen(path, "rb");
    struct stat sb;
    if (!f->fp || fstat(fileno(f->fp), &sb) != 0) {
        tr_fail(err, TR_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(sb.st_mode)) {
        tr_fail(err, TR_ERR_IO, "%s: not a regular file", path);
        goto fail;
    }
    uint64_t size = (uint64_t)sb.st_size;
    size_t want =
        size < TR_FILTERBANK_MAX_HEADER ? (size_t)size : TR_FILTERBANK_MAX_HEADER;
    head = (unsigned char *)malloc(want ? want : 1);
    if (!head) {
        tr_fail(err, TR_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    if (fread(head, 1, want, f->fp) != want) {
        tr_fail(err, TR_ERR_IO, "%s: read error in the header", path);
        goto fail;
    }
    if (tr_filterbank_parse_header(head, want, size, path, &f->h, err) != TR_OK)
        goto fail;
    free(head);
    head = NULL;
    f->raw_cap =
        f->h.spectrum_bytes > RAW_CHUNK ? (size_t)f->h.spectrum_bytes : RAW_CHUNK;
    f->raw = (unsigned char *)malloc(f->raw_cap);
    if (!f->raw) {
        tr_fail(err, TR_ERR_NOMEM, "%s: out of memory", path);
        goto fail;
    }
    if (tr_filterbank_seek(f, 0) != TR_OK) {
        *err = f->err;
        goto fail;
    }
    tr_clear(err);
    return f;
fail:
    free(head);
    tr_filterbank_close(f);
    return NULL;
}

const tr_filterbank_header *tr_filterbank_get_header(const tr_filterbank *f)
{
    return f ? &f->h : NULL;
}

tr_status tr_filterbank_seek(tr_filterbank *f, uint64_t spectrum)
{
    if (!f) return TR_ERR_INVALID;
    if (spectrum > f->h.nsamples)
        return tr_fail(&f->err, TR_ERR_INVALID,
                       "%s: seek to spectrum %llu past the end (%llu)", f->path,
                       (unsigned long long)spectrum, (unsigned long long)f->h.nsamples);
    uint64_t off = f->h.header_bytes + spectrum * f->h.spectrum_bytes;
    if (fseeko(f->fp, (off_t)off, SEEK_SET) != 0)
        return tr_fail(&f->err, TR_ERR_IO, "%s: seek failed: %s", f->path,
                       strerror(errno));
    f->position = spectrum;
    return TR_OK;
}

uint64_t tr_filterbank_position(const tr_filterbank *f)
{
    return f ? f->position : 0;
}

/* Read n whole spectra of packed bytes into dst. */
static tr_status read_packed(tr_filterbank *f, void *dst, size_t n)
{
    size_t bytes = n * (size_t)f->h.spectrum_bytes;
    if (fread(dst, 1, bytes, f->fp) != bytes)
        return tr_fail(&f->err, TR_ERR_IO,
                       "%s: read failed at spectrum %llu (file shrunk?)", f->path,
                       (unsigned long long)f->position);
    f->position += n;
    return TR_OK;
}

static size_t clamp_count(const tr_filterbank *f, size_t nmax)
{
    uint64_t left = f->h.nsamples - f->position;
    return left < nmax ? (size_t)left : nmax;
}

tr_status tr_filterbank_read_raw(tr_filterbank *f, void *raw, size_t nmax, size_t *nread)
{
    if (nread) *nread = 0;
    if (!f || (!raw && nmax)) return TR_ERR_INVALID;
    size_t n = clamp_count(f, nmax);
    if (n > SIZE_MAX / f->h.spectrum_bytes)
        return tr_fail(&f->err, TR_ERR_INVALID, "%s: read of %zu spectra too large",
                       f->path, n);
    tr_status st = read_packed(f, raw, n);
    if (st == TR_OK && nread) *nread = n;
    return st;
}

tr_status tr_filterbank_read(tr_filterbank *f, float *x, size_t nmax, size_t *nread)
{
    if (nread) *nread = 0;
    if (!f || (!x && nmax)) return TR_ERR_INVALID;
    size_t n = clamp_count(f, nmax), done = 0;
    size_t per = f->raw_cap / (size_t)f->h.spectrum_bytes;
    while (done < n) {
        size_t m = n - done < per ? n - done : per;
        tr_status st = read_packed(f, f->raw, m);
        if (st != TR_OK) return st;
        tr_filterbank_unpack(f->raw, f->h.nbits, m * f->h.nchans, x + done * f->h.nchans);
        done += m;
        if (nread) *nread = done;
    }
    return TR_OK;
}

const char *tr_filterbank_last_error(const tr_filterbank *f)
{
    return f ? f->err.message : "filterbank: NULL reader";
}
