// SPDX-License-Identifier: GPL-2.0-only
/*
 * Regret counters: of the bytes an action took away, how many came back
 * within 1 s, 10 s and 60 s.  A scheme that keeps paging out what is read
 * again seconds later shows it here, per scheme and per cgroup.
 *
 * How "came back" is told, page by page (docs/policy.md, "Regret"):
 *  - pageout: a page is taken away if /proc/PID/pagemap shows it mapped
 *    ("present") just before the call and not just after; it came back if it
 *    is mapped again at a window's end.  Taken away from the process, that
 *    is: out of its resident set, a fault to use again.  That is what a
 *    scheme's regret is about (did the process need what it chose?), and
 *    the only per-page view of another process a stock kernel gives
 *    (mincore(2) reads the caller's own memory; pagemap does not say
 *    whether a swap entry's page is still in the swap cache).  It is not
 *    always memory freed: a page reclaim unmapped but could not free (an
 *    extra reference on its folio just then, a mincore() of it among
 *    them; with a disk swap device, any page still being written when the
 *    call returns) stays in the swap cache, resident to mincore, until
 *    kernel reclaim frees it; touched before that (a minor fault) it counts
 *    as back, as it should: the scheme chose a page that was needed.  For a
 *    file page "back" means "mapped again" (a fault), not "in the page
 *    cache".
 *  - migrate_hot / migrate_cold: a page is taken away if it was present on
 *    another node before the call and on the scheme's node after; it went
 *    back if it is present on another node at a window's end (move_pages(2)
 *    with no nodes only reads where pages are).
 *  - cold, willneed, collapse, stat: not observed per page (POL_REGRET_NONE);
 *    their applied bytes are in the stats, their regret is not claimed.
 * "Within W" is sticky: a page seen back at any check up to the window's
 * end counts, even if it went away again.  Checks happen at each window's
 * end (at the first snapshot after it, so at most about one aggregation
 * interval late; a check more than half a window late is counted as
 * unknown, not guessed), and whenever the policy acts on a followed page
 * again (its state just before that call is read anyway).  Kernel reclaim
 * that takes a page back out between two checks hides its return: the
 * counts are a lower bound then, exact when only the policy acts.
 *
 * Cost: one probe before and one after each call (8 bytes of pagemap, or
 * one move_pages slot, per page acted on: the call itself does far more
 * per page), one per window per piece, 2 bits per followed page, at most
 * POL_REGRET_MAX_PAGES pages; nothing per snapshot but a walk over the
 * pieces of the last minute.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

#define NS_PER_US	1000LL

const uint64_t pol_regret_win_us[POL_REGRET_WINDOWS] = { 1000000, 10000000, 60000000 };

enum pol_regret_how pol_regret_how_of(enum pol_action a)
{
	switch (a) {
	case POL_PAGEOUT:
		return POL_REGRET_RESIDENT;
	case POL_MIGRATE_HOT:
	case POL_MIGRATE_COLD:
		return POL_REGRET_NODE;
	default:
		return POL_REGRET_NONE;
	}
}

const char *pol_regret_how_name(enum pol_regret_how h)
{
	static const char *const names[] = { "none", "resident", "node" };

	return h <= POL_REGRET_NODE ? names[h] : "?";
}

const char *pol_regret_win_name(int w)
{
	static const char *const names[POL_REGRET_WINDOWS] = { "1s", "10s", "60s" };

	return w >= 0 && w < POL_REGRET_WINDOWS ? names[w] : "?";
}

static size_t words_of(uint32_t npages)
{
	return ((size_t)npages + 63) / 64;
}

static uint32_t popcount(const uint64_t *b, size_t nw)
{
	uint32_t n = 0;

	for (size_t i = 0; i < nw; i++)
		n += (uint32_t)__builtin_popcountll(b[i]);
	return n;
}

int pol_engine_cgroup(struct pol_engine *e, const char *path)
{
	char **c, *dup;

	for (int i = 0; i < e->nr_cgroups; i++)
		if (!strcmp(e->cgroups[i], path))
			return i;
	c = realloc(e->cgroups, (e->nr_cgroups + 1) * sizeof(*c));
	if (!c)
		return -ENOMEM;
	e->cgroups = c;
	dup = strdup(path);
	if (!dup)
		return -ENOMEM;
	c[e->nr_cgroups] = dup;
	return e->nr_cgroups++;
}

struct pol_regret *pol_regret_get(struct pol_engine *e, int scheme, const char *cgroup)
{
	struct pol_regret *r;

	for (int i = 0; i < e->nr_regret; i++)
		if (e->regret[i].scheme == scheme && !strcmp(e->regret[i].cgroup, cgroup))
			return &e->regret[i];
	r = pol_grow(e->regret, &e->cap_regret, e->nr_regret + 1, sizeof(*r), 8);
	if (!r)
		return NULL;
	e->regret = r;
	r = &e->regret[e->nr_regret];
	memset(r, 0, sizeof(*r));
	r->scheme = scheme;
	r->cgroup = strdup(cgroup);
	if (!r->cgroup)
		return NULL;
	e->nr_regret++;
	return r;
}

/*
 * The cgroup of @t, read the first time it is acted on ("" if it cannot be
 * read: the counters are still kept, under no cgroup).
 */
