/* SPDX-License-Identifier: Apache-2.0 */
/*
 * pyprofile --top on a terminal: the table of report/top.h redrawn every
 * second in place (an 80-column terminal over ssh is enough: plain ANSI
 * escapes, no curses), keys read as they are typed; when stdout is not a
 * terminal, the table as plain text every second, one after the other.
 */
#ifndef PYBPF_TOP_VIEW_H
#define PYBPF_TOP_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <termios.h>

#include "bpf/session.h"
#include "report/top.h"

struct top_view {
	struct top top;
	struct report last; /* the last report, for a new filter */
	bool have_last;
	bool tty_out, tty_in, raw; /* raw: stdin's terminal settings changed */
	struct termios saved;
	uint64_t next_ns;
	char title[160];
};

/*
 * Takes over the session's turns (s->on_tick) and, on a terminal, the
 * screen and the keyboard. seconds_per_unit: what a report unit is worth.
 * Returns 0 or -1.
 */
int top_view_start(struct top_view *v, struct tool_session *s, double seconds_per_unit,
		   const char *title);

/* Gives the terminal back as it was. */
void top_view_stop(struct top_view *v);

#endif
