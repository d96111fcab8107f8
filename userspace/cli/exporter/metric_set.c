// SPDX-License-Identifier: GPL-2.0-only
/*
 * Metric families and the two exposition formats (see metric_set.h).
 * Format references: Prometheus' "Exposition formats" (text 0.0.4) and the
 * OpenMetrics 1.0.0 specification.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "metric_set.h"

void mset_init(struct metric_set *m)
{
	memset(m, 0, sizeof(*m));
}

void mset_free(struct metric_set *m)
{
	for (size_t i = 0; i < m->nr; i++) {
		struct metric_family *f = &m->f[i];

		for (size_t j = 0; j < f->nr; j++)
			free(f->s[j].labels);
		free(f->s);
		free(f->name);
		free(f->unit);
		free(f->help);
	}
	free(m->f);
	mset_init(m);
}

static int name_char(int c, int first, int colon)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (colon && c == ':') || (!first && c >= '0' && c <= '9');
}

int metric_name_ok(const char *name)
{
	if (!name || !*name)
		return 0;
	for (const char *p = name; *p; p++)
		if (!name_char((unsigned char)*p, p == name, 1))
			return 0;
	return 1;
}

int label_name_ok(const char *name)
{
	if (!name || !*name || !strncmp(name, "__", 2))	/* __ is Prometheus' own */
		return 0;
	for (const char *p = name; *p; p++)
		if (!name_char((unsigned char)*p, p == name, 0))
			return 0;
	return 1;
}

void metric_name_part(const char *in, char *out, size_t len)
{
	size_t n = 0;

	if (!len)
		return;
	for (; *in && n + 1 < len; in++) {
		int c = (unsigned char)*in;

		if (c >= 'A' && c <= 'Z')
			c += 'a' - 'A';
		out[n++] = (char)(name_char(c, 0, 0) ? c : '_');
	}
	out[n] = '\0';
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && !strcmp(s + a - b, suffix);
}

int mset_family(struct metric_set *m, const char *name, enum metric_type type,
		const char *unit, const char *help)
{
	struct metric_family *f;

	for (size_t i = 0; i < m->nr; i++)
		if (!strcmp(m->f[i].name, name))
			return m->f[i].type == type ? (int)i : -1;
	if (!metric_name_ok(name) || (type == METRIC_COUNTER && !ends_with(name, "_total")) ||
	    (type == METRIC_INFO && !ends_with(name, "_info")))
		return -1;
	if (m->nr == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		struct metric_family *n = realloc(m->f, cap * sizeof(*n));

		if (!n)
			return -1;
		m->f = n;
		m->cap = cap;
	}
	f = &m->f[m->nr];
	memset(f, 0, sizeof(*f));
	f->type = type;
	f->name = strdup(name);
	f->unit = strdup(unit ? unit : "");
	f->help = strdup(help ? help : "");
	if (!f->name || !f->unit || !f->help) {
		free(f->name);
		free(f->unit);
		free(f->help);
		return -1;
	}
	return (int)m->nr++;
}

int mset_add(struct metric_set *m, int fam, const struct labels *l, double value)
{
	const char *labels = l ? l->buf : "";
	struct metric_family *f;

	if (fam < 0 || (size_t)fam >= m->nr || (l && l->bad))
		goto drop;
	f = &m->f[fam];
	/* one sample per label set, or the scraper refuses the whole scrape */
	for (size_t i = 0; i < f->nr; i++)
		if (!strcmp(f->s[i].labels, labels))
			goto drop;
	if (f->nr == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 8;
		struct metric_sample *n = realloc(f->s, cap * sizeof(*n));

		if (!n)
			goto drop;
		f->s = n;
		f->cap = cap;
	}
	f->s[f->nr].labels = strdup(labels);
	if (!f->s[f->nr].labels)
		goto drop;
	f->s[f->nr++].value = value;
	return 0;
drop:
	m->dropped++;
	return -1;
}

int mset_one(struct metric_set *m, const char *name, enum metric_type type,
	     const char *unit, const char *help, const struct labels *l, double value)
{
	return mset_add(m, mset_family(m, name, type, unit, help), l, value);
}

void labels_init(struct labels *l)
{
	l->buf[0] = '\0';
	l->len = 0;
	l->bad = 0;
}

static void put(struct labels *l, char c)
{
	if (l->len + 1 >= sizeof(l->buf)) {
		l->bad = 1;
		return;
	}
	l->buf[l->len++] = c;
	l->buf[l->len] = '\0';
}

/* Length of the valid UTF-8 sequence at @s (1-4), or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	unsigned char lo = 0x80, hi = 0xbf;
	int n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* no overlong forms, no surrogates, nothing above U+10FFFF */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (int i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

void labels_add(struct labels *l, const char *name, const char *value)
{
	const unsigned char *v = (const unsigned char *)(value ? value : "");

	if (!label_name_ok(name)) {
		l->bad = 1;
		return;
	}
	if (l->len)
		put(l, ',');
	for (const char *p = name; *p; p++)
		put(l, *p);
	put(l, '=');
	put(l, '"');
	while (*v) {
		int n = utf8_len(v);

		if (n == 1 && (*v < 0x20 || *v == 0x7f)) {
			put(l, '?');
		} else if (n == 1 && (*v == '\\' || *v == '"')) {
			put(l, '\\');
			put(l, (char)*v);
		} else if (n) {
			for (int i = 0; i < n; i++)
				put(l, (char)v[i]);
			v += n;
			continue;
		} else {
			put(l, '?');
		}
		v++;
	}
	put(l, '"');
}

void labels_addf(struct labels *l, const char *name, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		l->bad = 1;
		return;
	}
	labels_add(l, name, buf);
}

