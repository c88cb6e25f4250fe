/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/asyncio_layout.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cpython/offsets_debug.h"
#include "cpython/offsets_dwarf.h"
#include "sys/elf_image.h"
#include "sys/proc_maps.h"
#include "sys/target_file.h"
#include "sys/remote_mem.h"

static const char *const field_names[] = {
#define PY_ASYNC_NAME(name) #name,
	PY_ASYNC_LAYOUT_FIELDS(PY_ASYNC_NAME)
#undef PY_ASYNC_NAME
};

#define FIELD_COUNT (sizeof(field_names) / sizeof(field_names[0]))

/* Generated rows, one string per minor (offsets/asyncio_generate.py). */
static const char *const table_rows[] = {
#include "cpython/asyncio_table.inc"
};

const char *py_async_source_name(enum py_async_source src)
{
	switch (src) {
	case PY_ASYNC_SRC_DEBUG:
		return "asyncio debug offsets";
	case PY_ASYNC_SRC_DWARF:
		return "dwarf";
	case PY_ASYNC_SRC_TABLE:
		return "table";
	case PY_ASYNC_SRC_NONE:
		break;
	}
	return "none";
}

void py_async_layout_clear(struct py_async_layout *L)
{
	int32_t *v = (int32_t *)L;

	for (size_t i = 0; i < FIELD_COUNT; i++)
		v[i] = PY_OFFSET_ABSENT;
}

size_t py_async_layout_count(void)
{
	return FIELD_COUNT;
}

const char *py_async_layout_name_at(size_t i)
{
	return i < FIELD_COUNT ? field_names[i] : NULL;
}

int32_t py_async_layout_value_at(const struct py_async_layout *L, size_t i)
{
	return i < FIELD_COUNT ? ((const int32_t *)L)[i] : PY_OFFSET_ABSENT;
}

static int32_t *field_by_name(struct py_async_layout *L, const char *name)
{
	for (size_t i = 0; i < FIELD_COUNT; i++)
		if (strcmp(field_names[i], name) == 0)
			return (int32_t *)L + i;
	return NULL;
}

/* Parses one generated row; returns its minor or -1. */
static int parse_row(const char *text, struct py_async_layout *L)
{
	int minor = -1;
	const char *p = text;

	py_async_layout_clear(L);
	while (*p) {
		char key[64];
		long value;
		int used = 0;
		int32_t *f;

		if (sscanf(p, "version 3.%d%n", &minor, &used) == 1) {
			p += used;
		} else if (sscanf(p, "%63s %ld%n", key, &value, &used) == 2) {
			f = field_by_name(L, key);
			if (!f || value < 0 || value > 1 << 20)
				return -1;
			*f = (int32_t)value;
			p += used;
		} else {
			return -1;
		}
		p += strspn(p, "\n");
	}
	return minor;
}

int py_async_layout_table(int minor, struct py_async_layout *L)
{
	for (size_t i = 0; i < sizeof(table_rows) / sizeof(table_rows[0]); i++)
		if (parse_row(table_rows[i], L) == minor)
			return 0;
	py_async_layout_clear(L);
	return -1;
}

/* 3.13+: what the interpreter publishes overrides the headers we were
 * generated from (3.13's thread state grew between patch releases). */
static int overlay_debug_offsets(struct py_process *p, struct py_async_layout *L, char *err,
				 size_t errlen)
{
	static const struct {
		const char *field, *slot;
	} map[] = {
		{ "interp_modules", "interpreter_state.imports_modules" },
		{ "gen_frame_state", "gen_object.gi_frame_state" },
		{ "gen_iframe", "gen_object.gi_iframe" },
		{ "frame_stackpointer", "interpreter_frame.stackpointer" },
		{ "frame_localsplus", "interpreter_frame.localsplus" },
		{ "llist_next", "llist_node.next" },
	};
	uint8_t raw[DEBUG_OFFSETS_MAX_BYTES];
	size_t need = debug_offsets_size(p->version.minor);
	uint64_t v;

	if (!need || need > sizeof(raw) || remote_read(p->pid, p->runtime_addr, raw, need) < 0) {
		snprintf(err, errlen, "cannot read _Py_DebugOffsets");
		return -1;
	}
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (debug_offsets_slot(raw, need, p->version.minor, map[i].slot, &v) < 0)
			continue;
		if (v > 1u << 20) {
			snprintf(err, errlen, "implausible _Py_DebugOffsets %s = %llu", map[i].slot,
				 (unsigned long long)v);
			return -1;
		}
		*field_by_name(L, map[i].field) = (int32_t)v;
	}
	/* 3.13: the running loop is the first field after PyThreadState */
	if (p->rules->async.running_loop == PY_LOOP_TSTATE && p->version.minor == 13 &&
	    debug_offsets_slot(raw, need, 13, "thread_state.size", &v) == 0 && v < 1u << 16)
		L->tstate_running_loop = (int32_t)v;
	return 0;
}

