// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/code.c: code objects, str objects (every kind, compact or not)
 * and bytes objects read out of a hostile process (this process, see
 * fuzz_mem.h). header.root: a code object; header.arg64: another object
 * read as a str; header.arg32: the size of the caller's name buffer.
 */
#include "fuzz_mem.h"
#include "cpython/code.h"

static void check_utf8(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	while (*p) {
		size_t n = *p < 0x80 ? 1 : *p >= 0xf0 ? 4 : *p >= 0xe0 ? 3 : 2;

		FUZZ_CHECK(*p < 0x80 || *p >= 0xc2);
		for (size_t i = 1; i < n; i++)
			FUZZ_CHECK((p[i] & 0xc0) == 0x80);
		FUZZ_CHECK(*p >= 0x20 && *p != 0x7f); /* names stay line-safe */
		p += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem_header h;
	struct py_process p;
	struct py_code_identity id;
	struct py_code_info ci;
	size_t len;
	char *buf;

	if (fuzz_mem_process(data, size, &p, &h) < 0)
		return 0;
	(void)py_code_identity_read(&p, h.root, &id);
	if (py_code_read(&p, h.root, &ci) == 0) {
		FUZZ_CHECK(strlen(ci.name) < sizeof(ci.name));
		FUZZ_CHECK(strlen(ci.filename) < sizeof(ci.filename));
		check_utf8(ci.name);
		check_utf8(ci.filename);
		FUZZ_CHECK(ci.linetable_len <= PY_LINETABLE_MAX);
		for (int64_t o = -2; o < 64; o += 2)
			(void)py_code_line(&p, &ci, o);
		(void)py_code_line(&p, &ci, (int64_t)h.arg64);
		py_code_info_free(&ci);
	}
	/* a str read into a buffer of any size a caller might use */
	len = h.arg32 % 2048;
	buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	if (py_read_string(&p, h.arg64, buf, len) == 0) {
		FUZZ_CHECK(strlen(buf) < len);
		check_utf8(buf);
	}
	free(buf);
	return 0;
}
