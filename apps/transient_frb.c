/*
 * transient-frb: FRB search of a SIGPROC filterbank with libtransient alone
 * (no GNU Radio, no Python): the file streams in blocks through tr_frb
 * (dedispersion -> boxcar search -> candidates) and the candidates are
 * written as CSV, JSON or Heimdall's .cand lines. transient-detect frb runs
 * it; docs/frb.md describes the chain and the options.
 *
 *   transient-frb FILE.fil [options] [-o OUT.csv|.json|.cand|-]
 *
 * Needs POSIX (mkstemp, fchmod, stat).
 *
 * Exit status: 0 on success, 2 on a usage or input error (one line on
 * stderr naming the problem, nothing written), 1 when the search fails.
 */
#define _POSIX_C_SOURCE 200809L
#include "frb_output.h"
#include "frb_reader.h"

#include <transient/filterbank.h>
#include <transient/frb.h>

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define PROG "transient-frb"

static const char usage[] =
    "usage: " PROG " FILE.fil [options]\n"
    "  -o FILE            candidates: .csv, .json or .cand (Heimdall); '-' or none: CSV "
    "on stdout\n"
    "  --format F         csv, json or cand (default: from -o's suffix)\n"
    "  --dm-min X         lowest DM, pc cm^-3 (0)\n"
    "  --dm-max X         highest DM (1000): trials up to the first >= it\n"
    "  --dm-tol X         DM plan tolerance, dedisp's dm_tol (1.25)\n"
    "  --pulse-width US   intrinsic pulse width of the DM plan, us (40)\n"
    "  --dm-list A,B,..   explicit DM trials instead of the plan\n"
    "  --scrunch          time-scrunch the high-DM trials (dedisp's adaptive dt; needs\n"
    "                     --norm levels, the default with it)\n"
    "  --scrunch-tol X    its tolerance, dedisp's scrunch_tol (1.15)\n"
    "  --no-zero-dm       keep each spectrum's channel mean (default: subtract it)\n"
    "  --mask-chans LIST  channels left out: 3,7,100-120\n"
    "  --threshold X      S/N threshold (8)\n"
    "  --max-width N      widest boxcar, samples (1024)\n"
    "  --algorithm A      boxdit, igrid or ideal (boxdit)\n"
    "  --norm M           white or levels (white; levels with --scrunch)\n"
    "  --window N         samples per statistics window of each DM trial (1024)\n"
    "  --history N        statistics windows merged (8)\n"
    "  --baseline N       running-median baseline removal over N samples (0: none)\n"
    "  --link-time N      friends-of-friends gap in samples (0)\n"
    "  --link-dm N        friends-of-friends DM-trial distance (200)\n"
    "  --backend B        auto, cpu or cuda (auto)\n"
    "  --device N         CUDA device (0)\n"
    "  --devices A,B,..   CUDA devices sharing the DM trials (a device may repeat)\n"
    "  --block N          spectra per block (16384)\n"
    "  --start N          first spectrum searched (0); samples and times stay those "
    "of the file\n"
    "  --samples N        spectra searched (0: to the end)\n"
    "  --progress         progress on stderr\n"
    "  -q                 no summary line on stderr (notes and errors stay)\n";

typedef struct {
    const char *input, *output, *format, *dm_list, *mask;
    int progress, quiet, norm_given;
    uint64_t start, samples; /* spectra: first searched, how many (0: to the end) */
} options;

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(PROG ": error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return 2;
}

static int parse_double(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    return *s && !*end && !errno && isfinite(*v) ? 0 : -1;
}

static int parse_u32(const char *s, uint32_t *v)
{
    char *end;
    errno = 0;
    const unsigned long long x = strtoull(s, &end, 10);
    if (!*s || *end || errno || x > UINT32_MAX || s[0] == '-') return -1;
    *v = (uint32_t)x;
    return 0;
}

/* Comma-separated DMs into a new array; count in *n. */
static double *parse_dm_list(const char *s, uint32_t *n)
{
    uint32_t cap = 1;
    for (const char *p = s; *p; p++)
        cap += *p == ',';
    double *v = malloc(cap * sizeof *v);
    char *copy = malloc(strlen(s) + 1);
    if (!v || !copy) goto fail;
    strcpy(copy, s);
    *n = 0;
    for (char *tok = strtok(copy, ","); tok; tok = strtok(NULL, ","))
        if (parse_double(tok, &v[(*n)++]) != 0) goto fail;
    free(copy);
    if (*n) return v;
fail:
    free(copy);
    free(v);
    return NULL;
}