/* The lowest mapping of the file a mapping shows (same inode). */
static const struct proc_map *lowest_of(const struct proc_maps *maps, const struct proc_map *m)
{
	const struct proc_map *best = m;

	for (size_t i = 0; i < maps->n; i++)
		if (maps->v[i].inode == m->inode && maps->v[i].dev_major == m->dev_major &&
		    maps->v[i].dev_minor == m->dev_minor && maps->v[i].start < best->start)
			best = &maps->v[i];
	return best;
}

/* The mapped _asyncio extension module, if the process loaded one. */
static const struct proc_map *find_extension(const struct proc_maps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		if (strncmp(proc_map_basename(&maps->v[i]), "_asyncio.", 9) == 0)
			return lowest_of(maps, &maps->v[i]);
	return NULL;
}

/* 3.14+: _Py_AsyncioModuleDebugOffsets, 13 u64 in three groups. */
struct asyncio_debug {
	uint64_t task_size, task_name, task_awaited_by, task_is_task, task_awaited_by_is_set,
		task_coro, task_node;
	uint64_t interp_size, interp_tasks_head;
	uint64_t ts_size, ts_running_loop, ts_running_task, ts_tasks_head;
};

static bool debug_plausible(const struct asyncio_debug *d)
{
	const uint64_t task_fields[] = { d->task_name, d->task_awaited_by, d->task_is_task,
					 d->task_awaited_by_is_set, d->task_coro, d->task_node };

	if (d->task_size < 32 || d->task_size > 4096 || d->interp_size > 1u << 24 ||
	    d->ts_size > 1u << 20 || d->interp_tasks_head + 16 > d->interp_size ||
	    d->ts_running_loop + 8 > d->ts_size || d->ts_running_task + 8 > d->ts_size ||
	    d->ts_tasks_head + 16 > d->ts_size)
		return false;
	for (size_t i = 0; i < sizeof(task_fields) / sizeof(task_fields[0]); i++)
		if (task_fields[i] < 16 || task_fields[i] >= d->task_size)
			return false;
	return true;
}

/* Reads the AsyncioDebug section of img (mapped at load bias) from the
 * live process. Returns 0, 1 if img has no such section, -1 if garbage. */
static int read_asyncio_debug(struct py_process *p, struct elf_image *img, uint64_t bias,
			      struct asyncio_debug *d)
{
	uint64_t addr, size;

	if (elf_image_section(img, "AsyncioDebug", &addr, &size) != 0 &&
	    elf_image_section(img, ".AsyncioDebug", &addr, &size) != 0)
		return 1;
	if (size < sizeof(*d) || remote_read(p->pid, bias + addr, d, sizeof(*d)) < 0 ||
	    !debug_plausible(d))
		return -1;
	return 0;
}

static void apply_asyncio_debug(struct py_async_layout *L, const struct asyncio_debug *d)
{
	L->task_size = (int32_t)d->task_size;
	L->task_name = (int32_t)d->task_name;
	L->task_awaited_by = (int32_t)d->task_awaited_by;
	L->task_is_task = (int32_t)d->task_is_task;
	L->task_awaited_by_is_set = (int32_t)d->task_awaited_by_is_set;
	L->task_coro = (int32_t)d->task_coro;
	L->task_node = (int32_t)d->task_node;
	L->interp_tasks_head = (int32_t)d->interp_tasks_head;
	L->tstate_running_loop = (int32_t)d->ts_running_loop;
	L->tstate_running_task = (int32_t)d->ts_running_task;
	L->tstate_tasks_head = (int32_t)d->ts_tasks_head;
	/*
	 * Not published, from the 3.14/3.15 FutureObj/TaskObj of
	 * Modules/_asynciomodule.c: fut_loop follows the object header, the
	 * state follows awaited_by, the future waited on precedes the
	 * coroutine, and a FutureIter holds its future after its header.
	 * Checked on every task read (asyncio.c).
	 */
	L->fut_loop = 16;
	L->fut_state = L->task_awaited_by + 8;
	L->task_fut_waiter = L->task_coro - 8;
	L->futureiter_future = 16;
}

