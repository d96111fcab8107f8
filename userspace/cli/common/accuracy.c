// SPDX-License-Identifier: GPL-2.0-only
/* The online accuracy estimate: see accuracy.h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "accuracy.h"

/*
 * Wilson's score interval at 95 % (z = 1.96): unlike the normal
 * approximation it stays inside [0, 1] and is honest for small n and for
 * proportions near 0 or 1, which is where recall lives.
 */
void acc_wilson95(uint64_t k, uint64_t n, struct acc_interval *out)
{
	const double z = 1.959963984540054, z2 = z * z;
	double p, d, c, h;

	memset(out, 0, sizeof(*out));
	out->k = k;
	out->n = n;
	if (!n || k > n)
		return;
	p = (double)k / (double)n;
	d = 1.0 + z2 / (double)n;
	c = (p + z2 / (2.0 * (double)n)) / d;
	h = z * sqrt(p * (1.0 - p) / (double)n + z2 / (4.0 * (double)n * (double)n)) / d;
	out->est = p;
	out->lo = c - h < 0 ? 0 : c - h;
	out->hi = c + h > 1 ? 1 : c + h;
	/* rounding: keep lo <= est <= hi */
	if (out->lo > p)
		out->lo = p;
	if (out->hi < p)
		out->hi = p;
}

void acc_pool_init(struct acc_pool *p, uint64_t pool_ns, uint64_t min_accessed)
{
	p->pool_ns = pool_ns;
	p->min_accessed = min_accessed;
	p->accessed = 0;
	p->first = 0;
	p->nr = 0;
}

void acc_pool_add(struct acc_pool *p, uint64_t end_ns, const struct rec_probes *c)
{
	if (p->nr == ACC_MAX_POOL_WINDOWS) {
		p->accessed -= p->w[p->first].c.tp + p->w[p->first].c.fn;
		p->first = (p->first + 1) % ACC_MAX_POOL_WINDOWS;
		p->nr--;
	}
	p->w[(p->first + p->nr) % ACC_MAX_POOL_WINDOWS] =
		(struct acc_window){ .end_ns = end_ns, .c = *c };
	p->nr++;
	p->accessed += (uint64_t)c->tp + c->fn;
	/*
	 * Drop the oldest windows while the rest still have min_accessed
	 * accessed probes, and those that ended more than pool_ns before
	 * this one; never this one.
	 */
	while (p->nr > 1) {
		const struct acc_window *old = &p->w[p->first];
		uint64_t acc = (uint64_t)old->c.tp + old->c.fn;

		if (old->end_ns + p->pool_ns > end_ns &&
		    p->accessed - acc < p->min_accessed)
			break;
		p->accessed -= acc;
		p->first = (p->first + 1) % ACC_MAX_POOL_WINDOWS;
		p->nr--;
	}
}

void acc_total_add(struct acc_total *t, const struct rec_probes *c)
{
	t->tp += c->tp;
	t->fn += c->fn;
	t->fp += c->fp;
	t->tn += c->tn;
	t->unobserved += c->unobserved;
	t->pages += c->pages;
	t->windows++;
}

int acc_total_estimate(const struct acc_total *t, struct acc_estimate *e)
{
	memset(e, 0, sizeof(*e));
	if (!t->windows)
		return 0;
	e->pages = t->pages;
	e->unobserved = t->unobserved;
	e->windows = t->windows;
	acc_wilson95(t->tp, t->tp + t->fn, &e->recall);
	acc_wilson95(t->tp, t->tp + t->fp, &e->precision);
	return 1;
}

int acc_pool_estimate(const struct acc_pool *p, struct acc_estimate *e)
{
	struct acc_total t = { 0 };

	for (uint32_t i = 0; i < p->nr; i++)
		acc_total_add(&t, &p->w[(p->first + i) % ACC_MAX_POOL_WINDOWS].c);
	return acc_total_estimate(&t, e);
}

int acc_warn(FILE *out, const char *prefix, const struct acc_estimate *e,
	     double threshold)
{
	if (!e->recall.n || e->recall.hi >= threshold)
		return 0;
	fprintf(out, "%sWARNING: estimated recall %.2f [%.2f-%.2f] is below %.2f: the "
		"regions read much accessed memory as not accessed (more regions, a "
		"shorter sampling interval or a TLB flush policy may help)\n", prefix,
		e->recall.est, e->recall.lo, e->recall.hi, threshold);
	return 1;
}

static int fmt_interval(char *buf, size_t len, const char *what,
			const struct acc_interval *i, const char *none)
{
	if (!i->n)
		return snprintf(buf, len, "%s unknown (%s)", what, none);
	return snprintf(buf, len, "%s %.2f [%.2f-%.2f]", what, i->est, i->lo, i->hi);
}

int acc_format(const struct acc_estimate *e, char *buf, size_t len)
{
	size_t n = 0;
	int r;

	r = fmt_interval(buf, len, "estimated recall", &e->recall,
			 "no accessed probe page");
	if (r < 0)
		return r;
	n = (size_t)r < len ? (size_t)r : len;
	r = fmt_interval(buf + n, len - n, ", precision", &e->precision,
			 "no probe page in memory read as accessed");
	if (r < 0)
		return r;
	n += (size_t)r < len - n ? (size_t)r : len - n;
	r = snprintf(buf + n, len - n, ", %llu probe pages (%llu unobserved) in %u windows",
		     (unsigned long long)e->pages, (unsigned long long)e->unobserved,
		     e->windows);
	return r < 0 ? r : (int)(n + (size_t)r);
}
