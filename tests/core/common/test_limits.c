/*
 * Sizes from a file header or a parameter are checked against the file or a
 * documented ceiling before anything is allocated (docs/reliability.md): the
 * Kalman model and SPIIR bank loaders (only regular files; the header's
 * counts against the file size) and the SPIIR trigger search's template count.
 */
#define _POSIX_C_SOURCE 200809L

#include <math.h>
#include <transient/kalman.h>
#include <transient/spiir.h>
#include <transient/spiir_triggers.h>

#include "common/test_util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

static void put_u32(unsigned char *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (unsigned char)(v >> (8 * i));
}

/* A Kalman model header declaring the largest model, and nothing else. */
static void test_kalman_header_only(const char *path)
{
    unsigned char head[16] = {'T', 'R', 'K', 'A', 'L', 'M', '0', '1'};
    put_u32(head + 8, TR_KALMAN_MAX_Q);
    put_u32(head + 12, TR_KALMAN_MAX_M);
    FILE *f = fopen(path, "wb");
    fwrite(head, 1, sizeof head, f);
    fclose(f);
    tr_error err;
    tr_kalman_model *m = tr_kalman_model_load(path, &err);
    CHECK(!m && err.code == TR_ERR_IO, "a header-only model file must be rejected");
    CHECK(strstr(err.message, "holds 16 bytes") && strstr(err.message, "truncated"),
          "message says the size: %s", err.message);
    tr_kalman_model_destroy(m);
}

static void test_directories(const char *dir)
{
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_load(dir, &err);
    CHECK(!b && err.code == TR_ERR_IO && strstr(err.message, "is a directory"),
          "a bank that is a directory: %s", err.message);
    tr_spiir_bank_destroy(b);
    tr_kalman_model *m = tr_kalman_model_load(dir, &err);
    CHECK(!m && err.code == TR_ERR_IO && strstr(err.message, "is a directory"),
          "a model that is a directory: %s", err.message);
    tr_kalman_model_destroy(m);
    m = tr_kalman_model_load("/nonexistent/model.bin", &err);
    CHECK(!m && err.code == TR_ERR_IO && strstr(err.message, "/nonexistent/model.bin"),
          "a missing model names the file: %s", err.message);
}

static void test_trigger_templates(void)
{
    tr_spiir_triggers_config c = tr_spiir_triggers_config_default();
    const uint32_t bad[] = {0, TR_SPIIR_MAX_TEMPLATES + 1, UINT32_MAX};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        c.ntemplates = bad[i];
        tr_error err;
        tr_spiir_triggers *q = tr_spiir_triggers_create(&c, &err);
        CHECK(!q && err.code == TR_ERR_INVALID, "ntemplates %u must be refused", bad[i]);
        tr_spiir_triggers_destroy(q);
    }
    c.ntemplates = 4096;
    tr_error err;
    tr_spiir_triggers *q = tr_spiir_triggers_create(&c, &err);
    CHECK(q != NULL, "ntemplates 4096: %s", err.message);
    tr_spiir_triggers_destroy(q);
}

int main(void)
{
    char dir[] = "/tmp/tr_limits_XXXXXX";
    if (!mkdtemp(dir)) return 1;
    char path[64];
    snprintf(path, sizeof path, "%s/model.bin", dir);
    test_kalman_header_only(path);
    test_directories(dir);
    test_trigger_templates();
    unlink(path);
    rmdir(dir);
    return tu_finish("test_limits");
}
