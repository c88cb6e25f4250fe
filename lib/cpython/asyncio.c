/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/asyncio.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "abi/py_abi.h"
#include "cpython/frames.h"
#include "cpython/objects.h"
#include "sys/proc_maps.h"
#include "sys/bytes_at.h"
#include "sys/remote_mem.h"

#define CHAIN_MAX 256      /* awaits followed per task (a longer chain is cut) */
#define THREAD_FRAMES 4096 /* thread frames searched for a running coroutine */
#define TASK_BYTES 4096    /* a TaskObj is read whole: its size is checked below this */

struct reader {
	struct py_process *p;
	const struct py_async_rules *r;
	struct py_async_layout L;
	struct py_objects o;
	/* asyncio's classes, from its modules; 0 if that module is not loaded */
	uint64_t c_task, py_task, gathering, taskgroup;
	uint64_t current_tasks; /* asyncio.tasks._current_tasks (3.11-3.13) */
	/* task candidates, later the tasks */
	uint64_t *cand;
	size_t ncand, cap;
	struct py_asyncio *out;
	size_t edge_cap;
	uint64_t *edge_set; /* the edges kept, as parent << 32 | child + 1; 0 empty */
	size_t edge_slots;
	struct group_tasks *groups; /* each TaskGroup's tasks, read once */
	size_t ngroups, groups_cap;
	size_t *group_slots, ngroup_slots; /* hash index of groups: index + 1, 0 empty */
	size_t group_entries; /* tasks kept in all groups (at most PY_AWAIT_EDGES_MAX) */
	int *by_addr; /* task indexes sorted by address */
};

/* The tasks of one TaskGroup (its _tasks set), as task indexes. */
struct group_tasks {
	uint64_t group;
	int *tasks;
	int ntasks;
};

const char *py_task_state_name(enum py_task_state s)
{
	switch (s) {
	case PY_TASK_PENDING:
		return "pending";
	case PY_TASK_CANCELLED:
		return "cancelled";
	case PY_TASK_DONE:
		return "done";
	case PY_TASK_UNREADABLE:
		break;
	}
	return "unreadable";
}

static int add_candidate(struct reader *R, uint64_t addr)
{
	if (!addr || (addr & 7) || R->ncand >= PY_TASKS_MAX)
		return 0;
	if (R->ncand == R->cap) {
		size_t cap = R->cap ? 2 * R->cap : 256;
		uint64_t *v = realloc(R->cand, cap * sizeof(*v));

		if (!v)
			return -1;
		R->cand = v;
		R->cap = cap;
	}
	R->cand[R->ncand++] = addr;
	return 0;
}

static int candidate_fn(uint64_t key, uint64_t value, void *arg)
{
	(void)value;
	return add_candidate(arg, key) < 0 ? -1 : 0;
}

static int weakref_candidate_fn(uint64_t key, uint64_t value, void *arg)
{
	struct reader *R = arg;

	(void)value;
	return add_candidate(R, py_weakref_target(&R->o, key)) < 0 ? -1 : 0;
}

/* A weakref.WeakSet's members: its "data" attribute, a set of weak refs. */
static void weakset_candidates(struct reader *R, uint64_t ws)
{
	uint64_t data;

	if (ws && py_obj_getattr(&R->o, ws, "data", &data) == 0)
		py_set_each(&R->o, data, PY_TASKS_MAX, weakref_candidate_fn, R);
}

/* 3.14+: tasks linked through task_node from a list head. */
static void list_candidates(struct reader *R, uint64_t head)
{
	uint64_t node = 0;

	if (py_obj_read_u64(&R->o, head + (uint64_t)R->L.llist_next, &node) < 0)
		return;
	for (int n = 0; node && node != head && n < PY_TASKS_MAX; n++) {
		if (add_candidate(R, node - (uint64_t)R->L.task_node) < 0)
			return;
		if (py_obj_read_u64(&R->o, node + (uint64_t)R->L.llist_next, &node) < 0)
			return;
	}
}

