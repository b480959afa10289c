/* Where the buffers of a launcher call lie (its on_device argument). */
#ifndef TRANSIENT_CUDA_DEVICE_SRC_H
#define TRANSIENT_CUDA_DEVICE_SRC_H

enum {
    TR_SRC_HOST = 0,          /* host memory */
    TR_SRC_CALLER_DEVICE = 1, /* device memory the caller filled: the call first
                                 waits for the caller's stream (tr_cuda_caller_ready) */
    TR_SRC_OWN_DEVICE = 2     /* device memory this library wrote, complete or
                                 ordered before the call on its stream (a
                                 pipeline's own stage): no wait */
};

#endif /* TRANSIENT_CUDA_DEVICE_SRC_H */
