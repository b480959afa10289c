/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: Kalman-bank detector of a Gaussian signal in Gaussian noise.
 */

#ifndef INCLUDED_TRANSIENT_KALMAN_DETECTOR_FF_H
#define INCLUDED_TRANSIENT_KALMAN_DETECTOR_FF_H

#include <gnuradio/sync_block.h>
#include <gnuradio/transient/api.h>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace gr
{
namespace transient
{

/*!
 * \brief Optimal online detector of a Gaussian burst of known statistics and
 * duration in coloured Gaussian noise (Kalman bank, Nossenson and Jaffe).
 * \ingroup transient
 *
 * \details
 * A thin shell over the Kalman-bank detector of libtransient
 * (transient/kalman.h). M offset hypotheses, each a Kalman filter with a state of
 * 2Q, give per sample the log-likelihood ratio (LLR) of "the burst began at most
 * N_s samples ago" against "no burst / burst long gone"; the decision is
 * LLR > threshold.
 *
 * The model comes either from a model file written by the core library
 * (tr_kalman_model_save, \p model_file not empty) or is designed from
 * parameters: the noise is AR(\p noise_ar) driven by variance \p noise_var plus
 * white measurement noise \p meas_var; the burst is AR(\p target_ar) driven by
 * variance \p target_var times an envelope over its M-1 samples (\p envelope:
 * "rect", "exp", "gauss", "raised_cosine"; \p env_param is the decay constant of
 * "exp" and the width of "gauss", in samples).
 *
 * Output 0: the LLR (float), one per input sample, no delay.
 * Output 1 (optional): the decision, 1.0 while LLR > threshold, else 0.0.
 *
 * Stream tags on every connected output, as GNU Radio's burst tagger does:
 *   key "burst", value PMT true on the first sample of a detection,
 *   PMT false on the first sample after it (absolute offsets).
 *
 * Message port "detects": one message per finished detection,
 *   dict {"start": uint64, first sample with decision 1,
 *         "end": uint64, first sample with decision 0 after it,
 *         "peak": uint64, sample of the highest LLR,
 *         "peak_llr": double,
 *         "onset": uint64, estimated burst onset (peak - k* + 1 with k* the most
 *                  probable offset hypothesis at the peak)}
 *
 * Non-finite input samples are treated as missing (the filters predict
 * without an update); the detector never stays stuck.
 *
 * Backend "auto" uses the CUDA backend when a usable GPU is present and falls
 * back to the CPU otherwise (one log line says why); "cuda" fails without a
 * usable GPU. With the CUDA backend the block works in multiples of \p batch
 * samples, which is also the latency it adds.
 */
class TRANSIENT_API kalman_detector_ff : virtual public gr::sync_block
{
  public:
    typedef std::shared_ptr<kalman_detector_ff> sptr;

    /*!
     * \brief Make a Kalman-bank detector block.
     *
     * \param M           hypotheses (>= 3); the burst lasts M-1 samples
     * \param Ns          hypotheses 1..Ns count as "present" (1 <= Ns < M)
     * \param threshold   decision threshold on the LLR
     * \param alpha       per-sample onset prior, 0 < alpha < 1
     * \param noise_ar    noise AR coefficients (stable)
     * \param noise_var   noise innovation variance (> 0)
     * \param meas_var    white measurement noise variance (>= 0)
     * \param target_ar   burst AR coefficients (stable)
     * \param target_var  burst innovation variance at envelope 1 (> 0)
     * \param envelope    "rect", "exp", "gauss" or "raised_cosine"
     * \param env_param   "exp": decay constant, "gauss": width, in samples (> 0)
     * \param model_file  model file to load instead of designing (empty: design)
     * \param backend     "auto", "cpu" or "cuda"
     * \param device      CUDA device index
     * \param batch       CUDA: samples per device batch and output multiple
     *
     * \throws std::invalid_argument on invalid parameters (the core's message)
     * \throws std::runtime_error when the model file cannot be read or the
     *         backend cannot be used
     */
    static sptr make(unsigned int M = 92, unsigned int Ns = 46, double threshold = 0.0,
                     double alpha = 1e-9,
                     const std::vector<double> &noise_ar = std::vector<double>{0.5},
                     double noise_var = 1.0, double meas_var = 0.0,
                     const std::vector<double> &target_ar = std::vector<double>{0.9},
                     double target_var = 1.0, const std::string &envelope = "rect",
                     double env_param = 10.0, const std::string &model_file = "",
                     const std::string &backend = "auto", int device = 0,
                     size_t batch = 65536);

    /*!
     * \brief Design a model from the parameters make() designs from and write it
     * as a model file (tr_kalman_model_save), the file \p model_file loads.
     *
     * \throws std::invalid_argument on invalid parameters (the core's message)
     * \throws std::runtime_error when the file cannot be written
     */
    static void save_model(const std::string &path, unsigned int M,
                           const std::vector<double> &noise_ar, double noise_var,
                           double meas_var, const std::vector<double> &target_ar,
                           double target_var, const std::string &envelope = "rect",
                           double env_param = 10.0);

    /*!
     * \brief Set the decision threshold (from the next sample).
     * \throws std::invalid_argument unless finite
     */
    virtual void set_threshold(double threshold) = 0;

    /*!
     * \brief Set N_s, the hypotheses counted as "present" (from the next sample).
     * \throws std::invalid_argument unless 1 <= Ns < M
     */
    virtual void set_ns(unsigned int Ns) = 0;

    /*!
     * \brief Set the onset prior alpha (from the next sample).
     * \throws std::invalid_argument unless 0 < alpha < 1
     */
    virtual void set_alpha(double alpha) = 0;

    //! Decision threshold in use
    virtual double threshold() const = 0;
    //! N_s in use
    virtual unsigned int ns() const = 0;
    //! alpha in use
    virtual double alpha() const = 0;
    //! Number of hypotheses M of the model
    virtual unsigned int M() const = 0;
    //! AR order Q of the model (state size 2Q)
    virtual unsigned int Q() const = 0;
    //! Non-finite input samples treated as missing so far
    virtual uint64_t nonfinite() const = 0;
    //! Backend actually in use: "cpu" or "cuda" ("auto" resolved)
    virtual std::string backend() const = 0;
};

} // namespace transient
} // namespace gr

#endif /* INCLUDED_TRANSIENT_KALMAN_DETECTOR_FF_H */
