/* Writing SIGPROC filterbank files for the tests: header records as
 * SIGPROC's send_string/send_int/send_double and packed samples in the
 * reader's documented order (first channel in the most significant bits). */
#ifndef TRANSIENT_TEST_FIL_WRITER_H
#define TRANSIENT_TEST_FIL_WRITER_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static inline void fw_bytes(FILE *f, const void *p, size_t n)
{
    fwrite(p, 1, n, f);
}

static inline void fw_string(FILE *f, const char *s)
{
    int32_t n = (int32_t)strlen(s);
    fw_bytes(f, &n, 4);
    fw_bytes(f, s, (size_t)n);
}

static inline void fw_int(FILE *f, const char *key, int32_t v)
{
    fw_string(f, key);
    fw_bytes(f, &v, 4);
}

static inline void fw_double(FILE *f, const char *key, double v)
{
    fw_string(f, key);
    fw_bytes(f, &v, 8);
}

/* A complete header with the required keywords and a few optional ones. */
static inline void fw_header(FILE *f, uint32_t nchans, uint32_t nbits, double tsamp,
                             double fch1, double foff)
{
    fw_string(f, "HEADER_START");
    fw_string(f, "source_name");
    fw_string(f, "TEST");
    fw_int(f, "telescope_id", 4);
    fw_int(f, "machine_id", 10);
    fw_int(f, "data_type", 1);
    fw_double(f, "tstart", 60000.5);
    fw_double(f, "tsamp", tsamp);
    fw_int(f, "nbits", (int32_t)nbits);
    fw_double(f, "fch1", fch1);
    fw_double(f, "foff", foff);
    fw_int(f, "nchans", (int32_t)nchans);
    fw_int(f, "nifs", 1);
    fw_string(f, "HEADER_END");
}

/* Pack n sample values (integers in range for nbits <= 16) as the file holds them. */
static inline void fw_pack(const float *v, size_t n, uint32_t nbits, unsigned char *out)
{
    if (nbits < 8) {
        const unsigned per = 8 / nbits;
        memset(out, 0, n / per);
        for (size_t i = 0; i < n; ++i)
            out[i / per] |=
                (unsigned char)((unsigned)v[i] << (8 - nbits * (i % per + 1)));
    } else if (nbits == 8) {
        for (size_t i = 0; i < n; ++i)
            out[i] = (unsigned char)v[i];
    } else if (nbits == 16) {
        for (size_t i = 0; i < n; ++i) {
            unsigned u = (unsigned)v[i];
            out[2 * i] = (unsigned char)(u & 255);
            out[2 * i + 1] = (unsigned char)(u >> 8);
        }
    } else {
        memcpy(out, v, n * 4); /* little-endian hosts */
    }
}

#endif /* TRANSIENT_TEST_FIL_WRITER_H */
