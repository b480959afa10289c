/* Opening an input file of the core's loaders (common/file_open.h). */
#define _POSIX_C_SOURCE 200809L

#include "common/file_open.h"

#include "common/core_util.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>

FILE *tr_open_regular(const char *who, const char *path, uint64_t *size, tr_error *err)
{
    if (!path) {
        tr_fail(err, TR_ERR_INVALID, "%s: NULL path", who);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        tr_fail(err, TR_ERR_IO, "%s: cannot open %s: %s", who, path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        tr_fail(err, TR_ERR_IO, "%s: cannot stat %s: %s", who, path, strerror(errno));
        fclose(f);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        tr_fail(err, TR_ERR_IO, "%s: %s is %s, not a regular file", who, path,
                S_ISDIR(st.st_mode) ? "a directory" : "a special file");
        fclose(f);
        return NULL;
    }
    *size = (uint64_t)st.st_size;
    return f;
}
