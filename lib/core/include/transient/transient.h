/* gr-transient core library: umbrella header. */
#ifndef TRANSIENT_TRANSIENT_H
#define TRANSIENT_TRANSIENT_H

#include <transient/common.h>
#include <transient/statelevels.h>
#include <transient/edge_metrics.h>
#include <transient/edges.h>
#include <transient/spiir.h>
#include <transient/spiir_triggers.h>
#include <transient/spiir_chisq.h>
#include <transient/kalman.h>
#include <transient/boxcar.h>
#include <transient/boxcar_predict.h>
#include <transient/candidates.h>
#include <transient/frb.h>
#include <transient/filterbank.h>
#include <transient/dedisp.h>
#include <transient/whiten.h> /* functions present when built with FFTW3 */

#endif /* TRANSIENT_TRANSIENT_H */
