/*
 * Tests of the split clustering (<transient/candidates_split.h>): random
 * search outputs whose channels are cut into parts, each part giving its
 * peaks at its own pace (ahead of the others by a lag of its own, in random
 * pieces down to one position), merged after every call, against one
 * tr_candidates_process over all channels given the same calls: the same
 * events, call by call and after the flush, for random linking rules. Also
 * the errors (parts that do not add up, peaks out of order or range, a part
 * that does not exist, device selection without devices).
 */
#include <stdlib.h>
#include <string.h>

#include "candidates_test_streams.h"
#include "common/test_util.h"

#include <transient/candidates_split.h>

#define MAX_EVENTS 100000

/* The peaks of positions [k0, k1) of channels [c0, c0 + nc) of a time-major
 * plane of nchan channels, as a part gives them: k from k0, c from c0. */
static size_t part_peaks(const float *snr, const int32_t *width, uint32_t nchan,
                         size_t k0, size_t k1, uint32_t c0, uint32_t nc, float threshold,
                         tr_candidates_peak *pk)
{
    size_t m = 0;
    for (size_t k = k0; k < k1; k++)
        for (uint32_t c = 0; c < nc; c++) {
            const float s = snr[k * nchan + c0 + c];
            if (!(s >= threshold)) continue;
            const tr_candidates_peak p = {(uint32_t)(k - k0), c,
                                          width[k * nchan + c0 + c], s};
            pk[m++] = p;
        }
    return m;
}

/* Events read from a and b so far: the same list. */
static void compare_reads(tr_candidates *a, tr_candidates *b, tr_candidate *ea,
                          tr_candidate *eb, const char *what, uint64_t seed)
{
    const size_t na = tr_candidates_read(a, ea, MAX_EVENTS);
    const size_t nb = tr_candidates_read(b, eb, MAX_EVENTS);
    CHECK(na == nb, "%s (seed %llu): %zu events, one search %zu", what,
          (unsigned long long)seed, nb, na);
    int same = na == nb;
    for (size_t i = 0; same && i < na; i++)
        same = cts_same(&ea[i], &eb[i]);
    CHECK(same, "%s (seed %llu): the events differ from one search's", what,
          (unsigned long long)seed);
}

