// SPDX-License-Identifier: Apache-2.0
/*
 * pydump --native: the native frames of a blocked thread, unwound from the
 * registers the kernel shows for it (/proc/PID/task/TID/syscall: stack and
 * instruction pointer of a thread in a system call; a core's NT_PRSTATUS),
 * merged with its Python frames as the profilers merge them: each native
 * frame of the eval loop gives way to the Python frames that run of the
 * loop executes. Native frames outside the outermost Python frame (the
 * interpreter's start-up, the thread's start routine) are left out.
 */
#include <stdlib.h>
#include <string.h>

#include "cpython/eval_entries.h"
#include "pydump_dump.h"
#include "sys/native_stack.h"

#define MAX_NATIVE 256
#define EVAL_SYMBOL "_PyEval_EvalFrameDefault"

#define MAX_ENTRIES 1024

struct entries {
	uint64_t v[MAX_ENTRIES];
	int n;
};

/* An eval-loop frame: in the loop's code (its symbol, or the ranges the
 * process inspection found), or holding one of the loop's entry frames
 * on its stack (frame i spans [sp, the next frame's sp)). */
static bool is_eval(const struct dump *d, const struct native_frame *nf, int i, int count,
		    const struct entries *e)
{
	const struct native_frame *f = &nf[i];

	if (py_process_in_eval(&d->p, f->ip) ||
	    (f->symbol && strncmp(f->symbol, EVAL_SYMBOL, strlen(EVAL_SYMBOL)) == 0))
		return true;
	for (int k = 0; k < e->n && i + 1 < count; k++)
		if (e->v[k] >= f->sp && e->v[k] < nf[i + 1].sp)
			return true;
	return false;
}

/* How many Python frames (from index at) the eval-loop run at `at` executed:
 * up to its entry frame from 3.11, one frame (a call of the loop per frame)
 * before. */
static size_t run_length(const struct dump *d, const struct py_frame *pf, size_t n, size_t at)
{
	size_t k = at;

	if (d->p.rules->frame_model == PY_FRAMES_OBJECTS)
		return at < n ? 1 : 0;
	while (k < n && !(pf[k].flags & PY_FRAME_ENTRY))
		k++;
	return k < n ? k - at + 1 : n - at;
}

static bool add_native(struct dump_thread *t, const struct native_frame *nf)
{
	struct dump_frame *f = dump_add_frame(t, DUMP_FRAME_NATIVE);

	if (!f)
		return false;
	f->ip = nf->ip;
	f->offset = nf->offset;
	f->name = nf->symbol ? strdup(nf->symbol) : NULL;
	f->file = nf->mod ? strdup(nf->mod->path) : NULL;
	return true;
}

static void note(struct dump_thread *t, const char *why)
{
	snprintf(t->native_note, sizeof(t->native_note), "%s", why);
}

void dump_native_frames(struct dump *d, struct dump_thread *t, const struct py_frame *pf,
			size_t n)
{
	struct native_frame nf[MAX_NATIVE];
	static struct entries entries;
	struct dump_frame *python;
	size_t npython, next = 0, last_eval = 0;
	bool any_eval = false;
	char why[160];
	int count;

	if (!t->have_state) {
		note(t, "the thread's state is unknown");
		return;
	}
	if (!t->k.from_image && (t->k.running || t->k.state == 'R')) {
		note(t, "running: the kernel shows the registers of blocked threads only");
		return;
	}
	if (!d->native) {
		d->native = calloc(1, sizeof(*d->native));
		if (!d->native || native_proc_open(d->native, d->p.pid) < 0) {
			free(d->native);
			d->native = NULL;
			note(t, "the process's mappings are unreadable");
			return;
		}
	}
	count = native_unwind(d->native, &t->k.regs, nf, MAX_NATIVE, why, sizeof(why));
	if (count <= 0) {
		note(t, why[0] ? why : "no registers");
		return;
	}
	entries.n = py_eval_entries(&d->p, t->t.tstate, entries.v, MAX_ENTRIES);
	for (int i = 0; i < count; i++)
		if (is_eval(d, nf, i, count, &entries)) {
			any_eval = true;
			last_eval = (size_t)i;
		}
	/* rebuild the frame list: the Python frames move into the merge */
	python = t->frames;
	npython = t->nframes;
	t->frames = NULL;
	t->nframes = t->frames_cap = 0;
	for (size_t i = 0; i < (size_t)count; i++) {
		if (n && any_eval && i > last_eval)
			break; /* below the outermost Python frame: start-up code */
		if (is_eval(d, nf, (int)i, count, &entries) && next < npython) {
			size_t len = run_length(d, pf, n, next);

			for (size_t k = 0; k < len && next < npython; k++, next++) {
				struct dump_frame *f = dump_add_frame(t, python[next].kind);

				if (f)
					*f = python[next];
			}
			continue;
		}
		if (!add_native(t, &nf[i]))
			break;
	}
	/* The walk stopped before the eval loop that runs the next Python
	 * frame: what it found is innermost all the same; a gap, then the
	 * Python frames left. */
	if (why[0] && next < npython) {
		struct dump_frame *f = dump_add_frame(t, DUMP_FRAME_GAP);

		if (f)
			f->name = strdup(why);
	}
	for (; next < npython; next++) {
		struct dump_frame *f = dump_add_frame(t, python[next].kind);

		if (f)
			*f = python[next];
	}
	free(python);
}