const char *pol_target_cgroup(struct pol_engine *e, struct pol_target *t)
{
	char buf[4096];

	if (t->cg < 0) {
		if (!e->cgroup_of || e->cgroup_of(t->pid, buf, sizeof(buf)))
			buf[0] = '\0';
		t->cg = pol_engine_cgroup(e, buf);
	}
	return t->cg >= 0 && t->cg < e->nr_cgroups ? e->cgroups[t->cg] : "";
}

int pol_scheme_has_target(struct pol_engine *e, const struct pol_scheme *s,
			  struct pol_target *t)
{
	return !s->cgroup || pol_cgroup_within(s->cgroup, pol_target_cgroup(e, t));
}

/* The counters of @s acting on @t, or NULL (out of memory). */
static struct pol_regret *regret_of(struct pol_engine *e, const struct pol_scheme *s,
				    struct pol_target *t)
{
	return pol_regret_get(e, (int)(s - e->s), pol_target_cgroup(e, t));
}

/* Bytes acted on that will never be checked: unknown in every window. */
static void all_unknown(struct pol_regret *r, uint64_t bytes, int from)
{
	for (int w = from; w < POL_REGRET_WINDOWS; w++)
		r->unknown[w] += bytes;
}

static int buf_reserve(struct pol_engine *e, size_t nw)
{
	uint64_t *b;

	if (e->rbuf_words >= nw)
		return 0;
	b = realloc(e->rbuf, 4 * nw * sizeof(*b));
	if (!b)
		return -ENOMEM;
	e->rbuf = b;
	e->rbuf_words = nw;
	return 0;
}

/*
 * The state of followed pages of @pid in [start, start + npages) just
 * before the policy acts there again (@here: the probe of that range): a
 * page back now has come back within every window still open.
 */
static void mark_back_before(struct pol_engine *e, pid_t pid, enum pol_regret_how how, int node,
			     uint64_t start, uint32_t npages, const uint64_t *here, uint64_t psz)
{
	uint64_t end = start + (uint64_t)npages * psz;

	for (size_t i = 0; i < e->nr_rent; i++) {
		struct pol_regret_ent *r = &e->rent[i];
		uint64_t rend = r->start + (uint64_t)r->npages * psz, a, b;

		if (r->pid != pid || r->how != how || (how == POL_REGRET_NODE && r->node != node) ||
		    rend <= start || r->start >= end)
			continue;
		a = r->start > start ? r->start : start;
		b = rend < end ? rend : end;
		for (uint64_t p = a; p < b; p += psz) {
			uint64_t i_new = (p - start) / psz, i_old = (p - r->start) / psz;

			if (here[i_new / 64] & (1ULL << (i_new % 64)))
				r->back[i_old / 64] |= r->out[i_old / 64] & (1ULL << (i_old % 64));
		}
	}
}

