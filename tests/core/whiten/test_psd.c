/*
 * PSD functions of <transient/whiten.h>: Welch's median estimate against
 * scipy.signal.welch(average='median') (welch_fixture.txt, written by
 * make_welch_fixture.py), PSD files (interpolation, ASD and PSD columns, bad
 * rows), the design curve, and the argument checks.
 * Usage: test_psd FIXTURE SCRATCH_DIR
 */
#include <transient/whiten.h>

#include <math.h>
#include <stdlib.h>

#include "common/test_util.h"

static const char *scratch;

static void test_welch_fixture(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) return;
    char line[256];
    CHECK(fgets(line, sizeof line, f) != NULL, "no header comment");
    size_t n = 0, ncase = 0;
    double rate = 0;
    CHECK(fscanf(f, "%zu %lf %zu", &n, &rate, &ncase) == 3 && n > 0 && n < 100000,
          "bad fixture header");
    float *x = (float *)malloc(n * sizeof *x);
    for (size_t i = 0; i < n; ++i) {
        double v = 0;
        CHECK(fscanf(f, "%lf", &v) == 1, "short fixture");
        x[i] = (float)v;
    }
    for (size_t c = 0; c < ncase; ++c) {
        size_t nfft = 0, nbin = 0;
        CHECK(fscanf(f, "%zu %zu", &nfft, &nbin) == 2 && nbin == tr_psd_len(nfft),
              "bad case header");
        double *want = (double *)malloc(nbin * sizeof *want);
        double *got = (double *)malloc(nbin * sizeof *got);
        for (size_t k = 0; k < nbin; ++k)
            CHECK(fscanf(f, "%lf", &want[k]) == 1, "short case");
        tr_error err;
        CHECK(tr_psd_welch(x, n, rate, nfft, got, &err) == TR_OK, "%s", err.message);
        double worst = 0;
        for (size_t k = 0; k < nbin; ++k) {
            const double rel = fabs(got[k] - want[k]) / want[k];
            if (rel > worst) worst = rel;
        }
        CHECK(worst < 1e-9, "nfft %zu: largest relative difference from scipy %g", nfft,
              worst);
        free(want);
        free(got);
    }
    free(x);
    fclose(f);
}

static void test_welch_errors(void)
{
    float x[64] = {0};
    double psd[33];
    tr_error err;
    CHECK(tr_psd_welch(x, 63, 100.0, 64, psd, &err) == TR_ERR_INVALID, "short input");
    CHECK(strstr(err.message, "do not fill") != NULL, "%s", err.message);
    CHECK(tr_psd_welch(x, 64, 100.0, 63, psd, &err) == TR_ERR_INVALID, "odd nfft");
    CHECK(tr_psd_welch(x, 64, -1.0, 64, psd, &err) == TR_ERR_INVALID, "negative rate");
    CHECK(tr_psd_welch(x, 64, NAN, 64, psd, &err) == TR_ERR_INVALID, "NaN rate");
    CHECK(tr_psd_welch(NULL, 64, 100.0, 64, psd, &err) == TR_ERR_INVALID, "NULL x");
    /* White noise of unit variance: 2 / rate per bin, 1 / rate at DC and Nyquist
     * (up to the estimate's scatter, here over 1023 segments of 256). */
    tu_rng r = {7};
    const size_t n = 256 * 512;
    float *w = (float *)malloc(n * sizeof *w);
    for (size_t i = 0; i < n; ++i)
        w[i] = (float)tu_gauss(&r);
    double p[129];
    CHECK(tr_psd_welch(w, n, 1000.0, 256, p, &err) == TR_OK, "%s", err.message);
    double mean = 0;
    for (size_t k = 1; k < 128; ++k)
        mean += p[k] / 127.0;
    CHECK(fabs(mean / (2.0 / 1000.0) - 1.0) < 0.02, "white noise level %g", mean);
    free(w);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    fputs(text, f);
    fclose(f);
}

