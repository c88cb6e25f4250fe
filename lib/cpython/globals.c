/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/globals.h"

#include <stdlib.h>
#include <string.h>

#include "sys/remote_mem.h"

/*
 * Where a frame keeps f_globals: the built-in tables and DWARF give it up
 * to 3.12; _Py_DebugOffsets publish none, and the interpreter frames that
 * carry them keep f_executable, previous, f_funcobj, f_globals in that
 * order (as 3.12's already did), so it is two words after `previous`. A
 * wrong guess is caught: the word must point to a module's dict.
 */
static int globals_offset(const struct py_objects *o, int32_t *off)
{
	const struct py_offsets *f = &o->p->off;

	if (f->frame_globals != PY_OFFSET_ABSENT) {
		*off = f->frame_globals;
		return 0;
	}
	if (!o->p->rules->has_debug_offsets || f->frame_previous == PY_OFFSET_ABSENT)
		return -1;
	*off = f->frame_previous + 16;
	return 0;
}

static bool is_module_dict(const struct py_objects *o, uint64_t dict)
{
	uint64_t name;

	return py_obj_type(o, dict) == o->t_dict && py_dict_get(o, dict, "__name__", &name) == 0 &&
	       py_obj_type(o, name) == o->t_str;
}

int py_frame_globals(const struct py_objects *o, const struct py_frame *f, uint64_t *dict)
{
	int32_t off;

	*dict = 0;
	if (!f->addr || (f->flags & PY_FRAME_UNREADABLE) || globals_offset(o, &off) < 0 ||
	    remote_read_u64(o->p->pid, f->addr + (uint64_t)off, dict) < 0 || !*dict ||
	    !is_module_dict(o, *dict)) {
		*dict = 0;
		return -1;
	}
	return 0;
}

static bool is_dunder(const char *s)
{
	size_t n = strlen(s);

	return n > 4 && s[0] == '_' && s[1] == '_' && s[n - 1] == '_' && s[n - 2] == '_';
}

/* Modules, functions and classes: what a module defines or imports, not
 * the data it holds. */
static bool is_code_or_module(const struct py_objects *o, uint64_t value)
{
	uint64_t type = py_obj_type(o, value);
	char name[64];

	if (!type)
		return false;
	if (py_type_is_sub(o, type, o->t_module) || py_type_is_sub(o, type, o->t_type))
		return true;
	if (py_type_name(o, type, name, sizeof(name)) < 0)
		return false;
	return strcmp(name, "function") == 0 || strcmp(name, "builtin_function_or_method") == 0;
}

struct walk {
	const struct py_objects *o;
	struct py_module_globals *g;
	bool all;
};

static int add_global(uint64_t key, uint64_t value, void *arg)
{
	struct walk *w = arg;
	struct py_module_globals *g = w->g;
	struct py_global *v;

	if (!value)
		return 0; /* a deleted entry */
	if (g->nvars == PY_GLOBALS_MAX) {
		g->cut = true;
		return 1;
	}
	v = &g->vars[g->nvars];
	memset(v, 0, sizeof(*v));
	if (py_obj_type(w->o, key) != w->o->t_str ||
	    py_obj_str(w->o, key, v->name, sizeof(v->name)) < 0 || !v->name[0]) {
		strcpy(v->name, "<unreadable name>");
	} else if (!w->all && (is_dunder(v->name) || is_code_or_module(w->o, value))) {
		g->hidden++;
		return 0;
	}
	py_obj_repr(w->o, value, v->repr, sizeof(v->repr));
	g->nvars++;
	return 0;
}

int py_module_globals_read(const struct py_objects *o, uint64_t dict, bool all,
			   struct py_module_globals *g)
{
	struct walk w = { o, g, all };
	uint64_t v;
	long len;

	memset(g, 0, sizeof(*g));
	g->dict = dict;
	if (!is_module_dict(o, dict) || py_dict_get(o, dict, "__name__", &v) != 0 ||
	    py_obj_str(o, v, g->module, sizeof(g->module)) < 0)
		return -1;
	if (py_dict_get(o, dict, "__file__", &v) == 0 && py_obj_type(o, v) == o->t_str)
		py_obj_str(o, v, g->file, sizeof(g->file));
	g->vars = calloc(PY_GLOBALS_MAX, sizeof(*g->vars));
	if (!g->vars)
		return -1;
	if (py_dict_each(o, dict, PY_GLOBALS_SCANNED, add_global, &w) < 0) {
		py_module_globals_free(g);
		return -1;
	}
	len = py_dict_len(o, dict);
	if (len > PY_GLOBALS_SCANNED)
		g->cut = true;
	return 0;
}

void py_module_globals_free(struct py_module_globals *g)
{
	free(g->vars);
	g->vars = NULL;
	g->nvars = 0;
}
