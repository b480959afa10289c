/*
 * transient-bench: throughput of the libtransient detectors against the
 * ceilings of the machine they run on.
 *
 *   transient-bench --detector edges ...           (bench_edges.c)
 *   transient-bench --detector spiir ...           (bench_spiir.c)
 *   transient-bench --detector spiir-triggers ...  (bench_spiir_triggers.c)
 *   transient-bench --detector boxcar ...          (bench_boxcar.c)
 *   transient-bench --detector kalman ...          (bench_kalman.c)
 *
 * Each detector's benchmark parses the rest of the command line itself; the
 * edge localizer's also reports a missing or unknown --detector.
 */
#include "transient_bench.h"

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

int main(int argc, char **argv)
{
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--detector") != 0) continue;
        if (strcmp(argv[i + 1], "spiir") == 0) return spiir_bench_main(argc, argv);
        if (strcmp(argv[i + 1], "kalman") == 0) return kalman_bench_main(argc, argv);
        if (strcmp(argv[i + 1], "boxcar") == 0) return boxcar_bench_main(argc, argv);
        if (strcmp(argv[i + 1], "spiir-triggers") == 0)
            return spiir_triggers_bench_main(argc, argv);
    }
    return edges_bench_main(argc, argv);
}