/* asyncio's classes and the tasks its module keeps, for one interpreter. */
static void module_candidates(struct reader *R, uint64_t interp)
{
	const struct py_objects *o = &R->o;
	uint64_t modules = 0, tasks = 0, groups = 0, v = 0;

	if (py_obj_read_u64(o, interp + (uint64_t)R->L.interp_modules, &modules) < 0 ||
	    py_module_dict_by_name(o, modules, "asyncio.tasks", &tasks) != 0)
		return;
	R->out->asyncio_loaded = true;
	if (!R->py_task && py_dict_get(o, tasks, "_PyTask", &v) == 0)
		R->py_task = v;
	if (!R->c_task && py_dict_get(o, tasks, "_CTask", &v) == 0)
		R->c_task = v;
	if (!R->gathering && py_dict_get(o, tasks, "_GatheringFuture", &v) == 0)
		R->gathering = v;
	if (!R->taskgroup &&
	    py_module_dict_by_name(o, modules, "asyncio.taskgroups", &groups) == 0 &&
	    py_dict_get(o, groups, "TaskGroup", &v) == 0)
		R->taskgroup = v;
	if (R->r->task_lists == PY_TASKS_ALL_WEAKSET && py_dict_get(o, tasks, "_all_tasks", &v) == 0)
		weakset_candidates(R, v);
	if (R->r->task_lists != PY_TASKS_ALL_WEAKSET) {
		if (py_dict_get(o, tasks, "_scheduled_tasks", &v) == 0)
			weakset_candidates(R, v);
		if (py_dict_get(o, tasks, "_eager_tasks", &v) == 0)
			py_set_each(o, v, PY_TASKS_MAX, candidate_fn, R);
	}
	if (!R->current_tasks && py_dict_get(o, tasks, "_current_tasks", &v) == 0)
		R->current_tasks = v;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static int find_task(const struct reader *R, uint64_t addr)
{
	int lo = 0, hi = R->out->ntasks - 1;

	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		uint64_t at = R->out->tasks[R->by_addr[mid]].addr;

		if (at == addr)
			return R->by_addr[mid];
		if (at < addr)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* A task's name object: a str, or (3.13+, until asked) an int N for "Task-N". */
static void read_name(struct reader *R, uint64_t obj, char *buf, size_t len)
{
	int64_t n;

	if (py_obj_str(&R->o, obj, buf, len) == 0)
		return;
	if (py_obj_i64(&R->o, obj, &n) == 0) {
		snprintf(buf, len, "Task-%lld", (long long)n);
		return;
	}
	snprintf(buf, len, "?");
}

static bool is_task_type(const struct reader *R, uint64_t type)
{
	return py_type_is_sub(&R->o, type, R->c_task) || py_type_is_sub(&R->o, type, R->py_task);
}

/* A C task (_asyncio.Task or a subclass): its struct, read whole and checked. */
static bool read_c_task(struct reader *R, uint64_t addr, struct py_task *t, uint64_t *waiter)
{
	uint8_t buf[TASK_BYTES];
	int32_t state;

	if (R->L.task_size < 64 || R->L.task_size > TASK_BYTES ||
	    remote_read(R->p->pid, addr, buf, (size_t)R->L.task_size) < 0)
		return false;
	if (R->L.task_is_task >= 0 && !buf[R->L.task_is_task])
		return false; /* 3.14+: a plain future on the list */
	state = i32_at(buf, R->L.fut_state);
	if (state < 0 || state > 2 || !u64_at(buf, R->L.fut_loop))
		return false;
	t->state = state == 0 ? PY_TASK_PENDING : state == 1 ? PY_TASK_CANCELLED : PY_TASK_DONE;
	t->coro = u64_at(buf, R->L.task_coro);
	*waiter = u64_at(buf, R->L.task_fut_waiter);
	read_name(R, u64_at(buf, R->L.task_name), t->name, sizeof(t->name));
	return t->name[0] != '?' && (t->coro || t->state != PY_TASK_PENDING);
}

/* A Task written in Python: the same facts as attributes. */
static bool read_py_task(struct reader *R, uint64_t addr, struct py_task *t, uint64_t *waiter)
{
	uint64_t name = 0, state = 0;
	char s[16];

	if (py_obj_getattr(&R->o, addr, "_state", &state) != 0 ||
	    py_obj_str(&R->o, state, s, sizeof(s)) < 0 ||
	    py_obj_getattr(&R->o, addr, "_name", &name) != 0)
		return false;
	if (strcmp(s, "PENDING") == 0)
		t->state = PY_TASK_PENDING;
	else if (strcmp(s, "CANCELLED") == 0)
		t->state = PY_TASK_CANCELLED;
	else if (strcmp(s, "FINISHED") == 0)
		t->state = PY_TASK_DONE;
	else
		return false;
	py_obj_getattr(&R->o, addr, "_coro", &t->coro);
	py_obj_getattr(&R->o, addr, "_fut_waiter", waiter);
	if (*waiter == R->o.none)
		*waiter = 0;
	read_name(R, name, t->name, sizeof(t->name));
	t->python_task = true;
	return t->name[0] != '?';
}

/* Whether a suspended generator frame is inside an await (yield from). */
static bool in_yield_from(struct reader *R, int8_t state, uint64_t instr)
{
	const struct py_async_rules *r = R->r;
	uint8_t next[2];

	if (r->yield_from == PY_YF_FRAME_STATE)
		return state == r->gen_suspended_yf || state == r->gen_suspended_yf_locked;
	/* 3.11-3.12: prev_instr is the YIELD_VALUE; RESUME with oparg >= 2 follows */
	if (state != r->gen_suspended || remote_read(R->p->pid, instr + 2, next, 2) < 0)
		return false;
	return (next[0] == r->resume_op || next[0] == r->resume_op_alt) && next[1] >= 2;
}

/* What a suspended await awaits: the top of the frame's value stack. */
static uint64_t awaited_object(struct reader *R, uint64_t frame, const uint8_t *buf)
{
	uint64_t obj = 0;

	if (R->L.frame_stacktop >= 0) { /* 3.11-3.13: an index into localsplus */
		int32_t top = i32_at(buf, R->L.frame_stacktop);

		if (top < 1 || top > 1 << 16 ||
		    py_obj_read_u64(&R->o, frame + (uint64_t)R->L.frame_localsplus + 8 * (uint64_t)(top - 1),
			      &obj) < 0)
			return 0;
		return obj;
	}
	uint64_t sp = u64_at(buf, R->L.frame_stackpointer) & ~7ULL;

	if (!sp || py_obj_read_u64(&R->o, sp + 8 * (uint64_t)(int64_t)R->r->await_slot, &obj) < 0)
		return 0;
	return obj & ~R->p->rules->stackref_tag_mask;
}

/* The coroutine chain of a task, innermost first. */
static void read_chain(struct reader *R, struct py_task *t)
{
	const struct py_offsets *off = &R->p->off;
	uint64_t coro = t->coro;
	uint8_t buf[256];
	size_t span = (size_t)R->L.frame_localsplus + 8;
	struct py_coro_frame chain[PY_TASK_FRAMES_MAX];
	int n = 0;

	if (span > sizeof(buf))
		return;
	if (coro)
		t->root_frame = coro + (uint64_t)R->L.gen_iframe;
	for (int depth = 0; depth < CHAIN_MAX && coro; depth++) {
		uint64_t type = py_obj_type(&R->o, coro), frame, code, instr;
		int8_t state;

		if (type != R->o.t_coro && type != R->o.t_gen)
			break; /* a future's iterator, or a coroutine we cannot look into */
		frame = coro + (uint64_t)R->L.gen_iframe;
		if (remote_read(R->p->pid, coro + (uint64_t)R->L.gen_frame_state, &state, 1) < 0 ||
		    remote_read(R->p->pid, frame, buf, span) < 0)
			break;
		if (state == R->r->gen_cleared || state == R->r->gen_completed)
			break;
		code = u64_at(buf, off->frame_code) & ~R->p->rules->stackref_tag_mask;
		instr = u64_at(buf, off->frame_instr);
		if (n == PY_TASK_FRAMES_MAX) {
			t->frames_cut = true;
			break;
		}
		chain[n].frame = frame;
		chain[n].code = code;
		chain[n].instr_offset = state == R->r->gen_created
						? -1
						: (int64_t)(instr - code - (uint64_t)off->code_adaptive);
		if (chain[n].instr_offset > 1 << 26 || chain[n].instr_offset < -2)
			chain[n].instr_offset = -1;
		n++;
		if (state == R->r->gen_executing || state == R->r->gen_created ||
		    !in_yield_from(R, state, instr))
			break;
		coro = awaited_object(R, frame, buf);
	}
	/* the chain was followed outside in: store it innermost first */
	for (int i = 0; i < n; i++)
		t->frames[i] = chain[n - 1 - i];
	t->nframes = n;
}

/* Whether edge parent -> child was kept already; adds it to the set if not.
 * The set holds at most PY_AWAIT_EDGES_MAX edges (its slots twice that). */
static bool edge_seen(struct reader *R, int parent, int child)
{
	uint64_t key = ((uint64_t)(uint32_t)parent << 32 | (uint32_t)child) + 1;
	size_t j = (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (R->edge_slots - 1);

	while (R->edge_set[j]) {
		if (R->edge_set[j] == key)
			return true;
		j = (j + 1) & (R->edge_slots - 1);
	}
	R->edge_set[j] = key;
	return false;
}

static int add_edge(struct reader *R, int parent, int child)
{
	struct py_asyncio *a = R->out;

	if (parent < 0 || child < 0 || parent == child)
		return 0;
	if (a->nedges >= PY_AWAIT_EDGES_MAX) {
		a->edges_dropped++; /* a hostile program's shape: never unbounded */
		return 0;
	}
	if (!R->edge_set) {
		for (R->edge_slots = 1024; R->edge_slots < 2 * (size_t)PY_AWAIT_EDGES_MAX;)
			R->edge_slots *= 2;
		R->edge_set = calloc(R->edge_slots, sizeof(*R->edge_set));
		if (!R->edge_set)
			return -1;
	}
	if (edge_seen(R, parent, child))
		return 0;
	if ((size_t)a->nedges == R->edge_cap) {
		size_t cap = R->edge_cap ? 2 * R->edge_cap : 64;
		struct py_await_edge *v = realloc(a->edges, cap * sizeof(*v));

		if (!v)
			return -1;
		a->edges = v;
		R->edge_cap = cap;
	}
	a->edges[a->nedges].parent = parent;
	a->edges[a->nedges].child = child;
	a->nedges++;
	return 0;
}

struct edge_ctx {
	struct reader *R;
	int parent, child; /* the one that is -1 is filled from each key */
};

static int edge_fn(uint64_t key, uint64_t value, void *arg)
{
	struct edge_ctx *e = arg;
	int i = find_task(e->R, key);

	(void)value;
	if (i < 0)
		return 0;
	return add_edge(e->R, e->parent < 0 ? i : e->parent, e->child < 0 ? i : e->child);
}

static int group_task_fn(uint64_t key, uint64_t value, void *arg)
{
	struct reader *R = arg;
	struct group_tasks *g = &R->groups[R->ngroups - 1];
	int i = find_task(R, key);

	(void)value;
	if (i < 0)
		return 0;
	if (R->group_entries >= PY_AWAIT_EDGES_MAX) {
		R->out->edges_dropped++; /* at least its waiter's edge to it */
		return 0;
	}
	if (!g->tasks || ((g->ntasks & (g->ntasks - 1)) == 0 && g->ntasks >= 16)) {
		size_t cap = g->tasks ? 2 * (size_t)g->ntasks : 16;
		int *v = realloc(g->tasks, cap * sizeof(*v));

		if (!v)
			return -1;
		g->tasks = v;
	}
	g->tasks[g->ntasks++] = i;
	R->group_entries++;
	return 0;
}

static size_t group_slot(const struct reader *R, uint64_t group)
{
	size_t j = (size_t)((group * 0x9e3779b97f4a7c15ULL) >> 32) & (R->ngroup_slots - 1);

	while (R->group_slots[j] && R->groups[R->group_slots[j] - 1].group != group)
		j = (j + 1) & (R->ngroup_slots - 1);
	return j;
}

/* Room for one more group (array and hash index); -1 out of memory. */
static int groups_grow(struct reader *R)
{
	if (R->ngroups == R->groups_cap) {
		size_t cap = R->groups_cap ? 2 * R->groups_cap : 8;
		struct group_tasks *v = realloc(R->groups, cap * sizeof(*v));

		if (!v)
			return -1;
		R->groups = v;
		R->groups_cap = cap;
	}
	if ((R->ngroups + 1) * 2 > R->ngroup_slots) {
		size_t n = R->ngroup_slots ? 2 * R->ngroup_slots : 64;
		size_t *v = calloc(n, sizeof(*v));

		if (!v)
			return -1;
		free(R->group_slots);
		R->group_slots = v;
		R->ngroup_slots = n;
		for (size_t k = 0; k < R->ngroups; k++)
			R->group_slots[group_slot(R, R->groups[k].group)] = k + 1;
	}
	return 0;
}

/* The tasks of TaskGroup group, its _tasks set walked once however many
 * tasks wait in its __aexit__ (and not at all once the edges are full:
 * then its waiter's edges count as one dropped); NULL out of memory. */
static const struct group_tasks *group_tasks(struct reader *R, uint64_t group)
{
	struct group_tasks *g;
	uint64_t set;
	size_t j;

	if (R->ngroup_slots) {
		j = group_slot(R, group);
		if (R->group_slots[j])
			return &R->groups[R->group_slots[j] - 1];
	}
	if (groups_grow(R) < 0)
		return NULL;
	g = &R->groups[R->ngroups++];
	memset(g, 0, sizeof(*g));
	g->group = group;
	R->group_slots[group_slot(R, group)] = R->ngroups;
	/* a set that cannot be read whole gives the tasks read of it */
	if (R->out->nedges < PY_AWAIT_EDGES_MAX && py_obj_getattr(&R->o, group, "_tasks", &set) == 0)
		py_set_each(&R->o, set, PY_TASKS_MAX, group_task_fn, R);
	return g;
}

static void free_groups(struct reader *R)
{
	for (size_t k = 0; k < R->ngroups; k++)
		free(R->groups[k].tasks);
	free(R->groups);
	free(R->group_slots);
	free(R->edge_set);
	R->groups = NULL;
	R->group_slots = NULL;
	R->edge_set = NULL;
	R->ngroups = R->ngroup_slots = 0;
}

/* The TaskGroup whose __aexit__ a task's chain is in; 0 if none. */
static uint64_t taskgroup_in_chain(struct reader *R, const struct py_task *t)
{
	for (int i = 0; R->taskgroup && i < t->nframes; i++) {
		uint64_t qualname = 0, self = 0;
		char name[64];

		if (py_obj_read_u64(&R->o, t->frames[i].code + (uint64_t)R->p->off.code_qualname,
			      &qualname) < 0 ||
		    py_obj_str(&R->o, qualname, name, sizeof(name)) < 0 ||
		    (strcmp(name, "TaskGroup.__aexit__") != 0 && strcmp(name, "TaskGroup._aexit") != 0))
			continue;
		/* self: the first local */
		if (py_obj_read_u64(&R->o, t->frames[i].frame + (uint64_t)R->L.frame_localsplus, &self) < 0)
			continue;
		self &= ~R->p->rules->stackref_tag_mask;
		if (py_type_is_sub(&R->o, py_obj_type(&R->o, self), R->taskgroup))
			return self;
	}
	return 0;
}

/* What task i waits on, and the "awaits" edges that follow from it. */
static int classify_wait(struct reader *R, int i)
{
	struct py_task *t = &R->out->tasks[i];
	uint64_t type, group, v;

	/* running: a waiter still read is one it was just woken from */
	if (!t->awaited || t->state != PY_TASK_PENDING || t->running) {
		t->awaits = PY_AWAITS_NOTHING;
		return 0;
	}
	type = py_obj_type(&R->o, t->awaited);
	group = taskgroup_in_chain(R, t);
	if (is_task_type(R, type)) {
		t->awaits = PY_AWAITS_TASK;
		t->awaited_task = find_task(R, t->awaited);
		return add_edge(R, i, t->awaited_task);
	}
	if (py_type_is_sub(&R->o, type, R->gathering)) {
		uint64_t kids[256];
		int n = -1;

		t->awaits = PY_AWAITS_GATHER;
		if (py_obj_getattr(&R->o, t->awaited, "_children", &v) == 0)
			n = py_sequence(&R->o, v, kids, 256, NULL);
		for (int k = 0; k < n; k++)
			if (add_edge(R, i, find_task(R, kids[k])) < 0)
				return -1;
		return 0;
	}
	if (group) {
		const struct group_tasks *g = group_tasks(R, group);

		t->awaits = PY_AWAITS_TASKGROUP;
		if (!g)
			return -1;
		if (!g->ntasks && R->out->nedges >= PY_AWAIT_EDGES_MAX)
			R->out->edges_dropped++; /* a group left unread */
		for (int k = 0; k < g->ntasks; k++) {
			if (R->out->nedges >= PY_AWAIT_EDGES_MAX) { /* the rest, counted at once */
				R->out->edges_dropped += (uint64_t)(g->ntasks - k);
				break;
			}
			if (add_edge(R, i, g->tasks[k]) < 0)
				return -1;
		}
		return 0;
	}
	t->awaits = PY_AWAITS_FUTURE;
	return 0;
}

/* 3.14+: the awaiters _asyncio records on each C task. */
static int recorded_awaiters(struct reader *R, int i)
{
	const struct py_task *t = &R->out->tasks[i];
	uint64_t by = 0;
	uint8_t is_set = 0;
	struct edge_ctx e = { R, -1, i };

	if (t->python_task || R->L.task_awaited_by < 0 ||
	    py_obj_read_u64(&R->o, t->addr + (uint64_t)R->L.task_awaited_by, &by) < 0 || !by ||
	    remote_read(R->p->pid, t->addr + (uint64_t)R->L.task_awaited_by_is_set, &is_set, 1) < 0)
		return 0;
	if (!is_set)
		return edge_fn(by, 0, &e);
	return py_set_each(&R->o, by, PY_TASKS_MAX, edge_fn, &e) < 0 ? -1 : 0;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct py_await_edge *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent - y->parent;
	return x->child - y->child;
}

/* Edges in (parent, child) order; each task's first awaiter noted. */
static void sort_edges(struct py_asyncio *a)
{
	if (!a->nedges)
		return; /* no array to sort (qsort must not get NULL) */
	qsort(a->edges, (size_t)a->nedges, sizeof(*a->edges), cmp_edge);
	for (int e = a->nedges - 1; e >= 0; e--)
		a->tasks[a->edges[e].child].awaiter = a->edges[e].parent;
}

static const struct reader *sort_reader;
static int cmp_by_addr(const void *a, const void *b)
{
	uint64_t x = sort_reader->out->tasks[*(const int *)a].addr;
	uint64_t y = sort_reader->out->tasks[*(const int *)b].addr;

	return (x > y) - (x < y);
}

/* Reads each distinct candidate that passes as a task into out->tasks. */
static int read_tasks(struct reader *R)
{
	struct py_asyncio *a = R->out;

	if (R->ncand) /* no candidates: no array (qsort must not get NULL) */
		qsort(R->cand, R->ncand, sizeof(*R->cand), cmp_u64);
	a->tasks = calloc(R->ncand ? R->ncand : 1, sizeof(*a->tasks));
	R->by_addr = calloc(R->ncand ? R->ncand : 1, sizeof(*R->by_addr));
	if (!a->tasks || !R->by_addr)
		return -1;
	for (size_t i = 0; i < R->ncand; i++) {
		struct py_task *t = &a->tasks[a->ntasks];
		uint64_t type, waiter = 0;
		bool ok;

		if (i && R->cand[i] == R->cand[i - 1])
			continue;
		memset(t, 0, sizeof(*t));
		t->awaiter = t->awaited_task = -1;
		t->addr = R->cand[i];
		type = py_obj_type(&R->o, t->addr);
		if (py_type_is_sub(&R->o, type, R->c_task) ||
		    (!R->c_task && R->L.task_is_task >= 0 && R->r->task_lists == PY_TASKS_LINKED_LISTS))
			ok = read_c_task(R, t->addr, t, &waiter);
		else if (py_type_is_sub(&R->o, type, R->py_task))
			ok = read_py_task(R, t->addr, t, &waiter);
		else
			ok = false;
		if (!ok) {
			a->unreadable++;
			continue;
		}
		t->awaited = waiter;
		a->ntasks++;
	}
	for (int i = 0; i < a->ntasks; i++)
		R->by_addr[i] = i;
	sort_reader = R; /* tasks are already in address order; kept for clarity */
	qsort(R->by_addr, (size_t)a->ntasks, sizeof(*R->by_addr), cmp_by_addr);
	return 0;
}

static int running_fn(uint64_t key, uint64_t value, void *arg)
{
	struct reader *R = arg;
	int i = find_task(R, value);

	(void)key;
	if (i >= 0)
		R->out->tasks[i].running = true;
	return 0;
}

static bool is_loop(const struct reader *R, uint64_t obj)
{
	return obj && obj != R->o.none;
}

/* Whether thread ts runs an event loop now. */
static bool thread_has_loop(struct reader *R, uint64_t ts)
{
	uint64_t v = 0, dict = 0;

	switch (R->r->running_loop) {
	case PY_LOOP_TSTATE:
		return py_obj_read_u64(&R->o, ts + (uint64_t)R->L.tstate_running_loop, &v) == 0 &&
		       is_loop(R, v);
	case PY_LOOP_TS_DICT:
	case PY_LOOP_TS_DICT_HOLDER:
		if (py_obj_read_u64(&R->o, ts + (uint64_t)R->L.tstate_dict, &dict) < 0 || !dict ||
		    py_dict_get(&R->o, dict, "__asyncio_running_event_loop__", &v) != 0)
			return false;
		if (R->r->running_loop == PY_LOOP_TS_DICT_HOLDER &&
		    py_obj_read_u64(&R->o, v + (uint64_t)R->L.running_holder_loop, &v) < 0)
			return false;
		return is_loop(R, v);
	}
	return false;
}

/* Which task each thread runs, and which threads run a loop. */
static void find_running(struct reader *R, const struct py_thread *threads, int nthreads)
{
	struct py_asyncio *a = R->out;
	struct py_frame *frames = NULL;

	if (R->current_tasks)
		py_dict_each(&R->o, R->current_tasks, PY_SCAN_MAX, running_fn, R);
	for (int k = 0; k < nthreads; k++) {
		const struct py_thread *th = &threads[k];
		uint64_t rt = 0;
		bool truncated;
		int n;

		if (thread_has_loop(R, th->tstate) &&
		    a->nloop_threads < (int)(sizeof(a->loop_threads) / sizeof(a->loop_threads[0])))
			a->loop_threads[a->nloop_threads++] = th->host_tid;
		if (R->L.tstate_running_task >= 0 &&
		    py_obj_read_u64(&R->o, th->tstate + (uint64_t)R->L.tstate_running_task, &rt) == 0 && rt) {
			int i = find_task(R, rt);

			if (i >= 0) {
				a->tasks[i].running = true;
				a->tasks[i].thread = th->host_tid;
			}
		}
		/* a running task's outermost coroutine frame is on its thread's stack */
		if (!frames)
			frames = calloc(THREAD_FRAMES, sizeof(*frames));
		if (!frames)
			continue;
		n = py_frames_read(R->p, th->tstate, frames, THREAD_FRAMES, &truncated);
		for (int i = 0; i < a->ntasks; i++) {
			struct py_task *t = &a->tasks[i];

			if (!t->running || t->thread || !t->coro)
				continue;
			for (int f = 0; f < n; f++)
				if (frames[f].addr == t->coro + (uint64_t)R->L.gen_iframe)
					t->thread = th->host_tid;
		}
	}
	free(frames);
}

static void collect(struct reader *R, const struct py_thread *threads, int nthreads)
{
	uint64_t interps[PY_MAX_INTERPRETERS];
	int ninterps = 0;

	for (int k = 0; k < nthreads; k++) {
		bool seen = false;

		for (int j = 0; j < ninterps; j++)
			seen |= interps[j] == threads[k].interp;
		if (!seen && ninterps < PY_MAX_INTERPRETERS)
			interps[ninterps++] = threads[k].interp;
		if (R->r->task_lists == PY_TASKS_LINKED_LISTS && R->L.tstate_tasks_head >= 0)
			list_candidates(R, threads[k].tstate + (uint64_t)R->L.tstate_tasks_head);
	}
	for (int j = 0; j < ninterps; j++) {
		module_candidates(R, interps[j]);
		if (R->r->task_lists == PY_TASKS_LINKED_LISTS && R->L.interp_tasks_head >= 0)
			list_candidates(R, interps[j] + (uint64_t)R->L.interp_tasks_head);
	}
}

/* The offsets and types of p: from ctx when it has them, else looked up
 * (and kept in ctx once _asyncio is there to be read). */
static int open_reader(struct reader *R, struct py_asyncio_ctx *ctx)
{
	struct py_asyncio *out = R->out;
	char err[192];
	int rc;

	if (ctx && ctx->ready) {
		R->L = ctx->L;
		out->source = ctx->source;
		memcpy(out->extension, ctx->extension, sizeof(out->extension));
		R->o = ctx->objects;
		R->o.p = R->p;
		return 0;
	}
	rc = py_async_layout_load(R->p, &R->L, &out->source, out->extension,
				  sizeof(out->extension), err, sizeof(err));
	if (rc < 0)
		return py_process_fail(R->p, PY_FAIL_UNSUPPORTED, "%s", err);
	if (py_objects_init(&R->o, R->p) < 0)
		return py_process_fail(R->p, PY_FAIL_UNSUPPORTED, "%s", R->o.why);
	if (ctx && rc == 0) {
		ctx->ready = true;
		ctx->L = R->L;
		ctx->source = out->source;
		memcpy(ctx->extension, out->extension, sizeof(ctx->extension));
		ctx->objects = R->o;
	}
	return 0;
}

int py_asyncio_read(struct py_process *p, struct py_asyncio_ctx *ctx,
		    const struct py_thread *threads, int nthreads, struct py_asyncio *out)
{
	struct reader R = { .p = p, .r = &p->rules->async, .out = out };

	memset(out, 0, sizeof(*out));
	if (open_reader(&R, ctx) < 0)
		return -1;
	collect(&R, threads, nthreads);
	if (read_tasks(&R) < 0) {
		free(R.cand);
		free(R.by_addr);
		return py_process_fail(p, PY_FAIL_TRANSIENT, "out of memory");
	}
	/* every candidate failed its checks: the offsets are wrong, not the tasks */
	if (out->ntasks == 0 && out->unreadable > 0) {
		free(R.cand);
		free(R.by_addr);
		py_asyncio_free(out);
		if (!proc_exists(p->pid))
			return py_process_fail(p, PY_FAIL_GONE, "no such process (it exited while being read)");
		return py_process_fail(p, PY_FAIL_VALIDATION, "asyncio %s offsets failed validation: no task readable",
				       py_async_source_name(R.L.task_coro >= 0 ? out->source
									   : PY_ASYNC_SRC_TABLE));
	}
	for (int i = 0; i < out->ntasks; i++)
		read_chain(&R, &out->tasks[i]);
	find_running(&R, threads, nthreads);
	if (ctx && R.current_tasks)
		ctx->current_tasks = R.current_tasks;
	for (int i = 0; i < out->ntasks; i++)
		if (classify_wait(&R, i) < 0 || recorded_awaiters(&R, i) < 0)
			break;
	free_groups(&R);
	sort_edges(out);
	free(R.cand);
	free(R.by_addr);
	return 0;
}

void py_asyncio_free(struct py_asyncio *a)
{
	free(a->tasks);
	free(a->edges);
	a->tasks = NULL;
	a->edges = NULL;
	a->ntasks = a->nedges = 0;
}

const struct py_task *py_asyncio_by_coro(const struct py_asyncio *a, uint64_t coro)
{
	for (int i = 0; i < a->ntasks; i++)
		if (a->tasks[i].coro == coro)
			return &a->tasks[i];
	return NULL;
}

int py_asyncio_awaiter(const struct py_asyncio *a, int i)
{
	return a->tasks[i].awaiter;
}

int py_asyncio_task_src(const struct py_asyncio_ctx *ctx, struct pyb_task_src *src)
{
	const struct py_async_layout *L = &ctx->L;
	struct py_dict_keys_fields k;

	if (!ctx->ready || L->task_coro < 0 || L->task_name < 0 || L->gen_iframe < 0)
		return -1;
	memset(src, 0, sizeof(*src));
	src->str_type = ctx->objects.t_str;
	src->long_type = ctx->objects.t_int;
	src->task_coro = L->task_coro;
	src->task_name = L->task_name;
	src->gen_iframe = L->gen_iframe;
	src->tstate_running_task = L->tstate_running_task; /* 3.14+ */
	if (src->tstate_running_task >= 0)
		return 0;
	/* the dict's entries after its keys object's indices */
	if (!ctx->current_tasks || py_dict_keys_fields(&ctx->objects, &k) < 0)
		return -1;
	src->current_tasks = ctx->current_tasks;
	src->dict_keys = k.dict_keys;
	src->keys_log2_index_bytes = k.log2_index_bytes;
	src->keys_kind = k.kind;
	src->keys_nentries = k.nentries;
	src->keys_indices = k.indices;
	return 0;
}

/* PYB_TASK_IDENT of task with str name, as bpf_c/asyncio.bpf.h reads it
 * (unreadable words count as 0); 0 if the name is not ASCII. */
static uint64_t str_ident(struct py_process *p, uint64_t name, uint64_t task)
{
	uint64_t meta[3] = { 0 }, w[3] = { 0 }, len;

	if (p->off.unicode_length < 0 || p->off.unicode_ascii_size < 0 ||
	    remote_read(p->pid, name + (uint64_t)p->off.unicode_length, meta, sizeof(meta)) < 0)
		memset(meta, 0, sizeof(meta));
	len = meta[0];
	if (!((meta[2] >> py_rules_str_ascii_bit(p->rules)) & 1) || len > (1ULL << 30))
		return 0;
	if (remote_read(p->pid, name + (uint64_t)p->off.unicode_ascii_size, w, 16) < 0)
		w[0] = w[1] = 0;
	if (len >= 8 &&
	    remote_read_u64(p->pid, name + (uint64_t)p->off.unicode_ascii_size + len - 8, &w[2]) < 0)
		w[2] = 0;
	return PYB_TASK_IDENT(task, PYB_TASK_STR_IDENT(name, len, w[0], w[1], w[2]));
}

uint64_t py_asyncio_task_ident(struct py_process *p, const struct py_asyncio_ctx *ctx,
			       const struct py_task *t)
{
	const struct py_objects *o = &ctx->objects;
	uint64_t name, type, w[2] = { 0, 0 };

	if (!ctx->ready || t->python_task || ctx->L.task_name < 0)
		return 0;
	if (py_obj_read_u64(o, t->addr + (uint64_t)ctx->L.task_name, &name) < 0 || !name)
		return 0;
	type = py_obj_type(o, name);
	if (type && type == o->t_str)
		return str_ident(p, name, t->addr);
	if (!type || type != o->t_int || o->long_tag < 0 ||
	    remote_read(p->pid, name + (uint64_t)o->long_tag, w, sizeof(w)) < 0)
		return 0;
	return PYB_TASK_IDENT(t->addr, PYB_STR_IDENT(name, w[0], w[1]));
}

int py_asyncio_int_name(const struct py_process *p, const uint64_t words[2], char *buf,
			size_t len)
{
	/* 3.12+ ints: lv_tag = digits << 3 | sign (0 positive); 30-bit digits */
	uint64_t ndigits = words[0] >> 3, value;

	if (p->version.minor < 13 || (words[0] & 3) != 0 || ndigits < 1 || ndigits > 2)
		return -1;
	value = (words[1] & 0x3fffffff) |
		(ndigits == 2 ? ((words[1] >> 32) & 0x3fffffff) << 30 : 0);
	snprintf(buf, len, "Task-%llu", (unsigned long long)value);
	return 0;
}
