/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/thread_wait.h"

#include <stdio.h>
#include <string.h>

#include "cpython/code.h"
#include "cpython/gil.h"
#include "cpython/locals.h"
#include "sys/remote_mem.h"

#define FRAMES_SEARCHED 2  /* innermost Python frames whose variables are looked at */
#define ATTRS_SEARCHED 64  /* attributes of each instance variable */
#define GLOBALS_SEARCHED 512

struct search {
	const struct py_objects *o;
	uint64_t keys[2]; /* the futex word; the parking-lot address (0: none) */
	struct py_wait *w;
	const char *prefix; /* "self." for attributes */
	bool found;
};

static bool is_lock_type(const char *name)
{
	return strcmp(name, "_thread.lock") == 0 || strcmp(name, "_thread.RLock") == 0;
}

/*
 * Which types are lock types, by address, per process: the search looks at
 * hundreds of objects per waiting thread, and reading each type's name
 * costs a few reads. A small direct-mapped cache; a type object lives as
 * long as its objects, and one dump takes milliseconds.
 */
#define TYPE_CACHE 512

static bool lock_type_of(const struct py_objects *o, uint64_t type, char *name, size_t len)
{
	static struct {
		pid_t pid;
		uint64_t type;
		bool is_lock;
		char name[16];
	} cache[TYPE_CACHE];
	unsigned slot = (unsigned)((type >> 4) ^ (type >> 16)) % TYPE_CACHE;

	if (cache[slot].type == type && cache[slot].pid == o->p->pid) {
		snprintf(name, len, "%s", cache[slot].name);
		return cache[slot].is_lock;
	}
	if (py_type_name(o, type, name, len) < 0)
		return false;
	cache[slot].pid = o->p->pid;
	cache[slot].type = type;
	cache[slot].is_lock = is_lock_type(name);
	snprintf(cache[slot].name, sizeof(cache[slot].name), "%s",
		 cache[slot].is_lock ? name : "");
	return cache[slot].is_lock;
}

/*
 * Whether obj is a lock whose waiters sleep on key: the lock's first
 * field is the mutex (3.13+ PyMutex; key is its address) or points to it
 * (a PyThread_type_lock: the semaphore of 3.8-3.12, or a heap PyMutex).
 */
static bool lock_matches(const struct py_objects *o, uint64_t obj, const uint64_t keys[2],
			 char *type, size_t len)
{
	uint64_t first = 0, t = py_obj_type(o, obj);

	if (!t || !lock_type_of(o, t, type, len))
		return false;
	for (int i = 0; i < 2; i++)
		if (keys[i] && obj + (uint64_t)o->hdr == keys[i])
			return true;
	if (remote_read_u64(o->p->pid, obj + (uint64_t)o->hdr, &first) < 0 || !first)
		return false;
	return first == keys[0] || first == keys[1];
}

static void found(struct search *s, uint64_t obj, const char *type, const char *name)
{
	struct py_wait *w = s->w;
	uint64_t v[2] = { 0, 0 }; /* owner ident, recursion count */

	w->on = PY_WAIT_LOCK;
	w->lock = obj;
	snprintf(w->lock_type, sizeof(w->lock_type), "%s", type);
	if (name)
		snprintf(w->lock_where, sizeof(w->lock_where), "%s%s", s->prefix, name);
	/* An RLock knows its owner: the ident after the mutex, then the count
	 * (rlock_owner, rlock_count up to 3.13; _PyRecursiveMutex from 3.14). */
	if (strcmp(type, "_thread.RLock") == 0 &&
	    remote_read(s->o->p->pid, obj + (uint64_t)s->o->hdr + 8, v, sizeof(v)) == 0 && v[1])
		w->owner_ident = v[0];
	s->found = true;
}

static int check_item(uint64_t key, uint64_t value, void *arg)
{
	struct search *s = arg;
	char type[48], name[64];

	if (!lock_matches(s->o, value, s->keys, type, sizeof(type)))
		return 0;
	if (py_obj_str(s->o, key, name, sizeof(name)) < 0)
		snprintf(name, sizeof(name), "?");
	found(s, value, type, name);
	return 1;
}

/* A variable's name, read only for the one that matched. */
static const char *local_name(const struct py_objects *o, struct py_local *l)
{
	if (!l->name[0] && py_read_string(o->p, l->name_obj, l->name, sizeof(l->name)) < 0)
		snprintf(l->name, sizeof(l->name), "?");
	return l->name;
}

static void search_frame(struct search *s, const struct py_frame *f, bool innermost)
{
	struct py_local locals[64];
	int n = py_frame_values(s->o, f, locals, 64);

	for (int i = 0; i < n && !s->found; i++) {
		char type[48];

		if (lock_matches(s->o, locals[i].value, s->keys, type, sizeof(type))) {
			s->prefix = "local ";
			found(s, locals[i].value, type, local_name(s->o, &locals[i]));
		}
	}
	/* the attributes of instance variables (self._lock) */
	for (int i = 0; i < n && !s->found && innermost; i++) {
		char prefix[72];

		/* only instances of Python classes (heap types) have attributes to look at */
		if (!py_type_is_heap(s->o, py_obj_type(s->o, locals[i].value)))
			continue;
		snprintf(prefix, sizeof(prefix), "%.63s.", local_name(s->o, &locals[i]));
		s->prefix = prefix;
		py_obj_attrs_each(s->o, locals[i].value, ATTRS_SEARCHED, check_item, s);
		s->prefix = "";
	}
	/* module globals (3.8-3.12 publish where a frame keeps them) */
	if (!s->found && innermost && s->o->p->off.frame_globals != PY_OFFSET_ABSENT) {
		uint64_t globals = 0;

		s->prefix = "global ";
		if (remote_read_u64(s->o->p->pid, f->addr + (uint64_t)s->o->p->off.frame_globals,
				    &globals) == 0 && globals)
			py_dict_each(s->o, globals, GLOBALS_SEARCHED, check_item, s);
		s->prefix = "";
	}
}

void py_wait_classify(struct py_process *p, const struct py_objects *o, uint64_t interp,
		      const struct proc_wait *k, const struct py_frame *frames, size_t nframes,
		      struct py_wait *w)
{
	struct search s = { o, { 0, 0 }, w, "", false };
	uint64_t gil;

	memset(w, 0, sizeof(*w));
	if (!k->in_syscall || !k->futex || !k->futex_wait)
		return;
	gil = py_gil_address(p, interp);
	if (gil && k->futex >= gil && k->futex < gil + PY_GIL_STRUCT_SIZE) {
		w->on = PY_WAIT_GIL;
		return;
	}
	if (!o)
		return;
	s.keys[0] = k->futex;
	if (o->rules->parking_lot) {
		uint64_t addr = 0;
		char type[48];

		/* struct wait_entry { park_arg; addr; sema; ... }: the futex is sema */
		if (remote_read_u64(p->pid, k->futex - 8, &addr) == 0 && addr) {
			s.keys[1] = addr;
			/* a lock whose PyMutex is its first field: found at once */
			if (lock_matches(o, addr - (uint64_t)o->hdr, (const uint64_t[2]){ addr, 0 },
					 type, sizeof(type)))
				found(&s, addr - (uint64_t)o->hdr, type, NULL);
		}
	}
	/* the lock among the variables: found there, or at least named */
	s.found = false;
	for (size_t i = 0; i < nframes && i < FRAMES_SEARCHED && !s.found; i++)
		if (frames[i].code && !(frames[i].flags & PY_FRAME_UNREADABLE))
			search_frame(&s, &frames[i], i == 0);
}
