/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/thread_names.h"

#include <string.h>

#include "sys/remote_mem.h"

struct collect {
	const struct py_objects *o;
	struct py_thread_name *out;
	size_t max, n;
};

static int add_thread(uint64_t key, uint64_t value, void *arg)
{
	struct collect *c = arg;
	struct py_thread_name *t = &c->out[c->n];
	uint64_t name = 0;

	if (c->n == c->max)
		return 1;
	memset(t, 0, sizeof(*t));
	if (py_obj_u64(c->o, key, &t->ident) < 0)
		return 0;
	t->thread = value;
	if (py_obj_attr(c->o, value, "_name", &name) != 0 ||
	    py_obj_str(c->o, name, t->name, sizeof(t->name)) < 0)
		return 0; /* a Thread without a readable name: leave it out */
	c->n++;
	return 0;
}

int py_thread_names(const struct py_objects *o, uint64_t interp, struct py_thread_name *out,
		    size_t max)
{
	struct collect c = { o, out, max, 0 };
	uint64_t modules = 0, globals, active;
	int rc;

	if (o->p->off.interp_modules == PY_OFFSET_ABSENT ||
	    remote_read_u64(o->p->pid, interp + (uint64_t)o->p->off.interp_modules, &modules) < 0 ||
	    !modules)
		return -1;
	rc = py_module_dict_by_name(o, modules, "threading", &globals);
	if (rc != 0)
		return rc == 1 ? 0 : -1; /* threading never imported, or garbage */
	if (py_dict_get(o, globals, "_active", &active) != 0)
		return -1;
	if (py_dict_each(o, active, max, add_thread, &c) < 0)
		return -1;
	return (int)c.n;
}