int pol_regret_before(struct pol_engine *e, const struct pol_scheme *s, struct pol_target *t,
		      uint64_t start, uint64_t len)
{
	uint64_t psz = (uint64_t)e->page_size;
	struct pol_regret_ent *p = &e->rpend;
	enum pol_regret_how how = pol_regret_how_of(s->action);
	uint64_t a = start & ~(psz - 1), b = (start + len + psz - 1) & ~(psz - 1);
	uint64_t npages = (b - a) / psz;
	size_t nw = words_of((uint32_t)npages);
	struct pol_regret *r;

	memset(p, 0, sizeof(*p));
	if (how == POL_REGRET_NONE || !npages)
		return 0;
	r = regret_of(e, s, t);
	if (!r)
		return 0;
	if (npages > UINT32_MAX || e->regret_pages + npages > POL_REGRET_MAX_PAGES ||
	    buf_reserve(e, nw)) {
		/* not followed: what it takes away is unknown, not "none back" */
		p->how = how;
		p->key = (int)(r - e->regret);
		p->npages = 0;
		return 1;
	}
	p->key = (int)(r - e->regret);
	p->pid = t->pid;
	p->node = s->node;
	p->how = how;
	p->start = a;
	p->npages = (uint32_t)npages;
	memset(e->rbuf, 0, 4 * nw * sizeof(*e->rbuf));
	if (e->probe(e, t, s, a, p->npages, e->rbuf, e->rbuf + nw)) {
		p->npages = 0;
		return 1;
	}
	mark_back_before(e, t->pid, how, s->node, a, p->npages, e->rbuf + nw, psz);
	return 1;
}

void pol_regret_after(struct pol_engine *e, const struct pol_scheme *s, struct pol_target *t,
		      int64_t now_ns)
{
	struct pol_regret_ent *p = &e->rpend, *n;
	uint64_t psz = (uint64_t)e->page_size;
	size_t nw = words_of(p->npages);
	uint64_t *here0 = e->rbuf + nw, *gone1 = e->rbuf + 2 * nw, *out;
	struct pol_regret *r;

	if (p->how == POL_REGRET_NONE)
		return;
	r = &e->regret[p->key];
	p->how = POL_REGRET_NONE;	/* consumed */
	if (!p->npages) {
		/*
		 * Not followed (no memory, the probe failed): the applied bytes
		 * are in the stats; how much this call took away is not known
		 * here, so nothing is added to @acted either.  Counted as
		 * unknown so that it shows.
		 */
		r->unknown_calls++;
		return;
	}
	memset(gone1, 0, 2 * nw * sizeof(*gone1));
	if (e->probe(e, t, s, p->start, p->npages, gone1, gone1 + nw)) {
		r->unknown_calls++;
		return;
	}
	for (size_t i = 0; i < nw; i++)
		gone1[i] &= here0[i];	/* taken away by this call */
	p->nr_out = popcount(gone1, nw);
	if (!p->nr_out)
		return;
	n = pol_grow(e->rent, &e->cap_rent, e->nr_rent + 1, sizeof(*n), 64);
	if (!n)
		goto unknown;
	e->rent = n;
	out = calloc(2 * nw, sizeof(*out));
	if (!out)
		goto unknown;
	memcpy(out, gone1, nw * sizeof(*out));
	n = &e->rent[e->nr_rent++];
	*n = *p;
	n->how = pol_regret_how_of(s->action);
	n->t_ns = now_ns;
	n->next = 0;
	n->out = out;
	n->back = out + nw;
	e->regret_pages += n->npages;
	r->acted += (uint64_t)p->nr_out * psz;
	return;
unknown:
	r->acted += (uint64_t)p->nr_out * psz;
	all_unknown(r, (uint64_t)p->nr_out * psz, 0);
}

static void ent_free(struct pol_engine *e, struct pol_regret_ent *r)
{
	e->regret_pages -= r->npages;
	free(r->out);
	r->out = r->back = NULL;
}

/* Drop the pieces whose last window closed, keeping time order. */
static void compact(struct pol_engine *e)
{
	size_t k = 0;

	for (size_t i = 0; i < e->nr_rent; i++) {
		if (e->rent[i].next >= POL_REGRET_WINDOWS) {
			ent_free(e, &e->rent[i]);
			continue;
		}
		e->rent[k++] = e->rent[i];
	}
	e->nr_rent = k;
}

