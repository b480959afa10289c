/*
 * SIMD kernels chosen at run time, in the VOLK manner (not installed).
 *
 * A detector lists its kernels in a table, generic first and then in rising
 * order of preference; each entry starts with a tr_simd_kernel (its name, the
 * CPU features it needs) followed by the detector's function pointers:
 *
 *   typedef struct {
 *       tr_simd_kernel info;
 *       scan_fn scan;
 *   } scan_kernel;
 *   static const scan_kernel kernels[] = {
 *       {{"generic", 0, 0}, scan_generic},
 *   #ifdef TR_X86
 *       {{"avx2", TR_CPU_AVX2, 0}, scan_avx2},
 *   #endif
 *   };
 *   static tr_simd_table table = TR_SIMD_TABLE(kernels);
 *
 *   const scan_kernel *k = tr_simd_get(&table);
 *
 * The first tr_simd_get chooses the last entry the CPU supports that is not
 * `named_only`; tr_simd_select forces an entry by name (for tests and
 * benchmarks). Both are safe to call from several threads: the choice is made
 * once and published atomically. Selecting by name while another thread runs
 * a kernel of the same table is allowed, but which kernel that thread uses is
 * then unspecified.
 */
#ifndef TRANSIENT_SIMD_H
#define TRANSIENT_SIMD_H

#include <stddef.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TR_X86 1
/* Functions that use AVX2 (and FMA) instructions; call them only through a
 * kernel whose entry needs those features. */
#define TR_AVX2     __attribute__((target("avx2")))
#define TR_AVX2_FMA __attribute__((target("avx2,fma")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* CPU features a kernel may need. */
#define TR_CPU_SSE2 (1u << 0)
#define TR_CPU_AVX2 (1u << 1)
#define TR_CPU_FMA  (1u << 2)

/* Features of this CPU (TR_CPU_* bits; 0 off x86). */
unsigned tr_cpu_features(void);

/* Head of every kernel table entry. */
typedef struct {
    const char *name; /* what tr_simd_select takes */
    unsigned needs;   /* TR_CPU_* bits the kernel needs */
    int named_only;   /* never chosen automatically, only by name */
} tr_simd_kernel;

/* A detector's kernel table and the entry in use. */
typedef struct {
    /* `count` entries of `size` bytes, each starting with a tr_simd_kernel */
    const void *entries;
    size_t count, size;
    const tr_simd_kernel *chosen; /* NULL until the first tr_simd_get or select */
} tr_simd_table;

#define TR_SIMD_TABLE(entries)                                                           \
    {                                                                                    \
        (entries), sizeof(entries) / sizeof((entries)[0]), sizeof((entries)[0]), NULL    \
    }

/* The entry in use (cast to the detector's entry type): the one selected by
 * name, else the best this CPU supports. */
const void *tr_simd_get(tr_simd_table *t);

/* Use the entry called `name`, or with NULL the best this CPU supports.
 * Returns 1, or 0 (nothing changed) when no entry has that name or the CPU
 * lacks a feature it needs. */
int tr_simd_select(tr_simd_table *t, const char *name);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_SIMD_H */
