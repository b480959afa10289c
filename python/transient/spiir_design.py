#
# Copyright 2026 gr-transient authors.
#
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Design of SPIIR filter banks from templates (complex, or real made analytic),
with numpy only.

Summed parallel IIR (SPIIR) filtering replaces the matched filter of a chirp by
a sum of first-order complex IIR filters (X. Guo et al., "Acceleration of
low-latency gravitational wave searches using Maxwell-microarchitecture GPUs",
equations 5-8); the filters are built as in S. Hooper et al., "Summed parallel
infinite impulse response filters for low-latency detection of chirping
gravitational waves", PRD 86, 024012 (2012):

  * the template h[n] = A[n] exp(i phi[n]) (n = 0..N-1, the last sample at the
    end of the chirp) is cut, from its end backwards, into segments whose
    length follows the phase's second derivative: a segment ending at sample j
    is  step = round(sqrt(2 epsilon / |phi''[j]|))  samples long, so that a
    linear phase misses the template's phase by about epsilon over it;
  * each segment gets one filter: its pole a1 = exp(-beta / step) exp(i w),
    with w = phi'[k] the template's local frequency at k = j - alpha step, so
    that the filter rings at the template's frequency and decays over about
    step / beta samples; its delay is the distance of the segment's end from
    the template's end, d = N - 1 - j;
  * the gains b0 are then found together by linear least squares, so that the
    summed impulse response  g[m] = 2 dt sum_l b0[l] a1[l]^(m - d[l]) (m >= d[l])
    is as close as possible to the matched filter  w[m] = conj(h[N - 1 - m]);
  * every filter is assigned the lowest sample rate (level: full rate / 2^level)
    whose usable band still holds its frequency.

The match reported is the normalised overlap |<g, w>| / (|g| |w|) over the
whole (infinite) impulse response. The bank is normalised so that, for real
white noise of unit variance, the real and imaginary parts of the SNR z each
have unit variance: |z| is the usual SNR, and a signal  s = A Re(h)  gives
|z| close to A x match at the sample where the chirp ends.

Everything here is plain numpy (no GNU Radio, no GPU):

    chirp = newtonian_chirp(4096, f_low=30, f_high=500, m1=1.4, m2=1.4)
    result = design(chirp.h, chirp.sample_rate)
    result.match, len(result.filters)
    bank = design_bank([chirp.h], chirp.sample_rate).bank   # a SpiirBank
