/* SPDX-License-Identifier: Apache-2.0 */
#include "top_view.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "bpf/tool.h"
#include "sys/clock.h"

#define REFRESH_NS (1000ull * 1000 * 1000)
#define KEY_TURN_MS 100 /* how soon a key is seen (the keyboard also ends a turn) */
#define ALT_SCREEN_ON "\033[?1049h\033[?25l"
#define ALT_SCREEN_OFF "\033[?25h\033[?1049l"
#define HOME "\033[H"
#define CLEAR_EOL "\033[K"
#define CLEAR_BELOW "\033[J"

static void screen_size(bool tty, int *width, int *height)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS"), *lines = getenv("LINES");

	*width = 80;
	*height = 24;
	if (tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col && ws.ws_row) {
		*width = ws.ws_col;
		*height = ws.ws_row;
		return;
	}
	if (cols && atoi(cols) > 0)
		*width = atoi(cols);
	if (lines && atoi(lines) > 0)
		*height = atoi(lines);
}

/* One screen, written at once so that it does not flicker. */
static void draw(struct top_view *v)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int width, height;

	if (!mem)
		return;
	screen_size(v->tty_out, &width, &height);
	if (v->tty_out) {
		fputs(HOME, mem);
		/* the last line stays empty: a full screen would scroll */
		top_render(&v->top, mem, width, height - 1, v->title, CLEAR_EOL);
		fputs(CLEAR_BELOW, mem);
	} else {
		top_render(&v->top, mem, width, height, v->title, "");
		fputc('\n', mem);
	}
	fclose(mem);
	if (buf) {
		fwrite(buf, 1, len, stdout);
		fflush(stdout);
	}
	free(buf);
}

static void refresh(struct top_view *v, struct tool_session *s)
{
	struct report rep;

	report_init(&rep, false);
	if (session_collect(s, &rep) < 0 || top_update(&v->top, &rep, monotonic_ns()) < 0) {
		report_free(&rep);
		return;
	}
	if (v->have_last)
		report_free(&v->last);
	v->last = rep;
	v->have_last = true;
	draw(v);
}

static void read_keys(struct top_view *v)
{
	char keys[32];
	ssize_t n = read(STDIN_FILENO, keys, sizeof(keys));
	bool changed = false;

	for (ssize_t i = 0; i < n; i++) {
		if (keys[i] == 'q' || keys[i] == 'Q') {
			session_stop = 1;
			return;
		}
		changed |= top_key(&v->top, keys[i], v->have_last ? &v->last : NULL);
	}
	if (changed)
		draw(v);
}

static void on_tick(struct tool_session *s, void *ctx)
{
	struct top_view *v = ctx;
	uint64_t now = monotonic_ns();

	if (v->raw)
		read_keys(v);
	if (now >= v->next_ns) {
		v->next_ns = now + REFRESH_NS;
		refresh(v, s);
	}
}

int top_view_start(struct top_view *v, struct tool_session *s, double seconds_per_unit,
		   const char *title)
{
	memset(v, 0, sizeof(*v));
	top_init(&v->top, seconds_per_unit);
	snprintf(v->title, sizeof(v->title), "%s", title);
	v->tty_out = isatty(STDOUT_FILENO);
	v->tty_in = isatty(STDIN_FILENO);
	if (v->tty_out && v->tty_in && tcgetattr(STDIN_FILENO, &v->saved) == 0) {
		struct termios t = v->saved;

		/* keys as they are typed, not echoed; Ctrl-C still stops */
		t.c_lflag &= (tcflag_t) ~(ICANON | ECHO);
		t.c_cc[VMIN] = 0;
		t.c_cc[VTIME] = 0;
		v->raw = tcsetattr(STDIN_FILENO, TCSANOW, &t) == 0;
	}
	v->top.keys = v->raw; /* no key help where no key is read (a pipe, a file) */
	if (v->tty_out) {
		fputs(ALT_SCREEN_ON, stdout);
		fflush(stdout);
	}
	v->next_ns = monotonic_ns() + REFRESH_NS;
	tool_on_tick(s, on_tick, v, KEY_TURN_MS, v->raw);
	return 0;
}

void top_view_stop(struct top_view *v)
{
	if (v->raw)
		tcsetattr(STDIN_FILENO, TCSANOW, &v->saved);
	if (v->tty_out) {
		fputs(ALT_SCREEN_OFF, stdout);
		fflush(stdout);
	}
	v->raw = false;
	v->tty_out = false;
	if (v->have_last)
		report_free(&v->last);
	v->have_last = false;
	top_free(&v->top);
}