/* "0,1" -> c->devices, c->ndevices: 1..TR_FRB_MAX_DEVICES indices below 1024. */
static int parse_devices(const char *s, tr_frb_config *c)
{
    uint32_t n = 0;
    for (const char *p = s;; p++) {
        char num[16];
        const char *e = strchr(p, ',');
        const size_t len = e ? (size_t)(e - p) : strlen(p);
        uint32_t u;
        if (len == 0 || len >= sizeof num || n == TR_FRB_MAX_DEVICES) return -1;
        memcpy(num, p, len);
        num[len] = '\0';
        if (parse_u32(num, &u) != 0 || u >= 1024) return -1;
        c->devices[n++] = (int)u;
        if (!e) break;
        p = e;
    }
    c->ndevices = n;
    return 0;
}

/* "3,7,100-120" -> used[c] = 0 for the listed channels. */
static int parse_mask(const char *s, uint8_t *used, uint32_t nchan)
{
    char *copy = malloc(strlen(s) + 1);
    if (!copy) return -1;
    strcpy(copy, s);
    int rc = 0;
    for (char *tok = strtok(copy, ","); tok && rc == 0; tok = strtok(NULL, ",")) {
        char *dash = strchr(tok, '-');
        uint32_t lo, hi;
        if (dash) *dash = '\0';
        if (parse_u32(tok, &lo) != 0 ||
            (dash ? parse_u32(dash + 1, &hi) : (hi = lo, 0)) != 0 || lo > hi ||
            hi >= nchan) {
            rc = -1;
            break;
        }
        for (uint32_t c = lo; c <= hi; c++)
            used[c] = 0;
    }
    free(copy);
    return rc;
}

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

/* Applies one option with a value; 1 when it was one, 0 when unknown, -1 bad value. */
static int set_option(const char *a, const char *v, tr_frb_config *c, options *o)
{
    double x;
    uint32_t u;
    if (!strcmp(a, "-o")) return o->output = v, 1;
    if (!strcmp(a, "--format")) return o->format = v, 1;
    if (!strcmp(a, "--dm-list")) return o->dm_list = v, 1;
    if (!strcmp(a, "--mask-chans")) return o->mask = v, 1;
    if (!strcmp(a, "--backend")) {
        if (!strcmp(v, "auto"))
            c->backend = TR_BACKEND_AUTO;
        else if (!strcmp(v, "cpu"))
            c->backend = TR_BACKEND_CPU;
        else if (!strcmp(v, "cuda"))
            c->backend = TR_BACKEND_CUDA;
        else
            return -1;
        return 1;
    }
    if (!strcmp(a, "--algorithm")) {
        if (!strcmp(v, "boxdit"))
            c->search.algorithm = TR_BOXCAR_BOXDIT;
        else if (!strcmp(v, "igrid"))
            c->search.algorithm = TR_BOXCAR_IGRID;
        else if (!strcmp(v, "ideal"))
            c->search.algorithm = TR_BOXCAR_IDEAL;
        else
            return -1;
        return 1;
    }
    if (!strcmp(a, "--norm")) {
        o->norm_given = 1;
        if (!strcmp(v, "white"))
            c->search.norm.mode = TR_BOXCAR_NORM_WHITE;
        else if (!strcmp(v, "levels"))
            c->search.norm.mode = TR_BOXCAR_NORM_LEVELS;
        else
            return -1;
        return 1;
    }
    double *dv = !strcmp(a, "--dm-min")        ? &c->dedisp.plan.dm_min
                 : !strcmp(a, "--dm-max")      ? &c->dedisp.plan.dm_max
                 : !strcmp(a, "--dm-tol")      ? &c->dedisp.plan.tolerance
                 : !strcmp(a, "--pulse-width") ? &c->dedisp.plan.pulse_width
                 : !strcmp(a, "--scrunch-tol") ? &c->dedisp.plan.scrunch_tol
                                               : NULL;
    if (dv) return parse_double(v, &x) == 0 ? (*dv = x, 1) : -1;
    if (!strcmp(a, "--threshold"))
        return parse_double(v, &x) == 0 ? (c->threshold = (float)x, 1) : -1;
    uint32_t *uv = !strcmp(a, "--max-width")   ? &c->search.max_width
                   : !strcmp(a, "--window")    ? &c->search.norm.window
                   : !strcmp(a, "--history")   ? &c->search.norm.history
                   : !strcmp(a, "--baseline")  ? &c->search.norm.baseline_window
                   : !strcmp(a, "--link-time") ? &c->link_time
                   : !strcmp(a, "--link-dm")   ? &c->link_dm
                   : !strcmp(a, "--block")     ? &c->block
                                               : NULL;
    if (uv) return parse_u32(v, &u) == 0 ? (*uv = u, 1) : -1;
    if (!strcmp(a, "--start") || !strcmp(a, "--samples")) {
        char *end;
        errno = 0;
        const unsigned long long z = strtoull(v, &end, 10);
        if (!*v || *end || errno || v[0] == '-') return -1;
        *(!strcmp(a, "--start") ? &o->start : &o->samples) = z;
        return 1;
    }
    if (!strcmp(a, "--device"))
        return parse_u32(v, &u) == 0 && u < 1024 ? (c->device = (int)u, 1) : -1;
    if (!strcmp(a, "--devices")) return parse_devices(v, c) == 0 ? 1 : -1;
    return 0;
}

