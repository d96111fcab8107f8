// SPDX-License-Identifier: GPL-2.0-only
/* The mappings' address ranges and the bytes of a region inside them (mapped.h). */
#include "mapped.h"

size_t mapped_ranges(const struct maps *m, struct rec_range *out)
{
	size_t n = 0;

	for (size_t i = 0; i < m->n; i++) {
		struct rec_range *last = n ? &out[n - 1] : NULL;

		/* /proc lists the mappings in address order, apart */
		if (last && m->e[i].start <= last->end) {
			if (m->e[i].end > last->end)
				last->end = m->e[i].end;
			continue;
		}
		out[n++] = (struct rec_range){ m->e[i].start, m->e[i].end };
	}
	return n;
}

uint64_t mapped_in(const struct rec_range *r, size_t n, uint64_t start, uint64_t end)
{
	size_t lo = 0, hi = n;
	uint64_t sum = 0;

	/* the first range that ends above @start */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].end <= start)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < n && r[i].start < end; i++) {
		uint64_t a = r[i].start > start ? r[i].start : start;
		uint64_t b = r[i].end < end ? r[i].end : end;

		sum += b - a;
	}
	return sum;
}