"""

import math

import numpy as np

try:
    from .spiir_bank import FILTER_DTYPE, MAX_LEVEL, SpiirBank
    from .spiir_templates import analytic, trim_zeros
except ImportError:  # loaded as a plain module (no package)
    from spiir_bank import FILTER_DTYPE, MAX_LEVEL, SpiirBank
    from spiir_templates import analytic, trim_zeros

__all__ = [
    "MSUN_S", "MR_PASSBAND", "MR_LAG_PER_STEP", "Chirp", "DesignResult", "BankDesign",
    "chirp_mass", "newtonian_chirp", "design", "design_bank", "assign_levels",
    "impulse_response", "match", "matched_filter", "inject", "design_target",
    "sine_gaussian", "main"
]

MSUN_S = 4.925490947641267e-06  # G M_sun / c^3 in seconds
# Passband edge of the multirate resamplers, as a fraction of the rate a filter
# runs at (TR_SPIIR_MR_PASSBAND of <transient/spiir.h>).
MR_PASSBAND = 0.4
# A level-L filter of delay d makes the multirate output lag by
# max(0, MR_LAG_PER_STEP (2^L - 1) - d) full-rate samples (tr_spiir_latency:
# the resamplers' group delays 33 + 23, less the one sample the core absorbs).
MR_LAG_PER_STEP = 55
# Default latency budget of design() (full-rate samples): the multirate lag of
# a 0PN chirp bank designed without a budget. Whitened templates (IMR
# waveforms) put filters of small delay on deep levels and lag 4 to 7 times
# more without it (share/doc/gr-transient/spiir.md, "Latency budget").
DEFAULT_MAX_LATENCY = MR_LAG_PER_STEP


def _check_positive(name, v):
    try:
        v = float(v)
    except (TypeError, ValueError):
        raise ValueError("%s must be a number, got %r" % (name, v))
    if not (math.isfinite(v) and v > 0):
        raise ValueError("%s must be finite and > 0, got %r" % (name, v))
    return v


def chirp_mass(m1, m2):
    """Chirp mass (m1 m2)^(3/5) / (m1 + m2)^(1/5), in the units of m1 and m2."""
    m1 = _check_positive("m1", m1)
    m2 = _check_positive("m2", m2)
    return (m1 * m2)**0.6 / (m1 + m2)**0.2


class Chirp(object):
    """A sampled Newtonian chirp (see newtonian_chirp()).

    Attributes: h (complex128 analytic template, last sample at f_high),
    amplitude, phase (unwrapped, rad), freq (Hz) per sample, sample_rate,
    f_low, f_high, chirp_mass (solar masses), duration (s), cycles, tau_end (time
    from the last sample to coalescence, s).
    """

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __len__(self):
        return len(self.h)

    def __repr__(self):
        return ("Chirp(%d samples at %g Hz, %g..%g Hz, %.1f cycles, Mc %.4g Msun)" %
                (len(self.h), self.sample_rate, self.f_low, self.f_high, self.cycles,
                 self.chirp_mass))


def newtonian_chirp(sample_rate, f_low, f_high, m1=None, m2=None, duration=None, mc=None):
    """Newtonian (0PN) chirp from f_low up to f_high, sampled at sample_rate.

    The chirp is given either by the component masses m1, m2 (solar masses), by
    its chirp mass mc (solar masses), or by the duration (s) it takes from
    f_low to f_high (the chirp mass is then solved for). With tau the time to
    coalescence and M = G Mc / c^3:
        f(tau)   = (1 / pi) (5 / (256 tau))^(3/8) M^(-5/8)
        phi(tau) = -2 (tau / (5 M))^(5/8)          (gravitational-wave phase)
        A(tau)   ~ tau^(-1/4)                       (strain amplitude ~ f^(2/3))
    The template h = A exp(i phi) is normalised to sum |h|^2 = 2 (so that its
    real part, the signal a detector sees, has unit norm in white noise).
    Raises ValueError unless 0 < f_low < f_high < sample_rate / 2 and exactly
    one of (m1 and m2), mc, duration is given.
    """
    fs = _check_positive("sample_rate", sample_rate)
    f_low = _check_positive("f_low", f_low)
    f_high = _check_positive("f_high", f_high)
    if not f_low < f_high:
        raise ValueError("f_low (%g) must be below f_high (%g)" % (f_low, f_high))
    if not f_high < fs / 2:
        raise ValueError("f_high (%g Hz) must be below the Nyquist frequency (%g Hz)" %
                         (f_high, fs / 2))
    given = [m1 is not None or m2 is not None, mc is not None, duration is not None]
    if sum(given) != 1:
        raise ValueError("give the masses (m1 and m2), the chirp mass mc or the duration")
    if given[0]:
        if m1 is None or m2 is None:
            raise ValueError("give both m1 and m2")
        mc = chirp_mass(m1, m2)
    elif given[1]:
        mc = _check_positive("mc", mc)
    else:
        duration = _check_positive("duration", duration)
        # tau(f) = (5/256) M^(-5/3) (pi f)^(-8/3): solve tau(f_low) - tau(f_high).
        k = (5.0 / 256.0) * math.pi**(-8.0 / 3.0) * (f_low**(-8.0 / 3.0) -
                                                      f_high**(-8.0 / 3.0))
        mc = (k / duration)**0.6 / MSUN_S
    M = mc * MSUN_S

    def tau_of(f):
        return (5.0 / 256.0) * M**(-5.0 / 3.0) * (math.pi * f)**(-8.0 / 3.0)

    tau_low, tau_end = tau_of(f_low), tau_of(f_high)
    n = int(math.floor((tau_low - tau_end) * fs)) + 1
    if n < 16:
        raise ValueError("the chirp lasts %d samples; at least 16 are needed" % n)
    if n > 1 << 26:
        raise ValueError("the chirp lasts %d samples, more than %d" % (n, 1 << 26))
    tau = tau_end + np.arange(n - 1, -1, -1, dtype=np.float64) / fs
    phase = -2.0 * (tau / (5.0 * M))**0.625
    phase -= phase[0]
    freq = (1.0 / math.pi) * (5.0 / (256.0 * tau))**0.375 * M**(-0.625)
    amp = tau**-0.25
    h = amp * np.exp(1j * phase)
    norm = math.sqrt(2.0 / np.sum(np.abs(h)**2))
    return Chirp(h=h * norm, amplitude=amp * norm, phase=phase, freq=freq, sample_rate=fs,
                 f_low=f_low, f_high=f_high, chirp_mass=mc, duration=(n - 1) / fs,
                 cycles=(phase[-1] - phase[0]) / (2 * math.pi), tau_end=tau_end)


# ---- design ------------------------------------------------------------------


class DesignResult(object):
    """One designed template: filters (FILTER_DTYPE array), match, template
    length, the least-squares residual and the frequencies of the filters (Hz)."""

    def __init__(self, **kw):
        self.__dict__.update(kw)

    def __repr__(self):
        return "DesignResult(%d filters, match %.5f, levels %s)" % (
            len(self.filters), self.match, np.bincount(self.filters["level"]).tolist())


class BankDesign(object):
    """Designed bank: bank (SpiirBank) and results (one DesignResult per template)."""

    def __init__(self, bank, results):
        self.bank = bank
        self.results = results

    @property
    def matches(self):
        return np.array([r.match for r in self.results])


def _template(h):
    """complex128 analytic template from a real or complex array: leading and
    trailing exact zeros trimmed, a real array made analytic (h + i Hilbert(h),
    spiir_templates.analytic)."""
    h = np.asarray(h)
    if h.ndim != 1:
        raise ValueError("the template must be a one-dimensional array")
    if h.dtype.kind not in "fciu":
        raise ValueError("the template must be numeric, got %s" % h.dtype)
    if not np.all(np.isfinite(h)):
        raise ValueError("the template has non-finite samples")
    h = analytic(trim_zeros(h)[0])
    if len(h) < 16:
        raise ValueError("the template has %d samples; at least 16 are needed" % len(h))
    return h


def _powers(a, n):
    """a ** n for complex a (|a| < 1) and integer n >= 0 (arrays), via exp/log:
    exact enough in double and no overflow."""
    with np.errstate(under="ignore"):
        return np.exp(np.asarray(n, dtype=np.float64) * np.log(a))


def _gram(a1, delay):
    """G[l, m] = sum over m' >= 0 of conj(u_l[m']) u_m[m'] for the unit responses
    u_l[m'] = a1[l]^(m' - d[l]) (m' >= d[l]), in closed form."""
    dmax = np.maximum.outer(delay, delay)
    pl = _powers(np.conj(a1)[:, None], dmax - delay[:, None])
    pm = _powers(a1[None, :], dmax - delay[None, :])
    return pl * pm / (1.0 - np.outer(np.conj(a1), a1))


def _project(a1, delay, w, tol=1e-13):
    """c[l] = sum_m conj(u_l[m]) w[m] over the template's support."""
    n = len(w)
    c = np.zeros(len(a1), dtype=np.complex128)
    for l in range(len(a1)):
        d = int(delay[l])
        if d >= n:
            continue
        r = abs(a1[l])
        span = n - d
        if r > 0:
            span = min(span, int(math.ceil(math.log(tol) / math.log(r))) + 1)
        else:
            span = 1
        p = _powers(np.conj(a1[l]), np.arange(span))
        c[l] = np.dot(p, w[d:d + span])
    return c


def _solve(G, c):
    """Least-squares gains: G x = c for the Hermitian positive semi-definite Gram
    matrix G, with a tiny ridge against ill-conditioning (overlapping filters)."""
    scale = np.sqrt(np.real(np.diag(G)))
    scale[scale == 0] = 1.0
    Gn = G / np.outer(scale, scale)
    cn = c / scale
    ridge = 1e-10
    x = np.linalg.solve(Gn + ridge * np.eye(len(c)), cn)
    return x / scale


def assign_levels(freq, bandwidth, sample_rate, max_level=6, passband=MR_PASSBAND,
                  delay=None, max_latency=None):
    """Multirate level of each filter: the largest level L <= max_level with
        |freq| + bandwidth <= passband x sample_rate / 2^L,
    i.e. the filter's pole frequency, widened by its spectral half-width, stays
    inside the passband of the resamplers at the rate sample_rate / 2^L (the
    core's TR_SPIIR_MR_PASSBAND, 0.4 of that rate). freq and bandwidth in Hz.
    With max_latency (samples, needs the filters' delays), also
        MR_LAG_PER_STEP (2^L - 1) - delay <= max_latency,
    so that the multirate output lags the single-rate one by at most
    max_latency samples (0: no lag at all). Level 0 (full rate) when no lower
    rate fits."""
    fs = _check_positive("sample_rate", sample_rate)
    passband = _check_positive("passband", passband)
    if not passband <= 0.5:
        raise ValueError("passband must be in (0, 0.5] of the rate, got %r" % (passband,))
    if not (isinstance(max_level, (int, np.integer)) and 0 <= max_level <= MAX_LEVEL):
        raise ValueError("max_level must be an integer in [0, %d], got %r" %
                         (MAX_LEVEL, max_level))
    top = np.abs(np.asarray(freq, dtype=np.float64)) + np.abs(
        np.asarray(bandwidth, dtype=np.float64))
    if max_latency is not None:
        if not (isinstance(max_latency, (int, np.integer)) and max_latency >= 0):
            raise ValueError("max_latency must be an integer >= 0 or None, got %r" %
                             (max_latency,))
        if delay is None or np.shape(delay) != top.shape:
            raise ValueError("max_latency needs one delay per filter")
        delay = np.asarray(delay, dtype=np.float64)
    level = np.zeros(top.shape, dtype=np.int32)
    for L in range(1, max_level + 1):
        ok = top <= passband * fs / 2.0**L
        if max_latency is not None:
            ok &= MR_LAG_PER_STEP * (2**L - 1) - delay <= max_latency
        level[ok] = L
    return level


def design(h, sample_rate, epsilon=0.1, alpha=2.0, beta=0.15, max_level=6,
           passband=MR_PASSBAND, max_latency=DEFAULT_MAX_LATENCY, max_filters=8192):
    """SPIIR filters for one template h sampled at sample_rate (Hz): complex
    (analytic, A exp(i phi)) or real (made analytic); exact zeros at its ends
    are trimmed (see _template).

    epsilon   phase error allowed over a segment (rad): smaller -> more filters
    alpha     where the filter takes the template's frequency, in steps before
              its segment's end (0: at the end, 1: at the segment's start; more:
              earlier still, which suits filters that ring on into the earlier,
              lower-frequency part of the template), in [0, 4]
    beta      decay of a filter over its segment: |a1| = exp(-beta / step)
    max_level, passband, max_latency: see assign_levels() (max_level 0: single
              rate; max_latency: multirate lag allowed in full-rate samples,
              default DEFAULT_MAX_LATENCY, 0: none, None: no budget)
    max_filters  refuse (ValueError) to place more: the least squares hold an
              L x L complex matrix (8192 filters: 1 GiB)

    The defaults give a match of about 0.995 for Newtonian chirps of a few
    hundred to a few thousand cycles (378 filters for a 2515-cycle chirp, 148
    for a 307-cycle one: the count follows the chirp rate, not the cycles).

    Returns a DesignResult with filters (FILTER_DTYPE, delays in full-rate
    samples), match, step (samples per filter) and freq (Hz per filter).
    Raises ValueError for an unusable template or parameters.
    """
    fs = _check_positive("sample_rate", sample_rate)
    epsilon = _check_positive("epsilon", epsilon)
    beta = _check_positive("beta", beta)
    try:
        alpha = float(alpha)
    except (TypeError, ValueError):
        raise ValueError("alpha must be a number in [0, 4], got %r" % (alpha,))
    if not (0.0 <= alpha <= 4.0):
        raise ValueError("alpha must be in [0, 4], got %r" % (alpha,))
    h = _template(h)
    n = len(h)
    amp = np.abs(h)
    if np.any(amp == 0):
        raise ValueError("the template's amplitude vanishes inside it (at sample %d; its "
                         "phase is undefined there)" % int(np.flatnonzero(amp == 0)[0]))
    phi = np.unwrap(np.angle(h))
    dphi = np.gradient(phi)  # rad per sample
    ddphi = np.gradient(dphi)
    # Average the second derivative over 5 samples against round-off noise
    # (normalised at the ends).
    box = np.ones(5)
    ddphi = np.abs(np.convolve(ddphi, box, mode="same") /
                   np.convolve(np.ones(n), box, mode="same"))
    floor = 2.0 * epsilon / float(n)**2  # a step never exceeds the template
    ddphi = np.maximum(ddphi, floor)

    a1, delay, step_of, kpos = [], [], [], []
    j = n - 1
    while j >= 0:
        step = max(1, int(round(math.sqrt(2.0 * epsilon / ddphi[j]))))
        k = max(0, int(round(j - alpha * step)))
        w = dphi[k]
        a1.append(math.exp(-beta / step) * complex(math.cos(w), math.sin(w)))
        delay.append(n - 1 - j)
        step_of.append(step)
        kpos.append(k)
        if len(a1) > max_filters:
            raise ValueError("more than %d filters (max_filters): epsilon (%g) is too "
                             "small for this template" % (max_filters, epsilon))
        j -= step
    a1 = np.asarray(a1, dtype=np.complex128)
    delay = np.asarray(delay, dtype=np.int64)

    # Least squares: the matched filter w[m] = conj(h[n - 1 - m]).
    target = np.conj(h[::-1])
    G = _gram(a1, delay)
    c = _project(a1, delay, target)
    x = _solve(G, c)  # 2 dt b0
    gg = float(np.real(np.vdot(x, G @ x)))
    gw = np.vdot(x, c)  # = conj(<g, w>)... |.| is what matters
    ww = float(np.sum(np.abs(target)**2))
    m = abs(gw) / math.sqrt(gg * ww) if gg > 0 else 0.0
    # Unit-variance quadratures in unit white noise: |g|^2 = 2.
    x *= math.sqrt(2.0 / gg) if gg > 0 else 1.0
    b0 = x * fs / 2.0  # x = 2 dt b0

    freq = np.angle(a1) * fs / (2 * math.pi)
    bandwidth = -np.log(np.abs(a1)) * fs / (2 * math.pi)
    filters = np.zeros(len(a1), dtype=FILTER_DTYPE)
    filters["a1"] = a1
    filters["b0"] = b0
    filters["delay"] = delay
    filters["level"] = assign_levels(freq, bandwidth, fs, max_level, passband, delay,
                                     max_latency)
    return DesignResult(filters=filters, match=float(m), length=n,
                        step=np.asarray(step_of), freq=freq, sample_rate=fs)


def design_bank(templates, sample_rate, **kw):
    """design() for every template of a list; returns a BankDesign whose bank is a
    SpiirBank (dt = 1 / sample_rate). Keyword arguments go to design()."""
    if isinstance(templates, np.ndarray) and templates.ndim == 1:
        templates = [templates]
    templates = list(templates)
    if not templates:
        raise ValueError("no templates")
    results = [design(h, sample_rate, **kw) for h in templates]
    bank = SpiirBank([r.filters for r in results], 1.0 / float(sample_rate))
    return BankDesign(bank, results)


def design_target(h, sample_rate, target_match, epsilon_max=0.4, epsilon_min=1e-3,
                  iterations=6, **kw):
    """design() with a large epsilon (few filters) whose match reaches
    target_match. gstlal's SPIIR bank builder walks epsilon down in steps of
    0.001 from its start value until the match reaches req_min_match; here
    epsilon is halved from epsilon_max until the match reaches the target, then
    `iterations` bisection steps on log(epsilon) between that epsilon and the
    last one that missed move it up again (about 10 designs instead of
    hundreds). The match need not fall monotonically with epsilon, so the
    result is a passing epsilon, not necessarily the largest. Returns the
    DesignResult (its .epsilon says which); ValueError when no epsilon down to
    epsilon_min reaches the target. Other keyword arguments go to design()."""
    try:
        target_match = float(target_match)
    except (TypeError, ValueError):
        raise ValueError("target_match must be a number in (0, 1), got %r" % (target_match,))
    if not 0 < target_match < 1:
        raise ValueError("target_match must be in (0, 1), got %r" % (target_match,))
    epsilon_max = _check_positive("epsilon_max", epsilon_max)
    epsilon_min = _check_positive("epsilon_min", epsilon_min)
    if not epsilon_min <= epsilon_max:
        raise ValueError("epsilon_min (%g) must not exceed epsilon_max (%g)" %
                         (epsilon_min, epsilon_max))

    def run(eps):
        r = design(h, sample_rate, epsilon=eps, **kw)
        r.epsilon = eps
        return r

    best = run(epsilon_max)
    if best.match >= target_match:
        return best
    fail = epsilon_max
    while True:
        eps = max(fail / 2.0, epsilon_min)
        best = run(eps)
        if best.match >= target_match:
            break
        if eps <= epsilon_min:
            raise ValueError("the match %.4f at epsilon %g (%d filters) misses the target "
                             "%g" % (best.match, eps, len(best.filters), target_match))
        fail = eps
    lo, hi = math.log(best.epsilon), math.log(fail)
    for _ in range(int(iterations)):
        mid = 0.5 * (lo + hi)
        r = run(math.exp(mid))
        if r.match >= target_match:
            best, lo = r, mid
        else:
            hi = mid
    return best


# ---- analysis ----------------------------------------------------------------


def impulse_response(filters, sample_rate, n):
    """Summed impulse response g[m] = 2 dt sum_l b0 a1^(m - d) (m >= d), m < n,
    of one template's filters at the full rate (the single-rate bank)."""
    f = np.asarray(filters)
    dt = 1.0 / _check_positive("sample_rate", sample_rate)
    n = int(n)
    g = np.zeros(n, dtype=np.complex128)
    for a1, b0, d in zip(f["a1"], f["b0"], f["delay"]):
        d = int(d)
        if d >= n:
            continue
        g[d:] += 2.0 * dt * b0 * _powers(a1, np.arange(n - d))
    return g


def match(filters, h, sample_rate):
    """Normalised overlap |<g, w>| / (|g| |w|) of the filters' summed impulse
    response g (whole, infinite) with the matched filter w[m] = conj(h[N-1-m])."""
    f = np.asarray(filters)
    h = _template(h)
    fs = _check_positive("sample_rate", sample_rate)
    x = 2.0 / fs * f["b0"].astype(np.complex128)
    a1 = f["a1"].astype(np.complex128)
    delay = f["delay"].astype(np.int64)
    target = np.conj(h[::-1])
    gg = float(np.real(np.vdot(x, _gram(a1, delay) @ x)))
    gw = np.vdot(x, _project(a1, delay, target))
    ww = float(np.sum(np.abs(target)**2))
    return abs(gw) / math.sqrt(gg * ww) if gg > 0 else 0.0


def matched_filter(x, h):
    """Exact matched-filter output z[k] = sum_m x[k - m] conj(h[N - 1 - m]) of the
    stream x (FFT, zero history before x[0]): the oracle a SPIIR bank approximates
    (for a bank from design(), up to its match and normalisation)."""
    x = np.asarray(x)
    h = _template(h)
    n = len(x) + len(h) - 1
    nfft = 1 << int(math.ceil(math.log2(max(n, 2))))
    y = np.fft.ifft(np.fft.fft(x, nfft) * np.fft.fft(np.conj(h[::-1]), nfft))
    return y[:len(x)]


def inject(x, h, end, snr):
    """Add snr x Re(h) to x (in place and returned) so that the chirp's last
    sample lands on index `end` of x (the part before x[0] is cut). For real white
    noise of unit variance and a template normalised like newtonian_chirp(), the
    matched-filter SNR at `end` is then about snr."""
    x = np.asarray(x)
    h = _template(h)
    end = int(end)
    if not (0 <= end < len(x)):
        raise ValueError("end (%d) outside the stream [0, %d)" % (end, len(x)))
    start = end - len(h) + 1
    lo = max(0, start)
    x[lo:end + 1] += snr * h.real[lo - start:]
    return x


def sine_gaussian(sample_rate, f0, q, n, center):
    """A sine-Gaussian glitch exp(-(t - t0)^2 / (2 tau^2)) cos(2 pi f0 (t - t0)),
    tau = q / (2 pi f0), of n samples centred on sample `center`, unit norm:
    the usual model of a short instrumental transient (for signal-consistency
    tests against chirps)."""
    fs = _check_positive("sample_rate", sample_rate)
    f0 = _check_positive("f0", f0)
    q = _check_positive("q", q)
    t = (np.arange(int(n)) - float(center)) / fs
    tau = q / (2 * math.pi * f0)
    g = np.exp(-t**2 / (2 * tau**2)) * np.cos(2 * math.pi * f0 * t)
    return g / math.sqrt(np.sum(g**2))


# ---- command line ------------------------------------------------------------


def main(argv=None):
    """Design a bank of Newtonian chirps and write its bank file:
        python3 -m gnuradio.transient.spiir_design --rate 2048 --f-low 30 \\
            --f-high 300 --masses 1.4 1.4 --masses 10 10 -o bank.spiir
    Prints one line per template (cycles, filters, match, filters per level)."""
    import argparse
    ap = argparse.ArgumentParser(
        prog="spiir_design",
        description="Design a SPIIR bank of Newtonian chirp templates and write its bank "
        "file (share/doc/gr-transient/spiir.md).")
    ap.add_argument("-o", "--output", required=True, help="bank file to write")
    ap.add_argument("--rate", type=float, required=True, help="sample rate (Hz)")
    ap.add_argument("--f-low", type=float, required=True, help="lowest frequency (Hz)")
    ap.add_argument("--f-high", type=float, required=True, help="highest frequency (Hz)")
    ap.add_argument("--masses", type=float, nargs=2, action="append", default=[],
                    metavar=("M1", "M2"), help="a template by its masses (solar masses)")
    ap.add_argument("--mc", type=float, action="append", default=[],
                    help="a template by its chirp mass (solar masses)")
    ap.add_argument("--duration", type=float, action="append", default=[],
                    help="a template by its duration from f-low to f-high (s)")
    ap.add_argument("--epsilon", type=float, default=0.1)
    ap.add_argument("--alpha", type=float, default=2.0)
    ap.add_argument("--beta", type=float, default=0.15)
    ap.add_argument("--max-level", type=int, default=6)
    ap.add_argument("--max-latency", type=int, default=DEFAULT_MAX_LATENCY,
                    help="multirate lag allowed (samples; 0: none; default %d)" %
                    DEFAULT_MAX_LATENCY)
    ap.add_argument("--target-match", type=float, default=None,
                    help="search epsilon (design_target) until the match reaches this")
    args = ap.parse_args(argv)
    specs = ([dict(m1=m[0], m2=m[1]) for m in args.masses] +
             [dict(mc=m) for m in args.mc] + [dict(duration=d) for d in args.duration])
    if not specs:
        ap.error("give at least one template (--masses, --mc or --duration)")
    try:
        chirps = [newtonian_chirp(args.rate, args.f_low, args.f_high, **kw) for kw in specs]
        kw = dict(alpha=args.alpha, beta=args.beta, max_level=args.max_level,
                  max_latency=args.max_latency)
        if args.target_match is not None:
            results = [design_target(c.h, args.rate, args.target_match, **kw) for c in chirps]
            result = BankDesign(SpiirBank([r.filters for r in results], 1.0 / args.rate),
                                results)
        else:
            result = design_bank([c.h for c in chirps], args.rate, epsilon=args.epsilon, **kw)
        result.bank.save(args.output)
    except (ValueError, OSError) as e:
        ap.exit(1, "spiir_design: %s\n" % e)
    for t, (c, r) in enumerate(zip(chirps, result.results)):
        print("template %d: Mc %.4g Msun, %.1f s, %.0f cycles: %d filters, match %.4f, "
              "filters per level %s" % (t, c.chirp_mass, c.duration, c.cycles,
                                        len(r.filters), r.match,
                                        np.bincount(r.filters["level"]).tolist()))
    print("wrote %s: %d templates, %d filters, %g Hz" %
          (args.output, result.bank.ntemplates, int(result.bank.counts.sum()), args.rate))
    return 0


if __name__ == "__main__":
    import sys
    sys.exit(main())
