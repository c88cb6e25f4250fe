// SPDX-License-Identifier: Apache-2.0
/* pymem --alloc: not built yet (a placeholder the mode's work replaces). */
#include <stdio.h>

#include "pymem.h"

int pymem_alloc(struct pymem_options *o, struct tool_session *s)
{
	(void)o;
	(void)s;
	fprintf(stderr, "pymem: --alloc is not built yet\n");
	return 1;
}
