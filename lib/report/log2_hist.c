/* SPDX-License-Identifier: Apache-2.0 */
#include "report/log2_hist.h"

#include <stdbool.h>
#include <string.h>

#define BAR_WIDTH 40

unsigned int log2_hist_slot(uint64_t value)
{
	unsigned int slot = 0;

	while (value) {
		slot++;
		value >>= 1;
	}
	return slot ? slot : 1;
}

void log2_hist_add(struct log2_hist *h, uint64_t value, uint64_t count)
{
	h->slots[log2_hist_slot(value)] += count;
}

static void print_bar(uint64_t count, uint64_t max, int width, FILE *out)
{
	int filled = max ? (int)((double)count * width / (double)max) : 0;

	for (int i = 0; i < width; i++)
		fputc(i < filled ? '*' : ' ', out);
}

void log2_hist_print(const struct log2_hist *h, const char *unit, FILE *out)
{
	int last = -1;
	uint64_t max = 0;

	for (int i = 0; i < LOG2_HIST_SLOTS; i++) {
		if (h->slots[i])
			last = i;
		if (h->slots[i] > max)
			max = h->slots[i];
	}
	if (last < 0)
		return;
	/* past slot 32 the bounds need 20 digits and the bar gets half as wide */
	bool wide = last > 32;
	int num = wide ? 20 : 10, bar = wide ? BAR_WIDTH / 2 : BAR_WIDTH;

	fprintf(out, "%*s%-*s : count     distribution\n", wide ? 15 : 5, "", wide ? 29 : 19, unit);
	for (int i = 1; i <= last; i++) {
		uint64_t high = i >= 64 ? UINT64_MAX : (1ull << i) - 1;
		uint64_t low = (1ull << (i - 1)) == high ? high - 1 : (1ull << (i - 1));

		fprintf(out, "%*llu -> %-*llu : %-8llu |", num, (unsigned long long)low, num,
			(unsigned long long)high, (unsigned long long)h->slots[i]);
		print_bar(h->slots[i], max, bar, out);
		fprintf(out, "|\n");
	}
}
