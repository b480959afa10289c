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

static char fz_path[64];

static void fz_remove(void)
{
    remove(fz_path);
}

/* A path of this process holding data[0 .. size) (static storage), removed
 * at exit. */
static const char *fz_file(const uint8_t *data, size_t size)
{
    if (!fz_path[0]) {
        /* memory-backed where there is one: a file is written per run */
        snprintf(fz_path, sizeof fz_path, "%s/tr_fuzz_%ld.bin",
                 access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp", (long)getpid());
        atexit(fz_remove);
    }
    FILE *f = fopen(fz_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) abort();
    return fz_path;
}

#endif /* TRANSIENT_FUZZ_LOADERS_H */
