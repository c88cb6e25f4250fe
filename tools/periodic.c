/* SPDX-License-Identifier: Apache-2.0 */
#include "periodic.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bpf/tool.h"
#include "report/rows.h"

int periodic_check_pattern(const char *tool, const char *pattern)
{
	const char *p = pattern ? strchr(pattern, '%') : NULL;

	if (!pattern) {
		fprintf(stderr, "%s: --interval needs -o with a file name pattern, e.g. -o "
				"'cpu-%%Y%%m%%dT%%H%%M%%S.pb.gz'\n", tool);
		return -1;
	}
	while (p && p[1] == '%')
		p = strchr(p + 2, '%');
	if (!p || !p[1]) {
		fprintf(stderr,
			"%s: with --interval, -o must name each file apart with strftime "
			"conversions (e.g. 'cpu-%%Y%%m%%dT%%H%%M%%S.pb.gz'), not %s\n",
			tool, pattern);
		return -1;
	}
	return 0;
}

static void on_interval(struct tool_session *s, void *ctx)
{
	periodic_write(s, ctx);
}

void periodic_start(struct tool_session *s, struct periodic_output *p, int interval_s)
{
	tool_on_interval(s, on_interval, p, (uint64_t)interval_s * 1000000000ull);
}

int periodic_write(struct tool_session *s, struct periodic_output *p)
{
	char name[PATH_MAX], tmp[PATH_MAX + 16];
	time_t t = (time_t)(tool_interval_start_realtime_ns(s) / 1000000000ull);
	struct report rep;
	struct tm tm;
	FILE *f;
	int rc = -1;

	/* named after the interval's start: known before it is collected */
	if (!localtime_r(&t, &tm) || strftime(name, sizeof(name), p->pattern, &tm) == 0) {
		fprintf(stderr, "%s: cannot make a file name of %s\n", p->tool, p->pattern);
		p->failed++;
		return -1;
	}
	report_init(&rep, p->delimiter);
	rep.period_ns = p->period_ns;
	session_collect_interval(s, &rep);
	snprintf(tmp, sizeof(tmp), "%s.tmp", name);
	f = fopen(tmp, "we");
	if (!f) {
		fprintf(stderr, "%s: cannot write %s: %s\n", p->tool, tmp, strerror(errno));
	} else {
		rc = report_write(&rep, p->format, f, p->unit, p->tool);
		if (fclose(f) != 0 || rc < 0 || rename(tmp, name) != 0) {
			fprintf(stderr, "%s: writing %s failed: %s\n", p->tool, name,
				strerror(errno));
			unlink(tmp);
			rc = -1;
		}
	}
	report_free(&rep);
	if (rc < 0)
		p->failed++;
	else
		p->written++;
	return rc;
}
