// SPDX-License-Identifier: Apache-2.0
/*
 * lib/cpython/interp_cache.c: facts are found again for the same file
 * (another descriptor, another path to it), and not for a file changed in
 * place or another file.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unit_check.h"

#include "cpython/interp_cache.h"

/* A copy of this test's own executable: an ELF file we may change. */
static void copy_self(const char *to)
{
	char buf[65536];
	int in = open("/proc/self/exe", O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			break;
	close(in);
	close(out);
}

int main(void)
{
	char dir[] = "/tmp/interp-cache-XXXXXX", a[64], b[64], link[64];
	struct elf_image img, again;
	struct interp_facts f = { .runtime = 0x1234, .eval_ranges = 1, .frame_pointers = true };
	const struct interp_facts *got;
	int fd;

	if (!mkdtemp(dir))
		return 1;
	snprintf(a, sizeof(a), "%s/a", dir);
	snprintf(b, sizeof(b), "%s/b", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	copy_self(a);
	copy_self(b);
	CHECK(symlink(a, link) == 0);
	interp_cache_clear();
	CHECK(elf_image_open(&img, a) == 0);
	CHECK(interp_cache_find(&img) == NULL);
	interp_cache_add(&img, &f);
	/* the same file through another descriptor and another path */
	CHECK(elf_image_open(&again, link) == 0);
	got = interp_cache_find(&again);
	CHECK(got && got->runtime == 0x1234 && got->frame_pointers);
	elf_image_close(&again);
	/* another file with the same bytes is another binary */
	CHECK(elf_image_open(&again, b) == 0);
	CHECK(interp_cache_find(&again) == NULL);
	elf_image_close(&again);
	/* changed in place: read again */
	fd = open(a, O_WRONLY | O_APPEND);
	CHECK(fd >= 0 && write(fd, "x", 1) == 1);
	close(fd);
	CHECK(interp_cache_find(&img) == NULL);
	elf_image_close(&img);
	unlink(a);
	unlink(b);
	unlink(link);
	rmdir(dir);
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
