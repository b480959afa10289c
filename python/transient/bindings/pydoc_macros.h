/*
 * Copyright 2026 gr-transient authors.
 *
 * SPDX-License-Identifier: GPL-3.0-or-later
 */
/*
 * DOC(gr, transient, edge_localizer_f, make) names the docstring variable
 * __doc_gr_transient_edge_localizer_f_make of the pydoc headers, as in the
 * binding layout of GNU Radio 3.10 (docstrings/<block>_pydoc_template.h).
 */
#ifndef INCLUDED_TRANSIENT_PYDOC_MACROS_H
#define INCLUDED_TRANSIENT_PYDOC_MACROS_H

#define TR_PYDOC_EXPAND(x)                           x
#define TR_PYDOC_NTH(_1, _2, _3, _4, _5, _6, N, ...) N
#define TR_PYDOC_NARGS(...)                                                              \
    TR_PYDOC_EXPAND(TR_PYDOC_NTH(__VA_ARGS__, 6, 5, 4, 3, 2, 1, 0))
#define TR_PYDOC_JOIN_(a, b)         a##b
#define TR_PYDOC_JOIN(a, b)          TR_PYDOC_JOIN_(a, b)
#define TR_PYDOC_1(a)                __doc_##a
#define TR_PYDOC_2(a, b)             __doc_##a##_##b
#define TR_PYDOC_3(a, b, c)          __doc_##a##_##b##_##c
#define TR_PYDOC_4(a, b, c, d)       __doc_##a##_##b##_##c##_##d
#define TR_PYDOC_5(a, b, c, d, e)    __doc_##a##_##b##_##c##_##d##_##e
#define TR_PYDOC_6(a, b, c, d, e, f) __doc_##a##_##b##_##c##_##d##_##e##_##f
#define DOC(...)                                                                         \
    TR_PYDOC_EXPAND(TR_PYDOC_JOIN(TR_PYDOC_, TR_PYDOC_NARGS(__VA_ARGS__))(__VA_ARGS__))

#endif /* INCLUDED_TRANSIENT_PYDOC_MACROS_H */
