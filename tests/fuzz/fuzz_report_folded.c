// SPDX-License-Identifier: Apache-2.0
/*
 * lib/report/rows.c given hostile names: folded stacks (what flamegraph.pl
 * and most tools read) and bcc's multi-line text. Input: rows, see
 * fuzz_rows.h. Folded output must stay one line per distinct stack, with
 * no frame boundary that is not one (names with ';' or '\n' included),
 * and keep every row's value; neither it nor the text report lets a raw
 * control byte (C0 but the line ends, DEL, C1) or bad UTF-8 through.
 */
#include <inttypes.h>

#include "fuzz_rows.h"
#include "report/summary.h"
#include "sys/text_escape.h"

/* Every byte of a text output is a line end or part of a character a
 * terminal shows as it is (sys/text_escape.h). */
static void check_printable(const struct fuzz_out *out)
{
	for (size_t i = 0; i < out->len;) {
		size_t n = out->buf[i] == '\n' ? 1 : text_char_len(out->buf + i);

		FUZZ_CHECK(n > 0 && i + n <= out->len);
		i += n;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report rep;
	struct fuzz_out out;

	fuzz_rows_build(&rep, data, size);
	for (int delimiter = 0; delimiter < 2; delimiter++) {
		uint64_t sum = 0, want_sum = 0;
		size_t lines = 0;

		rep.delimiter = delimiter;
		fuzz_out_open(&out);
		report_print_folded(&rep, out.f);
		fuzz_out_close(&out);
		check_printable(&out);
		for (size_t i = 0; i < rep.n; i++)
			want_sum += rep.rows[i].value;
		/* each line: as many ';' as some row has frames (+ comm, "-"),
		 * then " value" */
		for (char *line = out.buf, *end; line < out.buf + out.len; line = end + 1) {
			size_t semis = 0;
			bool matches = false;
			char *space;

			end = memchr(line, '\n', (size_t)(out.buf + out.len - line));
			FUZZ_CHECK(end);
			*end = '\0';
			for (char *p = line; *p; p++)
				semis += *p == ';';
			space = strrchr(line, ' ');
			FUZZ_CHECK(space && space[1]);
			sum += strtoull(space + 1, NULL, 10);
			for (size_t i = 0; i < rep.n && !matches; i++) {
				const struct report_row *r = &rep.rows[i];

				matches = semis == (size_t)r->nframes +
							   (delimiter && r->nkernel && r->nuser);
			}
			FUZZ_CHECK(matches || (semis == 1 && rep.n && !rep.rows[0].nframes));
			lines++;
		}
		FUZZ_CHECK(lines <= rep.n && (lines > 0) == (rep.n > 0));
		FUZZ_CHECK(sum == want_sum);
		fuzz_out_free(&out);

		fuzz_out_open(&out);
		report_print_text(&rep, out.f);
		report_print_summary(&rep, delimiter ? "us" : "samples", NULL, delimiter ? 0 : 2, out.f);
		fuzz_out_close(&out);
		check_printable(&out);
		fuzz_out_free(&out);
	}
	report_free(&rep);
	return 0;
}
