/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/gc_layout.h"

#include <errno.h>
#include <string.h>
#include <time.h>

#include "cpython/offsets_debug.h"
#include "sys/remote_mem.h"

#define GEN_STRIDE 24 /* struct gc_generation: PyGC_Head, int threshold, int count */
#define PTR_BITS 3ULL /* the flag bits of _gc_next and _gc_prev */
#define TRIES 5       /* a collection rearranges the lists: look again */

const char *py_gc_collector_name(enum py_gc_collector c)
{
	return c == PY_GC_INCREMENTAL ? "incremental" : "generational";
}

/*
 * Whether head is the head of a circular doubly linked list as the
 * collector keeps it between collections: empty (both links to itself)
 * or its first element's _gc_prev and its last element's _gc_next point
 * back at it. 0 yes, 1 no, or a negative errno.
 */
static int head_valid(pid_t pid, uint64_t head)
{
	uint64_t links[2], back = 0;
	uint64_t next, prev;
	int rc;

	if ((rc = remote_read(pid, head, links, sizeof(links))) < 0)
		return rc == -ESRCH ? rc : 1;
	next = links[0] & ~PTR_BITS;
	prev = links[1] & ~PTR_BITS;
	if (next == head || prev == head)
		return next == head && prev == head ? 0 : 1;
	if (!next || !prev)
		return 1;
	if ((rc = remote_read_u64(pid, next + 8, &back)) < 0)
		return rc == -ESRCH ? rc : 1;
	if ((back & ~PTR_BITS) != head)
		return 1;
	if ((rc = remote_read_u64(pid, prev, &back)) < 0)
		return rc == -ESRCH ? rc : 1;
	return (back & ~PTR_BITS) == head ? 0 : 1;
}

/* Whether the three list heads and the permanent one at these offsets
 * are valid: 0 yes, 1 no, or a negative errno. */
static int heads_valid(pid_t pid, uint64_t state, int32_t heads, int32_t permanent)
{
	int rc = 0;

	for (int i = 0; i < PY_GC_LISTS && rc == 0; i++)
		rc = head_valid(pid, state + (uint64_t)(heads + i * GEN_STRIDE));
	return rc == 0 ? head_valid(pid, state + (uint64_t)permanent) : rc;
}

/* 3.13+: the state's place, size and `collecting` as the process
 * publishes them, checked against the rules' layout. */
static int from_debug_offsets(struct py_process *p, int32_t *state, int32_t *size,
			      int32_t *collecting)
{
	const struct py_gc_rules *r = &p->rules->gc;
	size_t need = debug_offsets_size(p->version.minor);
	uint8_t raw[DEBUG_OFFSETS_MAX_BYTES];
	uint64_t at = 0, sz = 0, coll = 0;
	int rc;

	if (!p->rules->has_debug_offsets ||
	    !py_rules_debug_layout_valid(p->rules, py_version_hex(&p->version)) || !need ||
	    need > sizeof(raw))
		return py_process_fail(p, PY_FAIL_UNSUPPORTED,
				       "Python %s: no _Py_DebugOffsets layout known to find its "
				       "collector",
				       p->version_str);
	if ((rc = remote_read(p->pid, p->runtime_addr, raw, need)) < 0)
		return py_process_read_failed(p, rc, "_Py_DebugOffsets");
	if (debug_offsets_slot(raw, need, p->version.minor, "interpreter_state.gc", &at) < 0 ||
	    debug_offsets_slot(raw, need, p->version.minor, "gc.size", &sz) < 0 ||
	    debug_offsets_slot(raw, need, p->version.minor, "gc.collecting", &coll) < 0 ||
	    at > 1u << 20 || at % 8)
		return py_process_fail(p, PY_FAIL_UNSUPPORTED,
				       "Python %s: _Py_DebugOffsets give no usable gc offsets",
				       p->version_str);
	if ((int64_t)coll != r->collecting ||
	    ((int64_t)sz != r->size && (!r->size_incremental || (int64_t)sz != r->size_incremental)))
		return py_process_fail(p, PY_FAIL_UNSUPPORTED,
				       "Python %s: its collector's state (%llu bytes, collecting at "
				       "+%llu) is not a layout we know",
				       p->version_str, (unsigned long long)sz,
				       (unsigned long long)coll);
	*state = (int32_t)at;
	*size = (int32_t)sz;
	*collecting = (int32_t)coll;
	return 0;
}

/* One look at the candidate places of the heads: 0 and *heads set, 1 if
 * none (or more than one) is valid, or a negative errno. */
static int find_heads(struct py_process *p, uint64_t state, int32_t *heads)
{
	const struct py_gc_rules *r = &p->rules->gc;
	int32_t cand[2] = { r->heads, r->heads_alt };
	int found = 0;

	for (int i = 0; i < 2; i++) {
		int rc;

		if (i && !cand[i])
			continue;
		rc = heads_valid(p->pid, state, cand[i], r->permanent);
		if (rc < 0)
			return rc;
		if (rc == 0) {
			*heads = cand[i];
			found++;
		}
	}
	return found == 1 ? 0 : 1;
}

int py_gc_layout_read(struct py_process *p, uint64_t interp, struct py_gc_layout *g)
{
	const struct py_gc_rules *r = p->rules ? &p->rules->gc : NULL;
	int32_t at, size, collecting;
	uint64_t base;
	int rc = 1;

	memset(g, 0, sizeof(*g));
	if (!r || p->free_threaded || r->home == PY_GC_NONE)
		return py_process_fail(p, PY_FAIL_UNSUPPORTED,
				       "Python %s%s: no collector lists to read (free-threaded "
				       "builds keep none)",
				       p->version_str, p->free_threaded ? "t" : "");
	at = r->state;
	size = r->size;
	collecting = r->collecting;
	if (p->rules->has_debug_offsets && from_debug_offsets(p, &at, &size, &collecting) < 0)
		return -1;
	base = r->home == PY_GC_IN_RUNTIME ? p->runtime_addr : interp;
	if (!base)
		return py_process_fail(p, PY_FAIL_VALIDATION, "no interpreter state");
	g->interp = interp;
	g->state = base + (uint64_t)at;
	g->collecting = collecting;
	g->collector = r->size_incremental && size == r->size_incremental ? PY_GC_INCREMENTAL
									   : PY_GC_GENERATIONAL;
	for (int t = 0; t < TRIES && rc == 1; t++) {
		if (t) {
			struct timespec ts = { 0, 2 * 1000 * 1000 };

			nanosleep(&ts, NULL);
		}
		rc = find_heads(p, g->state, &g->heads_offset);
	}
	if (rc < 0)
		return py_process_read_failed(p, rc, "the collector's lists");
	if (rc)
		return py_process_fail(p, PY_FAIL_VALIDATION,
				       "Python %s: the collector's list heads at 0x%llx do not "
				       "form the lists this version keeps",
				       p->version_str, (unsigned long long)g->state);
	for (int i = 0; i < PY_GC_LISTS; i++)
		g->lists[i] = g->state + (uint64_t)(g->heads_offset + i * GEN_STRIDE);
	g->permanent = g->state + (uint64_t)r->permanent;
	return 0;
}

int py_gc_collecting(struct py_process *p, const struct py_gc_layout *g)
{
	int32_t v = 0;
	int rc = remote_read_i32(p->pid, g->state + (uint64_t)g->collecting, &v);

	if (rc < 0)
		return py_process_read_failed(p, rc, "the collector's state");
	return v ? 1 : 0;
}
