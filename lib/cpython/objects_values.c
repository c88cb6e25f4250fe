/* SPDX-License-Identifier: Apache-2.0 */
/* Values of ints and strs. */
#include "cpython/objects.h"

#include "cpython/str_object.h"
#include "sys/remote_mem.h"

#define PLAUSIBLE_LEN (1LL << 40)

int py_long_shape(const struct py_objects *o, uint64_t addr, size_t *ndigits, int *sign)
{
	int64_t tag = 0;

	if (remote_read(o->p->pid, addr + (uint64_t)o->long_tag, &tag, 8) < 0)
		return -1;
	if (o->rules->long_model == PY_LONG_OB_SIZE) {
		if (tag < -PLAUSIBLE_LEN || tag > PLAUSIBLE_LEN)
			return -1;
		*sign = tag < 0 ? -1 : tag > 0;
		*ndigits = (size_t)(tag < 0 ? -tag : tag);
	} else { /* lv_tag: ndigits << 3 | sign (0 +, 1 zero, 2 -) */
		uint64_t t = (uint64_t)tag;

		*sign = (t & 3) == 0 ? 1 : (t & 3) == 1 ? 0 : (t & 3) == 2 ? -1 : 2;
		*ndigits = (size_t)(t >> 3);
		if (*sign == 2 || t >> 3 > (uint64_t)PLAUSIBLE_LEN)
			return -1;
		if (*sign == 0)
			*ndigits = 0;
	}
	return 0;
}

int py_long_digits(const struct py_objects *o, uint64_t addr, size_t n, uint32_t *d)
{
	if (n && remote_read(o->p->pid, addr + (uint64_t)o->long_digits, d, n * 4) < 0)
		return -1;
	for (size_t i = 0; i < n; i++)
		if (d[i] >> 30)
			return -1; /* 30-bit digits: the top bits are always clear */
	return 0;
}

/* Magnitude and sign of an int that fits 64 bits. */
static int small_long(const struct py_objects *o, uint64_t addr, uint64_t *mag, int *sign)
{
	uint32_t d[3] = { 0 };
	size_t n;

	if (!py_obj_is_instance(o, addr, o->t_int) || py_long_shape(o, addr, &n, sign) < 0 ||
	    n > 3 || py_long_digits(o, addr, n, d) < 0 || (n == 3 && d[2] > 0xf))
		return -1;
	*mag = (uint64_t)d[0] | (uint64_t)d[1] << 30 | (uint64_t)d[2] << 60;
	return 0;
}

int py_obj_u64(const struct py_objects *o, uint64_t addr, uint64_t *value)
{
	uint64_t mag;
	int sign;

	if (small_long(o, addr, &mag, &sign) < 0 || sign < 0)
		return -1;
	*value = mag;
	return 0;
}

int py_obj_i64(const struct py_objects *o, uint64_t addr, int64_t *value)
{
	uint64_t mag;
	int sign;

	if (small_long(o, addr, &mag, &sign) < 0 || mag > (uint64_t)INT64_MAX)
		return -1;
	*value = sign < 0 ? -(int64_t)mag : (int64_t)mag;
	return 0;
}

int py_obj_str(const struct py_objects *o, uint64_t addr, char *buf, size_t len)
{
	return py_read_string(o->p, addr, buf, len);
}

bool py_obj_str_eq(const struct py_objects *o, uint64_t addr, const char *s)
{
	return py_str_equals(o->p, addr, s);
}
