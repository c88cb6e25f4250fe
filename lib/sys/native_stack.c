/* SPDX-License-Identifier: Apache-2.0 */
#include "sys/native_stack.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "sys/cfi_unwind.h"
#include "sys/elf_image.h"
#include "sys/proc_maps.h"
#include "sys/remote_mem.h"
#include "sys/target_file.h"
#include "sys/vdso_image.h"

#define EH_FRAME_MAX (64u << 20)

int native_proc_open(struct native_proc *np, pid_t pid)
{
	struct proc_maps maps;
	int rc;

	memset(np, 0, sizeof(*np));
	np->pid = pid;
	rc = proc_maps_read(pid, &maps);
	if (rc < 0)
		return rc;
	np->mods = calloc(maps.n + 1, sizeof(*np->mods));
	if (!np->mods) {
		proc_maps_free(&maps);
		return -ENOMEM;
	}
	for (size_t i = 0; i < maps.n; i++) {
		const struct proc_map *m = &maps.v[i];
		struct native_module *mod = &np->mods[np->n];

		if (m->perms[2] != 'x' ||
		    (m->path[0] != '/' && strcmp(m->path, VDSO_MAPPING_NAME) != 0))
			continue;
		mod->vdso = m->path[0] != '/';
		mod->start = m->start;
		mod->end = m->end;
		mod->offset = m->offset; /* the load bias follows from it, on first use */
		mod->inode = m->inode;
		mod->dev_major = m->dev_major;
		mod->dev_minor = m->dev_minor;
		mod->path = strdup(m->path);
		if (!mod->path)
			break;
		np->n++;
	}
	proc_maps_free(&maps);
	return 0;
}

void native_proc_close(struct native_proc *np)
{
	for (size_t i = 0; i < np->n; i++) {
		free(np->mods[i].path);
		free(np->mods[i].eh_frame);
		free(np->mods[i].fdes);
		elf_symtab_free(&np->mods[i].syms);
		if (np->mods[i].plt)
			elf_plt_free(np->mods[i].plt);
		free(np->mods[i].plt);
	}
	free(np->mods);
	memset(np, 0, sizeof(*np));
}

/* Opens the file behind a mapping as the process mapped it
 * (sys/target_file.h: never a path followed out of its root), or the
 * vDSO's image from its memory. */
static int open_module(pid_t pid, const struct native_module *m, struct elf_image *img)
{
	struct proc_map pm = { .start = m->start, .end = m->end, .inode = m->inode,
			       .dev_major = m->dev_major, .dev_minor = m->dev_minor,
			       .path = m->path };
	struct vdso_ident id;
	int fd;

	if (!m->vdso)
		return target_file_elf_of_mapping(pid, &pm, img);
	fd = vdso_image_open(pid, m->start, m->end, &id);
	return fd < 0 ? fd : elf_image_open_fd(img, fd); /* takes fd */
}

/* Symbols from the file's separate debug file, by build id, inside the
 * process's root (a core's: its --root) only, and only one that carries
 * the same build id: for files stripped of .symtab. */
static void load_debug_symbols(pid_t pid, struct native_module *m, struct elf_image *img)
{
	char id[128], dbg_id[128], path[PATH_MAX];
	struct elf_image dbg;
	int fd;

	if (elf_image_build_id(img, id, sizeof(id)) < 0 || strlen(id) < 3)
		return;
	snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%s.debug", id, id + 2);
	fd = target_file_open(pid, path, NULL);
	if (fd < 0 || elf_image_open_fd(&dbg, fd) < 0)
		return;
	if (elf_image_build_id(&dbg, dbg_id, sizeof(dbg_id)) == 0 && strcmp(dbg_id, id) == 0) {
		elf_symtab_free(&m->syms);
		elf_symtab_load(&m->syms, &dbg);
	}
	elf_image_close(&dbg);
}

static bool has_symtab(struct elf_image *img)
{
	uint64_t addr, size;

	return elf_image_section(img, ".symtab", &addr, &size) == 0 && size;
}

/* Symbols and unwind tables of a mapping's file, and its load bias. */
static void load_module(struct native_proc *np, struct native_module *m)
{
	struct elf_image img;
	uint64_t addr, size;

	m->loaded = true;
	if (open_module(np->pid, m, &img) < 0)
		return;
	{
		uint64_t vaddr;

		if (elf_image_vaddr_of_offset(&img, m->offset, &vaddr) < 0) {
			elf_image_close(&img);
			return;
		}
		m->bias = img.is_dyn ? m->start - vaddr : 0;
	}
	elf_symtab_load(&m->syms, &img);
	m->plt = malloc(sizeof(*m->plt));
	if (m->plt && elf_plt_load(m->plt, &img) < 0) {
		free(m->plt);
		m->plt = NULL;
	}
	if (!has_symtab(&img) && !m->vdso)
		load_debug_symbols(np->pid, m, &img);
	if (elf_image_section(&img, ".eh_frame", &addr, &size) == 0 && size && size < EH_FRAME_MAX) {
		m->eh_frame = malloc(size);
		if (m->eh_frame && elf_image_read_vaddr(&img, addr, m->eh_frame, size) == 0) {
			m->eh_size = size;
			m->eh_vaddr = addr;
			m->fdes = eh_frame_fdes(m->eh_frame, size, addr, &m->nfdes);
		}
	}
	m->usable = m->fdes || m->syms.n;
	elf_image_close(&img);
}

