// SPDX-License-Identifier: Apache-2.0
/*
 * lib/sys/core_file.c on hostile core files (pydump --core reads what it
 * is given): program headers and notes that lie about their sizes, NT_FILE
 * tables longer than their note, truncated files. The parsed core is then
 * read as a process through the sys/remote_mem.h image hooks. Seeds: small
 * cores made by run.sh (seed_core).
 */
#include "fuzz_common.h"
#include "sys/core_file.h"
#include "sys/proc_maps.h"
#include "sys/proc_wait.h"
#include "sys/remote_mem.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t *copy = fuzz_dup(data, size); /* exactly the bytes: overreads are caught */
	struct core_file c;
	char err[256];

	if (core_file_parse(&c, copy, size, err, sizeof(err)) == 0) {
		pid_t pid = core_file_attach(&c);
		struct proc_thread_id ids[16];
		struct proc_maps maps;
		struct proc_wait w;
		uint8_t buf[64];
		char comm[32];
		int n;

		FUZZ_CHECK(pid >= REMOTE_IMAGE_PID_BASE && c.nthreads > 0);
		n = proc_list_threads(pid, ids, 16);
		FUZZ_CHECK(n >= 0 && n <= 16);
		for (int i = 0; i < n; i++)
			(void)proc_wait_read(pid, ids[i].host_tid, &w);
		if (proc_maps_read(pid, &maps) == 0)
			proc_maps_free(&maps);
		(void)proc_comm(pid, 0, comm, sizeof(comm));
		for (size_t i = 0; i < c.nsegs && i < 8; i++) {
			(void)remote_read(pid, c.segs[i].vaddr, buf, sizeof(buf));
			(void)remote_read(pid, c.segs[i].vaddr + c.segs[i].memsz - 8, buf, 16);
		}
		remote_image_detach(pid);
	}
	core_file_close(&c);
	free(copy);
	return 0;
}
