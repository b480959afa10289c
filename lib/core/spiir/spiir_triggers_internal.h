/*
 * SPIIR triggers, internal: the choice of the FAST variant's scan kernel (for
 * tests and benchmarks).
 *
 * Paper: X. Guo, Q. Chu, S. K. Chung, Z. Du, L. Wen, "Acceleration of
 * low-latency gravitational wave searches using Maxwell-microarchitecture GPUs".
 */
#ifndef TRANSIENT_SPIIR_TRIGGERS_INTERNAL_H
#define TRANSIENT_SPIIR_TRIGGERS_INTERNAL_H

#ifdef __cplusplus
extern "C" {
#endif

/* The FAST variant's scan kernel: "generic", "avx2" or NULL for the best this
 * CPU supports. Returns 0 if unavailable. Every kernel gives the same triggers
 * (the kernel only says which samples need the exact test). Process-wide: call
 * it while no trigger search runs. */
int tr_spiir_triggers_select(const char *kernel);

/* The kernel in use: "generic" or "avx2". */
const char *tr_spiir_triggers_kernel(void);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_SPIIR_TRIGGERS_INTERNAL_H */
