/*
 * A PSD from a two-column ASCII file (frequency, ASD or PSD), as LIGO
 * distributes its noise curves, interpolated onto an FFT grid
 * (<transient/whiten.h>). Rows grow the table as they are read (never sized
 * from the file's claims), up to TR_PSD_MAX_ROWS.
 */
#include "common/core_util.h"
#include "common/file_open.h"
#include "whiten/whiten_internal.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_CHARS 4096

typedef struct {
    double *f, *v; /* frequency, PSD */
    size_t n, cap;
} table;

static int grow(table *t)
{
    size_t cap = t->cap ? 2 * t->cap : 256;
    double *f = (double *)realloc(t->f, cap * sizeof *f);
    if (!f) return 0;
    t->f = f;
    double *v = (double *)realloc(t->v, cap * sizeof *v);
    if (!v) return 0;
    t->v = v;
    t->cap = cap;
    return 1;
}

/* Parse one line into (f, value); 0 = blank or comment, 1 = row, -1 = bad. */
static int parse_line(char *line, double *f, double *v)
{
    char *p = line;
    while (isspace((unsigned char)*p))
        ++p;
    if (*p == '\0' || *p == '#' || *p == '%') return 0;
    char *end;
    errno = 0;
    *f = strtod(p, &end);
    if (end == p) return -1;
    p = end;
    *v = strtod(p, &end);
    if (end == p) return -1;
    for (p = end; *p; ++p)
        if (!isspace((unsigned char)*p)) return -1;
    return 1;
}

static tr_status read_table(const char *path, int asd, table *t, tr_error *err)
{
    uint64_t size = 0;
    FILE *fp = tr_open_regular("psd_from_file", path, &size, err);
    if (!fp) return err ? err->code : TR_ERR_IO;
    char line[LINE_MAX_CHARS];
    size_t lineno = 0;
    tr_status s = TR_OK;
    while (fgets(line, sizeof line, fp)) {
        ++lineno;
        const size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n' && !feof(fp)) {
            s = tr_fail(err, TR_ERR_INVALID, "psd_from_file: %s:%zu: line longer than %d",
                        path, lineno, LINE_MAX_CHARS - 2);
            break;
        }
        double f, v;
        const int r = parse_line(line, &f, &v);
        if (r == 0) continue;
        if (r < 0) {
            s = tr_fail(err, TR_ERR_INVALID,
                        "psd_from_file: %s:%zu: expected two numbers (frequency, %s)",
                        path, lineno, asd ? "ASD" : "PSD");
            break;
        }
        if (!isfinite(f) || !isfinite(v) || f < 0.0 || !(v > 0.0)) {
            s = tr_fail(
                err, TR_ERR_INVALID,
                "psd_from_file: %s:%zu: frequency %g and value %g must be finite, "
                "the frequency >= 0 and the value > 0",
                path, lineno, f, v);
            break;
        }
        if (t->n && !(f > t->f[t->n - 1])) {
            s = tr_fail(err, TR_ERR_INVALID,
                        "psd_from_file: %s:%zu: frequencies must increase (%g after %g)",
                        path, lineno, f, t->f[t->n - 1]);
            break;
        }
        if (t->n == TR_PSD_MAX_ROWS) {
            s = tr_fail(err, TR_ERR_INVALID, "psd_from_file: %s: more than %zu rows",
                        path, (size_t)TR_PSD_MAX_ROWS);
            break;
        }
        if (t->n == t->cap && !grow(t)) {
            s = tr_fail(err, TR_ERR_NOMEM, "psd_from_file: %s: out of memory at row %zu",
                        path, t->n);
            break;
        }
        t->f[t->n] = f;
        t->v[t->n] = asd ? v * v : v;
        t->n++;
    }
    if (s == TR_OK && ferror(fp))
        s = tr_fail(err, TR_ERR_IO, "psd_from_file: %s: read error", path);
    fclose(fp);
    return s;
}

/* Linear interpolation in log f, log PSD over the rows with f > 0 (first
 * such row at `lo`), end values held outside. */
static double interp_loglog(const table *t, size_t lo, double f)
{
    if (f <= t->f[lo]) return t->v[lo];
    if (f >= t->f[t->n - 1]) return t->v[t->n - 1];
    size_t a = lo, b = t->n - 1; /* f[a] < f < f[b] */
    while (b - a > 1) {
        const size_t m = a + (b - a) / 2;
        if (t->f[m] <= f)
            a = m;
        else
            b = m;
    }
    const double u = (log(f) - log(t->f[a])) / (log(t->f[b]) - log(t->f[a]));
    return exp(log(t->v[a]) + u * (log(t->v[b]) - log(t->v[a])));
}

tr_status tr_psd_from_file(const char *path, int asd, double rate, size_t nfft,
                           double *psd, tr_error *err)
{
    tr_status s = tr_psd_check_grid("psd_from_file", rate, nfft, err);
    if (s != TR_OK) return s;
    if (!path || !psd)
        return tr_fail(err, TR_ERR_INVALID, "psd_from_file: NULL argument");
    table t = {NULL, NULL, 0, 0};
    s = read_table(path, asd, &t, err);
    if (s == TR_OK) {
        const size_t lo = t.n && t.f[0] == 0.0 ? 1 : 0;
        if (t.n - lo < 1) {
            s = tr_fail(err, TR_ERR_INVALID,
                        "psd_from_file: %s: no row with a frequency > 0", path);
        } else {
            for (size_t k = 0; k < tr_psd_len(nfft); ++k)
                psd[k] = interp_loglog(&t, lo, (double)k * rate / (double)nfft);
            tr_clear(err);
        }
    }
    free(t.f);
    free(t.v);
    return s;
}