/* The devices the search runs on as a JSON array: none on the CPU. */
static void devices_json(char *buf, size_t len, const tr_frb_config *c, const tr_frb *q)
{
    size_t w = (size_t)snprintf(buf, len, "[");
    const int cuda = tr_frb_backend(q) == TR_BACKEND_CUDA;
    const uint32_t n = !cuda ? 0 : c->ndevices ? c->ndevices : 1;
    for (uint32_t j = 0; j < n && w < len; j++)
        w += (size_t)snprintf(buf + w, len - w, "%s%d", j ? ", " : "",
                              c->ndevices ? c->devices[j] : c->device);
    if (w < len) snprintf(buf + w, len - w, "]");
}

/* The scrunching as JSON members: off, or the tolerance, the work in
 * full-rate trials and the first trial of each factor. */
static void scrunch_json(char *buf, size_t len, const tr_frb *q, const tr_frb_config *c)
{
    size_t w = (size_t)snprintf(buf, len, "\"scrunch\": %s",
                                c->dedisp.plan.scrunch ? "true" : "false");
    if (!c->dedisp.plan.scrunch || w >= len) return;
    const uint32_t n = tr_frb_ndm(q);
    uint32_t *f = malloc(n * sizeof *f);
    tr_dedisp_plan_config plan = c->dedisp.plan;
    plan.dm_list = tr_frb_dms(q);
    plan.ndm_list = n;
    if (!f || tr_dedisp_scrunch_factors(&plan, f, n, NULL) != n) {
        free(f);
        return;
    }
    double work = 0;
    for (uint32_t d = 0; d < n; d++)
        work += 1.0 / f[d];
    w += (size_t)snprintf(buf + w, len - w,
                          ", \"scrunch_tol\": %.9g, \"full_rate_trials\": %.17g, "
                          "\"scrunch_first_trials\": {",
                          c->dedisp.plan.scrunch_tol, work);
    for (uint32_t d = 0; d < n && w < len; d++)
        if (d == 0 || f[d] != f[d - 1])
            w += (size_t)snprintf(buf + w, len - w, "%s\"%u\": %u", d ? ", " : "", f[d],
                                  d);
    if (w < len) snprintf(buf + w, len - w, "}");
    free(f);
}

