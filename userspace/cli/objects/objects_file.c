// SPDX-License-Identifier: GPL-2.0-only
/*
 * The objects side file, CSV through libcsv:
 *
 *   # daptrace-objects v1
 *   #meta,<key>,<value>          notes: pid, linkage, tracer, partial, counts
 *   kind,name,start,end,size,alloc_ns,free_ns,tid,callsite,function,source,module
 *   <one row per structure>      free_ns empty: alive at the end
 *   #eof
 *
 * Addresses decimal, [start, end); times ns since the record started.
 */
#include <csv.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "objects.h"
#include "common/units.h"

#define NR_COLS 12

char *obj_side_path(const char *record)
{
	size_t len = strlen(record);
	char *s = malloc(len + sizeof(".objects.csv"));

	if (!s)
		return NULL;
	strcpy(s, record);
	if (len > 4 && !strcmp(s + len - 4, ".csv"))
		s[len - 4] = '\0';
	strcat(s, ".objects.csv");
	return s;
}

static void put(FILE *f, const char *s, int last)
{
	csv_fwrite(f, s ? s : "", s ? strlen(s) : 0);
	fputc(last ? '\n' : ',', f);
}

int obj_write(FILE *f, const struct obj_set *s)
{
	fputs(OBJ_MAGIC "\n", f);
	for (size_t i = 0; i < s->nr_meta; i++) {
		fputs("#meta,", f);
		put(f, s->meta_keys[i], 0);
		put(f, s->meta_vals[i], 1);
	}
	fputs(OBJ_COLUMNS "\n", f);
	for (size_t i = 0; i < s->n; i++) {
		const struct obj *o = &s->v[i];
		char fr[24] = "";

		if (o->free_ns >= 0)
			snprintf(fr, sizeof(fr), "%" PRId64, o->free_ns);
		fprintf(f, "%s,", obj_kind_name(o->kind));
		put(f, o->name ? o->name : "?", 0);
		fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRId64 ",%s,%d,%#" PRIx64 ",",
			o->start, o->end, o->end - o->start, o->alloc_ns, fr, (int)o->tid,
			o->site);
		put(f, o->function, 0);
		put(f, o->source, 0);
		put(f, o->module, 1);
	}
	fputs("#eof\n", f);
	return fflush(f) || ferror(f) ? -EIO : 0;
}

struct reader {
	struct obj_set *s;
	char *f[NR_COLS];
	int nf;
	unsigned long line;
	int state;			/* 0 magic, 1 meta/columns, 2 rows, 3 eof */
	char *err;
	size_t errlen;
	int failed;
};

static void on_field(void *data, size_t len, void *arg)
{
	struct reader *r = arg;

	if (r->nf < NR_COLS)
		r->f[r->nf] = strndup(data, len);
	r->nf++;
}

/* At most @max, decimal: a sign or a base prefix is garbage here. */
static int dec(const char *s, uint64_t max, uint64_t *v)
{
	return parse_u64_dec(s, v) || *v > max ? -EINVAL : 0;
}

/* The call site, as written: "0" or "0x" and hex digits. */
static int site_hex(const char *s, uint64_t *v)
{
	char *end;

	if (!strcmp(s, "0")) {
		*v = 0;
		return 0;
	}
	if (strncmp(s, "0x", 2) || !isxdigit((unsigned char)s[2]))
		return -EINVAL;
	errno = 0;
	*v = strtoull(s + 2, &end, 16);
	return errno || *end ? -EINVAL : 0;
}

static int row(struct reader *r)
{
	uint64_t start, end, size, alloc, fr = 0, tid, site;
	enum obj_kind k;
	struct obj *o;

	if (r->nf == 1 && !strcmp(r->f[0], "#eof")) {
		r->state = 3;
		return 0;
	}
	if (r->state == 3)
		return -EINVAL;		/* rows after #eof */
	if (r->state == 0)
		return strcmp(r->f[0], OBJ_MAGIC) ? -EINVAL : (r->state = 1, 0);
	if (r->nf == 3 && !strcmp(r->f[0], "#meta"))
		return obj_meta_set(r->s, r->f[1], "%s", r->f[2]);
	if (r->f[0][0] == '#')
		return 0;		/* a comment */
	if (r->state == 1)
		return r->nf == NR_COLS && !strcmp(r->f[0], "kind") ? (r->state = 2, 0) : -EINVAL;
	if (r->nf != NR_COLS || obj_kind_parse(r->f[0], &k) ||
	    dec(r->f[2], UINT64_MAX, &start) || dec(r->f[3], UINT64_MAX, &end) ||
	    dec(r->f[4], UINT64_MAX, &size) || dec(r->f[5], INT64_MAX, &alloc) ||
	    (r->f[6][0] && dec(r->f[6], INT64_MAX, &fr)) ||
	    dec(r->f[7], INT32_MAX, &tid) || site_hex(r->f[8], &site) ||
	    end <= start || size != end - start || (r->f[6][0] && fr < alloc))
		return -EINVAL;
	o = obj_add(r->s);
	if (!o)
		return -ENOMEM;
	o->kind = k;
	o->start = start;
	o->end = end;
	o->alloc_ns = (int64_t)alloc;
	o->free_ns = r->f[6][0] ? (int64_t)fr : -1;
	o->tid = (pid_t)tid;
	o->site = site;
	o->name = r->f[1];
	r->f[1] = NULL;
	o->function = r->f[9][0] ? r->f[9] : NULL;
	o->source = r->f[10][0] ? r->f[10] : NULL;
	o->module = r->f[11][0] ? r->f[11] : NULL;
	for (int i = 9; i < NR_COLS; i++)
		if (r->f[i] && r->f[i][0])
			r->f[i] = NULL;
	return 0;
}

static void on_row(int c, void *arg)
{
	struct reader *r = arg;
	int nf = r->nf < NR_COLS ? r->nf : NR_COLS;

	(void)c;
	r->line++;
	if (!r->failed && row(r)) {
		r->failed = 1;
		snprintf(r->err, r->errlen, "line %lu: not a valid objects row", r->line);
	}
	for (int i = 0; i < nf; i++) {
		free(r->f[i]);
		r->f[i] = NULL;
	}
	r->nf = 0;
}

int obj_read_path(const char *path, struct obj_set *s, char *err, size_t errlen)
{
	struct reader r = { .s = s, .err = err, .errlen = errlen };
	struct csv_parser csv;
	char buf[65536];
	size_t n;
	FILE *f = fopen(path, "re");
	char sub[256];

	if (!f) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (csv_init(&csv, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL)) {
		fclose(f);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	while (!r.failed && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		if (csv_parse(&csv, buf, n, on_field, on_row, &r) != n && !r.failed) {
			r.failed = 1;
			snprintf(err, errlen, "line %lu: %s", r.line + 1,
				 csv_strerror(csv_error(&csv)));
		}
	if (!r.failed && csv_fini(&csv, on_field, on_row, &r) && !r.failed) {
		r.failed = 1;
		snprintf(err, errlen, "line %lu: %s", r.line + 1, csv_strerror(csv_error(&csv)));
	}
	csv_free(&csv);
	fclose(f);
	if (!r.failed && r.state != 3) {
		r.failed = 1;
		snprintf(err, errlen, "no #eof: the file is cut short");
	}
	if (r.failed) {
		snprintf(sub, sizeof(sub), "%s", err);
		snprintf(err, errlen, "%s: %s", path, sub);
		return -1;
	}
	return 0;
}
