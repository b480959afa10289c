/*
 * SPIIR filter bank: construction with validation, deep copy, accessors and
 * the little-endian bank file format (<transient/spiir.h>, docs/spiir.md).
 *
 * Every bank that exists has passed validate_filter(), so the variants may rely
 * on |a1| < 1, finite coefficients and 0 <= delay <= TR_SPIIR_MAX_DELAY.
 */
#include "common/core_util.h"
#include "common/file_open.h"
#include "spiir/spiir_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Upper bound on filters (templates: TR_SPIIR_TR_SPIIR_MAX_TEMPLATES). */
#define MAX_FILTERS ((uint64_t)1 << 32)

#define HEADER_BYTES 24u /* magic, ntemplates, reserved, dt */
#define FILTER_BYTES 40u /* 4 doubles, 2 int32 */
static const char MAGIC[8] = {'T', 'R', 'S', 'P', 'I', 'I', 'R', '1'};

static int finite_d(double v)
{
    return (v - v) == 0.0;
}

static tr_status validate_filter(const tr_spiir_filter *f, uint32_t t, uint32_t i,
                                 tr_error *err)
{
    if (!finite_d(f->a1_re) || !finite_d(f->a1_im) || !finite_d(f->b0_re) ||
        !finite_d(f->b0_im))
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir: template %u filter %u: non-finite coefficient "
                       "(a1 = %g%+gi, b0 = %g%+gi)",
                       t, i, f->a1_re, f->a1_im, f->b0_re, f->b0_im);
    /* hypot() in double: no overflow, and a pole a hair inside the unit circle
     * is not rounded onto it. */
    const double mag = hypot(f->a1_re, f->a1_im);
    if (!(mag < 1.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir: template %u filter %u: unstable pole, |a1| = %.17g >= 1",
                       t, i, mag);
    if (f->delay < 0 || f->delay > TR_SPIIR_MAX_DELAY)
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir: template %u filter %u: delay %d outside [0, %d]", t, i,
                       (int)f->delay, TR_SPIIR_MAX_DELAY);
    if (f->level < 0 || f->level > TR_SPIIR_MAX_LEVEL)
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir: template %u filter %u: level %d outside [0, %d]", t, i,
                       (int)f->level, TR_SPIIR_MAX_LEVEL);
    return TR_OK;
}

/* Checks that need only the counts; fills *total. */
static tr_status validate_shape(const uint32_t *counts, uint32_t ntemplates, double dt,
                                uint64_t *total, tr_error *err)
{
    if (ntemplates == 0)
        return tr_fail(err, TR_ERR_INVALID, "spiir: a bank needs at least one template");
    if (ntemplates > TR_SPIIR_MAX_TEMPLATES)
        return tr_fail(err, TR_ERR_INVALID, "spiir: %u templates, at most %u supported",
                       ntemplates, TR_SPIIR_MAX_TEMPLATES);
    if (!finite_d(dt) || !(dt > 0.0))
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir: sampling interval dt must be finite and > 0, got %g", dt);
    uint64_t sum = 0;
    for (uint32_t t = 0; t < ntemplates; t++) {
        if (counts[t] == 0)
            return tr_fail(err, TR_ERR_INVALID, "spiir: template %u is empty (0 filters)",
                           t);
        sum += counts[t];
    }
    if (sum > MAX_FILTERS)
        return tr_fail(err, TR_ERR_INVALID,
                       "spiir: %llu filters in all, at most %llu supported",
                       (unsigned long long)sum, (unsigned long long)MAX_FILTERS);
    *total = sum;
    return TR_OK;
}

/* Allocate a bank of the given shape (filters left for the caller to fill). */
static tr_spiir_bank *alloc_bank(const uint32_t *counts, uint32_t ntemplates, double dt,
                                 uint64_t total)
{
    if (total > SIZE_MAX / sizeof(tr_spiir_filter)) return NULL;
    tr_spiir_bank *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    b->first = malloc(((size_t)ntemplates + 1) * sizeof *b->first);
    b->filters = malloc((size_t)total * sizeof *b->filters);
    if (!b->first || !b->filters) {
        tr_spiir_bank_destroy(b);
        return NULL;
    }
    b->ntemplates = ntemplates;
    b->dt = dt;
    b->total = total;
    b->first[0] = 0;
    for (uint32_t t = 0; t < ntemplates; t++)
        b->first[t + 1] = b->first[t] + counts[t];
    return b;
}

/* Validate the filters already in b and set max_delay. */
static tr_status finish_bank(tr_spiir_bank *b, tr_error *err)
{
    int32_t maxd = 0;
    for (uint32_t t = 0; t < b->ntemplates; t++) {
        for (uint64_t k = b->first[t]; k < b->first[t + 1]; k++) {
            tr_status s =
                validate_filter(&b->filters[k], t, (uint32_t)(k - b->first[t]), err);
            if (s != TR_OK) return s;
            if (b->filters[k].delay > maxd) maxd = b->filters[k].delay;
        }
    }
    b->max_delay = maxd;
    tr_clear(err);
    return TR_OK;
}

