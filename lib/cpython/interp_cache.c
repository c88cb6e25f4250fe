/* SPDX-License-Identifier: Apache-2.0 */
#include "cpython/interp_cache.h"

#include <string.h>

static struct interp_facts cache[INTERP_CACHE_SIZE];
static unsigned used, next; /* filled slots; the slot to reuse next (round robin) */

static bool identify(const struct elf_image *img, struct stat *st)
{
	return img->fd >= 0 && fstat(img->fd, st) == 0;
}

static bool same_file(const struct interp_facts *f, const struct stat *st)
{
	return f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
	       f->ctime.tv_sec == st->st_ctim.tv_sec && f->ctime.tv_nsec == st->st_ctim.tv_nsec;
}

const struct interp_facts *interp_cache_find(const struct elf_image *img)
{
	struct stat st;

	if (!identify(img, &st))
		return NULL;
	for (unsigned i = 0; i < used; i++)
		if (same_file(&cache[i], &st))
			return &cache[i];
	return NULL;
}

void interp_cache_add(const struct elf_image *img, const struct interp_facts *f)
{
	struct interp_facts *slot;
	struct stat st;

	if (!identify(img, &st) || interp_cache_find(img))
		return;
	slot = &cache[next];
	next = (next + 1) % INTERP_CACHE_SIZE;
	if (used < INTERP_CACHE_SIZE)
		used++;
	*slot = *f;
	slot->dev = st.st_dev;
	slot->ino = st.st_ino;
	slot->size = st.st_size;
	slot->ctime = st.st_ctim;
}

void interp_cache_clear(void)
{
	used = next = 0;
}
