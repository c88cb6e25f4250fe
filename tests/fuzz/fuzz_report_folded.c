// SPDX-License-Identifier: Apache-2.0
/*
 * lib/report/rows.c and the writers given hostile names: folded stacks (what
 * flamegraph.pl and most tools read) and bcc's multi-line text. Input:
 * rows, see fuzz_rows.h. Folded output must stay one line per row, with
 * no frame boundary that is not one.
 */
#include "fuzz_rows.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report rep;
	struct fuzz_out out;

	fuzz_rows_build(&rep, data, size);
	for (int delimiter = 0; delimiter < 2; delimiter++) {
		size_t lines = 0, semis = 0, want = 0;

		rep.delimiter = delimiter;
		fuzz_out_open(&out);
		report_print_folded(&rep, out.f);
		fuzz_out_close(&out);
		for (size_t i = 0; i < out.len; i++) {
			lines += out.buf[i] == '\n';
			semis += out.buf[i] == ';';
		}
		/* one line a row, and no frame more than the row has */
		for (size_t i = 0; i < rep.n; i++) {
			const struct report_row *r = &rep.rows[i];

			want += 1 + (delimiter && r->nkernel && r->nuser); /* comm, "-" */
			for (const char *p = r->frames; *p; p++)
				want += *p == ';';
		}
		FUZZ_CHECK(lines == rep.n);
		FUZZ_CHECK(semis == want);
		FUZZ_CHECK(!out.len || out.buf[out.len - 1] == '\n');
		fuzz_out_free(&out);

		fuzz_out_open(&out);
		report_print_text(&rep, out.f);
		fuzz_out_close(&out);
		fuzz_out_free(&out);
	}
	report_free(&rep);
	return 0;
}