/* The shortest of %.15g / %.17g that reads back as @v; integers as such. */
static void put_value(FILE *out, double v)
{
	char buf[64];

	if (isnan(v)) {
		fputs("NaN", out);
		return;
	}
	if (isinf(v)) {
		fputs(v > 0 ? "+Inf" : "-Inf", out);
		return;
	}
	if (v == floor(v) && fabs(v) < 0x1p53) {
		fprintf(out, "%" PRId64, (int64_t)v);
		return;
	}
	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fputs(buf, out);
}

/* HELP text: backslash and newline escaped; OpenMetrics also the quote. */
static void put_help(FILE *out, const char *s, int openmetrics)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", out);
		else if (*s == '\n')
			fputs("\\n", out);
		else if (*s == '"' && openmetrics)
			fputs("\\\"", out);
		else
			fputc(*s, out);
	}
}

static const char *type_name(enum metric_type t, int openmetrics)
{
	switch (t) {
	case METRIC_COUNTER:
		return "counter";
	case METRIC_INFO:
		return openmetrics ? "info" : "gauge";
	default:
		return "gauge";
	}
}

int mset_write(const struct metric_set *m, int openmetrics, FILE *out)
{
	for (size_t i = 0; i < m->nr; i++) {
		const struct metric_family *f = &m->f[i];
		size_t len = strlen(f->name);
		const char *suffix = "";

		if (!f->nr)
			continue;
		/* OpenMetrics: the family is "foo", its counter sample "foo_total" */
		if (openmetrics && f->type == METRIC_COUNTER) {
			len -= strlen("_total");
			suffix = "_total";
		} else if (openmetrics && f->type == METRIC_INFO) {
			len -= strlen("_info");
			suffix = "_info";
		}
		fprintf(out, "# HELP %.*s ", (int)len, f->name);
		put_help(out, f->help, openmetrics);
		fprintf(out, "\n# TYPE %.*s %s\n", (int)len, f->name,
			type_name(f->type, openmetrics));
		if (openmetrics && *f->unit) {
			size_t ul = strlen(f->unit);

			/* a unit must end the family's name, else no UNIT line */
			if (len > ul + 1 && f->name[len - ul - 1] == '_' &&
			    !strncmp(f->name + len - ul, f->unit, ul))
				fprintf(out, "# UNIT %.*s %s\n", (int)len, f->name, f->unit);
		}
		for (size_t j = 0; j < f->nr; j++) {
			fprintf(out, "%.*s%s", (int)len, f->name, suffix);
			if (*f->s[j].labels)
				fprintf(out, "{%s}", f->s[j].labels);
			fputc(' ', out);
			put_value(out, f->s[j].value);
			fputc('\n', out);
		}
	}
	if (openmetrics)
		fputs("# EOF\n", out);
	return ferror(out) ? -EIO : 0;
}

const char *mset_content_type(int openmetrics)
{
	return openmetrics ? "application/openmetrics-text; version=1.0.0; charset=utf-8" :
			     "text/plain; version=0.0.4; charset=utf-8";
}

/* One media range of an Accept header: its type, q and version. */
static void media_range(const char *s, size_t len, double *q_om, double *q_text)
{
	char buf[256], *save = NULL, *tok, *type;
	const char *version = NULL;
	double q = 1;

	if (len >= sizeof(buf))
		return;
	memcpy(buf, s, len);
	buf[len] = '\0';
	type = strtok_r(buf, ";", &save);
	if (!type)
		return;
	type += strspn(type, " \t");
	type[strcspn(type, " \t")] = '\0';
	while ((tok = strtok_r(NULL, ";", &save))) {
		char *eq, *end;

		tok += strspn(tok, " \t");
		eq = strchr(tok, '=');
		if (!eq)
			continue;
		*eq++ = '\0';
		eq[strcspn(eq, " \t")] = '\0';
		if (!strcasecmp(tok, "q")) {
			q = strtod(eq, &end);
			if (end == eq || *end || q < 0 || q > 1)
				return;		/* a broken range counts for nothing */
		} else if (!strcasecmp(tok, "version")) {
			version = eq;
		}
	}
	if (!strcasecmp(type, "application/openmetrics-text")) {
		/* only 1.0.0 is written; the 0.0.1 draft differs */
		if ((!version || !strcmp(version, "1.0.0")) && q > *q_om)
			*q_om = q;
	} else if (!strcasecmp(type, "text/plain") || !strcasecmp(type, "text/*") ||
		   !strcmp(type, "*/*")) {
		if ((!version || !strcmp(version, "0.0.4")) && q > *q_text)
			*q_text = q;
	}
}

int mset_accept_openmetrics(const char *accept)
{
	double q_om = 0, q_text = 0;

	if (!accept)
		return 0;
	while (*accept) {
		size_t len = strcspn(accept, ",");

		media_range(accept, len, &q_om, &q_text);
		accept += len;
		if (*accept == ',')
			accept++;
	}
	return q_om > 0 && q_om > q_text;
}

char *mset_render(const struct metric_set *m, int openmetrics, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	if (mset_write(m, openmetrics, f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}
