/* The SIGPROC filterbank reader: the real 29.fil header, every nbits with both
 * foff signs through whole and chunked reads, packed reads, and the header
 * errors (truncated, bad nbits, size mismatch, unknown keyword, nifs, tsamp,
 * foff). */
#define _POSIX_C_SOURCE 200809L

#include <math.h>

#include <transient/filterbank.h>

#include "common/test_util.h"
#include "dedisp/fil_writer.h"

#include <stdlib.h>
#include <unistd.h>

static char tmp_path[256];

static const char *tmp_file(void)
{
    const char *dir = getenv("TMPDIR");
    snprintf(tmp_path, sizeof tmp_path, "%s/tr_fil_%ld.fil", dir ? dir : "/tmp",
             (long)getpid());
    return tmp_path;
}

static void test_real(const char *path)
{
    tr_error err;
    tr_filterbank *f = tr_filterbank_open(path, &err);
    CHECK(f != NULL, "open %s: %s", path, err.message);
    if (!f) return;
    const tr_filterbank_header *h = tr_filterbank_get_header(f);
    CHECK(!strcmp(h->source_name, "src1"), "source_name %s", h->source_name);
    CHECK(!strcmp(h->rawdatafile, "ics_beams/29.fil"), "rawdatafile %s", h->rawdatafile);
    CHECK(h->telescope_id == 7 && h->machine_id == 0 && h->data_type == 1, "ids %d %d %d",
          h->telescope_id, h->machine_id, h->data_type);
    CHECK(h->nchans == 336 && h->nbits == 8 && h->nifs == 1, "%u %u %u", h->nchans,
          h->nbits, h->nifs);
    CHECK(h->tsamp == 0.00126646875 && h->fch1 == 1465.0 && h->foff == -1.0,
          "tsamp %.17g fch1 %g foff %g", h->tsamp, h->fch1, h->foff);
    CHECK(h->tstart == 58682.620316710374, "tstart %.17g", h->tstart);
    CHECK(h->src_raj == 122444.54850671999 && h->src_dej == 144425.88080344,
          "raj %.17g dej %.17g", h->src_raj, h->src_dej);
    CHECK(h->header_bytes == 327 && h->nsamples == 5120 && h->spectrum_bytes == 336,
          "header %llu nsamples %llu", (unsigned long long)h->header_bytes,
          (unsigned long long)h->nsamples);
    CHECK(tr_filterbank_fmax(h) == 1465.0, "fmax");
    /* Whole file as float; chunked reads give the same; raw bytes agree. */
    float *all = malloc(5120 * 336 * sizeof(float));
    float *part = malloc(5120 * 336 * sizeof(float));
    unsigned char *raw = malloc(5120 * 336);
    size_t got = 0;
    CHECK(tr_filterbank_read(f, all, 6000, &got) == TR_OK && got == 5120, "read %zu",
          got);
    CHECK(tr_filterbank_read(f, all, 10, &got) == TR_OK && got == 0, "at end %zu", got);
    CHECK(tr_filterbank_seek(f, 0) == TR_OK, "seek");
    tu_rng r = {29};
    size_t pos = 0;
    while (pos < 5120) {
        size_t want = (size_t)tu_range(&r, 1, 700);
        CHECK(tr_filterbank_read(f, part + pos * 336, want, &got) == TR_OK, "chunk");
        if (got == 0) break;
        pos += got;
        CHECK(tr_filterbank_position(f) == pos, "position");
    }
    CHECK(pos == 5120 && !memcmp(all, part, 5120 * 336 * sizeof(float)), "chunked reads");
    CHECK(tr_filterbank_seek(f, 1000) == TR_OK, "seek 1000");
    CHECK(tr_filterbank_read_raw(f, raw, 5120, &got) == TR_OK && got == 4120, "raw %zu",
          got);
    int same = 1;
    for (size_t i = 0; i < got * 336; ++i)
        same &= all[1000 * 336 + i] == (float)raw[i];
    CHECK(same, "raw bytes equal the floats");
    CHECK(tr_filterbank_seek(f, 5121) == TR_ERR_INVALID, "seek past the end");
    free(all);
    free(part);
    free(raw);
    tr_filterbank_close(f);
}

