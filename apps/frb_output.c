/*
 * Writers of transient-frb (CSV, JSON, Heimdall .cand). Doubles are written
 * with 17 significant digits so that a reader gets the same values back.
 */
#include "frb_output.h"

#include <math.h>
#include <string.h>

int frb_out_format_of(const char *path)
{
    const char *dot = strrchr(path, '.');
    if (!dot) return -1;
    if (strcmp(dot, ".csv") == 0) return FRB_OUT_CSV;
    if (strcmp(dot, ".json") == 0) return FRB_OUT_JSON;
    if (strcmp(dot, ".cand") == 0) return FRB_OUT_CAND;
    return -1;
}

/* A JSON string (the names written here are file paths and header strings). */
static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        const unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20)
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void json_number(FILE *f, double v)
{
    if (isfinite(v))
        fprintf(f, "%.17g", v);
    else
        fputs("null", f);
}

static void write_csv(FILE *f, const tr_frb_candidate *c, size_t n)
{
    fputs("dm,time,sample,width,snr,members,dm_index,start,dm_index_lo,dm_index_hi,"
          "first,end\n",
          f);
    for (size_t i = 0; i < n; i++)
        fprintf(f, "%.17g,%.17g,%lld,%u,%.9g,%llu,%u,%lld,%u,%u,%lld,%lld\n", c[i].dm,
                c[i].time, (long long)c[i].sample, c[i].width, c[i].snr,
                (unsigned long long)c[i].members, c[i].dm_index, (long long)c[i].start,
                c[i].dm_index_lo, c[i].dm_index_hi, (long long)c[i].first,
                (long long)c[i].end);
}

static void write_cand(FILE *f, const tr_frb_candidate *c, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const int filter = (int)lround(log2((double)(c[i].width ? c[i].width : 1)));
        fprintf(f, "%.6g\t%lld\t%.9g\t%d\t%u\t%.6g\t%llu\t%lld\t%lld\n", c[i].snr,
                (long long)c[i].sample, c[i].time, filter, c[i].dm_index, c[i].dm,
                (unsigned long long)c[i].members, (long long)c[i].first,
                (long long)c[i].end - 1);
    }
}

static void write_json(FILE *f, const tr_frb_candidate *c, size_t n,
                       const frb_run_info *in)
{
    const tr_filterbank_header *h = in->hdr;
    fputs("{\"generator\": \"gr-transient transient-frb\",\n \"file\": ", f);
    json_string(f, in->path);
    fputs(",\n \"header\": {\"source_name\": ", f);
    json_string(f, h->source_name);
    fprintf(f,
            ", \"nchans\": %u, \"nbits\": %u, \"nsamples\": %llu, \"tsamp\": ", h->nchans,
            h->nbits, (unsigned long long)h->nsamples);
    json_number(f, h->tsamp);
    fputs(", \"fch1\": ", f);
    json_number(f, h->fch1);
    fputs(", \"foff\": ", f);
    json_number(f, h->foff);
    fputs(", \"tstart\": ", f);
    json_number(f, h->tstart);
    fputs("},\n", f);
    const uint32_t ndm = tr_frb_ndm(in->frb);
    const double *dms = tr_frb_dms(in->frb);
    fprintf(
        f,
        " \"plan\": {\"dm_trials\": %u, \"max_delay_samples\": %u, \"warmup_samples\": "
        "%u, \"dms\": [",
        ndm, tr_frb_max_delay(in->frb), tr_frb_warmup(in->frb));
    for (uint32_t d = 0; d < ndm; d++) {
        if (d) fputs(", ", f);
        json_number(f, dms[d]);
    }
    fputs("]},\n \"parameters\": ", f);
    fputs(in->parameters ? in->parameters : "{}", f);
    fprintf(f,
            ",\n \"processed\": {\"start\": %llu, \"spectra\": %llu, \"searched\": %llu, "
            "\"peaks\": %llu, \"backend\": ",
            (unsigned long long)in->start, (unsigned long long)in->spectra,
            (unsigned long long)tr_frb_searched(in->frb),
            (unsigned long long)tr_frb_peaks(in->frb));
    json_string(f, in->backend);
    fprintf(f, ", \"devices\": %s", in->devices ? in->devices : "[]");
    fputs(", \"seconds\": ", f);
    json_number(f, in->seconds);
    const tr_frb_timing tm = tr_frb_get_timing(in->frb);
    const struct {
        const char *name;
        double v;
    } stages[] = {{"setup", in->setup_seconds}, {"read_wait", in->read_wait},
                  {"process", in->process},     {"flush", in->flush},
                  {"dedisp", tm.dedisp},        {"search", tm.search},
                  {"candidates", tm.candidates}};
    fputs(", \"stage_seconds\": {", f);
    for (size_t k = 0; k < sizeof stages / sizeof stages[0]; k++) {
        fprintf(f, "%s\"%s\": ", k ? ", " : "", stages[k].name);
        json_number(f, stages[k].v);
    }
    fputc('}', f);
    fprintf(f, ", \"candidates\": %zu},\n \"candidates\": [", n);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",\n  {\"dm\": " : "\n  {\"dm\": ", f);
        json_number(f, c[i].dm);
        fputs(", \"time\": ", f);
        json_number(f, c[i].time);
        fprintf(f, ", \"sample\": %lld, \"width\": %u, \"snr\": ", (long long)c[i].sample,
                c[i].width);
        json_number(f, c[i].snr);
        fprintf(
            f,
            ", \"members\": %llu, \"dm_index\": %u, \"start\": %lld, "
            "\"dm_index_lo\": %u, \"dm_index_hi\": %u, \"first\": %lld, \"end\": %lld}",
            (unsigned long long)c[i].members, c[i].dm_index, (long long)c[i].start,
            c[i].dm_index_lo, c[i].dm_index_hi, (long long)c[i].first,
            (long long)c[i].end);
    }
    fputs("]}\n", f);
}

int frb_write(FILE *f, frb_out_format fmt, const tr_frb_candidate *c, size_t n,
              const frb_run_info *info)
{
    if (fmt == FRB_OUT_CSV)
        write_csv(f, c, n);
    else if (fmt == FRB_OUT_CAND)
        write_cand(f, c, n);
    else
        write_json(f, c, n, info);
    return fflush(f) == 0 && !ferror(f) ? 0 : -1;
}
