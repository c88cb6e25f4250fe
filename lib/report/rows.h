/* SPDX-License-Identifier: Apache-2.0 */
/*
 * A report: stacks with a value each (samples, microseconds), and the text
 * formats users know from bcc (multi-line text, folded stacks). Rows arrive
 * already named; nothing here knows CPython or BPF.
 *
 * The model, for every writer (text, folded, svg, speedscope, pprof, ...):
 *
 *   report.frames   every distinct frame once (struct report_frame: what it
 *                   is, by fields: kind, name, file, line, and for native
 *                   code the mapped file, build-id and address)
 *   report.rows     a stack (indices into report.frames, root first) with
 *                   the process, thread and thread name it was seen in, and
 *                   its value
 *   report.procs    what is known of each process (comm, Python version)
 *
 * What a sample is labelled with for back ends (pprof's pid, thread,
 * thread_name, comm, python_version) comes from the row (pid, tid, comm)
 * and its process (report.procs); a new label (an asyncio task, say) goes
 * on the row, so rows of different values stay apart when merged.
 *
 * Writers use the fields and never parse a frame's text. The text a person
 * reads for a frame is report_frame_label(): `qualname (file:line)` for
 * Python, the symbol for native and kernel code, the marker itself for a
 * marker; folded output adds "_[k]" to kernel frames.
 */
#ifndef PYBPF_REPORT_ROWS_H
#define PYBPF_REPORT_ROWS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

enum report_frame_kind {
	REPORT_FRAME_PYTHON, /* a Python function: name, file, line, first_line */
	REPORT_FRAME_NATIVE, /* machine code in a process: name (NULL: not known), module, build_id, addr, offset */
	REPORT_FRAME_KERNEL, /* kernel code: name (NULL: not known), addr */
	REPORT_FRAME_MARKER, /* a note in place of frames: "[truncated]", the runnable marker, ... */
};

#define REPORT_LINE_UNKNOWN (-1)

struct report_frame {
	enum report_frame_kind kind;
	/* Python: qualname, or "[unknown code 0x...]" (then file is NULL);
	 * native/kernel: symbol, NULL when not known; marker: its text. */
	const char *name;
	const char *file;    /* Python: co_filename; NULL for other kinds */
	int line;            /* Python: the line running, or REPORT_LINE_UNKNOWN */
	int first_line;      /* Python: co_firstlineno (where the def is); 0 unknown */
	const char *module;  /* native: the mapped file as the process names it; NULL unknown */
	const char *build_id; /* native: GNU build-id of module in hex; NULL unknown */
	uint64_t addr;       /* native/kernel: instruction address (process or kernel space) */
	uint64_t offset;     /* native: addr's offset in module's file (what symbolizers take) */
	/* native: the mapping addr lies in (pprof's Mapping: start, limit, offset) */
	uint64_t map_start, map_end, map_offset;
	/* native: no symbol names it (name is "FILE+0xSTART", a stripped
	 * file's function by where it starts) */
	bool unnamed;
};

struct report_row {
	pid_t pid;
	pid_t tid;          /* the thread; 0 when not known */
	char comm[16];      /* the thread's name, as the kernel had it */
	/* the thread's Python name (threading.Thread.name) as the target has
	 * it, unescaped; NULL: not known (comm names the thread) */
	char *thread_name;
	uint32_t *frames;   /* indices into report.frames, root first */
	int nframes;        /* nuser + nkernel + leaf markers after the kernel frames */
	int nuser;          /* frames before the kernel ones (Python, native, markers) */
	int nkernel;
	uint64_t value;     /* samples, or microseconds */
	char *task;         /* --async: the asyncio task the samples ran in; NULL none */
};

/* What a report knows of a process (for titles and pprof labels). */
struct report_proc {
	pid_t pid;
	char comm[16];           /* the process's (main thread's) name */
	char python_version[24]; /* "3.11.2"; "" unknown */
	char *interp_path;       /* the interpreter's file (executable or libpython); NULL unknown */
};

