// SPDX-License-Identifier: GPL-2.0-only
/*
 * Parse the LD_PRELOAD tracer's log (format in userspace/objtrace/objtrace.c)
 * into objects.  Only lines of the target pid count; the others (children
 * that inherited the tracer) are counted, not used.  A malformed or cut line
 * is counted and makes the result partial, never silently skipped.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"

#define MAX_FIELDS 8	/* the last field (a path) may hold commas */

static int split(char *line, char **f, int max)
{
	int n = 0;

	f[n++] = line;
	for (char *p = line; *p && n < max; p++) {
		if (*p == ',') {
			*p = '\0';
			f[n++] = p + 1;
		}
	}
	return n;
}

static int num(const char *s, int base, uint64_t *v)
{
	char *end;

	if (!*s)
		return -EINVAL;
	errno = 0;
	*v = strtoull(s, &end, base);
	return errno || *end ? -EINVAL : 0;
}

static int64_t rel(uint64_t ns, int64_t t0)
{
	return (int64_t)ns > t0 ? (int64_t)ns - t0 : 0;
}

/* The live heap/mmap object starting at @addr, newest first. */
static struct obj *find_live(struct obj_set *s, size_t from, uint64_t addr)
{
	for (size_t i = s->n; i-- > from;) {
		struct obj *o = &s->v[i];

		if (o->free_ns < 0 && o->start == addr &&
		    (o->kind == OBJ_HEAP || o->kind == OBJ_MMAP))
			return o;
	}
	return NULL;
}

static struct obj *find_stack(struct obj_set *s, size_t from, pid_t tid)
{
	for (size_t i = s->n; i-- > from;)
		if (s->v[i].kind == OBJ_STACK && s->v[i].tid == tid && s->v[i].free_ns < 0)
			return &s->v[i];
	return NULL;
}

/* Objects of an image replaced by exec end with it. */
static void end_all(struct obj_set *s, size_t from, int64_t t)
{
	for (size_t i = from; i < s->n; i++)
		if (s->v[i].free_ns < 0)
			s->v[i].free_ns = t;
}

static int parse_line(char *line, pid_t pid, int64_t t0, struct obj_set *s,
		      struct obj_log_stats *st, size_t *image_from)
{
	char *f[MAX_FIELDS];
	int n = split(line, f, MAX_FIELDS);
	uint64_t p, tid = 0, ns = 0, a = 0, b = 0, c = 0;
	struct obj *o;
	int ret = 0;

	if (n < 3 || strlen(f[0]) != 1 || num(f[1], 10, &p))
		return -EINVAL;
	if ((pid_t)p != pid) {
		st->other_pid++;
		return 0;
	}
	st->seen = 1;
	switch (f[0][0]) {
	case 'H':	/* H,pid,ns,exe */
		if (n != 4 || num(f[2], 10, &ns))
			return -EINVAL;
		if (st->images) {
			end_all(s, *image_from, rel(ns, t0));	/* exec */
			s->image++;
		}
		*image_from = s->n;
		st->images++;
		st->no_exit = 1;
		free(st->exe);
		st->exe = strdup(f[3]);
		return st->exe ? 0 : -ENOMEM;
	case 'L':	/* L,pid,ns,start,end,bias,path */
		if (n != 7 || num(f[2], 10, &ns) || num(f[3], 16, &a) || num(f[4], 16, &b) ||
		    num(f[5], 16, &c))
			return -EINVAL;
		return obj_add_module(s, a, b, c, f[6]);
	case 'A':	/* A,pid,tid,ns,addr,size,site,kind */
		if (n != 8 || num(f[2], 10, &tid) || num(f[3], 10, &ns) ||
		    num(f[4], 16, &a) || num(f[5], 16, &b) || num(f[6], 16, &c) || !b)
			return -EINVAL;
		o = obj_add(s);
		if (!o)
			return -ENOMEM;
		o->kind = !strcmp(f[7], "mmap") ? OBJ_MMAP : OBJ_HEAP;
		o->start = a;
		o->end = a + b;
		o->alloc_ns = rel(ns, t0);
		o->tid = (pid_t)tid;
		o->site = c;
		o->function = strdup(f[7]);	/* the allocator until symbolised */
		return o->function ? 0 : -ENOMEM;
	case 'F':	/* F,pid,tid,ns,addr */
	case 'U':	/* U,pid,tid,ns,addr,len */
		if (n != (f[0][0] == 'F' ? 5 : 6) || num(f[2], 10, &tid) ||
		    num(f[3], 10, &ns) || num(f[4], 16, &a))
			return -EINVAL;
		o = find_live(s, *image_from, a);
		if (!o) {
			if (f[0][0] == 'U' && (num(f[5], 16, &b), 1))
				st->partial_unmaps++;
			else
				st->unmatched_frees++;	/* a small block */
			return 0;
		}
		o->free_ns = rel(ns, t0);
		return 0;
	case 'S':	/* S,pid,tid,ns,lo,hi */
		if (n != 6 || num(f[2], 10, &tid) || num(f[3], 10, &ns) ||
		    num(f[4], 16, &a) || num(f[5], 16, &b) || b <= a)
			return -EINVAL;
		o = obj_add(s);
		if (!o)
			return -ENOMEM;
		o->kind = OBJ_STACK;
		o->start = a;
		o->end = b;
		o->alloc_ns = rel(ns, t0);
		o->tid = (pid_t)tid;
		return 0;
	case 'T':	/* T,pid,tid,ns */
		if (n != 4 || num(f[2], 10, &tid) || num(f[3], 10, &ns))
			return -EINVAL;
		o = find_stack(s, *image_from, (pid_t)tid);
		if (o)
			o->free_ns = rel(ns, t0);
		return 0;
	case 'Q':	/* Q,pid,ns,lines,lost */
		if (n != 5 || num(f[2], 10, &ns) || num(f[3], 10, &a) || num(f[4], 10, &b))
			return -EINVAL;
		st->clean_exits++;
		st->lost_writes += b;
		st->no_exit = 0;
		return 0;
	case 'C':	/* C,pid,ns,lines,lost: the program took the log's fd */
		if (n != 5 || num(f[2], 10, &ns) || num(f[3], 10, &a) || num(f[4], 10, &b))
			return -EINVAL;
		st->log_closed = 1;
		st->lost_writes += b;
		st->no_exit = 0;
		return 0;
	default:
		ret = -EINVAL;
	}
	return ret;
}

int obj_log_parse(FILE *f, pid_t pid, int64_t t0, struct obj_set *s,
		  struct obj_log_stats *st)
{
	char *line = NULL;
	size_t cap = 0, image_from = s->n;
	ssize_t len;
	int err = 0;

	memset(st, 0, sizeof(*st));
	while ((len = getline(&line, &cap, f)) > 0) {
		st->lines++;
		if (line[len - 1] != '\n') {
			st->truncated = 1;	/* the writer was cut mid-line */
			break;
		}
		line[len - 1] = '\0';
		err = parse_line(line, pid, t0, s, st, &image_from);
		if (err == -ENOMEM)
			break;
		if (err) {
			st->bad_lines++;
			err = 0;
		}
	}
	free(line);
	if (ferror(f) && !err)
		err = -EIO;
	for (size_t i = image_from; i < s->n; i++)
		if (s->v[i].free_ns < 0 && s->v[i].kind != OBJ_GLOBAL)
			st->still_alive++;
	return err;
}

void obj_log_stats_free(struct obj_log_stats *st)
{
	free(st->exe);
	st->exe = NULL;
}
