/*
 * libFuzzer target: the SPIIR bank file loader (tr_spiir_bank_load). Any
 * bytes: a bank or an error with a message, never an allocation sized by an
 * unchecked header. A loaded bank must save and load again to the same
 * templates and filters.
 */
#include <transient/spiir.h>

#include "fuzz_input.h"
#include "fuzz_loaders.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const char *path = fz_file(data, size);
    tr_error err;
    tr_spiir_bank *b = tr_spiir_bank_load(path, &err);
    FZ_REQUIRE(b || err.message[0]);
    if (b) {
        FZ_REQUIRE(tr_spiir_bank_save(b, path, &err) == TR_OK);
        tr_spiir_bank *l = tr_spiir_bank_load(path, &err);
        FZ_REQUIRE(l && tr_spiir_bank_templates(l) == tr_spiir_bank_templates(b) &&
                   tr_spiir_bank_total_filters(l) == tr_spiir_bank_total_filters(b));
        tr_spiir_bank_destroy(l);
    }
    tr_spiir_bank_destroy(b);
    return 0;
}
