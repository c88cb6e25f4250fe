/* SPDX-License-Identifier: Apache-2.0 */
/* A thread's frame list in a dump, shared by the collector and the native merge. */
#include <stdlib.h>
#include <string.h>

#include "pydump_dump.h"

struct dump_frame *dump_add_frame(struct dump_thread *t, enum dump_frame_kind kind)
{
	struct dump_frame *f;

	if (t->nframes == t->frames_cap) {
		size_t cap = t->frames_cap ? 2 * t->frames_cap : 16;
		struct dump_frame *v = realloc(t->frames, cap * sizeof(*v));

		if (!v)
			return NULL;
		t->frames = v;
		t->frames_cap = cap;
	}
	f = &t->frames[t->nframes++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->line = -1;
	f->nlocals = -1;
	return f;
}
