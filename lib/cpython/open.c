/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/open.h"

#include <stdio.h>

#include "cpython/validate.h"
#include "sys/proc_maps.h"

int py_process_open(struct py_process *p, pid_t pid)
{
	struct py_offsets_candidates c;
	char first_err[PY_ERR_LEN] = "";

	if (py_process_inspect(p, pid, &c) < 0)
		return -1;
	for (int i = 0; i < c.n; i++) {
		p->off = c.v[i].off;
		p->source = c.v[i].src;
		if (py_process_validate(p) == 0)
			return 0;
		py_process_note(p, "%s offsets rejected: %s", py_offsets_source_name(c.v[i].src),
				p->err);
		if (!first_err[0])
			snprintf(first_err, sizeof(first_err), "%s", p->err);
	}
	p->source = PY_OFFSETS_NONE;
	if (!proc_exists(pid))
		return py_process_fail(p, "no such process (it exited while being read)");
	return py_process_fail(p, "offsets failed validation: %s", first_err);
}
