// SPDX-License-Identifier: Apache-2.0
/*
 * Unit tests of the pure parsers in lib/: version strings, offset tables,
 * _Py_DebugOffsets decoding, line tables and UTF-8, and the opener of a
 * target's files against what a hostile root holds. Tests against live
 * interpreters are the pytest files in tests/.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "unit_check.h"

#include "cpython/asyncio_layout.h"
#include "cpython/offsets_debug.h"
#include "cpython/linetable.h"
#include "cpython/code.h"
#include "cpython/offsets.h"
#include "cpython/rules.h"
#include "cpython/version.h"
#include "sys/cpu_list.h"
#include "sys/cpu_time.h"
#include "sys/target_file.h"

static void test_versions(void)
{
	struct py_version v;
	char buf[32];
	int ma, mi;
	bool ft;

	CHECK(py_version_parse("3.9.18", 6, &v) == 0 && v.minor == 9 && v.micro == 18);
	CHECK(py_version_parse("3.15.0rc1", 9, &v) == 0 && v.level == 0xc && v.serial == 1);
	CHECK(py_version_parse("3.12.0a7+", 9, &v) == 0 && v.level == 0xa && v.serial == 7);
	CHECK(py_version_parse("3.9", 3, &v) < 0);
	CHECK(py_version_parse("3.9.2x", 6, &v) < 0);
	CHECK(py_version_parse("13.9.2", 6, &v) < 0);
	py_version_from_hex(0x030e06f0, &v);
	CHECK(v.major == 3 && v.minor == 14 && v.micro == 6 && v.level == 0xf);
	CHECK(py_version_hex(&v) == 0x030e06f0);
	py_version_from_hex(0x030f00c1, &v);
	py_version_format(&v, buf, sizeof(buf));
	CHECK(strcmp(buf, "3.15.0rc1") == 0);
	CHECK(py_version_from_filename("libpython3.11.so.1.0", &ma, &mi, &ft) == 0 && mi == 11 && !ft);
	CHECK(py_version_from_filename("python3.13t", &ma, &mi, &ft) == 0 && mi == 13 && ft);
	CHECK(py_version_from_filename("python3.9", &ma, &mi, &ft) == 0 && mi == 9);
	CHECK(py_version_from_filename("python3", &ma, &mi, &ft) < 0);
	CHECK(py_version_from_filename("pythonista", &ma, &mi, &ft) < 0);
	v.major = 3, v.minor = 7;
	CHECK(!py_version_supported(&v));
	v.minor = 8;
	CHECK(py_version_supported(&v));
}

static void test_tables(void)
{
	struct py_offsets o;
	char err[128];
	int minor;

	CHECK(py_offsets_parse_table("# c\nversion 3.11\ntstate_next 8\n", &o, &minor, err,
				     sizeof(err)) == 0);
	CHECK(minor == 11 && o.tstate_next == 8 && o.code_name == PY_OFFSET_ABSENT);
	CHECK(py_offsets_parse_table("version 3.11\nno_such_field 8\n", &o, &minor, err,
				     sizeof(err)) < 0 && strstr(err, "unknown field"));
	CHECK(py_offsets_parse_table("tstate_next 8\n", &o, &minor, err, sizeof(err)) < 0);
	CHECK(py_offsets_parse_table("version 3.11\ntstate_next -4\n", &o, &minor, err,
				     sizeof(err)) < 0);
	CHECK(py_offsets_parse_table("version 3.11\ntstate_next 8x\n", &o, &minor, err,
				     sizeof(err)) < 0);
	for (int m = 8; m <= 12; m++) {
		CHECK(py_offsets_builtin_table(m, &o) == 0);
		CHECK(py_offsets_missing(&o, m) == NULL);
	}
	CHECK(py_offsets_builtin_table(7, &o) < 0);
	CHECK(py_offsets_builtin_table(13, &o) < 0); /* 3.13+ publish their own */
	/* Known values from CPython's headers (x86_64). */
	py_offsets_builtin_table(11, &o);
	CHECK(o.tstate_native_thread_id == 160 && o.frame_is_entry == 68 && o.code_qualname == 128);
	py_offsets_builtin_table(9, &o);
	CHECK(o.frame_instr == 104 && o.tstate_thread_id == 176 && o.unicode_ascii_size == 48);
}

static void put_slot(uint8_t *raw, size_t slot, uint64_t v)
{
	memcpy(raw + slot * 8, &v, 8);
}

