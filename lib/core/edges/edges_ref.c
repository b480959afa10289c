/*
 * Edge localizer, reference variant: the serial definition of Khambadkar,
 * Barford and Harris (Section I), one sample at a time. "The measured samples
 * are processed in order. During the processing, the last logic level attained
 * and the first pair of samples bracketing m after the signal enters the region
 * are retained. When the state changes ... the transition time obtained from
 * the most recent bracketing pair of samples is output."
 * This is the oracle every other variant is tested against.
 */
#include "edges/edges_internal.h"

#include <math.h>

size_t tr_edges_run_reference(tr_edges_lv lv, tr_edges_carry *c, const float *x, size_t n,
                              tr_edge *out, size_t cap, size_t *consumed)
{
    size_t nout = 0;
    size_t i;
    for (i = 0; i < n; i++) {
        const float xi = x[i];
        const int level = tr_edges_level(xi, lv);
        const int is_transition =
            c->state != TR_STATE_NONE && level != TR_STATE_NONE && level != c->state;

        /* A transition that does not fit: stop before this sample. */
        if (is_transition && nout == cap) break;

        /* First bracketing pair of m, in the direction away from the old state,
         * since the signal last was in the old state. */
        if (c->state != TR_STATE_NONE && !c->has_cand && c->has_prev &&
            tr_edges_finite(c->x_prev) && tr_edges_finite(xi)) {
            const float xp = c->x_prev;
            const int rising = xp < lv.mid && lv.mid <= xi;
            const int falling = xi < lv.mid && lv.mid <= xp;
            if ((c->state == TR_STATE_LOW && rising) ||
                (c->state == TR_STATE_HIGH && falling)) {
                c->cand = tr_edges_cross_time(c->pos - 1, xp, xi, lv.mid);
                c->has_cand = 1;
            }
        }

        if (level == c->state) {
            /* Back in (or still in) the old state: earlier crossings were runts. */
            c->has_cand = 0;
        } else if (level != TR_STATE_NONE) {
            if (is_transition) {
                tr_edge *e = &out[nout++];
                e->time = c->has_cand ? c->cand : NAN;
                e->sample = c->pos;
                e->polarity = level == TR_STATE_HIGH ? 1 : -1;
                e->reserved = 0;
            }
            c->state = level;
            c->has_cand = 0;
        }
        c->x_prev = xi;
        c->has_prev = 1;
        c->pos++;
    }
    *consumed = i;
    return nout;
}