/* Every nbits, both foff signs: values written then read back. */
static void test_nbits(void)
{
    static const uint32_t bits[] = {1, 2, 4, 8, 16, 32};
    tu_rng r = {7};
    for (unsigned b = 0; b < 6; ++b)
        for (int sign = -1; sign <= 1; sign += 2) {
            const uint32_t nbits = bits[b], nchans = 48, n = 37;
            float *v = malloc((size_t)n * nchans * sizeof(float));
            float *back = malloc((size_t)n * nchans * sizeof(float));
            unsigned char *packed = malloc((size_t)n * nchans * 4);
            for (size_t i = 0; i < (size_t)n * nchans; ++i)
                v[i] = nbits == 32 ? (float)tu_gauss(&r)
                                   : (float)tu_range(&r, 0, (1L << nbits) - 1);
            fw_pack(v, (size_t)n * nchans, nbits, packed);
            FILE *fp = fopen(tmp_file(), "wb");
            fw_header(fp, nchans, nbits, 64e-6, sign < 0 ? 1600.0 : 1200.0, sign * 0.5);
            fw_bytes(fp, packed, (size_t)n * nchans * nbits / 8);
            fclose(fp);
            tr_error err;
            tr_filterbank *f = tr_filterbank_open(tmp_path, &err);
            CHECK(f != NULL, "nbits %u: %s", nbits, err.message);
            if (f) {
                const tr_filterbank_header *h = tr_filterbank_get_header(f);
                CHECK(h->nsamples == n && h->nbits == nbits && h->foff == sign * 0.5,
                      "nbits %u header", nbits);
                CHECK(tr_filterbank_fmax(h) == (sign < 0 ? 1600.0 : 1200.0 + 47 * 0.5),
                      "fmax");
                size_t pos = 0, got = 0;
                while (pos < n &&
                       tr_filterbank_read(f, back + pos * nchans,
                                          (size_t)tu_range(&r, 1, 9), &got) == TR_OK &&
                       got)
                    pos += got;
                CHECK(pos == n && !memcmp(v, back, (size_t)n * nchans * sizeof(float)),
                      "nbits %u foff %+d values", nbits, sign);
                tr_filterbank_close(f);
            }
            free(v);
            free(back);
            free(packed);
        }
    /* The documented bit order on a known byte: 0xB4 = 10 11 01 00. */
    const unsigned char byte = 0xB4;
    float out[8];
    tr_filterbank_unpack(&byte, 1, 8, out);
    CHECK(out[0] == 1 && out[1] == 0 && out[2] == 1 && out[3] == 1 && out[7] == 0,
          "1-bit");
    tr_filterbank_unpack(&byte, 2, 4, out);
    CHECK(out[0] == 2 && out[1] == 3 && out[2] == 1 && out[3] == 0, "2-bit");
    tr_filterbank_unpack(&byte, 4, 2, out);
    CHECK(out[0] == 11 && out[1] == 4, "4-bit");
}

/* A file from a header writer and a data size; returns the open error. */
typedef void (*header_fn)(FILE *f);

static tr_status open_error(header_fn hf, size_t data_bytes, const char *expect)
{
    FILE *fp = fopen(tmp_file(), "wb");
    hf(fp);
    for (size_t i = 0; i < data_bytes; ++i)
        fputc(i & 255, fp);
    fclose(fp);
    tr_error err;
    tr_filterbank *f = tr_filterbank_open(tmp_path, &err);
    tr_status st = f ? TR_OK : err.code;
    CHECK(f == NULL, "expected an error about '%s'", expect);
    if (!f)
        CHECK(strstr(err.message, expect) != NULL &&
                  strstr(err.message, tmp_path) != NULL,
              "message '%s' should name '%s' and the file", err.message, expect);
    tr_filterbank_close(f);
    return st;
}

