// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/proc_fds.c's parsers of /proc/PID/net/{tcp,tcp6,udp,unix} lines:
 * the kernel's format, but pydump must not trust a line's widths. Input:
 * the inode to look for (8 bytes), then one line. Seeds: this machine's
 * socket tables (run.sh).
 */
#include "fuzz_common.h"
#include "sys/proc_fds.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = { data, size };
	uint64_t inode = 0;
	char *line, out[128];

	fuzz_take(&in, &inode, sizeof(inode));
	line = malloc(in.n + 1);
	if (!line)
		abort();
	memcpy(line, in.p, in.n);
	line[in.n] = '\0';
	if (proc_net_inet_line(line, "TCP", inode, out, sizeof(out)) == 1)
		FUZZ_CHECK(strlen(out) < sizeof(out) && strncmp(out, "TCP ", 4) == 0);
	if (proc_net_unix_line(line, inode, out, sizeof(out)) == 1)
		FUZZ_CHECK(strncmp(out, "UNIX", 4) == 0);
	free(line);
	return 0;
}