struct report {
	struct report_row *rows;
	size_t n, cap;
	struct report_frame *frames; /* interned: every distinct frame once */
	size_t nframes, frames_cap;
	size_t *frame_slots, nslots; /* hash index of frames: index + 1, 0 empty */
	struct report_proc *procs;
	size_t nprocs;
	bool delimiter;          /* -d: a "--" between user and kernel frames */
	uint64_t total;          /* value of the rows shown */
	uint64_t runnable_total; /* pyoffcpu: time runnable, waiting for a CPU */
	/* for formats that record them (pprof, speedscope, svg titles) */
	uint64_t period_ns; /* pyprofile: time between samples */
	uint64_t start_realtime_ns, duration_ns;
	char target[96];    /* what was profiled, for titles: "PID 1234", "all Python processes" */
	/* pprof's sample type of a report in bytes; NULL: "resident_space"
	 * (pymem --alloc: "inuse_space", bytes still allocated) */
	const char *bytes_type;
};

/* Leaf frame that marks time a thread was runnable but not running. */
#define RUNNABLE_MARKER "[runnable: waiting for a CPU]"
/* Leaf frames that mark an interval still open when the run ended (its
 * time counts up to the end): off CPU, or waiting for the GIL. */
#define STILL_BLOCKED_MARKER "[still blocked]"
#define STILL_WAITING_MARKER "[still waiting for the GIL]"
/* On top of the user frames of a sample taken while its thread ran a
 * collection of the cyclic garbage collector (pyprofile, --wall). */
#define GC_MARKER "[gc]"
/* Leaf frame of a stack whose native frames were taken under mappings of
 * code that changed since (a library unloaded, another loaded there): left
 * out rather than named after another file. */
#define MAPPING_CHANGED_MARKER "[mapping changed]"

void report_init(struct report *rep, bool delimiter);
void report_free(struct report *rep);

/* Index of frame f in rep->frames, adding a copy (strings included) if new.
 * Returns -1 when out of memory. */
long report_intern_frame(struct report *rep, const struct report_frame *f);

/* Shorthands for report_intern_frame. */
long report_intern_marker(struct report *rep, const char *text);

/* Labels a row (pprof's task) with a copy of task; -1 out of memory. */
int report_row_set_task(struct report_row *row, const char *task);
/* Gives a row its thread's Python name (a copy; NULL: none); -1 out of memory. */
int report_row_set_thread_name(struct report_row *row, const char *name);
/* The name a row's thread goes by: its Python name, else its comm. */
const char *report_row_thread_name(const struct report_row *row);

/* Adds a row with a copy of the nframes frame indices. Returns 0 or -1. */

int report_add_row(struct report *rep, pid_t pid, pid_t tid, const char *comm,
		   const uint32_t *frames, int nframes, int nuser, int nkernel, uint64_t value);

/* Drops the rows whose value is 0 (pymem --alloc: stacks whose every
 * block was freed), keeping the others in order. */
void report_drop_zero_rows(struct report *rep);

/* Records what is known of process pid (the last call wins). 0 or -1. */
int report_set_proc(struct report *rep, pid_t pid, const char *comm, const char *python_version);
const struct report_proc *report_find_proc(const struct report *rep, pid_t pid);
/* Records the interpreter file of process pid (after report_set_proc). */
int report_set_proc_interp(struct report *rep, pid_t pid, const char *path);

/* Same process, thread, thread name and frames: one row. Leaves rows
 * sorted by pid (writers with one part per process rely on it). */
void report_merge_rows(struct report *rep);

/*
 * The text of a frame as people read it: "qualname (file:line)" (line "?"
 * when unknown), a symbol or "[unknown]", a marker's text. Names and files
 * are escaped (sys/text_escape.h), ';' too ("\x3b": it separates frames in
 * folded output), so a label is one frame on one line whatever a target
 * names things. Returns the length the full text has (snprintf's
 * convention).
 */
size_t report_frame_label(const struct report_frame *f, char *buf, size_t len);

/* The name without file and line ("[unknown]" for unnamed code). */
const char *report_frame_name(const struct report_frame *f);

/* bcc profile/offcputime layout: leaf first, ascending by value. */
void report_print_text(const struct report *rep, FILE *out);
/* comm;root;...;leaf value */
void report_print_folded(const struct report *rep, FILE *out);

#endif