static void test_file(void)
{
    char path[512];
    snprintf(path, sizeof path, "%s/psd_power_law.txt", scratch);
    /* ASD = 1e-20 (f / 100)^-2 sampled every 10 Hz from 0: log-log
     * interpolation is exact for a power law; the row at 0 Hz takes no part. */
    FILE *f = fopen(path, "w");
    fprintf(f, "# frequency ASD\n%% comment\n\n0 1\n");
    for (int i = 1; i <= 300; ++i)
        fprintf(f, "%d %.17g\n", 10 * i, 1e-20 * pow(10.0 * i / 100.0, -2.0));
    fclose(f);
    const size_t nfft = 512;
    const double rate = 4096.0;
    double psd[257];
    tr_error err;
    CHECK(tr_psd_from_file(path, 1, rate, nfft, psd, &err) == TR_OK, "%s", err.message);
    double worst = 0;
    for (size_t k = 0; k < 257; ++k) {
        double fk = k * rate / nfft;
        if (fk < 10.0) fk = 10.0; /* held below the first positive row */
        const double want = 1e-40 * pow(fk / 100.0, -4.0);
        const double rel = fabs(psd[k] - want) / want;
        if (rel > worst) worst = rel;
    }
    CHECK(worst < 1e-9, "power-law ASD file: relative error %g", worst);
    /* The same as a PSD column. */
    double psd2[257];
    snprintf(path, sizeof path, "%s/psd_two_rows.txt", scratch);
    write_file(path, "100 4\n1000 4e-4\n");
    CHECK(tr_psd_from_file(path, 0, rate, nfft, psd2, &err) == TR_OK, "%s", err.message);
    CHECK(fabs(psd2[0] - 4.0) < 1e-12 && fabs(psd2[256] - 4e-4) < 1e-15,
          "ends held: %g %g", psd2[0], psd2[256]);
    /* 400 Hz = bin 50: 4 (400/100)^-4 on the log-log line through both rows. */
    CHECK(fabs(psd2[50] / 0.015625 - 1.0) < 1e-12, "PSD column interpolation %g",
          psd2[50]);

    static const struct {
        const char *text, *want;
    } bad[] = {
        {"10 1\n5 1\n", "must increase"},   {"10 1\n10 2\n", "must increase"},
        {"-1 1\n10 1\n", "must be finite"}, {"10 nan\n", "must be finite"},
        {"10 inf\n", "must be finite"},     {"10 0\n", "must be finite"},
        {"10 -2\n", "must be finite"},      {"10 1 3\n", "expected two numbers"},
        {"10\n", "expected two numbers"},   {"abc def\n", "expected two numbers"},
        {"# only a comment\n", "no row"},   {"0 1\n", "no row"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i) {
        snprintf(path, sizeof path, "%s/psd_bad_%zu.txt", scratch, i);
        write_file(path, bad[i].text);
        CHECK(tr_psd_from_file(path, 1, rate, nfft, psd2, &err) == TR_ERR_INVALID,
              "bad file %zu accepted", i);
        CHECK(strstr(err.message, bad[i].want) && strstr(err.message, path),
              "bad file %zu: %s", i, err.message);
    }
    snprintf(path, sizeof path, "%s/psd_missing.txt", scratch);
    remove(path);
    CHECK(tr_psd_from_file(path, 1, rate, nfft, psd2, &err) == TR_ERR_IO, "missing file");
    CHECK(tr_psd_from_file(scratch, 1, rate, nfft, psd2, &err) != TR_OK, "a directory");
}

static void test_design(void)
{
    /* x = 1 at 215 Hz: 1 - 5 + 111 * (1/2) / (3/2) = 33. */
    CHECK(fabs(tr_psd_design_at(215.0) / 3.3e-48 - 1.0) < 1e-12, "design at 215 Hz %g",
          tr_psd_design_at(215.0));
    CHECK(isinf(tr_psd_design_at(9.99)) && isinf(tr_psd_design_at(0.0)),
          "design below 10 Hz is infinite");
    CHECK(tr_psd_design_at(10.0) > tr_psd_design_at(50.0), "falls above 10 Hz");
    CHECK(tr_psd_design_at(2000.0) > tr_psd_design_at(215.0), "rises at high f");
    double psd[2049];
    tr_error err;
    CHECK(tr_psd_design(4096.0, 4096, psd, &err) == TR_OK, "%s", err.message);
    CHECK(psd[215] == tr_psd_design_at(215.0), "design on the grid");
    CHECK(tr_psd_design(4096.0, 4095, psd, &err) == TR_ERR_INVALID, "odd nfft");
    CHECK(tr_psd_len(4096) == 2049, "psd_len");
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_psd FIXTURE SCRATCH_DIR\n");
        return 2;
    }
    scratch = argv[2];
    test_welch_fixture(argv[1]);
    test_welch_errors();
    test_file();
    test_design();
    return tu_finish("test_psd");
}
