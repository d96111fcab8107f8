/* SPDX-License-Identifier: GPL-2.0-only */
/* An array that grows by doubling: the record reader's, the recorder's and the reports'. */
#ifndef DAPTRACE_GROW_H
#define DAPTRACE_GROW_H

#include <stdint.h>
#include <stdlib.h>

/*
 * Make *@p hold at least @need items of @size bytes, doubling *@cap (from
 * 64); 0, or -1 with *@p as it was when out of memory.
 */
static inline int grow_array(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *a;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	if (n > SIZE_MAX / size)
		return -1;
	a = realloc(*p, n * size);
	if (!a)
		return -1;
	*p = a;
	*cap = n;
	return 0;
}

#endif
