// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/version.c: version strings found in a binary or in the live
 * Py_GetVersion() buffer, interpreter file names from /proc/PID/maps, and
 * PY_VERSION_HEX values (Py_Version, _Py_DebugOffsets.version).
 * Input: 4 bytes of hex value, then a string (parsed as a version string
 * and as a file name).
 */
#include "fuzz_common.h"
#include "cpython/version.h"

static void same_version(const struct py_version *a, const struct py_version *b)
{
	FUZZ_CHECK(a->major == b->major && a->minor == b->minor && a->micro == b->micro &&
		   a->level == b->level && a->serial == b->serial);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	struct py_version v, w;
	uint32_t hex;
	char buf[24], small[6], *s;
	int major, minor;
	bool ft;

	fuzz_take(&in, &hex, sizeof(hex));
	s = (char *)fuzz_dup(in.p, in.n); /* exactly len bytes: no terminator */
	if (py_version_parse(s, in.n, &v) == 0) {
		/* what parses formats back to something that parses the same */
		FUZZ_CHECK(v.major >= 2 && v.major <= 3);
		py_version_format(&v, buf, sizeof(buf));
		FUZZ_CHECK(py_version_parse(buf, strlen(buf), &w) == 0);
		same_version(&v, &w);
		/* PY_VERSION_HEX holds what real versions need (the parser
		 * takes up to 3 digits: 3.768.1 is no Python anyone runs) */
		if (v.minor < 256 && v.micro < 256 && v.serial < 16) {
			py_version_from_hex(py_version_hex(&v), &w);
			same_version(&v, &w);
		}
		(void)py_version_supported(&v);
	}
	free(s);
	s = malloc(in.n + 1);
	if (!s)
		abort();
	memcpy(s, in.p, in.n);
	s[in.n] = '\0';
	if (py_version_from_filename(s, &major, &minor, &ft) == 0)
		FUZZ_CHECK(major >= 2 && major <= 3 && minor >= 0 && minor <= 99);
	free(s);

	py_version_from_hex(hex, &v);
	FUZZ_CHECK(py_version_hex(&v) == hex);
	py_version_format(&v, buf, sizeof(buf));
	py_version_format(&v, small, sizeof(small));
	if (v.major >= 2 && v.major <= 3 &&
	    (v.level == 0xa || v.level == 0xb || v.level == 0xc || (v.level == 0xf && !v.serial))) {
		FUZZ_CHECK(py_version_parse(buf, strlen(buf), &w) == 0);
		same_version(&v, &w);
	}
	(void)py_version_supported(&v);
	return 0;
}
