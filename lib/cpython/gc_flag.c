// SPDX-License-Identifier: Apache-2.0
#include "cpython/gc_flag.h"

#include <stdio.h>
#include <string.h>

#include "cpython/gc_layout.h"
#include "cpython/gil_locate.h"

int py_gc_flag_locate(struct py_process *p, uint64_t *collecting, uint64_t *gil, char *why,
		      size_t len)
{
	char err[PY_ERR_LEN];
	enum py_failure fail = p->fail;
	struct py_gil_ref main_gil;
	struct py_gc_layout g;
	int rc = -1;

	*collecting = *gil = 0;
	memcpy(err, p->err, sizeof(err));
	if (py_gils_locate(p, &main_gil, 1) != 1 || !main_gil.gil)
		snprintf(why, len, "its GIL was not found: %s", p->err);
	else if (py_gc_layout_read(p, main_gil.interp, &g) < 0)
		snprintf(why, len, "its collector's state was not found: %s", p->err);
	else {
		*collecting = g.state + (uint64_t)g.collecting;
		*gil = main_gil.gil;
		rc = 0;
	}
	memcpy(p->err, err, sizeof(err));
	p->fail = fail;
	return rc;
}
