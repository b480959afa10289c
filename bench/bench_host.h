/* Host measurements shared by the transient-bench detector benchmarks: clock,
 * medians, JSON strings, the CPU's name and one core's FP32 FMA rate (the
 * ceiling of the CPU variants). */
#ifndef TRANSIENT_BENCH_HOST_H
#define TRANSIENT_BENCH_HOST_H

#include <stddef.h>

/* Monotonic wall clock in seconds. */
double bh_now(void);

/* Median of v[0..n-1] (sorts v in place). */
double bh_median(double *v, int n);

/* Copy s into a JSON string body (quotes and control characters escaped). */
void bh_json_escape(char *dst, size_t cap, const char *s);

/* "model name" of /proc/cpuinfo, or "unknown". */
void bh_cpu_model(char *buf, size_t cap);

/* One core's FP32 FMA rate in flop/s (2 per FMA), best of three runs of
 * independent FMA chains: AVX2+FMA where the CPU has them, else scalar;
 * *how says which ("avx2-fma" or "scalar"). */
double bh_host_fma_rate(const char **how);

#endif /* TRANSIENT_BENCH_HOST_H */