static void test_debug_offsets(void)
{
	uint8_t raw[DEBUG_OFFSETS_MAX_BYTES] = { 0 };
	size_t size = debug_offsets_size(13);
	struct py_offsets o;
	uint64_t hex;
	bool ft;
	char err[128];

	CHECK(size == 584 && debug_offsets_size(14) == 760 && debug_offsets_size(15) == 888);
	CHECK(debug_offsets_size(12) == 0);
	memcpy(raw, "xdebugpy", 8);
	put_slot(raw, 1, 0x030d00f0);
	put_slot(raw, 5, 632);   /* runtime_state.interpreters_head */
	put_slot(raw, 14, 16);   /* interpreter_state.ceval_gil */
	put_slot(raw, 15, 7752); /* gil_runtime_state */
	put_slot(raw, 17, 7768); /* gil_runtime_state_locked */
	put_slot(raw, 18, 7760); /* gil_runtime_state_holder */
	put_slot(raw, 23, 72);   /* thread_state.current_frame */
	put_slot(raw, 68, 16);   /* unicode_object.length */
	put_slot(raw, 70, 40);   /* unicode_object.asciiobject_size */
	CHECK(debug_offsets_decode(raw, size, 13, &o, &hex, &ft, err, sizeof(err)) == 0);
	CHECK(hex == 0x030d00f0 && !ft);
	CHECK(o.runtime_interpreters_head == 632 && o.tstate_frame == 72);
	CHECK(o.gil_locked == 16 && o.gil_last_holder == 8 && o.gil_switch_number == 24);
	CHECK(o.unicode_compact_size == 56);
	CHECK(debug_offsets_decode(raw, size, 14, &o, &hex, &ft, err, sizeof(err)) < 0);
	raw[0] = 'X';
	CHECK(debug_offsets_decode(raw, size, 13, &o, &hex, &ft, err, sizeof(err)) < 0 &&
	      strstr(err, "cookie"));
	raw[0] = 'x';
	put_slot(raw, 23, 1ull << 40);
	CHECK(debug_offsets_decode(raw, size, 13, &o, &hex, &ft, err, sizeof(err)) < 0 &&
	      strstr(err, "implausible"));
}

/* Each minor's layout, every slot set (distinct small values): the walker's
 * fields all come out of it (or are derived), so 3.13+ need no table. */
static void test_debug_offsets_complete(void)
{
	for (int minor = 13; minor <= PY_MINOR_LAST_SUPPORTED; minor++) {
		uint8_t raw[DEBUG_OFFSETS_MAX_BYTES] = { 0 };
		size_t size = debug_offsets_size(minor);
		struct py_offsets o;
		uint64_t hex;
		bool ft;
		char err[128];

		memcpy(raw, "xdebugpy", 8);
		put_slot(raw, 1, 0x030000f0u | (uint64_t)minor << 16);
		for (size_t s = 3; s < size / 8; s++)
			put_slot(raw, s, 8 * s);
		CHECK(debug_offsets_decode(raw, size, minor, &o, &hex, &ft, err, sizeof(err)) == 0);
		CHECK(py_offsets_missing(&o, minor) == NULL);
		CHECK(o.code_size == o.bytes_size); /* derived: both PyVarObject's ob_size */
	}
}

/* Every supported minor has its rules rows, and a version that publishes
 * _Py_DebugOffsets has a layout and the first pre-release it holds for. */
/*
 * The port checklist (offsets/README.md), walked for every supported minor:
 * a rules row for the GIL build (and from 3.13 the free-threaded one), an
 * object-rules row for each, offsets (the built-in table up to 3.12, a
 * _Py_DebugOffsets layout of the right version from 3.13), and, from the
 * first minor with asyncio support on, asyncio rules and a row of the
 * generated asyncio table; nothing past the last.
 */