static void one_case(uint64_t seed)
{
    tu_rng r = {seed};
    const uint32_t nchan = (uint32_t)tu_range(&r, 1, 48);
    const size_t n = (size_t)tu_range(&r, 500, 4000);
    const uint32_t np = (uint32_t)tu_range(&r, 1, nchan < 6 ? nchan : 6);
    tr_candidates_config cc = tr_candidates_config_default();
    cc.nchan = nchan;
    cc.threshold = (float)(5.0 + 3.0 * tu_uniform(&r));
    cc.link_time = (uint32_t)tu_range(&r, 0, 3);
    cc.link_chan = (uint32_t)tu_range(&r, 0, 6);
    cc.link_width = tu_range(&r, 0, 1) ? 2.0 : 0.0;
    cc.max_span = tu_range(&r, 0, 3) == 0 ? 60 : 0;

    float *snr = malloc(n * nchan * sizeof *snr);
    int32_t *width = malloc(n * nchan * sizeof *width);
    tr_candidates_peak *pk = malloc(n * nchan * sizeof *pk);
    tr_candidate *ea = malloc(MAX_EVENTS * sizeof *ea);
    tr_candidate *eb = malloc(MAX_EVENTS * sizeof *eb);
    tr_error err;
    tr_candidates *one = tr_candidates_create(&cc, &err);
    tr_candidates *c = tr_candidates_create(&cc, &err);
    CHECK(snr && width && pk && ea && eb && one && c, "setup (seed %llu)",
          (unsigned long long)seed);
    if (!snr || !width || !pk || !ea || !eb || !one || !c) goto done;
    cts_stream(&r, n, nchan, 2.0, 150, 16, snr, width);

    /* Parts: channel counts >= 1 adding up to nchan; lags: how far each part
     * runs ahead of the merged position (the last one not at all). */
    uint32_t nc[8], c0[8];
    size_t lag[8], given[8];
    uint32_t left = nchan;
    for (uint32_t j = 0; j < np; j++) {
        nc[j] = j + 1 == np ? left : (uint32_t)tu_range(&r, 1, left - (np - 1 - j));
        c0[j] = nchan - left;
        left -= nc[j];
        lag[j] = j + 1 == np ? 0 : (size_t)tu_range(&r, 0, 300);
        given[j] = 0;
    }
    tr_candidates_split *s = tr_candidates_split_create(c, np, nc, NULL, &err);
    CHECK(s != NULL, "split create (seed %llu): %s", (unsigned long long)seed,
          err.message);
    if (!s) goto done;

    const size_t most = tu_range(&r, 0, 2) == 0 ? 3 : 700;
    for (size_t done = 0; done < n;) {
        size_t len = (size_t)tu_range(&r, 1, (long)most);
        if (len > n - done) len = n - done;
        tr_status st =
            tr_candidates_process(one, snr + done * nchan, width + done * nchan, len);
        CHECK(st == TR_OK, "one search: %s", tr_candidates_last_error(one));
        done += len;
        for (uint32_t j = 0; j < np; j++) {
            const size_t to = done + lag[j] < n ? done + lag[j] : n;
            while (given[j] < to) {
                size_t m = (size_t)tu_range(&r, 1, (long)most);
                if (m > to - given[j]) m = to - given[j];
                const size_t npk = part_peaks(snr, width, nchan, given[j], given[j] + m,
                                              c0[j], nc[j], cc.threshold, pk);
                st = tr_candidates_split_add(s, j, pk, npk, m, &err);
                CHECK(st == TR_OK, "add: %s", err.message);
                given[j] += m;
            }
        }
        st = tr_candidates_split_merge(s, &err);
        CHECK(st == TR_OK, "merge: %s", err.message);
        CHECK(tr_candidates_position(c) == (int64_t)done,
              "merged up to %lld after %zu positions (seed %llu)",
              (long long)tr_candidates_position(c), done, (unsigned long long)seed);
        compare_reads(one, c, ea, eb, "call", seed);
    }
    CHECK(tr_candidates_split_kept(s) == 0, "peaks kept after the last merge");
    CHECK(tr_candidates_flush(one) == TR_OK && tr_candidates_flush(c) == TR_OK, "flush");
    compare_reads(one, c, ea, eb, "flush", seed);
    CHECK(tr_candidates_peaks(one) == tr_candidates_peaks(c), "peaks %llu, one %llu",
          (unsigned long long)tr_candidates_peaks(c),
          (unsigned long long)tr_candidates_peaks(one));

    /* reset: the parts start again at the clustering's position */
    CHECK(tr_candidates_reset(c) == TR_OK && tr_candidates_split_reset(s) == TR_OK,
          "reset");
    for (uint32_t j = 0; j < np; j++)
        CHECK(tr_candidates_split_position(s, j) == 0, "part %u after reset", j);
    tr_candidates_split_destroy(s);
done:
    tr_candidates_destroy(one);
    tr_candidates_destroy(c);
    free(snr);
    free(width);
    free(pk);
    free(ea);
    free(eb);
}

