// SPDX-License-Identifier: Apache-2.0
#include "pydump_dump.h"

void dump_native_frames(struct dump *d, struct dump_thread *t, const struct py_frame *pf,
			size_t n)
{
	(void)d;
	(void)pf;
	(void)n;
	snprintf(t->native_note, sizeof(t->native_note), "not implemented yet");
}