/* 3.11-3.13: TaskObj and friends from the extension's own DWARF. */
static bool asyncio_from_dwarf(struct elf_image *img, struct py_async_layout *L)
{
	static const struct {
		const char *field, *type, *member;
	} specs[] = {
		{ "fut_loop", "FutureObj", "fut_loop" },
		{ "fut_state", "FutureObj", "fut_state" },
		{ "task_fut_waiter", "TaskObj", "task_fut_waiter" },
		{ "task_coro", "TaskObj", "task_coro" },
		{ "task_name", "TaskObj", "task_name" },
		{ "futureiter_future", "futureiterobject", "future" },
	};
	struct py_async_layout tmp = *L;

	if (!elf_image_has_dwarf(img))
		return false;
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		long v = dwarf_offsetof_fd(img->fd, specs[i].type, specs[i].member);

		if (v < 0 || v > 4096)
			return false;
		*field_by_name(&tmp, specs[i].field) = (int32_t)v;
	}
	*L = tmp;
	return true;
}

int py_async_layout_load(struct py_process *p, struct py_async_layout *L,
			 enum py_async_source *src, char *ext, size_t ext_len, char *err,
			 size_t errlen)
{
	const struct py_async_rules *r = &p->rules->async;
	const struct proc_map *m;
	struct proc_maps maps;
	struct elf_image img;
	bool from_dwarf = false;
	int rc = 0;

	*src = PY_ASYNC_SRC_NONE;
	if (ext_len)
		ext[0] = '\0';
	if (p->free_threaded) {
		snprintf(err, errlen, "asyncio tasks of free-threaded builds are not supported");
		return -1;
	}
	if (r->task_lists == PY_TASKS_UNSUPPORTED) {
		snprintf(err, errlen, "asyncio tasks are read on CPython 3.11 and newer");
		return -1;
	}
	if (py_async_layout_table(p->version.minor, L) < 0) {
		snprintf(err, errlen, "no asyncio offsets for Python %s", p->version_str);
		return -1;
	}
	if (p->rules->has_debug_offsets && overlay_debug_offsets(p, L, err, errlen) < 0)
		return -1;
	rc = proc_maps_read(p->pid, &maps);
	if (rc < 0) {
		snprintf(err, errlen, "%s", rc == -ESRCH ? "no such process" : "cannot read maps");
		return -1;
	}
	m = find_extension(&maps);
	if (m && target_file_elf_of_mapping(p->pid, m, &img) == 0) {
		uint64_t bias = elf_image_load_bias(&img, m->start, m->offset);

		snprintf(ext, ext_len, "%s", m->path);
		if (r->task_lists == PY_TASKS_LINKED_LISTS) {
			struct asyncio_debug d;

			rc = read_asyncio_debug(p, &img, bias, &d);
			if (rc == 0)
				apply_asyncio_debug(L, &d);
		} else {
			from_dwarf = asyncio_from_dwarf(&img, L);
		}
		elf_image_close(&img);
	} else if (r->task_lists == PY_TASKS_LINKED_LISTS) {
		/* 3.15 (and builds that link _asyncio in): in the interpreter */
		struct asyncio_debug d;

		rc = 1;
		if (py_process_open_interp(p, &img) == 0) {
			rc = read_asyncio_debug(p, &img, p->load_bias, &d);
			if (rc == 0)
				apply_asyncio_debug(L, &d);
			elf_image_close(&img);
		}
	}
	proc_maps_free(&maps);
	if (r->task_lists == PY_TASKS_LINKED_LISTS) {
		if (rc < 0) {
			snprintf(err, errlen, "the AsyncioDebug section holds implausible offsets");
			return -1;
		}
		if (rc > 0)
			return 1; /* _asyncio not loaded: no C tasks, maybe no asyncio */
		*src = PY_ASYNC_SRC_DEBUG;
		return 0;
	}
	*src = from_dwarf ? PY_ASYNC_SRC_DWARF : PY_ASYNC_SRC_TABLE;
	return 0;
}