static void test_rules_cover_versions(void)
{
	bool asyncio_started = false;

	for (int minor = PY_MINOR_FIRST_SUPPORTED; minor <= PY_MINOR_LAST_SUPPORTED; minor++) {
		const struct py_rules *r = py_rules_for(minor, false);
		struct py_async_layout al;
		struct py_offsets o;

		CHECK(r != NULL);
		if (!r)
			continue;
		CHECK(r->minor == minor && !r->free_threaded);
		CHECK(py_object_rules_for(minor, false) != NULL);
		CHECK(r->has_debug_offsets == (minor >= 13));
		if (r->has_debug_offsets) {
			CHECK(debug_offsets_size(minor) > 0);
			CHECK((r->debug_offsets_since >> 16) == (0x0300u | (unsigned)minor));
			CHECK(py_rules_for(minor, true) != NULL);
			CHECK(py_object_rules_for(minor, true) != NULL);
		} else {
			CHECK(py_offsets_builtin_table(minor, &o) == 0);
		}
		/* once asyncio is supported, every later minor is */
		asyncio_started |= r->async.task_lists != PY_TASKS_UNSUPPORTED;
		if (asyncio_started) {
			CHECK(r->async.task_lists != PY_TASKS_UNSUPPORTED);
			CHECK(py_async_layout_table(minor, &al) == 0);
		}
	}
	CHECK(asyncio_started);
	CHECK(py_rules_for(PY_MINOR_LAST_SUPPORTED + 1, false) == NULL);
	CHECK(py_object_rules_for(PY_MINOR_LAST_SUPPORTED + 1, false) == NULL);
	CHECK(debug_offsets_size(PY_MINOR_LAST_SUPPORTED + 1) == 0);
}

/* The one field list: required ranges, debug slots, disagreements. */
static void test_field_list(void)
{
	struct py_offsets a, b;
	int32_t va, vb;

	CHECK(py_offsets_count() == PY_OFF_COUNT);
	CHECK(strcmp(py_offsets_name_at(PY_OFF_code_firstlineno), "code_firstlineno") == 0);
	CHECK(py_offsets_required(PY_OFF_code_code, 9) && !py_offsets_required(PY_OFF_code_code, 11));
	CHECK(py_offsets_required(PY_OFF_code_size, 15) && !py_offsets_required(PY_OFF_code_size, 10));
	CHECK(!py_offsets_required(PY_OFF_runtime_gil, 9)); /* pygil's, not the walker's */
	CHECK(py_offsets_required(PY_OFF_frame_is_entry, 11) &&
	      !py_offsets_required(PY_OFF_frame_is_entry, 12));
	CHECK(strcmp(py_offsets_debug_slot(PY_OFF_frame_instr), "interpreter_frame.instr_ptr") == 0);
	CHECK(py_offsets_debug_slot(PY_OFF_cframe_current_frame) == NULL);
	py_offsets_builtin_table(11, &a);
	b = a;
	CHECK(py_offsets_disagreement(&a, &b, &va, &vb) == NULL);
	b.code_tlbc = 8; /* absent on one side: not compared */
	CHECK(py_offsets_disagreement(&a, &b, &va, &vb) == NULL);
	b.code_firstlineno += 4;
	CHECK(py_offsets_disagreement(&a, &b, &va, &vb) &&
	      strcmp(py_offsets_disagreement(&a, &b, &va, &vb), "code_firstlineno") == 0 &&
	      va == 72 && vb == 76);
}

/* Pre-releases older than the first with the layout we know are refused. */
static void test_debug_layout_prereleases(void)
{
	const struct py_rules *r13 = py_rules_for(13, false), *r14 = py_rules_for(14, false);
	const struct py_rules *r15 = py_rules_for(15, false), *r15t = py_rules_for(15, true);
	const struct py_rules *r12 = py_rules_for(12, false);

	if (!r13 || !r14 || !r15 || !r15t || !r12) {
		CHECK(!"rules rows for 3.12-3.15");
		return;
	}
	CHECK(!r12->has_debug_offsets && !py_rules_debug_layout_valid(r12, 0x030c01f0));
	/* finals, whatever the micro */
	CHECK(py_rules_debug_layout_valid(r13, 0x030d00f0) && py_rules_debug_layout_valid(r13, 0x030d12f0));
	CHECK(py_rules_debug_layout_valid(r14, 0x030e0af0) && py_rules_debug_layout_valid(r15, 0x030f02f0));
	/* 3.13: the layout of rc2 on */
	CHECK(!py_rules_debug_layout_valid(r13, 0x030d00a1));
	CHECK(!py_rules_debug_layout_valid(r13, 0x030d00b4));
	CHECK(!py_rules_debug_layout_valid(r13, 0x030d00c1));
	CHECK(py_rules_debug_layout_valid(r13, 0x030d00c2) && py_rules_debug_layout_valid(r13, 0x030d00c3));
	/* 3.14: b2 on */
	CHECK(!py_rules_debug_layout_valid(r14, 0x030e00a7) && !py_rules_debug_layout_valid(r14, 0x030e00b1));
	CHECK(py_rules_debug_layout_valid(r14, 0x030e00b2) && py_rules_debug_layout_valid(r14, 0x030e00c1));
	/* 3.15: b4 on, free-threaded alike */
	CHECK(!py_rules_debug_layout_valid(r15, 0x030f00b3) && !py_rules_debug_layout_valid(r15t, 0x030f00b1));
	CHECK(py_rules_debug_layout_valid(r15, 0x030f00b4) && py_rules_debug_layout_valid(r15t, 0x030f00c1));
	/* another minor's version is never valid for this row */
	CHECK(!py_rules_debug_layout_valid(r14, 0x030f00f0) && !py_rules_debug_layout_valid(r14, 0x020e00f0));
}

