/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A set of metric families and their samples, written in the Prometheus
 * text exposition format (version 0.0.4) or in OpenMetrics 1.0.0.
 *
 * Families are named as the 0.0.4 format shows them: a counter's name ends
 * in "_total", an info metric's in "_info".  OpenMetrics names the family
 * without that suffix and puts it back on the sample, which the writer does.
 * A family's unit, if any, must end its name ("_bytes", "_seconds"): it then
 * becomes OpenMetrics' UNIT line.
 *
 * Nothing is dropped silently: a sample whose family could not be made (an
 * invalid name, a name already used with another type) or whose label set
 * is already in its family is counted in @dropped; the caller exports that.
 */
#ifndef DAPTRACE_METRIC_SET_H
#define DAPTRACE_METRIC_SET_H

#include <stddef.h>
#include <stdio.h>

enum metric_type {
	METRIC_GAUGE,
	METRIC_COUNTER,
	METRIC_INFO,		/* value 1, the labels are the information */
};

struct metric_sample {
	char *labels;		/* 'a="x",b="y"' (escaped), or "" */
	double value;
};

struct metric_family {
	char *name;
	char *unit;
	char *help;
	enum metric_type type;
	struct metric_sample *s;
	size_t nr, cap;
};

struct metric_set {
	struct metric_family *f;
	size_t nr, cap;
	unsigned long dropped;	/* samples not added: see above */
};

/* A label set under construction: add pairs, then pass it to mset_add(). */
#define LABELS_MAX	2048
struct labels {
	char buf[LABELS_MAX];
	size_t len;
	int bad;		/* an invalid name or no room: the sample is dropped */
};

void mset_init(struct metric_set *m);
void mset_free(struct metric_set *m);
/*
 * The family @name (found or added).  Returns its index, or -1 when @name
 * is not a valid metric name, is taken by a family of another type, or
 * memory ran out.
 */
int mset_family(struct metric_set *m, const char *name, enum metric_type type,
		const char *unit, const char *help);
/* Add a sample to family @fam (-1 counts as dropped); 0 or -1 if dropped. */
int mset_add(struct metric_set *m, int fam, const struct labels *l, double value);
/* mset_family() + mset_add() for a sample of its own. */
int mset_one(struct metric_set *m, const char *name, enum metric_type type,
	     const char *unit, const char *help, const struct labels *l, double value);

void labels_init(struct labels *l);
/*
 * Append name="value".  The value is escaped (backslash, double quote,
 * newline) and made valid UTF-8: a byte that is not part of a valid UTF-8
 * sequence, and a control character, becomes '?' (a process name is 15
 * bytes cut anywhere, and Prometheus refuses a scrape with invalid UTF-8).
 */
void labels_add(struct labels *l, const char *name, const char *value);
void labels_addf(struct labels *l, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Write the set: @openmetrics 0 is the 0.0.4 text format.  0 or -EIO. */
int mset_write(const struct metric_set *m, int openmetrics, FILE *out);
/* The same into a malloc'd string (its length in *@len); NULL on failure. */
char *mset_render(const struct metric_set *m, int openmetrics, size_t *len);
/* The Content-Type of each format. */
const char *mset_content_type(int openmetrics);
/*
 * Whether an HTTP Accept header asks for OpenMetrics 1.0.0 rather than the
 * text format (q-values compared; no header or no match: the text format).
 */
int mset_accept_openmetrics(const char *accept);

/* Metric / label name rules of Prometheus. */
int metric_name_ok(const char *name);
int label_name_ok(const char *name);
/* @in as a metric name part: [a-z0-9_], other bytes '_', lower case. */
void metric_name_part(const char *in, char *out, size_t len);

#endif
