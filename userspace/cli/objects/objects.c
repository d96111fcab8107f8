// SPDX-License-Identifier: GPL-2.0-only
/* The object set: structures of a target, their modules and notes. */
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"

static const char *const kind_names[OBJ_NR_KINDS] = {
	[OBJ_GLOBAL] = "global",
	[OBJ_HEAP] = "heap",
	[OBJ_MMAP] = "mmap",
	[OBJ_STACK] = "stack",
};

const char *obj_kind_name(enum obj_kind k)
{
	return k < OBJ_NR_KINDS ? kind_names[k] : "?";
}

int obj_kind_parse(const char *s, enum obj_kind *k)
{
	for (int i = 0; i < OBJ_NR_KINDS; i++) {
		if (!strcmp(s, kind_names[i])) {
			*k = (enum obj_kind)i;
			return 0;
		}
	}
	return -EINVAL;
}

struct obj *obj_add(struct obj_set *s)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		struct obj *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	memset(&s->v[s->n], 0, sizeof(s->v[0]));
	s->v[s->n].free_ns = -1;
	s->v[s->n].image = s->image;
	return &s->v[s->n++];
}

int obj_add_module(struct obj_set *s, uint64_t start, uint64_t end, uint64_t bias,
		   const char *path)
{
	struct obj_module *m = realloc(s->mods, (s->nr_mods + 1) * sizeof(*m));

	if (!m)
		return -ENOMEM;
	s->mods = m;
	m = &s->mods[s->nr_mods];
	m->path = strdup(path);
	if (!m->path)
		return -ENOMEM;
	m->start = start;
	m->end = end;
	m->bias = bias;
	m->image = s->image;
	s->nr_mods++;
	return 0;
}

int obj_meta_set(struct obj_set *s, const char *key, const char *fmt, ...)
{
	char *val, **k, **v;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&val, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->nr_meta; i++) {
		if (!strcmp(s->meta_keys[i], key)) {
			free(s->meta_vals[i]);
			s->meta_vals[i] = val;
			return 0;
		}
	}
	k = realloc(s->meta_keys, (s->nr_meta + 1) * sizeof(*k));
	if (k)
		s->meta_keys = k;
	v = realloc(s->meta_vals, (s->nr_meta + 1) * sizeof(*v));
	if (v)
		s->meta_vals = v;
	if (!k || !v || !(s->meta_keys[s->nr_meta] = strdup(key))) {
		free(val);
		return -ENOMEM;
	}
	s->meta_vals[s->nr_meta++] = val;
	return 0;
}

const char *obj_meta_get(const struct obj_set *s, const char *key)
{
	for (size_t i = 0; i < s->nr_meta; i++)
		if (!strcmp(s->meta_keys[i], key))
			return s->meta_vals[i];
	return NULL;
}

void obj_set_free(struct obj_set *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->v[i].name);
		free(s->v[i].function);
		free(s->v[i].source);
		free(s->v[i].module);
	}
	for (size_t i = 0; i < s->nr_mods; i++)
		free(s->mods[i].path);
	for (size_t i = 0; i < s->nr_meta; i++) {
		free(s->meta_keys[i]);
		free(s->meta_vals[i]);
	}
	free(s->v);
	free(s->mods);
	free(s->meta_keys);
	free(s->meta_vals);
	memset(s, 0, sizeof(*s));
}

int obj_parse_size(const char *s, uint64_t *v)
{
	char *end;
	uint64_t n, mul = 1;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno)
		return -ERANGE;
	if (*end == 'K' || *end == 'k')
		mul = 1ULL << 10;
	else if (*end == 'M')
		mul = 1ULL << 20;
	else if (*end == 'G')
		mul = 1ULL << 30;
	if (mul > 1)
		end++;
	if (*end || n > UINT64_MAX / mul)
		return -EINVAL;
	*v = n * mul;
	return 0;
}
