// SPDX-License-Identifier: Apache-2.0
/*
 * lib/bpf/code_names.c: the cache that names sampled code objects, read from a
 * hostile process (see fuzz_mem.h), and the "qualname (file:line)" labels
 * it formats. header.root and header.arg64: code objects; the identity
 * BPF would have recorded is the real one unless FUZZ_RAW_IDENT; count:
 * how many more (unreadable) entries to add, to grow the table;
 * arg32: label buffer size and instruction offset.
 */
#include "bpf/code_names.h"
#include "fuzz_mem.h"
#include "cpython/code.h"

static uint64_t ident_of(struct py_process *p, const struct fuzz_mem_header *h, uint64_t code)
{
	struct py_code_identity id;

	if (h->flags & FUZZ_RAW_IDENT)
		return h->arg64 ^ code;
	if (py_code_identity_read(p, code, &id) < 0)
		return 0;
	return id.ident; /* as the BPF walker recorded it */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_mem_header h;
	struct py_process p;
	struct code_names names;
	uint64_t code[3], ident[3];
	size_t len;
	char *buf;

	if (fuzz_mem_process(data, size, &p, &h) < 0)
		return 0;
	code[0] = h.root;
	code[1] = h.arg64;
	code[2] = h.root; /* again: found in the cache */
	for (int i = 0; i < 3; i++)
		ident[i] = ident_of(&p, &h, code[i]);
	len = 1 + (h.arg32 & 0x7ff);
	buf = malloc(len);
	if (!buf)
		abort();
	code_names_init(&names);
	for (int i = 0; i < 3; i++) {
		struct code_name *e = code_names_get(&names, &p, code[i], ident[i]);

		FUZZ_CHECK(e && e->code == code[i] && e->ident == ident[i]);
		FUZZ_CHECK(code_names_find(&names, p.pid, code[i], ident[i]) == e);
		code_name_format(e, (int64_t)(h.arg32 >> 11) - 4, buf, len);
		FUZZ_CHECK(strlen(buf) < len);
		code_name_format(e, -1, buf, len);
	}
	/* unreadable objects (below the first page: nothing is read) */
	for (uint64_t i = 0; i < h.count % 1500; i++)
		FUZZ_CHECK(code_names_get(&names, &p, 1 + i, i) != NULL);
	for (int i = 0; i < 3; i++)
		FUZZ_CHECK(code_names_find(&names, p.pid, code[i], ident[i]) != NULL);
	code_name_format(NULL, 0, buf, len);
	code_names_free(&names);
	free(buf);
	return 0;
}
