/* Opening an input file of the core's loaders (not installed). */
#ifndef TRANSIENT_FILE_OPEN_H
#define TRANSIENT_FILE_OPEN_H

#include <transient/common.h>

#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Open path for reading and give its size in bytes. Only a regular file is
 * accepted: a directory opens on some systems and reports a nonsense size, a
 * FIFO or device has none, and every loader bounds its header's counts by the
 * size before allocating. Messages start with `who` and name the file.
 */
FILE *tr_open_regular(const char *who, const char *path, uint64_t *size, tr_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TRANSIENT_FILE_OPEN_H */
