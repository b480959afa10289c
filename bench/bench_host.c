/* Host measurements shared by the transient-bench detector benchmarks. */
#define _POSIX_C_SOURCE 200809L
#include "bench_host.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

double bh_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double bh_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void bh_json_escape(char *dst, size_t cap, const char *s)
{
    size_t o = 0;
    for (; *s && o + 7 < cap; s++) {
        const unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            dst[o++] = '\\';
            dst[o++] = (char)c;
        } else if (c < 0x20) {
            o += (size_t)snprintf(dst + o, cap - o, "\\u%04x", c);
        } else {
            dst[o++] = (char)c;
        }
    }
    dst[o] = '\0';
}

void bh_cpu_model(char *buf, size_t cap)
{
    snprintf(buf, cap, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "model name", 10) == 0) {
            const char *p = strchr(line, ':');
            if (p) {
                p++;
                while (*p == ' ' || *p == '\t')
                    p++;
                snprintf(buf, cap, "%s", p);
                buf[strcspn(buf, "\n")] = '\0';
            }
            break;
        }
    }
    fclose(f);
}

#if defined(__GNUC__) && defined(__x86_64__)
typedef float bh_v8 __attribute__((vector_size(32)));

/* Eight independent chains of 8-wide FMAs: enough in flight to fill both FMA
 * ports. */
__attribute__((target("avx2,fma"))) static double fma_avx2(long iters)
{
    bh_v8 v[8], a, b;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 8; i++)
            v[k][i] = (float)(k + i) * 1e-3f;
    for (int i = 0; i < 8; i++)
        a[i] = 0.999f, b[i] = 1e-3f;
    for (long it = 0; it < iters; it++)
        for (int k = 0; k < 8; k++)
            v[k] = __builtin_ia32_vfmaddps256(v[k], a, b);
    float s = 0.0f;
    for (int k = 0; k < 8; k++)
        for (int i = 0; i < 8; i++)
            s += v[k][i];
    return (double)s;
}
#endif

static double fma_scalar(long iters)
{
    float v[8];
    for (int k = 0; k < 8; k++)
        v[k] = (float)k * 1e-3f;
    for (long it = 0; it < iters; it++)
        for (int k = 0; k < 8; k++)
            v[k] = v[k] * 0.999f + 1e-3f;
    return (double)(v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]);
}

static volatile double g_fma_sink;

double bh_host_fma_rate(const char **how)
{
    const long iters = 20000000;
    double best = 0.0;
    for (int r = 0; r < 3; r++) {
        const double t0 = bh_now();
        double flops;
#if defined(__GNUC__) && defined(__x86_64__)
        if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
            g_fma_sink += fma_avx2(iters);
            flops = 2.0 * 64.0 * (double)iters;
            *how = "avx2-fma";
        } else
#endif
        {
            g_fma_sink += fma_scalar(iters);
            flops = 2.0 * 8.0 * (double)iters; /* mul + add counted as one FMA */
            *how = "scalar";
        }
        const double rate = flops / (bh_now() - t0);
        if (rate > best) best = rate;
    }
    return best;
}
