// SPDX-License-Identifier: GPL-2.0-only
/*
 * Region identity: the address ranges a scheme already acted on.  Regions
 * change shape every window (merge/split), so identity is kept by address,
 * not by region: a sorted array of disjoint ranges.  A scheme skips the
 * covered part of a matching region; the engine removes a range when it is
 * accessed again, when another scheme acts on it, or when it expires.
 */
#include <stdlib.h>
#include <string.h>

#include "policy.h"

static int reserve(struct pol_iset *s, size_t extra)
{
	struct pol_range *r;
	size_t cap;

	if (s->n + extra <= s->cap)
		return 0;
	cap = s->cap ? s->cap * 2 : 64;
	while (cap < s->n + extra)
		cap *= 2;
	r = realloc(s->r, cap * sizeof(*r));
	if (!r)
		return -1;
	s->r = r;
	s->cap = cap;
	return 0;
}

/* Index of the first range ending after @addr. */
static size_t first_after(const struct pol_iset *s, uint64_t addr)
{
	size_t lo = 0, hi = s->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (s->r[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void pol_iset_remove(struct pol_iset *s, uint64_t start, uint64_t end)
{
	size_t i = first_after(s, start), j;

	if (start >= end)
		return;
	/* a range sticking out on both sides splits in two */
	if (i < s->n && s->r[i].start < start && s->r[i].end > end) {
		if (reserve(s, 1)) {
			/* forget it all: acted on again later, which is safe */
			memmove(&s->r[i], &s->r[i + 1], (s->n - i - 1) * sizeof(s->r[0]));
			s->n--;
			return;
		}
		memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(s->r[0]));
		s->n++;
		s->r[i].end = start;
		s->r[i + 1].start = end;
		return;
	}
	if (i < s->n && s->r[i].start < start) {
		s->r[i].end = start;
		i++;
	}
	for (j = i; j < s->n && s->r[j].end <= end; j++)
		;
	if (j < s->n && s->r[j].start < end)
		s->r[j].start = end;
	memmove(&s->r[i], &s->r[j], (s->n - j) * sizeof(s->r[0]));
	s->n -= j - i;
}

int pol_iset_add(struct pol_iset *s, uint64_t start, uint64_t end, int64_t t_ns)
{
	size_t i;

	if (start >= end)
		return 0;
	/*
	 * Room first (a range around the new one splits, then the new one):
	 * without it nothing changes.  The engine may ignore that (not
	 * remembered: acted on again later, never lost); report savings may
	 * not (a lost access would read as idle).
	 */
	if (reserve(s, 2))
		return -1;
	pol_iset_remove(s, start, end);
	i = first_after(s, start);
	memmove(&s->r[i + 1], &s->r[i], (s->n - i) * sizeof(s->r[0]));
	s->r[i] = (struct pol_range){ start, end, t_ns };
	s->n++;
	return 0;
}

/*
 * Out piece @r after out[0..*o): merged with the last one when they touch
 * and share their time, so ranges added window by window stay few.
 */
static void emit(struct pol_range *out, size_t *o, struct pol_range r)
{
	if (r.start >= r.end)
		return;
	if (*o && out[*o - 1].end == r.start && out[*o - 1].t_ns == r.t_ns) {
		out[*o - 1].end = r.end;
		return;
	}
	out[(*o)++] = r;
}

int pol_iset_add_sorted(struct pol_iset *s, const struct pol_range *add, size_t n)
{
	/* each added range takes its place and may cut one old range in two */
	size_t cap = s->n + 2 * n, o = 0, j = 0;
	struct pol_range *out;
	uint64_t done = 0;		/* end of the last added range emitted */

	if (!n)
		return 0;
	out = malloc(cap * sizeof(*out));
	if (!out)
		return -1;
	for (size_t i = 0; i < s->n; i++) {
		struct pol_range r = s->r[i];
		uint64_t a = r.start > done ? r.start : done;

		/* the added ranges that start before this one ends, and its gaps */
		for (; j < n && add[j].start < r.end; j++) {
			if (a < add[j].start)
				emit(out, &o, (struct pol_range){ a, add[j].start, r.t_ns });
			emit(out, &o, add[j]);
			done = add[j].end;
			if (a < done)
				a = done;
		}
		if (a < r.end)
			emit(out, &o, (struct pol_range){ a, r.end, r.t_ns });
	}
	for (; j < n; j++)
		emit(out, &o, add[j]);
	free(s->r);
	s->r = out;
	s->n = o;
	s->cap = cap;
	return 0;
}

void pol_iset_expire(struct pol_iset *s, int64_t before_ns)
{
	size_t j = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->r[i].t_ns >= before_ns)
			s->r[j++] = s->r[i];
	s->n = j;
}

uint64_t pol_iset_covered(const struct pol_iset *s, uint64_t start, uint64_t end)
{
	uint64_t sum = 0;

	for (size_t i = first_after(s, start); i < s->n && s->r[i].start < end; i++) {
		uint64_t a = s->r[i].start > start ? s->r[i].start : start;
		uint64_t b = s->r[i].end < end ? s->r[i].end : end;

		sum += b - a;
	}
	return sum;
}

int pol_iset_first_gap_since(const struct pol_iset *s, uint64_t start, uint64_t end,
			     int64_t since_ns, uint64_t *ps, uint64_t *pe)
{
	size_t i = first_after(s, start);

	while (start < end) {
		while (i < s->n && s->r[i].t_ns < since_ns && s->r[i].start < end)
			i++;
		if (i >= s->n || s->r[i].start >= end) {
			*ps = start;
			*pe = end;
			return 1;
		}
		if (s->r[i].start > start) {
			*ps = start;
			*pe = s->r[i].start;
			return 1;
		}
		start = s->r[i].end;
		i++;
	}
	return 0;
}

int pol_iset_first_gap(const struct pol_iset *s, uint64_t start, uint64_t end,
		       uint64_t *ps, uint64_t *pe)
{
	return pol_iset_first_gap_since(s, start, end, INT64_MIN, ps, pe);
}

int pol_iset_piece(const struct pol_iset *s, uint64_t start, uint64_t end, uint64_t *pe,
		   int64_t *t_ns)
{
	size_t i = first_after(s, start);

	if (i < s->n && s->r[i].start <= start) {
		*pe = s->r[i].end < end ? s->r[i].end : end;
		*t_ns = s->r[i].t_ns;
		return 1;
	}
	*pe = i < s->n && s->r[i].start < end ? s->r[i].start : end;
	return 0;
}

void pol_iset_free(struct pol_iset *s)
{
	free(s->r);
	memset(s, 0, sizeof(*s));
}
