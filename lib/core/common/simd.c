/*
 * Run-time choice of SIMD kernels (common/simd.h). The state is published with
 * atomic loads and stores, so that a choice made by one thread is seen whole
 * by the others; the automatic choice depends only on the CPU, so threads that
 * make it at the same time agree.
 */
#include "common/simd.h"

#include <string.h>

/* Set in the cached feature word once the CPU has been asked. */
#define FEATURES_KNOWN (1u << 31)

unsigned tr_cpu_features(void)
{
    static unsigned cached = 0;
    unsigned f = __atomic_load_n(&cached, __ATOMIC_RELAXED);
    if (f & FEATURES_KNOWN) return f & ~FEATURES_KNOWN;
    f = 0;
#ifdef TR_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("sse2")) f |= TR_CPU_SSE2;
    if (__builtin_cpu_supports("avx2")) f |= TR_CPU_AVX2;
    if (__builtin_cpu_supports("fma")) f |= TR_CPU_FMA;
#endif
    __atomic_store_n(&cached, f | FEATURES_KNOWN, __ATOMIC_RELAXED);
    return f;
}

static const tr_simd_kernel *entry(const tr_simd_table *t, size_t i)
{
    return (const tr_simd_kernel *)((const char *)t->entries + i * t->size);
}

static int supported(const tr_simd_kernel *k)
{
    return (k->needs & ~tr_cpu_features()) == 0;
}

/* The last automatic entry the CPU supports; the generic one comes first and
 * needs nothing. */
static const tr_simd_kernel *best(const tr_simd_table *t)
{
    const tr_simd_kernel *b = entry(t, 0);
    for (size_t i = 1; i < t->count; i++) {
        const tr_simd_kernel *k = entry(t, i);
        if (!k->named_only && supported(k)) b = k;
    }
    return b;
}

const void *tr_simd_get(tr_simd_table *t)
{
    const tr_simd_kernel *k = __atomic_load_n(&t->chosen, __ATOMIC_ACQUIRE);
    if (k) return k;
    /* Only if nothing was chosen meanwhile: a concurrent select wins. */
    const tr_simd_kernel *none = NULL, *b = best(t);
    if (__atomic_compare_exchange_n(&t->chosen, &none, b, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return b;
    return none;
}

int tr_simd_select(tr_simd_table *t, const char *name)
{
    const tr_simd_kernel *k = NULL;
    if (!name) {
        k = best(t);
    } else {
        for (size_t i = 0; i < t->count && !k; i++)
            if (!strcmp(entry(t, i)->name, name)) k = entry(t, i);
        if (!k || !supported(k)) return 0;
    }
    __atomic_store_n(&t->chosen, k, __ATOMIC_RELEASE);
    return 1;
}