static struct native_module *module_at(struct native_proc *np, uint64_t ip)
{
	for (size_t i = 0; i < np->n; i++) {
		struct native_module *m = &np->mods[i];

		if (ip >= m->start && ip < m->end) {
			if (!m->loaded)
				load_module(np, m);
			return m;
		}
	}
	return NULL;
}

static int read_word(void *ctx, uint64_t addr, uint64_t *value)
{
	return remote_read_u64(*(pid_t *)ctx, addr, value);
}

/* A PLT stub by its target (never by the symbol before the section), else
 * the symbol that holds the address: one of no size only in its own code
 * section (sys/elf_plt.h). */
static void name_frame(struct native_frame *f, struct native_module *m)
{
	const struct elf_sym *s = m ? elf_symtab_find(&m->syms, f->ip - m->bias) : NULL;
	const char *stub = m && m->plt ? elf_plt_name(m->plt, f->ip - m->bias, &f->offset) : NULL;

	f->mod = m;
	if (stub) {
		f->symbol = stub;
		return;
	}
	if (s && !s->size && m->plt && !elf_plt_same_section(m->plt, f->ip - m->bias, s->start))
		s = NULL;
	f->symbol = s ? s->name : NULL;
	f->offset = s ? f->ip - m->bias - s->start : m ? f->ip - m->bias : f->ip;
}

int native_unwind(struct native_proc *np, const struct proc_regs *start, struct native_frame *out,
		  int max, char *why, size_t whylen)
{
	struct proc_regs regs = *start;
	int n = 0;

	why[0] = '\0';
	if (!proc_regs_has(&regs, XREG_RIP) || !proc_regs_has(&regs, XREG_RSP)) {
		snprintf(why, whylen, "no registers");
		return 0;
	}
	while (n < max) {
		uint64_t ip = regs.r[XREG_RIP], sp = regs.r[XREG_RSP];
		struct native_module *m = module_at(np, ip);
		/* a return address points past its call: look the call up */
		uint64_t lookup = n ? ip - 1 : ip;
		const struct eh_fde *fde;
		struct eh_cfi cfi;
		enum cfi_step_result rc;
		bool over;

		out[n].ip = ip;
		out[n].sp = sp;
		name_frame(&out[n], m);
		n++;
		if (!m) {
			snprintf(why, whylen, "0x%llx is in no file's code", (unsigned long long)ip);
			break;
		}
		fde = eh_frame_fde_covering(m->fdes, m->nfdes, lookup - m->bias);
		over = false;
		if (fde && eh_frame_cfi(m->eh_frame, m->eh_size, m->eh_vaddr, fde, &cfi) == 0) {
			over = cfi.cie_len + cfi.fde_len > CFI_FDE_BYTES_MAX;
			rc = cfi_unwind_step(&cfi, lookup - m->bias, &regs, read_word, &np->pid);
		} else {
			rc = cfi_unwind_fp(&regs, read_word, &np->pid);
		}
		if (rc == CFI_STEP_END)
			break;
		if (rc == CFI_STEP_FAILED || rc == CFI_STEP_NO_REG) {
			const char *base = strrchr(m->path, '/');
			const char *what = rc == CFI_STEP_NO_REG ? "rbp unknown at"
					   : over ? "unwind rules over the tool's budget at"
						  : "cannot unwind";

			base = base ? base + 1 : m->path;
			if (out[n - 1].symbol)
				snprintf(why, whylen, "%s %s+0x%llx (%s)", what, out[n - 1].symbol,
					 (unsigned long long)out[n - 1].offset, base);
			else
				snprintf(why, whylen, "%s %s+0x%llx", what, base,
					 (unsigned long long)out[n - 1].offset);
			break;
		}
		/* stacks grow down: a caller's frame is above its callee's */
		if (regs.r[XREG_RSP] <= sp) {
			snprintf(why, whylen, "the stack pointer went backwards");
			break;
		}
	}
	if (n == max && !why[0])
		snprintf(why, whylen, "more than %d frames", max);
	return n;
}