static void test_linetables(void)
{
	/* 3.8 lnotab: line 10 at 0, +2 lines at byte 6, +1 line at byte 10. */
	const uint8_t lnotab[] = { 6, 2, 4, 1 };
	/* 3.10: [0,6) line 10, [6,10) no line, [10,14) line 13 (+3 from 10). */
	const uint8_t t310[] = { 6, 0, 4, 0x80, 4, 3 };
	/* 3.11: short form (code 0) 2 units, one-line+1 (code 11) 1 unit,
	 * no-location (code 15) 1 unit, no-column (code 13) +5 (svarint 10). */
	const uint8_t t311[] = { 0x80 | (0 << 3) | 1, 0x00, 0x80 | (11 << 3) | 0, 0x00, 0x00,
				 0x80 | (15 << 3) | 0, 0x80 | (13 << 3) | 1, 10 };

	CHECK(linetable_lnotab(lnotab, sizeof(lnotab), 10, 0) == 10);
	CHECK(linetable_lnotab(lnotab, sizeof(lnotab), 10, 5) == 10);
	CHECK(linetable_lnotab(lnotab, sizeof(lnotab), 10, 6) == 12);
	CHECK(linetable_lnotab(lnotab, sizeof(lnotab), 10, 100) == 13);
	CHECK(linetable_lnotab(lnotab, sizeof(lnotab), 10, -1) == 10);
	CHECK(linetable_310(t310, sizeof(t310), 10, 0) == 10);
	CHECK(linetable_310(t310, sizeof(t310), 10, 8) == LINE_UNKNOWN);
	CHECK(linetable_310(t310, sizeof(t310), 10, 12) == 13);
	CHECK(linetable_310(t310, sizeof(t310), 10, 99) == LINE_UNKNOWN);
	CHECK(linetable_311(t311, sizeof(t311), 20, 0) == 20);
	CHECK(linetable_311(t311, sizeof(t311), 20, 2) == 20);
	CHECK(linetable_311(t311, sizeof(t311), 20, 4) == 21);
	CHECK(linetable_311(t311, sizeof(t311), 20, 6) == LINE_UNKNOWN);
	CHECK(linetable_311(t311, sizeof(t311), 20, 8) == 26);
	CHECK(linetable_311(t311, sizeof(t311), 20, 10) == 26);
	CHECK(linetable_311(t311, sizeof(t311), 20, 12) == LINE_UNKNOWN);
	/* Garbage never reads out of bounds and never loops. */
	const uint8_t junk[] = { 0xff, 0xff, 0xff, 0x7f, 0x40, 0x40 };
	(void)linetable_311(junk, sizeof(junk), 1, 3);
	(void)linetable_310(junk, sizeof(junk), 1, 3);
	(void)linetable_lnotab(junk, 1, 1, 3);
	CHECK(linetable_311(junk, 0, 7, 0) == LINE_UNKNOWN);
}

static void test_utf8(void)
{
	char b[4];

	CHECK(utf8_encode('A', b) == 1 && b[0] == 'A');
	CHECK(utf8_encode(0xfc, b) == 2 && (uint8_t)b[0] == 0xc3 && (uint8_t)b[1] == 0xbc);
	CHECK(utf8_encode(0x65e5, b) == 3 && (uint8_t)b[0] == 0xe6);
	CHECK(utf8_encode(0x1f600, b) == 4 && (uint8_t)b[0] == 0xf0);
	CHECK(utf8_encode(0xd800, b) == 3 && (uint8_t)b[0] == 0xef); /* U+FFFD */
}

/* Machines with more than 1024 CPUs: every CPU is listed (a fixed array
 * of 1024 left the rest unsampled and overflowed the per-CPU read). */