tr_spiir_bank *tr_spiir_bank_create(const tr_spiir_filter *filters,
                                    const uint32_t *counts, uint32_t ntemplates,
                                    double dt, tr_error *err)
{
    if (!filters || !counts) {
        tr_fail(err, TR_ERR_INVALID, "spiir: NULL %s", !filters ? "filters" : "counts");
        return NULL;
    }
    uint64_t total = 0;
    if (validate_shape(counts, ntemplates, dt, &total, err) != TR_OK) return NULL;
    tr_spiir_bank *b = alloc_bank(counts, ntemplates, dt, total);
    if (!b) {
        tr_fail(err, TR_ERR_NOMEM, "spiir: cannot allocate a bank of %llu filters",
                (unsigned long long)total);
        return NULL;
    }
    memcpy(b->filters, filters, (size_t)total * sizeof *filters);
    if (finish_bank(b, err) != TR_OK) {
        tr_spiir_bank_destroy(b);
        return NULL;
    }
    return b;
}

void tr_spiir_bank_destroy(tr_spiir_bank *bank)
{
    if (!bank) return;
    free(bank->first);
    free(bank->filters);
    free(bank);
}

tr_spiir_bank *tr_spiir_bank_copy(const tr_spiir_bank *bank)
{
    if (!bank) return NULL;
    tr_spiir_bank *b = calloc(1, sizeof *b);
    if (!b) return NULL;
    *b = *bank;
    b->first = malloc(((size_t)bank->ntemplates + 1) * sizeof *b->first);
    b->filters = malloc((size_t)bank->total * sizeof *b->filters);
    if (!b->first || !b->filters) {
        free(b->first);
        free(b->filters);
        free(b);
        return NULL;
    }
    memcpy(b->first, bank->first, ((size_t)bank->ntemplates + 1) * sizeof *b->first);
    memcpy(b->filters, bank->filters, (size_t)bank->total * sizeof *b->filters);
    return b;
}

uint32_t tr_spiir_bank_templates(const tr_spiir_bank *bank)
{
    return bank ? bank->ntemplates : 0;
}

uint32_t tr_spiir_bank_filters(const tr_spiir_bank *bank, uint32_t t)
{
    if (!bank || t >= bank->ntemplates) return 0;
    return (uint32_t)(bank->first[t + 1] - bank->first[t]);
}

uint64_t tr_spiir_bank_total_filters(const tr_spiir_bank *bank)
{
    return bank ? bank->total : 0;
}

double tr_spiir_bank_dt(const tr_spiir_bank *bank)
{
    return bank ? bank->dt : 0.0;
}

int32_t tr_spiir_bank_max_delay(const tr_spiir_bank *bank)
{
    return bank ? bank->max_delay : 0;
}

const tr_spiir_filter *tr_spiir_bank_filter(const tr_spiir_bank *bank, uint32_t t,
                                            uint32_t i)
{
    if (!bank || t >= bank->ntemplates) return NULL;
    if ((uint64_t)i >= bank->first[t + 1] - bank->first[t]) return NULL;
    return &bank->filters[bank->first[t] + i];
}

/* ---- file format: explicit little-endian bytes, independent of the host -- */

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

static void put_u64(unsigned char *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* IEEE 754 binary64 through its bit pattern. */
static void put_f64(unsigned char *p, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    put_u64(p, u);
}

static uint32_t get_u32(const unsigned char *p)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[i] << (8 * i);
    return v;
}

static uint64_t get_u64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

static double get_f64(const unsigned char *p)
{
    const uint64_t u = get_u64(p);
    double v;
    memcpy(&v, &u, sizeof v);
    return v;
}

static void encode_filter(unsigned char *p, const tr_spiir_filter *f)
{
    put_f64(p, f->a1_re);
    put_f64(p + 8, f->a1_im);
    put_f64(p + 16, f->b0_re);
    put_f64(p + 24, f->b0_im);
    put_u32(p + 32, (uint32_t)f->delay);
    put_u32(p + 36, (uint32_t)f->level);
}

static void decode_filter(const unsigned char *p, tr_spiir_filter *f)
{
    f->a1_re = get_f64(p);
    f->a1_im = get_f64(p + 8);
    f->b0_re = get_f64(p + 16);
    f->b0_im = get_f64(p + 24);
    /* Two's complement, as written; out-of-range values are rejected later. */
    const uint32_t d = get_u32(p + 32), l = get_u32(p + 36);
    f->delay = d <= INT32_MAX ? (int32_t)d : -(int32_t)(~d) - 1;
    f->level = l <= INT32_MAX ? (int32_t)l : -(int32_t)(~l) - 1;
}

/* Read exactly len bytes; 0 on a short read. */
static int read_all(FILE *fp, unsigned char *buf, size_t len)
{
    return fread(buf, 1, len, fp) == len;
}