static struct pol_target *target_of(struct pol_engine *e, pid_t pid)
{
	for (int i = 0; i < e->nr_targets; i++)
		if (e->t[i].pid == pid && !e->t[i].gone)
			return &e->t[i];
	return NULL;
}

/* Read @r's pages now and note those back; 0, or -errno (target gone, probe failed). */
static int refresh(struct pol_engine *e, struct pol_regret_ent *r)
{
	const struct pol_scheme *s = &e->s[e->regret[r->key].scheme];
	size_t nw = words_of(r->npages);
	struct pol_target *t;
	int err;

	/* all back already (sticky): nothing a probe could add */
	if (popcount(r->back, nw) == r->nr_out)
		return 0;
	t = target_of(e, r->pid);
	if (!t)
		return -ESRCH;
	if (buf_reserve(e, nw))
		return -ENOMEM;
	memset(e->rbuf, 0, 2 * nw * sizeof(*e->rbuf));
	err = e->probe(e, t, s, r->start, r->npages, e->rbuf, e->rbuf + nw);
	if (err)
		return err;
	for (size_t k = 0; k < nw; k++)
		r->back[k] |= r->out[k] & e->rbuf[nw + k];
	return 0;
}

void pol_regret_tick(struct pol_engine *e, int64_t now_ns)
{
	uint64_t psz = (uint64_t)e->page_size;
	int any = 0;

	for (size_t i = 0; i < e->nr_rent; i++) {
		struct pol_regret_ent *r = &e->rent[i];
		struct pol_regret *c = &e->regret[r->key];
		uint64_t bytes = (uint64_t)r->nr_out * psz;
		int refreshed = 0;

		/* every window that ended by now (more than one after a stall) */
		while (r->next < POL_REGRET_WINDOWS) {
			int64_t win_ns = (int64_t)pol_regret_win_us[r->next] * NS_PER_US;
			int64_t late = now_ns - (r->t_ns + win_ns);

			if (late < 0)
				break;
			if (late > win_ns / 2) {
				/* what came back by then is not known any more */
				c->unknown[r->next++] += bytes;
				continue;
			}
			if (!refreshed && refresh(e, r)) {
				all_unknown(c, bytes, r->next);
				r->next = POL_REGRET_WINDOWS;
				break;
			}
			refreshed = 1;
			c->checked[r->next] += bytes;
			c->back[r->next++] += (uint64_t)popcount(r->back, words_of(r->npages)) * psz;
		}
		any |= r->next >= POL_REGRET_WINDOWS;
	}
	if (any)
		compact(e);
}

void pol_regret_target_gone(struct pol_engine *e, pid_t pid)
{
	uint64_t psz = (uint64_t)e->page_size;
	int any = 0;

	for (size_t i = 0; i < e->nr_rent; i++) {
		struct pol_regret_ent *r = &e->rent[i];

		if (r->pid != pid || r->next >= POL_REGRET_WINDOWS)
			continue;
		all_unknown(&e->regret[r->key], (uint64_t)r->nr_out * psz, r->next);
		r->next = POL_REGRET_WINDOWS;
		any = 1;
	}
	if (any)
		compact(e);
}

void pol_regret_free(struct pol_engine *e)
{
	for (size_t i = 0; i < e->nr_rent; i++)
		ent_free(e, &e->rent[i]);
	free(e->rent);
	e->rent = NULL;
	e->nr_rent = e->cap_rent = 0;
	for (int i = 0; i < e->nr_regret; i++)
		free(e->regret[i].cgroup);
	free(e->regret);
	e->regret = NULL;
	e->nr_regret = e->cap_regret = 0;
	for (int i = 0; i < e->nr_cgroups; i++)
		free(e->cgroups[i]);
	free(e->cgroups);
	e->cgroups = NULL;
	e->nr_cgroups = 0;
	free(e->rbuf);
	e->rbuf = NULL;
	e->rbuf_words = 0;
}
