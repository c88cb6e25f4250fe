/* SPDX-License-Identifier: Apache-2.0 */
/*
 * The CPython minor an input's selector byte names, from the supported
 * range (lib/cpython/version.h), so that a port widens the fuzz targets and
 * their seeds by itself; the committed inputs keep their meaning while the
 * range stays.
 */
#ifndef PYBPF_FUZZ_MINORS_H
#define PYBPF_FUZZ_MINORS_H

#include "cpython/version.h"

/* any supported minor */
#define FUZZ_MINOR_ANY(b)                                                                      \
	(PY_MINOR_FIRST_SUPPORTED + (b) % (PY_MINOR_LAST_SUPPORTED - PY_MINOR_FIRST_SUPPORTED + 1))

/* the minors with a _Py_DebugOffsets layout (3.13 to the last), with the
 * one below and the one above them, which have none */
#define FUZZ_MINOR_DEBUG(b) (12 + (b) % (PY_MINOR_LAST_SUPPORTED - 10))

#endif
