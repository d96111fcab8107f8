// SPDX-License-Identifier: GPL-2.0-only
/* Groups of targets for the reports' --by (report_group.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_group.h"

static const char *const by_names[] = {
	[BY_NONE] = "none", [BY_PID] = "pid", [BY_COMM] = "comm", [BY_CGROUP] = "cgroup",
};

int report_by_parse(const char *s, enum report_by *by)
{
	for (int i = BY_PID; i <= BY_CGROUP; i++)
		if (!strcmp(s, by_names[i])) {
			*by = (enum report_by)i;
			return 0;
		}
	return -EINVAL;
}

const char *report_by_name(enum report_by by)
{
	return (unsigned int)by <= BY_CGROUP ? by_names[by] : "?";
}

const char *report_group_key(enum report_by by, const struct rec_info *info, pid_t pid,
			     char *buf, size_t len)
{
	const struct rec_target *t = rec_info_target(info, pid);

	switch (by) {
	case BY_COMM:
		return t && t->comm && *t->comm ? t->comm : "?";
	case BY_CGROUP:
		return t && t->cgroup ? t->cgroup : "?";
	default:
		snprintf(buf, len, "%d", (int)pid);
		return buf;
	}
}

/* FNV-1a */
static size_t hash(const char *s)
{
	size_t h = 14695981039346656037ULL;

	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	return h;
}

static size_t *slot(const struct rgroups *gs, const char *key)
{
	size_t i = hash(key) & (gs->nr_slots - 1);

	for (;; i = (i + 1) & (gs->nr_slots - 1))
		if (!gs->slots[i] || !strcmp(gs->g[gs->slots[i] - 1].key, key))
			return &gs->slots[i];
}

static int rehash(struct rgroups *gs)
{
	size_t nr = gs->nr_slots ? 2 * gs->nr_slots : 64, *old = gs->slots;
	size_t old_nr = gs->nr_slots;

	gs->slots = calloc(nr, sizeof(*gs->slots));
	if (!gs->slots) {
		gs->slots = old;
		return -ENOMEM;
	}
	gs->nr_slots = nr;
	for (size_t i = 0; i < old_nr; i++)
		if (old[i])
			*slot(gs, gs->g[old[i] - 1].key) = old[i];
	free(old);
	return 0;
}

struct rgroup *rgroups_get(struct rgroups *gs, const char *key)
{
	struct rgroup *g;
	size_t *s;

	if ((2 * (gs->n + 1) > gs->nr_slots && rehash(gs)))
		return NULL;
	s = slot(gs, key);
	if (*s)
		return &gs->g[*s - 1];
	if (gs->n == gs->cap) {
		size_t cap = gs->cap ? 2 * gs->cap : 32;

		g = realloc(gs->g, cap * sizeof(*g));
		if (!g)
			return NULL;
		gs->g = g;
		gs->cap = cap;
	}
	g = &gs->g[gs->n];
	memset(g, 0, sizeof(*g));
	g->key = strdup(key);
	if (!g->key)
		return NULL;
	*s = ++gs->n;
	return g;
}

struct rgroup *rgroups_of(struct rgroups *gs, enum report_by by, const struct rec_info *info,
			  pid_t pid)
{
	const struct rec_target *t = rec_info_target(info, pid);
	char buf[16];
	struct rgroup *g = rgroups_get(gs, report_group_key(by, info, pid, buf, sizeof(buf)));
	size_t idx;

	if (!g || !t)
		return g;
	/* a process counts in each group it is seen in (exec: a new comm) */
	idx = (size_t)(t - info->targets);
	if (idx >= gs->nr_seen) {
		size_t nr = idx + 1 > 2 * gs->nr_seen ? idx + 1 : 2 * gs->nr_seen;
		size_t *s = realloc(gs->seen, nr * sizeof(*s));

		if (!s)
			return NULL;
		memset(s + gs->nr_seen, 0, (nr - gs->nr_seen) * sizeof(*s));
		gs->seen = s;
		gs->nr_seen = nr;
	}
	if (gs->seen[idx] != (size_t)(g - gs->g) + 1) {
		gs->seen[idx] = (size_t)(g - gs->g) + 1;
		g->nr_procs++;
	}
	return g;
}

void rgroups_free(struct rgroups *gs)
{
	for (size_t i = 0; i < gs->n; i++)
		free(gs->g[i].key);
	free(gs->g);
	free(gs->slots);
	free(gs->seen);
	memset(gs, 0, sizeof(*gs));
}
