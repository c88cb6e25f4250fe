/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/gil.h"

#include <stdio.h>

#include "sys/remote_mem.h"

uint64_t py_gil_address(struct py_process *p, uint64_t interp)
{
	uint64_t gil = 0;

	if (p->free_threaded)
		return 0;
	if (p->rules->gil_home == PY_GIL_IN_RUNTIME)
		return p->off.runtime_gil >= 0 ? p->runtime_addr + (uint64_t)p->off.runtime_gil : 0;
	if (!interp && remote_read_u64(p->pid, p->runtime_addr +
						       (uint64_t)p->off.runtime_interpreters_head,
				       &interp) < 0)
		return 0;
	if (p->off.interp_ceval_gil < 0 ||
	    remote_read_u64(p->pid, interp + (uint64_t)p->off.interp_ceval_gil, &gil) < 0)
		return 0;
	return gil;
}

int py_gil_read(struct py_process *p, uint64_t addr, struct py_gil_state *st)
{
	if (p->off.gil_locked < 0 || p->off.gil_last_holder < 0 || p->off.gil_switch_number < 0)
		return -1;
	if (remote_read_u64(p->pid, addr, &st->interval_us) < 0 ||
	    remote_read_u64(p->pid, addr + (uint64_t)p->off.gil_last_holder, &st->last_holder) < 0 ||
	    remote_read_i32(p->pid, addr + (uint64_t)p->off.gil_locked, &st->locked) < 0 ||
	    remote_read_u64(p->pid, addr + (uint64_t)p->off.gil_switch_number,
			    &st->switch_number) < 0)
		return -1;
	return 0;
}
