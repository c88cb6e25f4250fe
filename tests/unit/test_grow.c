// SPDX-License-Identifier: Apache-2.0
/* lib/sys/grow.h: room for one more element, doubling. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "sys/grow.h"
#include "unit_check.h"

int main(void)
{
	int *v = NULL;
	size_t n = 0, cap = 0;

	/* the first growth takes `first`, the next ones double */
	for (int i = 0; i < 100; i++) {
		int *nv = grow_room(v, n, &cap, 4, sizeof(*v));

		if (!nv)
			break;
		v = nv;
		v[n++] = i;
	}
	CHECK(n == 100);
	CHECK(cap == 128);
	CHECK(v[0] == 0 && v[99] == 99);
	/* room left: the same array back, capacity unchanged */
	n = 50;
	CHECK(grow_room(v, n, &cap, 4, sizeof(*v)) == v);
	CHECK(cap == 128);
	/* a size that overflows: NULL, the array and its capacity kept */
	{
		size_t huge = SIZE_MAX / 2 + 1;

		CHECK(grow_room(v, huge, &huge, 4, sizeof(*v)) == NULL);
		CHECK(huge == SIZE_MAX / 2 + 1);
		/* doubled fits a size_t, not times the element's size */
		huge = SIZE_MAX / 4 + 1;
		CHECK(grow_room(v, huge, &huge, 4, sizeof(*v)) == NULL);
	}
	CHECK(v[99] == 99);
	free(v);
	/* first 0 means 1 */
	v = NULL;
	cap = 0;
	v = grow_room(v, 0, &cap, 0, sizeof(*v));
	CHECK(v != NULL && cap == 1);
	free(v);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
