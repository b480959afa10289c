/*
 * transient-bench: the entry point of each detector's benchmark (one file
 * each, bench_<detector>.c) and the option parsing and failure reporting they
 * share (transient_bench.c).
 */
#ifndef TRANSIENT_BENCH_TRANSIENT_BENCH_H
#define TRANSIENT_BENCH_TRANSIENT_BENCH_H

#include "bench_device.h"

#include <stddef.h>
#include <stdint.h>

/* Most timed runs --repeat accepts (exclusive). */
#define BENCH_MAX_REPEAT 101

/* The variants of --variants, in the order of the want[] flags. */
extern const char *const bench_variant_names[4];

/* A size option: any strtoull base (0x.., 0..), the whole string; 0, or -1. */
int bench_parse_size(const char *s, size_t *v);

/* --variants a,b,...: want[k] = 1 for each named variant (names of
 * bench_variant_names); 0, or -1 on an unknown name. */
int bench_parse_variants(const char *v, int want[4]);

/* One of --repeat, --seed, --device or --batch with its value v, the same
 * limits for every detector: 1 when a names one of them and v is valid (the
 * value stored), else 0. */
int bench_parse_run_option(const char *a, const char *v, int *repeat, uint64_t *seed,
                           int *device, size_t *batch);

/* Whether CUDA device `device` can run the CUDA variants (1) or not (0, why
 * says why); -1 after saying so on stderr when --variants named a CUDA
 * variant (explicit_variants, want[2] or want[3]) that cannot run. */
int bench_cuda_probe(int device, int explicit_variants, const int want[4], char *why,
                     size_t why_len);

/* When have_cuda, the device's properties and FP32 FMA rate (zeros otherwise);
 * 0, or 1 after saying on stderr why the measurements failed. */
int bench_device_fma(int have_cuda, int device, tr_bench_device_info *info,
                     double *gpu_fma);

/* The opening fields of a detector's JSON env line, up to host_fma_kind and
 * its trailing comma. */
void bench_json_env_head(const char *detector, const char *cpu_name, double cpu_fma,
                         const char *fma_kind);

/* Print "transient-bench: <message>" on stderr and mark the run failed. */
void bench_fail(const char *fmt, ...);

/* Whether bench_fail was called. */
int bench_failed(void);

/* Each detector's benchmark with the whole command line; returns the exit
 * status. edges_bench_main also answers for no or an unknown --detector. */
int edges_bench_main(int argc, char **argv);
int spiir_bench_main(int argc, char **argv);
int spiir_triggers_bench_main(int argc, char **argv);
int boxcar_bench_main(int argc, char **argv);
int kalman_bench_main(int argc, char **argv);
int dedisp_bench_main(int argc, char **argv);

#endif /* TRANSIENT_BENCH_TRANSIENT_BENCH_H */
