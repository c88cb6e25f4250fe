/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/open.h"

#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "cpython/validate.h"
#include "sys/clock.h"
#include "sys/proc_maps.h"

/*
 * Offsets that do not fit fail every look; a look that catches threads
 * ending (their frames freed while they are read) fails now and then. A
 * failed look is repeated on a fresh snapshot before the offsets are
 * rejected.
 */
#define VALIDATION_LOOKS 3
#define VALIDATION_PAUSE_US (10 * 1000)

static int validate_looks(struct py_process *p)
{
	for (int look = 1;; look++) {
		if (py_process_validate(p) == 0)
			return 0;
		if (p->fail != PY_FAIL_VALIDATION || look == VALIDATION_LOOKS)
			return -1;
		usleep(VALIDATION_PAUSE_US);
	}
}

int py_process_choose(struct py_process *p, const struct py_offsets_candidates *c)
{
	char first_err[PY_ERR_LEN] = "";
	enum py_failure first_fail = PY_FAIL_NONE;

	for (int i = 0; i < c->n; i++) {
		p->off = c->v[i].off;
		p->source = c->v[i].src;
		if (validate_looks(p) == 0) {
			p->fail = PY_FAIL_NONE;
			p->err[0] = '\0';
			return 0;
		}
		/* nothing contradicted these offsets: no note that they were wrong */
		if (p->fail != PY_FAIL_NO_FRAMES)
			py_process_note(p, "%s offsets rejected: %s",
					py_offsets_source_name(c->v[i].src), p->err);
		if (!first_err[0]) {
			snprintf(first_err, sizeof(first_err), "%s", p->err);
			first_fail = p->fail;
		}
	}
	p->source = PY_OFFSETS_NONE;
	if (!proc_exists(p->pid) || first_fail == PY_FAIL_GONE)
		return py_process_fail(p, PY_FAIL_GONE, "no such process (it exited while being read)");
	if (first_fail == PY_FAIL_NO_FRAMES)
		return py_process_fail(p, first_fail, "%s", first_err);
	return py_process_fail(p, first_fail, "offsets failed validation: %s", first_err);
}

int py_process_open_keep(struct py_process *p, pid_t pid, struct py_offsets_candidates *c)
{
	if (py_process_inspect(p, pid, c) < 0)
		return -1;
	return py_process_choose(p, c);
}

int py_process_open(struct py_process *p, pid_t pid)
{
	struct py_offsets_candidates c;

	return py_process_open_keep(p, pid, &c);
}

int py_process_open_wait(struct py_process *p, pid_t pid, int wait_ms)
{
	struct py_offsets_candidates c;
	uint64_t end = monotonic_ns() + (uint64_t)wait_ms * 1000000ull;

	if (py_process_open_keep(p, pid, &c) == 0)
		return 0;
	while (p->fail == PY_FAIL_NO_FRAMES) {
		if (monotonic_ns() >= end)
			return py_process_fail(p, PY_FAIL_NO_FRAMES,
					       "no thread ran Python code within %.1f s, so its offsets "
					       "could not be checked against a frame: not read",
					       wait_ms / 1000.0);
		usleep(20 * 1000);
		if (py_process_choose(p, &c) == 0)
			return 0;
	}
	return -1;
}