/* The options as a JSON object for the summary. */
static void params_json(char *buf, size_t len, const tr_frb_config *c, const options *o,
                        const tr_frb *q)
{
    char scrunch[1024];
    scrunch_json(scrunch, sizeof scrunch, q, c);
    snprintf(
        buf, len,
        "{\"dm_min\": %.17g, \"dm_max\": %.17g, \"dm_tol\": %.17g, \"pulse_width_us\": "
        "%.17g, \"dm_list\": %s, \"zero_dm\": %s, \"mask_chans\": \"%s\", "
        "\"threshold\": %.9g, \"max_width\": %u, \"algorithm\": \"%s\", \"norm\": "
        "\"%s\", \"window\": %u, \"history\": %u, \"baseline\": %u, \"link_time\": %u, "
        "\"link_dm\": %u, \"block\": %u, %s}",
        c->dedisp.plan.dm_min, c->dedisp.plan.dm_max, c->dedisp.plan.tolerance,
        c->dedisp.plan.pulse_width, o->dm_list ? "true" : "false",
        c->dedisp.zero_dm ? "true" : "false", o->mask ? o->mask : "", c->threshold,
        c->search.max_width, tr_boxcar_algorithm_name(c->search.algorithm),
        c->search.norm.mode == TR_BOXCAR_NORM_LEVELS ? "levels" : "white",
        c->search.norm.window, c->search.norm.history,
        c->search.norm.baseline == TR_BOXCAR_BASELINE_NONE
            ? 0
            : c->search.norm.baseline_window,
        c->link_time, c->link_dm, c->block, scrunch);
}

/* Positions of a search that started at spectrum `start` of the file. */
static void shift_candidate(tr_frb_candidate *c, uint64_t start, double tsamp)
{
    c->sample += (int64_t)start;
    c->start += (int64_t)start;
    c->first += (int64_t)start;
    c->end += (int64_t)start;
    c->time = (double)c->sample * tsamp;
}

/* Streams the file through q; candidates appended to *cands. */
static int search_file(tr_filterbank *fb, tr_frb *q, const tr_filterbank_header *h,
                       uint32_t block, const options *o, tr_frb_candidate **cands,
                       size_t *ncand, frb_run_info *times)
{
    const uint64_t total = o->samples ? o->samples : h->nsamples - o->start;
    size_t cap = 1024;
    *cands = malloc(cap * sizeof **cands);
    frb_reader *rd =
        *cands ? frb_reader_start(fb, q, block, h->spectrum_bytes, total) : NULL;
    if (!rd) {
        fprintf(stderr, PROG ": error: out of memory for the read buffers\n");
        return 1;
    }
    const double t0 = now();
    double shown = t0;
    int rc = 0;
    for (;;) {
        size_t got = 0;
        const uint8_t *raw = NULL;
        const char *msg = NULL;
        const double w0 = now();
        tr_status st = frb_reader_next(rd, &raw, &got, &msg);
        const double w1 = now();
        times->read_wait += w1 - w0;
        if (st != TR_OK) {
            fprintf(stderr, PROG ": error: %s\n", msg);
            rc = 1;
            break;
        }
        st = got ? tr_frb_process_raw(q, raw, got) : tr_frb_flush(q);
        *(got ? &times->process : &times->flush) += now() - w1;
        if (st != TR_OK) {
            fprintf(stderr, PROG ": error: %s\n", tr_frb_last_error(q));
            rc = 1;
            break;
        }
        for (;;) {
            if (*ncand == cap) {
                tr_frb_candidate *p = realloc(*cands, 2 * cap * sizeof *p);
                if (!p) {
                    fprintf(stderr, PROG ": error: out of memory for candidates\n");
                    frb_reader_stop(rd);
                    return 1;
                }
                *cands = p;
                cap *= 2;
            }
            const size_t n = tr_frb_read(q, *cands + *ncand, cap - *ncand);
            for (size_t i = *ncand; i < *ncand + n; i++)
                shift_candidate(&(*cands)[i], o->start, h->tsamp);
            *ncand += n;
            if (*ncand < cap) break;
        }
        const double t = now();
        if (o->progress && (t - shown > 0.5 || !got)) {
            const uint64_t done = tr_frb_position(q);
            fprintf(stderr, "\r" PROG ": %5.1f%% (%llu of %llu spectra) %.4g spectra/s ",
                    100.0 * done / (total ? total : 1), (unsigned long long)done,
                    (unsigned long long)total, done / (t - t0));
            if (!got) fputc('\n', stderr);
            shown = t;
        }
        if (!got) break;
    }
    frb_reader_stop(rd);
    return rc;
}

/* Tells the user about DM trials whose sweep across the band is longer than
 * the data: none of their sums is complete, so they cannot find anything. */
