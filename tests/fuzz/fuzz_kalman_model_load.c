/*
 * libFuzzer target: the Kalman model file loader (tr_kalman_model_load). Any
 * bytes: a model or an error with a message, never an allocation sized by an
 * unchecked header (libFuzzer's malloc limit reports one). A loaded model
 * must save and load again to the same sizes.
 */
#include <transient/kalman.h>

#include "fuzz_input.h"
#include "fuzz_loaders.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_file(data, size);
    tr_error err;
    tr_kalman_model *m = tr_kalman_model_load(path, &err);
    FZ_REQUIRE(m || err.message[0]);
    if (m) {
        FZ_REQUIRE(tr_kalman_model_save(m, path, &err) == TR_OK);
        tr_kalman_model *l = tr_kalman_model_load(path, &err);
        FZ_REQUIRE(l && tr_kalman_model_Q(l) == tr_kalman_model_Q(m) &&
                   tr_kalman_model_M(l) == tr_kalman_model_M(m));
        tr_kalman_model_destroy(l);
    }
    tr_kalman_model_destroy(m);
    return 0;
}
