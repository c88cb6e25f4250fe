// SPDX-License-Identifier: Apache-2.0
/* pymem growth by stack: not built yet (a placeholder the mode's work replaces). */
#include <stdio.h>

#include "pymem.h"

int pymem_growth(struct pymem_options *o, struct tool_session *s)
{
	(void)o;
	(void)s;
	fprintf(stderr, "pymem: growth by stack is not built yet\n");
	return 1;
}
