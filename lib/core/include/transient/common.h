/*
 * gr-transient core library: status codes, error reporting, backend selection.
 *
 * Every detector object of libtransient follows one pattern (liquid-dsp style):
 *   tr_<det>_config cfg = tr_<det>_config_default();
 *   tr_error err;
 *   tr_<det> *q = tr_<det>_create(&cfg, &err);   (NULL on failure, err says why)
 *   tr_<det>_process(q, ...);                      (any number of samples, state kept)
 *   tr_<det>_reset(q);
 *   tr_<det>_destroy(q);
 * The library never prints, exits or aborts: failures come back as tr_status codes
 * with a message (tr_<det>_last_error() for calls on an existing object).
 */
#ifndef TRANSIENT_COMMON_H
#define TRANSIENT_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <transient/version.h> /* TR_VERSION_*: generated from the CMake project version */

#ifdef __cplusplus
extern "C" {
#endif

/* Status codes returned by every fallible call. */
typedef enum {
    TR_OK = 0,
    TR_ERR_INVALID = -1,   /* an argument or configuration value is out of range */
    TR_ERR_NOMEM = -2,     /* host or device memory allocation failed */
    TR_ERR_CUDA = -3,      /* a CUDA runtime call or kernel launch failed */
    TR_ERR_NO_DEVICE = -4, /* CUDA requested but no usable GPU (or built without CUDA) */
    TR_ERR_UNSUPPORTED = -5, /* operation not available for this backend or variant */
    TR_ERR_STATE = -6,       /* call not valid in the object's current state */
    TR_ERR_IO = -7           /* file could not be read or parsed */
} tr_status;

/* Maximum length of an error message, terminating NUL included. */
#define TR_ERROR_MESSAGE_LEN 256

/* Error out-parameter of the create functions. */
typedef struct {
    tr_status code;                     /* TR_OK on success */
    char message[TR_ERROR_MESSAGE_LEN]; /* human-readable reason, "" on success */
} tr_error;

/* Short fixed description of a status code (never NULL). */
const char *tr_strerror(tr_status code);

/* Where a detector runs. */
typedef enum {
    TR_BACKEND_AUTO = 0, /* CUDA when a usable GPU is present, otherwise CPU */
    TR_BACKEND_CPU = 1,  /* host CPU */
    TR_BACKEND_CUDA = 2  /* NVIDIA GPU through the CUDA runtime; error if unusable */
} tr_backend;

/* Which implementation of a detector runs on the chosen backend. */
typedef enum {
    TR_VARIANT_FAST = 0,      /* the optimized variant of the backend (default) */
    TR_VARIANT_REFERENCE = 1, /* plain scalar C that reads like the paper (CPU only) */
    TR_VARIANT_PAPER = 2      /* the paper's own GPU design, kept as a baseline (CUDA) */
} tr_variant;

const char *tr_backend_name(tr_backend b);
const char *tr_variant_name(tr_variant v);

/* Library version as "major.minor.patch". */
const char *tr_version(void);

/* 1 when the library was built with CUDA support, 0 otherwise. */
int tr_cuda_compiled(void);

/*
 * Number of usable CUDA devices (0 when built without CUDA, when no driver is
 * loaded or no GPU is present). When 0 and why != NULL, a reason is written.
 */
int tr_cuda_device_count(char *why, size_t why_len);

/* Name of CUDA device `device` into name (empty string when unavailable). */
tr_status tr_cuda_device_name(int device, char *name, size_t name_len);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_COMMON_H */
