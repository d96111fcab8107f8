// SPDX-License-Identifier: GPL-2.0-only
/*
 * Attribute region access frequencies to objects.  A region's frequency
 * holds for every byte of it (that is all a sampled region says), so an
 * object's frequency in a window is the mean over its bytes, weighted by how
 * many of them each region covers.
 */
#include "objects.h"

uint64_t obj_window_freq(uint64_t start, uint64_t end, const struct obj_region *r,
			 size_t n, double *freq)
{
	size_t lo = 0, hi = n;
	uint64_t covered = 0;
	double sum = 0;

	/* first region ending after start */
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

		if (b <= a)
			continue;
		covered += b - a;
		sum += (double)(b - a) * r[i].freq;
	}
	if (covered)
		*freq = sum / (double)covered;
	return covered;
}

int obj_alive_in(int64_t alloc, int64_t free_ns, int64_t ws, int64_t we)
{
	return alloc < we && (free_ns < 0 || free_ns > ws);
}