static void test_cpu_lists(void)
{
	int *v, n;

	n = cpu_list_parse("0-4095\n", &v);
	CHECK(n == 4096 && v && v[0] == 0 && v[4095] == 4095);
	free(v);
	n = cpu_list_parse("0,2-3,1500", &v);
	CHECK(n == 4 && v[1] == 2 && v[2] == 3 && v[3] == 1500);
	free(v);
	n = cpu_list_parse("7\n", &v);
	CHECK(n == 1 && v[0] == 7);
	free(v);
	CHECK(cpu_list_parse("", &v) == 0 && !v);
	CHECK(cpu_list_parse("3-1", &v) < 0 && !v);
	CHECK(cpu_list_parse("0-99999999", &v) < 0 && !v);
	CHECK(cpu_list_parse("0-1,x", &v) < 0 && !v);
	CHECK(cpu_list_parse("-1", &v) < 0 && !v);
	CHECK(cpu_list_possible_count() >= 1);
	n = cpu_list_online(&v);
	CHECK(n >= 1 && v && v[n - 1] < cpu_list_possible_count());
	free(v);
}

/* Busy time: user, nice, system, irq and softirq; not idle, iowait, steal
 * or guest (already in user). */
static void test_cpu_busy_time(void)
{
	uint64_t t = 0;

	CHECK(cpu_time_parse_busy("cpu  100 2 30 5000 7 1 4 900 50 0\ncpu0 1 2 3 4 5 6 7 8 9 0\n",
				  &t) == 0 && t == 137);
	CHECK(cpu_time_parse_busy("intr 5\ncpu  1 1 1 1 1 1 1 1 1 1\n", &t) == 0 && t == 5);
	CHECK(cpu_time_parse_busy("cpu0 1 2 3 4 5 6 7\n", &t) < 0);
	CHECK(cpu_time_parse_busy("cpu  1 2 3\n", &t) < 0);
	CHECK(cpu_time_parse_busy("", &t) < 0);
	CHECK(cpu_time_busy_ns() > 0);
}

/* The BPF tools read GIL builds of every supported minor and refuse the
 * free-threaded ones (their threads run copies of the bytecode the BPF
 * walker does not follow) with a reason that says so. */
static void test_bpf_refusal(void)
{
	for (int minor = PY_MINOR_FIRST_SUPPORTED; minor <= PY_MINOR_LAST_SUPPORTED; minor++) {
		const struct py_rules *gil = py_rules_for(minor, false);
		const struct py_rules *ft = py_rules_for(minor, true);

		CHECK(gil && py_rules_bpf_refusal(gil) == NULL);
		if (minor >= 13) {
			const char *why = ft ? py_rules_bpf_refusal(ft) : NULL;

			CHECK(why && strstr(why, "BPF tools") && strstr(why, "line numbers"));
		} else {
			CHECK(ft == NULL);
		}
	}
}

/* Writes len bytes of 'x' to path. */
static void put_file(const char *path, size_t len)
{
	FILE *f = fopen(path, "we");

	for (size_t i = 0; f && i < len; i++)
		fputc('x', f);
	if (f)
		fclose(f);
}

static int open_in(int root, const char *path, const struct target_file_want *want)
{
	int fd = target_file_openat(root, path, want);

	if (fd >= 0)
		close(fd);
	return fd >= 0 ? 0 : fd;
}

/*
 * The opener of a target's files, in a root made as a hostile container
 * would: symlinks (absolute, relative, through "..") out to a host file,
 * a FIFO (opening it must not block), a device, a directory, a file too
 * big, another file than the one expected. Only regular files inside the
 * root, the ones wanted, come back.
 */