static void good(FILE *f)
{
    fw_header(f, 16, 8, 1e-3, 1500, -1);
}
static void bad_nbits(FILE *f)
{
    fw_header(f, 16, 3, 1e-3, 1500, -1);
}
static void zero_tsamp(FILE *f)
{
    fw_header(f, 16, 8, 0.0, 1500, -1);
}
static void zero_foff(FILE *f)
{
    fw_header(f, 16, 8, 1e-3, 1500, 0);
}
static void huge_nchans(FILE *f)
{
    fw_header(f, 1u << 22, 8, 1e-3, 1500, -1);
}
static void truncated(FILE *f)
{
    fw_string(f, "HEADER_START");
    fw_double(f, "tsamp", 1e-3);
    fw_string(f, "nbits");
    fputc(8, f); /* cut inside the int32 value */
}
static void unknown_kw(FILE *f)
{
    fw_string(f, "HEADER_START");
    fw_double(f, "tsamp", 1e-3);
    fw_int(f, "frobnicate", 3);
    fw_string(f, "HEADER_END");
}
/* The required keywords but foff (unless with_foff), and nifs. */
static void partial(FILE *f, int with_foff, int32_t nifs)
{
    fw_string(f, "HEADER_START");
    fw_double(f, "tsamp", 1e-3);
    fw_int(f, "nbits", 8);
    fw_double(f, "fch1", 1500);
    if (with_foff) fw_double(f, "foff", -1);
    fw_int(f, "nchans", 16);
    fw_int(f, "nifs", nifs);
    fw_string(f, "HEADER_END");
}
static void two_ifs(FILE *f)
{
    partial(f, 1, 2);
}
static void no_foff(FILE *f)
{
    partial(f, 0, 1);
}
static void wrong_nsamples(FILE *f)
{
    fw_header(f, 16, 8, 1e-3, 1500, -1);
    /* HEADER_END already written: rewrite with nsamples inside */
    rewind(f);
    fw_string(f, "HEADER_START");
    fw_int(f, "nsamples", 11);
    fw_double(f, "tsamp", 1e-3);
    fw_int(f, "nbits", 8);
    fw_double(f, "fch1", 1500);
    fw_double(f, "foff", -1);
    fw_int(f, "nchans", 16);
    fw_string(f, "HEADER_END");
}
static void not_sigproc(FILE *f)
{
    fputs("SIMPLE  =                    T", f);
}

static void test_errors(void)
{
    CHECK(open_error(bad_nbits, 160, "nbits = 3") == TR_ERR_INVALID, "bad nbits");
    CHECK(open_error(zero_tsamp, 160, "tsamp") == TR_ERR_INVALID, "tsamp");
    CHECK(open_error(zero_foff, 160, "foff") == TR_ERR_INVALID, "foff");
    CHECK(open_error(huge_nchans, 160, "nchans") == TR_ERR_INVALID, "nchans vs size");
    CHECK(open_error(truncated, 0, "ends before HEADER_END") == TR_ERR_IO, "truncated");
    CHECK(open_error(unknown_kw, 16, "'frobnicate'") == TR_ERR_IO, "unknown keyword");
    CHECK(open_error(two_ifs, 160, "nifs = 2") == TR_ERR_UNSUPPORTED, "nifs");
    CHECK(open_error(no_foff, 160, "foff missing") == TR_ERR_INVALID, "missing foff");
    CHECK(open_error(good, 161, "not a whole number") == TR_ERR_INVALID,
          "partial spectrum");
    CHECK(open_error(good, 0, "no spectra") == TR_ERR_INVALID, "no data");
    CHECK(open_error(wrong_nsamples, 160, "nsamples = 11") == TR_ERR_INVALID, "nsamples");
    CHECK(open_error(not_sigproc, 0, "bad string length") == TR_ERR_IO, "not SIGPROC");
    tr_error err;
    CHECK(tr_filterbank_open("/nonexistent/x.fil", &err) == NULL &&
              err.code == TR_ERR_IO && strstr(err.message, "/nonexistent/x.fil"),
          "missing file: %s", err.message);
    /* A header cut inside a value, from a buffer. */
    unsigned char buf[64];
    int32_t n = 12;
    memcpy(buf, &n, 4);
    memcpy(buf + 4, "HEADER_START", 12);
    n = 5;
    memcpy(buf + 16, &n, 4);
    memcpy(buf + 20, "tsamp", 5);
    tr_filterbank_header h;
    CHECK(tr_filterbank_parse_header(buf, 27, 27, NULL, &h, &err) == TR_ERR_IO &&
              strstr(err.message, "tsamp"),
          "cut value: %s", err.message);
}

int main(int argc, char **argv)
{
    if (argc > 1) test_real(argv[1]);
    test_nbits();
    test_errors();
    unlink(tmp_file());
    return tu_finish("test_filterbank");
}
