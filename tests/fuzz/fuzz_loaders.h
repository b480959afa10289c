/*
 * The file loaders' fuzz targets: the input is written to a private file
 * (the loaders take a path) and loaded.
 */
#ifndef TRANSIENT_FUZZ_LOADERS_H
#define TRANSIENT_FUZZ_LOADERS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* A path of this process holding data[0 .. size) (static storage). */
static const char *fz_file(const uint8_t *data, size_t size)
{
    static char path[64];
    if (!path[0]) snprintf(path, sizeof path, "/tmp/tr_fuzz_%ld.bin", (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
    return path;
}

#endif /* TRANSIENT_FUZZ_LOADERS_H */