tr_spiir_bank *tr_spiir_bank_load(const char *path, tr_error *err)
{
    if (!path) {
        tr_fail(err, TR_ERR_INVALID, "spiir: NULL path");
        return NULL;
    }
    /* The file size bounds every count before anything is allocated. */
    uint64_t size = 0;
    FILE *fp = tr_open_regular("spiir", path, &size, err);
    if (!fp) return NULL;
    tr_spiir_bank *b = NULL;
    uint32_t *counts = NULL;
    unsigned char hdr[HEADER_BYTES], rec[FILTER_BYTES];

    if ((uint64_t)size < HEADER_BYTES || !read_all(fp, hdr, HEADER_BYTES)) {
        tr_fail(err, TR_ERR_IO, "spiir: %s: truncated header (%llu bytes)", path,
                (unsigned long long)size);
        goto done;
    }
    if (memcmp(hdr, MAGIC, sizeof MAGIC) != 0) {
        tr_fail(err, TR_ERR_IO, "spiir: %s: not a bank file (bad magic)", path);
        goto done;
    }
    const uint32_t ntemplates = get_u32(hdr + 8);
    const uint32_t reserved = get_u32(hdr + 12);
    const double dt = get_f64(hdr + 16);
    const uint64_t avail = (uint64_t)size - HEADER_BYTES;
    if (reserved != 0) {
        tr_fail(err, TR_ERR_IO, "spiir: %s: reserved header field is %u, not 0", path,
                reserved);
        goto done;
    }
    if (ntemplates == 0 || (uint64_t)ntemplates * 4u > avail) {
        tr_fail(err, TR_ERR_IO,
                "spiir: %s: %u templates do not fit in a file of %llu bytes", path,
                ntemplates, (unsigned long long)size);
        goto done;
    }
    counts = malloc((size_t)ntemplates * sizeof *counts);
    if (!counts) {
        tr_fail(err, TR_ERR_NOMEM, "spiir: cannot allocate %u filter counts", ntemplates);
        goto done;
    }
    uint64_t total = 0;
    for (uint32_t t = 0; t < ntemplates; t++) {
        unsigned char c[4];
        if (!read_all(fp, c, 4)) {
            tr_fail(err, TR_ERR_IO, "spiir: %s: truncated filter counts", path);
            goto done;
        }
        counts[t] = get_u32(c);
        total += counts[t];
    }
    const uint64_t body = avail - (uint64_t)ntemplates * 4u;
    /* Division first: absurd counts must not overflow the product. */
    if (total > body / FILTER_BYTES || total * FILTER_BYTES != body) {
        tr_fail(err, TR_ERR_IO,
                "spiir: %s: %llu filters announced, %llu bytes of filter data (%s)", path,
                (unsigned long long)total, (unsigned long long)body,
                total > body / FILTER_BYTES ? "truncated" : "trailing data");
        goto done;
    }
    if (validate_shape(counts, ntemplates, dt, &total, err) != TR_OK) goto done;
    b = alloc_bank(counts, ntemplates, dt, total);
    if (!b) {
        tr_fail(err, TR_ERR_NOMEM, "spiir: cannot allocate a bank of %llu filters",
                (unsigned long long)total);
        goto done;
    }
    for (uint64_t k = 0; k < total; k++) {
        if (!read_all(fp, rec, FILTER_BYTES)) {
            tr_fail(err, TR_ERR_IO, "spiir: %s: truncated at filter %llu", path,
                    (unsigned long long)k);
            tr_spiir_bank_destroy(b);
            b = NULL;
            goto done;
        }
        decode_filter(rec, &b->filters[k]);
    }
    if (finish_bank(b, err) != TR_OK) {
        tr_spiir_bank_destroy(b);
        b = NULL;
    }
done:
    free(counts);
    fclose(fp);
    return b;
}

tr_status tr_spiir_bank_save(const tr_spiir_bank *bank, const char *path, tr_error *err)
{
    if (!bank || !path)
        return tr_fail(err, TR_ERR_INVALID, "spiir: NULL %s", !bank ? "bank" : "path");
    FILE *fp = fopen(path, "wb");
    if (!fp) return tr_fail(err, TR_ERR_IO, "spiir: cannot create bank file %s", path);
    unsigned char hdr[HEADER_BYTES], rec[FILTER_BYTES];
    memcpy(hdr, MAGIC, sizeof MAGIC);
    put_u32(hdr + 8, bank->ntemplates);
    put_u32(hdr + 12, 0);
    put_f64(hdr + 16, bank->dt);
    int ok = fwrite(hdr, 1, HEADER_BYTES, fp) == HEADER_BYTES;
    for (uint32_t t = 0; ok && t < bank->ntemplates; t++) {
        unsigned char c[4];
        put_u32(c, (uint32_t)(bank->first[t + 1] - bank->first[t]));
        ok = fwrite(c, 1, 4, fp) == 4;
    }
    for (uint64_t k = 0; ok && k < bank->total; k++) {
        encode_filter(rec, &bank->filters[k]);
        ok = fwrite(rec, 1, FILTER_BYTES, fp) == FILTER_BYTES;
    }
    /* fclose flushes: a full disk may only show up here. */
    if (fclose(fp) != 0) ok = 0;
    if (!ok) return tr_fail(err, TR_ERR_IO, "spiir: cannot write bank file %s", path);
    tr_clear(err);
    return TR_OK;
}