static void note_long_sweeps(const tr_frb *q, const tr_dedisp_plan_config *plan,
                             uint64_t nsearch)
{
    const uint32_t bottom = plan->foff < 0 ? plan->nchan - 1 : 0;
    const double *dms = tr_frb_dms(q);
    uint32_t first = tr_frb_ndm(q);
    while (first > 0 && tr_dedisp_delay(plan, dms[first - 1], bottom) >= nsearch)
        first--;
    if (first == tr_frb_ndm(q)) return;
    fprintf(stderr,
            PROG ": note: %u of %u DM trials (DM >= %.6g) sweep across the band in more "
                 "than the %llu spectra searched: nothing of them can be searched\n",
            tr_frb_ndm(q) - first, tr_frb_ndm(q), dms[first],
            (unsigned long long)nsearch);
}

static int same_file(const char *a, const char *b)
{
    struct stat sa, sb;
    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

/* Writes the candidates to path ("-" or NULL: stdout) through a temporary file
 * beside it, renamed when complete: an existing file is never left half
 * written. Returns the exit status. */
static int write_output(const char *path, frb_out_format fmt, const tr_frb_candidate *c,
                        size_t n, const frb_run_info *info)
{
    if (!path || !strcmp(path, "-")) {
        if (frb_write(stdout, fmt, c, n, info) == 0) return 0;
        fprintf(stderr, PROG ": error: writing the candidates to stdout failed\n");
        return 1;
    }
    const size_t len = strlen(path) + 16;
    char *tmp = malloc(len);
    if (!tmp) return 1;
    snprintf(tmp, len, "%s.tmpXXXXXX", path);
    const int fd = mkstemp(tmp);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    int rc = f ? 0 : 1;
    if (f) {
        fchmod(fd, 0644);
        rc = frb_write(f, fmt, c, n, info) == 0 ? 0 : 1;
        if (fclose(f) != 0) rc = 1;
        if (rc == 0 && rename(tmp, path) != 0) rc = 1;
    }
    if (rc) {
        fprintf(stderr, PROG ": error: cannot write %s: %s\n", path, strerror(errno));
        if (fd >= 0) remove(tmp);
    }
    free(tmp);
    return rc;
}

int main(int argc, char **argv)
{
    tr_frb_config cfg = tr_frb_config_default();
    cfg.search.norm.baseline_window = 0; /* --baseline N turns the removal on */
    options o = {0};
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            fputs(usage, stdout);
            return 0;
        }
        if (!strcmp(a, "--no-zero-dm"))
            cfg.dedisp.zero_dm = 0;
        else if (!strcmp(a, "--scrunch"))
            cfg.dedisp.plan.scrunch = 1;
        else if (!strcmp(a, "--progress"))
            o.progress = 1;
        else if (!strcmp(a, "-q"))
            o.quiet = 1;
        else if (a[0] == '-' && a[1]) {
            if (i + 1 >= argc) return usage_error("%s needs a value", a);
            const int r = set_option(a, argv[++i], &cfg, &o);
            if (r == 0) return usage_error("unknown option %s (see --help)", a);
            if (r < 0) return usage_error("%s: bad value '%s'", a, argv[i]);
        } else if (!o.input) {
            o.input = a;
        } else {
            return usage_error("more than one input file (%s, %s)", o.input, a);
        }
    }
    /* scrunched trials are not white: their noise is measured per width */
    if (cfg.dedisp.plan.scrunch && !o.norm_given)
        cfg.search.norm.mode = TR_BOXCAR_NORM_LEVELS;
    if (!o.input) return usage_error("no input file (see --help)");
    if (cfg.search.norm.baseline_window)
        cfg.search.norm.baseline = TR_BOXCAR_BASELINE_MEDIAN;
    else
        cfg.search.norm.baseline_window =
            tr_frb_config_default().search.norm.baseline_window;
    int fmt = o.format ? (!strcmp(o.format, "csv")    ? FRB_OUT_CSV
                          : !strcmp(o.format, "json") ? FRB_OUT_JSON
                          : !strcmp(o.format, "cand") ? FRB_OUT_CAND
                                                      : -1)
                       : (o.output && strcmp(o.output, "-") ? frb_out_format_of(o.output)
                                                            : FRB_OUT_CSV);
    if (fmt < 0)
        return usage_error("-o %s: give a .csv, .json or .cand file or --format",
                           o.output ? o.output : "");

    if (o.output && strcmp(o.output, "-") && same_file(o.output, o.input))
        return usage_error("-o %s is the input", o.output);
    const double t0 = now();
    tr_error err;
    tr_filterbank *fb = tr_filterbank_open(o.input, &err);
    if (!fb) return usage_error("%s", err.message);
    const tr_filterbank_header *h = tr_filterbank_get_header(fb);
    cfg.dedisp.plan.nchan = h->nchans;
    cfg.dedisp.plan.fch1 = h->fch1;
    cfg.dedisp.plan.foff = h->foff;
    cfg.dedisp.plan.tsamp = h->tsamp;
    cfg.dedisp.raw_nbits = h->nbits;
    double *dms = NULL;
    uint8_t *used = NULL;
    int rc = 2;
    tr_frb *q = NULL;
    tr_frb_candidate *cands = NULL;
    size_t ncand = 0;
    if (o.dm_list) {
        dms = parse_dm_list(o.dm_list, &cfg.dedisp.plan.ndm_list);
        if (!dms) {
            usage_error("--dm-list: bad list '%s'", o.dm_list);
            goto done;
        }
        cfg.dedisp.plan.dm_list = dms;
    }
    if (o.mask) {
        used = malloc(h->nchans);
        if (!used) goto done;
        memset(used, 1, h->nchans);
        if (parse_mask(o.mask, used, h->nchans) != 0) {
            usage_error("--mask-chans: bad list '%s' (channels 0..%u)", o.mask,
                        h->nchans - 1);
            goto done;
        }
        cfg.dedisp.mask = used;
    }
    q = tr_frb_create(&cfg, &err);
    if (!q) {
        usage_error("%s: %s", o.input, err.message);
        goto done;
    }
    if (o.start > h->nsamples || o.samples > h->nsamples - o.start) {
        usage_error("%s: --start %llu --samples %llu: the file holds %llu spectra",
                    o.input, (unsigned long long)o.start, (unsigned long long)o.samples,
                    (unsigned long long)h->nsamples);
        goto done;
    }
    const uint64_t nsearch = o.samples ? o.samples : h->nsamples - o.start;
    if (nsearch <= (uint64_t)tr_frb_warmup(q)) {
        usage_error(
            "%s: %llu spectra: nothing to search after the first statistics window "
            "of %u samples (lower --window)",
            o.input, (unsigned long long)nsearch, tr_frb_warmup(q));
        goto done;
    }
    note_long_sweeps(q, &cfg.dedisp.plan, nsearch);
    if (tr_filterbank_seek(fb, o.start) != TR_OK) {
        usage_error("%s", tr_filterbank_last_error(fb));
        goto done;
    }
    frb_run_info info;
    memset(&info, 0, sizeof info);
    info.setup_seconds = now() - t0;
    rc = search_file(fb, q, h, cfg.block, &o, &cands, &ncand, &info);
    if (rc != 0) goto done;
    const double seconds = now() - t0;

    char params[2048], devices[256];
    params_json(params, sizeof params, &cfg, &o, q);
    devices_json(devices, sizeof devices, &cfg, q);
    info.path = o.input;
    info.hdr = h;
    info.frb = q;
    info.backend = tr_backend_name(tr_frb_backend(q));
    info.devices = devices;
    info.seconds = seconds;
    info.start = o.start;
    info.spectra = tr_frb_position(q);
    info.parameters = params;
    rc = write_output(o.output, (frb_out_format)fmt, cands, ncand, &info);
    if (!o.quiet && !rc)
        fprintf(
            stderr,
            PROG
            ": %zu candidates in %llu spectra (%.6g s) of %s, %u DM trials %.6g..%.6g, "
            "backend %s, %.3f s\n",
            ncand, (unsigned long long)tr_frb_position(q),
            (double)tr_frb_position(q) * h->tsamp, o.input, tr_frb_ndm(q),
            tr_frb_dms(q)[0], tr_frb_dms(q)[tr_frb_ndm(q) - 1],
            tr_backend_name(tr_frb_backend(q)), seconds);
done:
    free(cands);
    tr_frb_destroy(q);
    free(used);
    free(dms);
    tr_filterbank_close(fb);
    return rc;
}
