// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/offsets_debug.c: _Py_DebugOffsets as copied from &_PyRuntime of a
 * (possibly hostile) 3.13+ process. Input: minor selector (1 byte,
 * FUZZ_MINOR_DEBUG: layouts for 13 to the last supported and two without
 * one), then the raw table. Seeds: the tables of the real 3.13, 3.14 and
 * 3.15 interpreters.
 */
#include "cpython/offsets_debug.h"
#include "fuzz_common.h"
#include "fuzz_minors.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	int minor = FUZZ_MINOR_DEBUG(fuzz_u8(&in));
	struct py_offsets o;
	uint64_t hex = 0;
	bool ft = false;
	char err[160], tiny[8];
	uint8_t *raw = fuzz_dup(in.p, in.n);

	FUZZ_CHECK(debug_offsets_size(minor) <= DEBUG_OFFSETS_MAX_BYTES);
	if (debug_offsets_decode(raw, in.n, minor, &o, &hex, &ft, err, sizeof(err)) == 0) {
		FUZZ_CHECK(((hex >> 16) & 0xff) == (uint64_t)minor && ((hex >> 24) & 0xff) == 3);
		(void)py_offsets_missing(&o, minor);
		/*
		 * What the frame and code readers rely on (they index copied
		 * structs with these): absent, or an offset into a struct. The
		 * GIL ones are derived, and a negative one counts as absent.
		 */
		for (size_t i = 0; i < py_offsets_count(); i++) {
			int32_t v = py_offsets_value_at(&o, i);

			if (strncmp(py_offsets_name_at(i), "gil_", 4) == 0)
				continue;
			if (v < PY_OFFSET_ABSENT || v > (1 << 20) + 16)
				fprintf(stderr, "3.%d %s = %d\n", minor, py_offsets_name_at(i), v);
			FUZZ_CHECK(v >= PY_OFFSET_ABSENT && v <= (1 << 20) + 16);
		}
	} else {
		FUZZ_CHECK(strlen(err) < sizeof(err));
	}
	(void)debug_offsets_decode(raw, in.n, minor, &o, &hex, &ft, tiny, sizeof(tiny));
	free(raw);
	return 0;
}