/* A part ahead keeps its peaks until the others reach them. */
static void test_kept(void)
{
    tr_candidates_config cc = tr_candidates_config_default();
    cc.nchan = 4;
    cc.threshold = 6.0f;
    tr_error err;
    tr_candidates *c = tr_candidates_create(&cc, &err);
    const uint32_t nc[2] = {1, 3};
    tr_candidates_split *s = tr_candidates_split_create(c, 2, nc, NULL, &err);
    CHECK(c && s, "create: %s", err.message);
    if (!c || !s) return;
    const tr_candidates_peak a[2] = {{3, 0, 2, 9.0f}, {20, 0, 1, 7.0f}};
    CHECK(tr_candidates_split_add(s, 0, a, 2, 30, &err) == TR_OK, "add: %s", err.message);
    CHECK(tr_candidates_split_merge(s, &err) == TR_OK, "merge");
    CHECK(tr_candidates_position(c) == 0 && tr_candidates_split_kept(s) == 2,
          "nothing merged while part 1 is at 0 (position %lld, kept %zu)",
          (long long)tr_candidates_position(c), tr_candidates_split_kept(s));
    const tr_candidates_peak b[1] = {{4, 2, 1, 8.0f}};
    CHECK(tr_candidates_split_add(s, 1, b, 1, 10, &err) == TR_OK, "add: %s", err.message);
    CHECK(tr_candidates_split_merge(s, &err) == TR_OK, "merge");
    CHECK(tr_candidates_position(c) == 10 && tr_candidates_split_kept(s) == 1,
          "merged up to 10 with one peak kept (position %lld, kept %zu)",
          (long long)tr_candidates_position(c), tr_candidates_split_kept(s));
    CHECK(tr_candidates_split_position(s, 0) == 30 &&
              tr_candidates_split_position(s, 1) == 10,
          "part positions");
    CHECK(tr_candidates_peaks(c) == 2, "two peaks clustered, got %llu",
          (unsigned long long)tr_candidates_peaks(c));
    tr_candidates_split_destroy(s);
    tr_candidates_destroy(c);
}

static void test_errors(void)
{
    tr_candidates_config cc = tr_candidates_config_default();
    cc.nchan = 5;
    tr_error err;
    tr_candidates *c = tr_candidates_create(&cc, &err);
    const uint32_t bad[2] = {2, 2};
    CHECK(tr_candidates_split_create(c, 2, bad, NULL, &err) == NULL &&
              strstr(err.message, "4 channels"),
          "parts of 4 channels for 5: %s", err.message);
    const uint32_t zero[2] = {5, 0};
    CHECK(tr_candidates_split_create(c, 2, zero, NULL, &err) == NULL &&
              strstr(err.message, "no channels"),
          "a part of no channels: %s", err.message);
    CHECK(tr_candidates_split_create(c, 0, bad, NULL, &err) == NULL, "no parts");
    CHECK(tr_candidates_split_create(NULL, 2, bad, NULL, &err) == NULL, "no clustering");
    const uint32_t nc[2] = {2, 3};
    tr_candidates_split *s = tr_candidates_split_create(c, 2, nc, NULL, &err);
    CHECK(s != NULL, "create: %s", err.message);
    if (!s) {
        tr_candidates_destroy(c);
        return;
    }
    const tr_candidates_peak order[2] = {{5, 1, 1, 9.0f}, {5, 0, 1, 9.0f}};
    CHECK(tr_candidates_split_add(s, 0, order, 2, 10, &err) == TR_ERR_INVALID &&
              strstr(err.message, "out of order"),
          "peaks out of order: %s", err.message);
    const tr_candidates_peak chan[1] = {{5, 2, 1, 9.0f}};
    CHECK(tr_candidates_split_add(s, 0, chan, 1, 10, &err) == TR_ERR_INVALID,
          "channel 2 of a part of 2");
    const tr_candidates_peak pos[1] = {{10, 0, 1, 9.0f}};
    CHECK(tr_candidates_split_add(s, 0, pos, 1, 10, &err) == TR_ERR_INVALID,
          "position 10 of 10");
    CHECK(tr_candidates_split_position(s, 0) == 0, "a refused add gives nothing");
    CHECK(tr_candidates_split_add(s, 2, NULL, 0, 10, &err) == TR_ERR_INVALID,
          "part 2 of 2");
    CHECK(tr_candidates_split_add(s, 0, NULL, 1, 10, &err) == TR_ERR_INVALID,
          "NULL peaks");
    const float v[5] = {0};
    CHECK(tr_boxcar_candidates_split_select(s, 0, NULL, 0, v, NULL, 1, 0, &err) ==
              TR_ERR_UNSUPPORTED,
          "selection without devices: %s", err.message);
    tr_candidates_split_destroy(s);
    tr_candidates_destroy(c);
}

int main(void)
{
    for (uint64_t seed = 1; seed <= 60; seed++)
        one_case(seed);
    test_kept();
    test_errors();
    return tu_finish("test_candidates_split");
}
