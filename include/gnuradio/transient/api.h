/* -*- c++ -*- */
/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 *
 * gr-transient: symbol visibility of the GNU Radio block library
 * (libgnuradio-transient).
 */

#ifndef INCLUDED_TRANSIENT_API_H
#define INCLUDED_TRANSIENT_API_H

#include <gnuradio/attributes.h>

#ifdef gnuradio_transient_EXPORTS
#define TRANSIENT_API __GR_ATTR_EXPORT
#else
#define TRANSIENT_API __GR_ATTR_IMPORT
#endif

#endif /* INCLUDED_TRANSIENT_API_H */