static void test_target_file(void)
{
	char top[] = "/tmp/pybpf-target-file-XXXXXX", root[128], host[160], p[256];
	struct target_file_want want = { 0 };
	struct stat st;
	int rootfd, slash;

	if (!mkdtemp(top)) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(root, sizeof(root), "%s/root", top);
	snprintf(host, sizeof(host), "%s/host-secret", top);
	put_file(host, 10);
	CHECK(mkdir(root, 0755) == 0);
	snprintf(p, sizeof(p), "%s/lib", root);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s/lib/good.so", root);
	put_file(p, 100);
	CHECK(stat(p, &st) == 0);
	snprintf(p, sizeof(p), "%s/abs", root); /* the host's path, absolute */
	CHECK(symlink(host, p) == 0);
	snprintf(p, sizeof(p), "%s/lib/up", root);
	CHECK(symlink("../../host-secret", p) == 0);
	snprintf(p, sizeof(p), "%s/inner", root); /* absolute, inside the root */
	CHECK(symlink("/lib/good.so", p) == 0);
	snprintf(p, sizeof(p), "%s/fifo", root);
	CHECK(mkfifo(p, 0600) == 0);
	snprintf(p, sizeof(p), "%s/sparse", root);
	put_file(p, 0);
	CHECK(truncate(p, (off_t)TARGET_FILE_MAX_SIZE + 1) == 0);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(rootfd >= 0);

	CHECK(open_in(rootfd, "/lib/good.so", NULL) == 0);
	CHECK(open_in(rootfd, "lib/good.so", NULL) == 0);
	CHECK(open_in(rootfd, "/inner", NULL) == 0);
	/* out of the root: the same name inside it, which does not exist */
	CHECK(open_in(rootfd, "/abs", NULL) == -ENOENT);
	CHECK(open_in(rootfd, "/lib/up", NULL) == -ENOENT);
	CHECK(open_in(rootfd, "/../host-secret", NULL) == -ENOENT);
	CHECK(open_in(rootfd, "../../../host-secret", NULL) == -ENOENT);
	CHECK(open_in(rootfd, host, NULL) == -ENOENT);
	/* not regular files; the FIFO has no writer and must not block */
	CHECK(open_in(rootfd, "/fifo", NULL) == -EINVAL);
	CHECK(open_in(rootfd, "/lib", NULL) == -EINVAL);
	CHECK(open_in(rootfd, "/", NULL) == -EINVAL);
	snprintf(p, sizeof(p), "%s/null", root);
	if (mknod(p, S_IFCHR | 0600, makedev(1, 3)) == 0) /* as root */
		CHECK(open_in(rootfd, "/null", NULL) == -EINVAL);
	/* sizes */
	CHECK(open_in(rootfd, "/sparse", NULL) == -EFBIG);
	want.max_size = 99;
	CHECK(open_in(rootfd, "/lib/good.so", &want) == -EFBIG);
	want.max_size = 100;
	CHECK(open_in(rootfd, "/lib/good.so", &want) == 0);
	/* identity: device and inode, both */
	want.ino = (uint64_t)st.st_ino;
	want.dev_major = major(st.st_dev);
	want.dev_minor = minor(st.st_dev);
	CHECK(open_in(rootfd, "/inner", &want) == 0);
	want.ino++;
	CHECK(open_in(rootfd, "/lib/good.so", &want) == -ESTALE);
	want.ino--;
	want.dev_minor++;
	CHECK(open_in(rootfd, "/lib/good.so", &want) == -ESTALE);
	/* magic links (/proc/self/...) are refused even in our own root */
	slash = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(open_in(slash, "/proc/self/exe", NULL) == -ELOOP);
	CHECK(open_in(slash, "/proc/self/root/etc/hostname", NULL) == -ELOOP);
	close(slash);
	CHECK(open_in(-1, "/lib/good.so", NULL) == -EINVAL);
	CHECK(open_in(rootfd, "", NULL) == -EINVAL);
	close(rootfd);

	/* through our own root: /proc/PID/root is "/", paths stay as they are */
	CHECK(target_file_open(getpid(), "/proc/self/exe", NULL) == -ELOOP);
	snprintf(p, sizeof(p), "%s/lib/good.so", root);
	target_file_path_in_root(getpid(), p, p, sizeof(p));
	CHECK(strstr(p, "/root/lib/good.so") != NULL);
	{
		int fd = target_file_open(getpid(), p, NULL);

		CHECK(fd >= 0 && target_file_check(fd, NULL) == 0);
		if (fd >= 0)
			close(fd);
		fd = target_file_open_exe(getpid());
		CHECK(fd >= 0);
		if (fd >= 0)
			close(fd);
	}

	snprintf(p, sizeof(p), "rm -rf '%s'", top);
	CHECK(system(p) == 0);
}

int main(void)
{
	test_versions();
	test_tables();
	test_debug_offsets();
	test_debug_offsets_complete();
	test_rules_cover_versions();
	test_field_list();
	test_debug_layout_prereleases();
	test_linetables();
	test_utf8();
	test_cpu_lists();
	test_cpu_busy_time();
	test_bpf_refusal();
	test_target_file();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
