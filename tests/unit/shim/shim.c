// SPDX-License-Identifier: GPL-2.0
/* Allocation side of the host shim, see linux/slab.h. */
#include <stdlib.h>
#include <linux/slab.h>

long shim_alloc_budget = -1;
long shim_nr_live;

void *shim_alloc(size_t size, int zero)
{
	void *p;

	if (shim_alloc_budget == 0)
		return NULL;
	if (shim_alloc_budget > 0)
		shim_alloc_budget--;
	p = zero ? calloc(1, size ? size : 1) : malloc(size ? size : 1);
	if (p)
		shim_nr_live++;
	return p;
}

void shim_free(const void *p)
{
	if (!p)
		return;
	shim_nr_live--;
	free((void *)p);
}
