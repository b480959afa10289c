/* Pulse widths, periods and duty cycles derived from consecutive transitions. */
#include <transient/edges.h>

#include <math.h>

size_t tr_edges_to_pulses(const tr_edge *edges, size_t n, tr_pulse *out)
{
    if (!edges || !out || n < 2) return 0;
    for (size_t i = 0; i + 1 < n; i++) {
        tr_pulse *p = &out[i];
        p->start = edges[i].time;
        p->width = edges[i + 1].time - edges[i].time; /* NaN propagates */
        /* The next transition of the same polarity closes one period. */
        p->period = NAN;
        for (size_t j = i + 1; j < n; j++) {
            if (edges[j].polarity == edges[i].polarity) {
                p->period = edges[j].time - edges[i].time;
                break;
            }
        }
        p->duty = p->width / p->period;
        p->polarity = edges[i].polarity;
        p->reserved = 0;
    }
    return n - 1;
}
