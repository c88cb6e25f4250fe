/* SPDX-License-Identifier: Apache-2.0 */
#include "bpf/code_frees.h"

#include <bcc/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cpython/code.h"
#include "sys/elf_image.h"

void code_frees_init(struct code_frees *c, int prog_fd, int map_fd)
{
	memset(c, 0, sizeof(*c));
	c->prog_fd = prog_fd;
	c->map_fd = map_fd;
}

/* The offset of code_dealloc in the interpreter file img of p. */
static int dealloc_offset(struct code_frees *c, const struct py_process *p, struct elf_image *img,
			  uint64_t *off)
{
	uint64_t addr;

	if (py_code_dealloc_addr(p, &addr) < 0) {
		snprintf(c->why, sizeof(c->why), "PyCode_Type's tp_dealloc cannot be read");
		return -1;
	}
	if (addr < p->load_bias || elf_image_code_offset(img, addr - p->load_bias, off) < 0) {
		snprintf(c->why, sizeof(c->why),
			 "PyCode_Type's tp_dealloc (%#llx) is not in the interpreter's code",
			 (unsigned long long)addr);
		return -1;
	}
	return 0;
}

int code_frees_watch(struct code_frees *c, const struct py_process *p)
{
	uint32_t key = (uint32_t)p->pid;
	struct elf_image img;
	uint64_t off, base;
	char path[64], ev[64];
	int fd = -1, probe_fd;

	if (c->prog_fd < 0 || c->map_fd < 0)
		return -1;
	bpf_delete_elem(c->map_fd, &key); /* an earlier program's (exec) */
	if (c->open >= CODE_FREES_MAX) {
		snprintf(c->why, sizeof(c->why), "%d processes are watched already", CODE_FREES_MAX);
		c->failed++;
		return -1;
	}
	if (py_process_open_interp(p, &img) < 0) {
		snprintf(c->why, sizeof(c->why), "the interpreter's file cannot be opened");
		c->failed++;
		return -1;
	}
	probe_fd = dup(img.fd); /* the image's is closed with it */
	if (probe_fd < 0)
		snprintf(c->why, sizeof(c->why), "out of file descriptors");
	else if (dealloc_offset(c, p, &img, &off) == 0) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", probe_fd);
		snprintf(ev, sizeof(ev), "pybpf_cf_%d_%llx", (int)p->pid, (unsigned long long)off);
		fd = bpf_attach_uprobe(c->prog_fd, BPF_PROBE_ENTRY, ev, path, off, p->pid, 0);
		if (fd < 0)
			snprintf(c->why, sizeof(c->why), "the kernel refused a uprobe on code_dealloc");
	}
	if (probe_fd >= 0)
		close(probe_fd); /* the uprobe holds the file's inode */
	elf_image_close(&img);
	/* counting from now on: the entry that says so, at a value of its own */
	base = ++c->registrations << 32;
	if (fd >= 0 && bpf_update_elem(c->map_fd, &key, &base, BPF_ANY) < 0) {
		snprintf(c->why, sizeof(c->why), "BPF's map of code frees is full");
		close(fd);
		fd = -1;
	}
	if (fd < 0) {
		c->failed++;
		return -1;
	}
	c->watched++;
	c->open++;
	return fd;
}

void code_frees_forget(struct code_frees *c, pid_t pid, int perf_fd)
{
	uint32_t key = (uint32_t)pid;

	if (c->map_fd >= 0)
		bpf_delete_elem(c->map_fd, &key);
	if (perf_fd >= 0) {
		close(perf_fd);
		c->open--;
	}
}
