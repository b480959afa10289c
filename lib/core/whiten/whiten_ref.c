/*
 * Reference whitening: the convolution with the whitening filter summed
 * literally in double (<transient/whiten.h>, "Whitening"):
 * z[t] = sum_{j=-half}^{half} h[j] x[t - j], here with the taps shifted to
 * causal form, taps[m] = h[m - half], so out[i] = z[position of i - half].
 */
#include "whiten/whiten_internal.h"

#include <stddef.h>

void tr_whiten_blocks_ref(const double *taps, size_t ntaps, const float *in, size_t nout,
                          float *out)
{
    for (size_t i = 0; i < nout; ++i) {
        const float *xi = in + ntaps - 1 + i; /* the sample at out[i]'s position */
        double acc = 0.0;
        for (size_t m = 0; m < ntaps; ++m)
            acc += taps[m] * (double)xi[-(ptrdiff_t)m];
        out[i] = (float)acc;
    }
}
