/*
 * transient-bench: throughput of the libtransient detectors against the
 * ceilings of the machine they run on.
 *
 *   transient-bench --detector edges ...           (bench_edges.c)
 *   transient-bench --detector spiir ...           (bench_spiir.c)
 *   transient-bench --detector spiir-triggers ...  (bench_spiir_triggers.c)
 *   transient-bench --detector boxcar ...          (bench_boxcar.c)
 *   transient-bench --detector kalman ...          (bench_kalman.c)
 *   transient-bench --detector dedisp ...          (bench_dedisp.c)
 *
 * Each detector's benchmark parses the rest of the command line itself; the
 * edge localizer's also reports a missing or unknown --detector.
 */
#include "transient_bench.h"

#include "bench_host.h"

#include <transient/common.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const bench_variant_names[4] = {"reference", "cpu-fast", "cuda-fast",
                                            "cuda-paper"};

int bench_parse_size(const char *s, size_t *v)
{
    char *end;
    const unsigned long long x = strtoull(s, &end, 0);
    if (*s == '\0' || *end != '\0') return -1;
    *v = (size_t)x;
    return 0;
}

int bench_parse_variants(const char *v, int want[4])
{
    char list[256];
    snprintf(list, sizeof list, "%s", v);
    for (int k = 0; k < 4; k++)
        want[k] = 0;
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int found = 0;
        for (int k = 0; k < 4; k++)
            if (strcmp(tok, bench_variant_names[k]) == 0) want[k] = found = 1;
        if (!found) {
            fprintf(stderr, "transient-bench: unknown variant '%s'\n", tok);
            return -1;
        }
    }
    return 0;
}

int bench_parse_run_option(const char *a, const char *v, int *repeat, uint64_t *seed,
                           int *device, size_t *batch)
{
    size_t z;
    if (bench_parse_size(v, &z) != 0) return 0;
    if (strcmp(a, "--repeat") == 0 && z >= 1 && z < BENCH_MAX_REPEAT)
        *repeat = (int)z;
    else if (strcmp(a, "--seed") == 0)
        *seed = (uint64_t)z;
    else if (strcmp(a, "--device") == 0 && z < 1024)
        *device = (int)z;
    else if (strcmp(a, "--batch") == 0 && z > 0)
        *batch = z;
    else
        return 0;
    return 1;
}

int bench_cuda_probe(int device, int explicit_variants, const int want[4], char *why,
                     size_t why_len)
{
    const int ndev = tr_cuda_device_count(why, why_len);
    const int have_cuda = ndev > device;
    if (!have_cuda && ndev > 0) snprintf(why, why_len, "device %d not present", device);
    if (!have_cuda && explicit_variants && (want[2] || want[3])) {
        fprintf(stderr, "transient-bench: CUDA variants requested but unavailable: %s\n",
                why);
        return -1;
    }
    return have_cuda;
}

int bench_device_fma(int have_cuda, int device, tr_bench_device_info *info,
                     double *gpu_fma)
{
    *gpu_fma = 0.0;
    memset(info, 0, sizeof *info);
    if (!have_cuda) return 0;
    tr_status s = tr_bench_device_info_get(device, info);
    if (s == TR_OK) s = tr_bench_device_fma_rate(device, 10, gpu_fma);
    if (s != TR_OK) {
        fprintf(stderr, "transient-bench: device measurements failed: %s\n",
                tr_bench_last_error());
        return 1;
    }
    return 0;
}

void bench_json_env_head(const char *detector, const char *cpu_name, double cpu_fma,
                         const char *fma_kind)
{
    char esc[512];
    bh_json_escape(esc, sizeof esc, cpu_name);
    printf("{\"type\":\"env\",\"detector\":\"%s\",\"library_version\":\"%s\","
           "\"cuda_compiled\":%d,\"cpu_model\":\"%s\",\"host_fma_1core_flops\":%.6g,"
           "\"host_fma_kind\":\"%s\",",
           detector, tr_version(), tr_cuda_compiled(), esc, cpu_fma, fma_kind);
}

static int g_failed;

void bench_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "transient-bench: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    g_failed = 1;
}

int bench_failed(void)
{
    return g_failed;
}

static void usage(void)
{
    printf("usage: transient-bench --detector DETECTOR [options]\n"
           "Throughput of the libtransient detectors against the measured ceilings of\n"
           "this machine (host and device bandwidths, FMA rate).\n\n"
           "  --detector edges           edge localizer (the default's options)\n"
           "  --detector boxcar          boxcar single-pulse search\n"
           "  --detector spiir           SPIIR bank, single-rate and multirate\n"
           "  --detector spiir-triggers  SPIIR trigger search\n"
           "  --detector kalman          Kalman-bank detector\n"
           "  --version                  print the version and exit\n\n"
           "transient-bench --detector DETECTOR --help lists the options of one.\n");
}

int main(int argc, char **argv)
{
    int has_detector = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--version") == 0) {
            printf("transient-bench %s\n", tr_version());
            return 0;
        }
        has_detector |= strcmp(argv[i], "--detector") == 0;
    }
    for (int i = 1; i < argc && !has_detector; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return 0;
        }
    }
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--detector") != 0) continue;
        if (strcmp(argv[i + 1], "spiir") == 0) return spiir_bench_main(argc, argv);
        if (strcmp(argv[i + 1], "kalman") == 0) return kalman_bench_main(argc, argv);
        if (strcmp(argv[i + 1], "boxcar") == 0) return boxcar_bench_main(argc, argv);
        if (strcmp(argv[i + 1], "dedisp") == 0) return dedisp_bench_main(argc, argv);
        if (strcmp(argv[i + 1], "spiir-triggers") == 0)
            return spiir_triggers_bench_main(argc, argv);
    }
    return edges_bench_main(argc, argv);
}
