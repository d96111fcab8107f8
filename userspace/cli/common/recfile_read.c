// SPDX-License-Identifier: GPL-2.0-only
/*
 * Reading record files: libcsv (strict mode) splits rows and fields, this
 * file checks the structure described in recfile.h.  Input is untrusted
 * (a fuzz target): every field is length-capped and every count is checked
 * against what actually arrives, never used to size an allocation up front.
 */
#include <csv.h>
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "grow.h"
#include "recfile.h"
#include "units.h"

#define MAX_FIELDS		32
#define MAX_FIELD_LEN		(64 * 1024)
#define MAX_REGIONS		(4U << 20)	/* per snapshot; kernel: 64 x 20000 */
#define MAX_KV			4096
/* #maps ranges before a #snap row: 4096 reads of 256 */
#define MAX_MAP_RANGES		(1U << 20)
/* #target rows: a machine's processes over a long recording */
#define MAX_TARGET_ROWS		(1U << 20)

enum rec_state { S_MAGIC, S_HEADER, S_BODY, S_TRAILER, S_DONE };

/* Columns a reader knows, found by name in the header row. */
enum rec_col {
	C_TIME, C_SEQ, C_PID, C_START, C_END, C_ACC, C_AGE, C_LABEL,
	C_NR_REQUIRED,
	C_SAMPLES = C_NR_REQUIRED, C_PRESENT, C_NODE0, C_NODE1, C_NODE2,
	C_NODE3, C_PHYS, C_FLAGS, C_UNOBS, C_HUGE, C_NR
};

static const char *const col_names[C_NR] = {
	"time_ns", "seq", "pid", "start", "end", "nr_accesses", "age", "label",
	"nr_samples", "nr_present", "node0", "node1", "node2", "node3",
	"phys_addr", "flags", "nr_unobserved", "nr_huge",
};

struct parse {
	const char *name;
	enum rec_state state;
	unsigned long line;		/* physical line being parsed */
	char *fields[MAX_FIELDS];
	size_t lens[MAX_FIELDS];
	int nr_fields;
	int failed;
	int lenient;			/* --partial: the cut last row is dropped */
	int cut;			/* parsing a last line without its newline */
	int cb_ret;
	char *err;
	size_t errlen;
	struct rec_info *info;
	struct rec_snapshot snap;
	int in_snap;
	int version;			/* of the magic row: 1 or 2 */
	int col[C_NR];			/* field index of each column, -1 if absent */
	int nr_cols;
	int placement;			/* all placement columns present */
	uint32_t got, cap;
	uint64_t last_seq;
	uint32_t meta_sample_us, meta_aggr_us;	/* #meta fallbacks, 0: none */
	struct rec_footprint *fp;	/* #footprint rows for the next #snap */
	uint32_t nr_fp;
	size_t fp_cap;
	struct rec_maps *maps;		/* #maps reads for the next #snap */
	uint32_t nr_maps;
	size_t maps_cap;
	struct rec_range *ranges;	/* their ranges */
	uint32_t nr_ranges;
	size_t ranges_cap;
	int have_probes;		/* a #probes row for the next #snap */
	uint64_t probes_seq;
	struct rec_probes probes;
	rec_snapshot_cb cb;
	void *arg;
};

static void fail(struct parse *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void fail(struct parse *p, const char *fmt, ...)
{
	/* A first line is no record at all, not a cut one. */
	int cut = p->cut && p->state != S_MAGIC;
	va_list ap;
	int n;

	if (p->failed)
		return;
	p->failed = 1;
	n = snprintf(p->err, p->errlen, "%s:%lu: %s", p->name, p->line,
		     cut ? "truncated: the last line is cut short (" : "");
	if (n < 0 || (size_t)n >= p->errlen)
		return;
	va_start(ap, fmt);
	vsnprintf(p->err + n, p->errlen - n, fmt, ap);
	va_end(ap);
	if (cut)
		snprintf(p->err + strlen(p->err), p->errlen - strlen(p->err),
			 "); use --partial to read what is there");
}

static void clear_fields(struct parse *p)
{
	for (int i = 0; i < p->nr_fields && i < MAX_FIELDS; i++)
		free(p->fields[i]);
	p->nr_fields = 0;
}

static void clear_snap(struct parse *p)
{
	for (uint32_t i = 0; i < p->got; i++)
		free(p->snap.regions[i].label);
	p->got = 0;
	p->in_snap = 0;
}

static void on_field(void *data, size_t len, void *arg)
{
	struct parse *p = arg;
	char *s;

	if (p->failed)
		return;
	if (p->nr_fields >= MAX_FIELDS) {
		p->nr_fields++;		/* only counted, reported at row end */
		return;
	}
	if (len > MAX_FIELD_LEN) {
		fail(p, "field of %zu bytes is longer than %d bytes", len, MAX_FIELD_LEN);
		return;
	}
	s = malloc(len + 1);
	if (!s) {
		fail(p, "out of memory");
		return;
	}
	memcpy(s, data ? data : "", len);
	s[len] = '\0';
	p->fields[p->nr_fields] = s;
	p->lens[p->nr_fields] = len;
	p->nr_fields++;
}

static int kv_add(struct parse *p, struct rec_kv **arr, int *nr)
{
	struct rec_kv *a;

	if (p->nr_fields != 3) {
		fail(p, "%s row needs 3 fields, got %d", p->fields[0], p->nr_fields);
		return -1;
	}
	if (*nr >= MAX_KV) {
		fail(p, "more than %d %s rows", MAX_KV, p->fields[0]);
		return -1;
	}
	a = realloc(*arr, (*nr + 1) * sizeof(**arr));
	if (!a) {
		fail(p, "out of memory");
		return -1;
	}
	*arr = a;
	a[*nr].key = p->fields[1];
	a[*nr].value = p->fields[2];
	p->fields[1] = p->fields[2] = NULL;
	(*nr)++;
	return 0;
}

static int num(struct parse *p, int i, const char *what, uint64_t max, uint64_t *v)
{
	if (parse_u64_dec(p->fields[i], v) || *v > max) {
		fail(p, "bad %s '%.40s' (expected a decimal number <= %llu)", what,
		     p->fields[i], (unsigned long long)max);
		return -1;
	}
	return 0;
}

/* The intervals are read as numbers (report_freq()): positive decimals. */
static void meta_row(struct parse *p)
{
	const struct rec_kv *kv;
	uint64_t v;

	if (kv_add(p, &p->info->meta, &p->info->nr_meta))
		return;
	kv = &p->info->meta[p->info->nr_meta - 1];
	if (strcmp(kv->key, "sample_us") && strcmp(kv->key, "aggr_us"))
		return;
	if (parse_u64_dec(kv->value, &v) || !v || v > UINT32_MAX) {
		fail(p, "bad #meta %s '%.40s' (expected a positive decimal number)",
		     kv->key, kv->value);
		return;
	}
	if (!strcmp(kv->key, "sample_us"))
		p->meta_sample_us = (uint32_t)v;
	else
		p->meta_aggr_us = (uint32_t)v;
}

/*
 * The targets by pid: an open-addressing table of indexes into
 * info->targets (+1; 0 is free), the latest row of a pid winning.  Region
 * rows look their pid up, and a recording of a whole machine names
 * thousands of targets.
 */
static size_t hash_pid(pid_t pid, size_t cap)
{
	return ((uint32_t)pid * 2654435761U) & (cap - 1);
}

static int *tindex_slot(const struct rec_info *in, pid_t pid)
{
	size_t i;

	if (!in->tindex_cap)
		return NULL;
	for (i = hash_pid(pid, in->tindex_cap);; i = (i + 1) & (in->tindex_cap - 1)) {
		int *e = &in->tindex[i];

		if (!*e || in->targets[*e - 1].pid == pid)
			return e;
	}
}

static int tindex_set(struct rec_info *in, pid_t pid, int idx)
{
	int *e;

	/* at most half full */
	if (2 * (size_t)(in->nr_targets + 1) > in->tindex_cap) {
		size_t cap = in->tindex_cap ? in->tindex_cap * 2 : 64;
		int *old = in->tindex, *n = calloc(cap, sizeof(*n));
		size_t old_cap = in->tindex_cap;

		if (!n)
			return -1;
		in->tindex = n;
		in->tindex_cap = cap;
		for (size_t i = 0; i < old_cap; i++)
			if (old[i])
				*tindex_slot(in, in->targets[old[i] - 1].pid) = old[i];
		free(old);
	}
	e = tindex_slot(in, pid);
	*e = idx + 1;
	return 0;
}

const struct rec_target *rec_info_target(const struct rec_info *info, pid_t pid)
{
	const int *e = tindex_slot(info, pid);

	return e && *e ? &info->targets[*e - 1] : NULL;
}

static struct rec_target *target_of(struct parse *p, pid_t pid)
{
	return pid ? (struct rec_target *)rec_info_target(p->info, pid) : NULL;
}

static int is_target(struct parse *p, pid_t pid)
{
	return target_of(p, pid) != NULL;
}

/*
 * #target,<pid>,<comm>[,<ppid>,<cgroup>,<time_ns>]: a new target, or the
 * same process with a new comm (it exec'ed), or after its #exit another
 * process with the pid.  Later fields are for later versions.
 */
static void target_row(struct parse *p)
{
	struct rec_info *in = p->info;
	struct rec_target *t;
	uint64_t pid, ppid = 0, time_ns = 0;

	if (p->nr_fields < 3) {
		fail(p, "#target row needs at least 3 fields, got %d", p->nr_fields);
		return;
	}
	if (num(p, 1, "target pid", INT32_MAX, &pid))
		return;
	if (!pid) {
		fail(p, "bad target pid '0'");
		return;
	}
	if (p->nr_fields > 3 && p->lens[3] && num(p, 3, "target ppid", INT32_MAX, &ppid))
		return;
	if (p->nr_fields > 5 && p->lens[5] && num(p, 5, "target time_ns", UINT64_MAX, &time_ns))
		return;
	t = target_of(p, (pid_t)pid);
	if (!t || t->exit_ns != REC_NO_EXIT) {
		if (in->nr_targets >= (int)MAX_TARGET_ROWS) {
			fail(p, "more than %u #target rows", MAX_TARGET_ROWS);
			return;
		}
		t = realloc(in->targets, (in->nr_targets + 1) * sizeof(*t));
		if (!t) {
			fail(p, "out of memory");
			return;
		}
		in->targets = t;
		t = &in->targets[in->nr_targets];
		memset(t, 0, sizeof(*t));
		t->pid = (pid_t)pid;
		t->exit_ns = REC_NO_EXIT;
		t->time_ns = time_ns;
		if (tindex_set(in, t->pid, in->nr_targets)) {
			fail(p, "out of memory");
			return;
		}
		in->nr_targets++;
	}
	free(t->comm);
	t->comm = p->fields[2];
	p->fields[2] = NULL;
	if (ppid)
		t->ppid = (pid_t)ppid;
	if (p->nr_fields > 4 && p->lens[4]) {
		free(t->cgroup);
		t->cgroup = p->fields[4];
		p->fields[4] = NULL;
	}
}

/* #exit,<pid>,<time_ns>[,<why>]: the target left. */
static void exit_row(struct parse *p)
{
	struct rec_target *t;
	uint64_t pid, time_ns;

	if (p->nr_fields < 3) {
		fail(p, "#exit row needs at least 3 fields, got %d", p->nr_fields);
		return;
	}
	if (num(p, 1, "exit pid", INT32_MAX, &pid) ||
	    num(p, 2, "exit time_ns", UINT64_MAX - 1, &time_ns))
		return;
	t = target_of(p, (pid_t)pid);
	if (!t) {
		fail(p, "#exit row of pid %llu, which no #target row names",
		     (unsigned long long)pid);
		return;
	}
	t->exit_ns = time_ns;
	t->moved = p->nr_fields > 3 && !strcmp(p->fields[3], "moved");
}

/* #probes,<seq>,<pages>,<tp>,<fn>,<fp>,<tn>,<unobserved>: for the next #snap. */
static void probes_row(struct parse *p)
{
	static const char *const what[7] = {
		"probes seq", "probe pages", "probes tp", "probes fn",
		"probes fp", "probes tn", "probes unobserved",
	};
	uint64_t v[7];

	if (p->nr_fields != 8) {
		fail(p, "#probes row needs 8 fields, got %d", p->nr_fields);
		return;
	}
	for (int i = 0; i < 7; i++)
		if (num(p, i + 1, what[i], i ? UINT32_MAX : UINT64_MAX, &v[i]))
			return;
	if (v[2] + v[3] + v[4] + v[5] + v[6] != v[1]) {
		fail(p, "#probes row of seq %llu: the counts add up to %llu, not "
		     "its %llu pages", (unsigned long long)v[0],
		     (unsigned long long)(v[2] + v[3] + v[4] + v[5] + v[6]),
		     (unsigned long long)v[1]);
		return;
	}
	p->have_probes = 1;
	p->probes_seq = v[0];
	p->probes = (struct rec_probes){
		.pages = (uint32_t)v[1], .tp = (uint32_t)v[2], .fn = (uint32_t)v[3],
		.fp = (uint32_t)v[4], .tn = (uint32_t)v[5],
		.unobserved = (uint32_t)v[6],
	};
}

/* Room for @need items of @size in *@arr (capacity *@cap); 0, or -1 failed. */
static int grow(struct parse *p, void **arr, size_t *cap, size_t need, size_t size)
{
	if (!grow_array(arr, cap, need, size))
		return 0;
	fail(p, "out of memory");
	return -1;
}

/* #footprint,<pid>,<time_ns>,<vsz>,<rss>: kept for the next snapshot. */
static void footprint_row(struct parse *p)
{
	uint64_t pid, v[3];

	if (p->nr_fields != 5) {
		fail(p, "#footprint row needs 5 fields, got %d", p->nr_fields);
		return;
	}
	if (num(p, 1, "footprint pid", INT32_MAX, &pid) ||
	    num(p, 2, "footprint time_ns", UINT64_MAX, &v[0]) ||
	    num(p, 3, "footprint vsz", UINT64_MAX, &v[1]) ||
	    num(p, 4, "footprint rss", UINT64_MAX, &v[2]))
		return;
	if (!is_target(p, (pid_t)pid)) {
		fail(p, "#footprint row of pid %llu, which no #target row names",
		     (unsigned long long)pid);
		return;
	}
	if (v[2] > v[1]) {
		fail(p, "footprint rss %llu is more than its vsz %llu",
		     (unsigned long long)v[2], (unsigned long long)v[1]);
		return;
	}
	if (p->nr_fp >= MAX_KV) {
		fail(p, "more than %d #footprint rows before a #snap row", MAX_KV);
		return;
	}
	if (grow(p, (void **)&p->fp, &p->fp_cap, p->nr_fp + 1, sizeof(*p->fp)))
		return;
	p->fp[p->nr_fp++] = (struct rec_footprint){
		.pid = (pid_t)pid, .time_ns = v[0], .vsz = v[1], .rss = v[2],
	};
}

/*
 * #maps,<pid>,<time_ns>[,<start>,<end>]...: kept for the next snapshot.
 * A row with the pid and time of the read before it goes on with that read.
 */
static void maps_row(struct parse *p)
{
	struct rec_maps *m = p->nr_maps ? &p->maps[p->nr_maps - 1] : NULL;
	uint64_t pid, time_ns;

	if (p->nr_fields < 3 || (p->nr_fields - 3) % 2) {
		fail(p, "#maps row needs a pid, a time and start,end pairs, got %d fields",
		     p->nr_fields);
		return;
	}
	if (num(p, 1, "maps pid", INT32_MAX, &pid) ||
	    num(p, 2, "maps time_ns", UINT64_MAX, &time_ns))
		return;
	if (!is_target(p, (pid_t)pid)) {
		fail(p, "#maps row of pid %llu, which no #target row names",
		     (unsigned long long)pid);
		return;
	}
	if (!m || m->pid != (pid_t)pid || m->time_ns != time_ns) {
		if (p->nr_maps >= MAX_KV) {
			fail(p, "more than %d maps before a #snap row", MAX_KV);
			return;
		}
		if (grow(p, (void **)&p->maps, &p->maps_cap, p->nr_maps + 1, sizeof(*m)))
			return;
		m = &p->maps[p->nr_maps++];
		*m = (struct rec_maps){ .pid = (pid_t)pid, .time_ns = time_ns,
					.first = p->nr_ranges };
	}
	for (int i = 3; i < p->nr_fields; i += 2) {
		uint64_t a, b;

		if (num(p, i, "maps start", UINT64_MAX, &a) ||
		    num(p, i + 1, "maps end", UINT64_MAX, &b))
			return;
		if (a >= b) {
			fail(p, "maps range %llu-%llu of pid %llu is empty",
			     (unsigned long long)a, (unsigned long long)b,
			     (unsigned long long)pid);
			return;
		}
		if (m->nr && a < p->ranges[p->nr_ranges - 1].end) {
			fail(p, "maps range at %llu of pid %llu is below the end of the one "
			     "before (%llu)", (unsigned long long)a, (unsigned long long)pid,
			     (unsigned long long)p->ranges[p->nr_ranges - 1].end);
			return;
		}
		if (p->nr_ranges >= MAX_MAP_RANGES) {
			fail(p, "more than %u maps ranges before a #snap row", MAX_MAP_RANGES);
			return;
		}
		if (grow(p, (void **)&p->ranges, &p->ranges_cap, p->nr_ranges + 1,
			 sizeof(*p->ranges)))
			return;
		p->ranges[p->nr_ranges++] = (struct rec_range){ a, b };
		m->nr++;
	}
}

static void deliver(struct parse *p)
{
	int ret = 0;

	p->info->nr_snapshots++;
	p->last_seq = p->snap.seq;
	if (p->cb)
		ret = p->cb(p->arg, &p->snap, p->info);
	clear_snap(p);
	p->nr_fp = 0;
	p->nr_maps = 0;
	p->nr_ranges = 0;
	if (ret) {
		p->failed = 1;
		p->cb_ret = ret;
	}
}

static int incomplete(struct parse *p, const char *what)
{
	if (!p->in_snap)
		return 0;
	fail(p, "%s, but snapshot seq %llu (line %lu) has only %u of %u region rows",
	     what, (unsigned long long)p->snap.seq, p->snap.line, p->got,
	     p->snap.nr_regions);
	return 1;
}

static void snap_row(struct parse *p)
{
	struct rec_snapshot *s = &p->snap;
	uint64_t v[9] = { 0 };
	static const char *const what[9] = {
		"seq", "start_ns", "end_ns", "nr_regions", "nr_samples", "flags",
		"missed_before", "sample_us", "aggr_us",
	};
	static const uint64_t max[9] = {
		UINT64_MAX, UINT64_MAX, UINT64_MAX, MAX_REGIONS, UINT32_MAX,
		UINT32_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX,
	};

	if (incomplete(p, "new #snap row"))
		return;
	/* the intervals came later: a row has both or neither */
	if (p->nr_fields != 8 && p->nr_fields != 10) {
		fail(p, "#snap row needs 8 or 10 fields, got %d", p->nr_fields);
		return;
	}
	for (int i = 0; i < p->nr_fields - 1; i++)
		if (num(p, i + 1, what[i], max[i], &v[i]))
			return;
	if (p->nr_fields == 10 && (!v[7] || !v[8] || v[7] > v[8])) {
		fail(p, "snapshot seq %llu: bad intervals sample_us %llu, aggr_us %llu "
		     "(expected 0 < sample_us <= aggr_us)", (unsigned long long)v[0],
		     (unsigned long long)v[7], (unsigned long long)v[8]);
		return;
	}
	if (!v[0] || v[0] <= p->last_seq) {
		fail(p, "snapshot seq %llu does not follow seq %llu",
		     (unsigned long long)v[0], (unsigned long long)p->last_seq);
		return;
	}
	if (v[1] > v[2]) {
		fail(p, "snapshot seq %llu ends before it starts",
		     (unsigned long long)v[0]);
		return;
	}
	s->seq = v[0];
	s->start_ns = v[1];
	s->end_ns = v[2];
	s->nr_regions = (uint32_t)v[3];
	s->nr_samples = (uint32_t)v[4];
	s->flags = (uint32_t)v[5];
	s->missed_before = v[6];
	s->sample_us = v[7] ? (uint32_t)v[7] : p->meta_sample_us;
	s->aggr_us = v[8] ? (uint32_t)v[8] : p->meta_aggr_us;
	s->footprints = p->fp;
	s->nr_footprints = p->nr_fp;
	s->maps = p->maps;
	s->nr_maps = p->nr_maps;
	s->map_ranges = p->ranges;
	s->nr_map_ranges = p->nr_ranges;
	s->line = p->line;
	s->placement = p->placement;
	if (p->have_probes && p->probes_seq != s->seq) {
		fail(p, "#probes row of seq %llu before the #snap row of seq %llu",
		     (unsigned long long)p->probes_seq, (unsigned long long)s->seq);
		return;
	}
	s->has_probes = p->have_probes;
	s->probes = p->probes;
	p->have_probes = 0;
	p->got = 0;
	p->in_snap = 1;
	if (!s->nr_regions)
		deliver(p);
}

/*
 * Placement columns of a region row: all empty (a recording without
 * placement), or counts within the window's samples.
 */
static int placement_cols(struct parse *p, struct rec_region *r)
{
	const int *c = p->col;
	uint64_t v, sum = 0;
	int empty = 1;

	memset(r->node_samples, 0, sizeof(r->node_samples));
	r->nr_present = 0;
	r->nr_huge = 0;
	r->phys_addr = REC_PHYS_NONE;
	if (!p->placement)
		return 0;
	for (int i = C_PRESENT; i <= C_NODE3; i++)
		empty &= !p->lens[c[i]];
	empty &= !p->lens[c[C_PHYS]];
	/* the snapshot's first row decides, the others must agree */
	if (p->got == 1)
		p->snap.placement = !empty;
	else if (p->snap.placement == empty) {
		fail(p, "placement columns empty in only some rows of snapshot seq %llu",
		     (unsigned long long)p->snap.seq);
		return -1;
	}
	if (empty)
		return 0;
	if (num(p, c[C_PRESENT], "nr_present", p->snap.nr_samples, &v))
		return -1;
	r->nr_present = (uint32_t)v;
	for (int n = 0; n < REC_NODES; n++) {
		if (num(p, c[C_NODE0 + n], col_names[C_NODE0 + n], r->nr_present, &v))
			return -1;
		r->node_samples[n] = (uint32_t)v;
		sum += v;
	}
	if (sum > r->nr_present) {
		fail(p, "node samples add up to %llu, more than nr_present %u",
		     (unsigned long long)sum, r->nr_present);
		return -1;
	}
	/* optional: records of modules before it have no such column */
	if (c[C_HUGE] >= 0 && p->lens[c[C_HUGE]]) {
		if (num(p, c[C_HUGE], "nr_huge", r->nr_present, &v))
			return -1;
		r->nr_huge = (uint32_t)v;
	}
	if (p->lens[c[C_PHYS]]) {
		if (num(p, c[C_PHYS], "phys_addr", UINT64_MAX - 1, &v))
			return -1;
		r->phys_addr = v;
	}
	return 0;
}

static void region_row(struct parse *p)
{
	struct rec_snapshot *s = &p->snap;
	struct rec_region *r;
	uint64_t t, seq, pid, start, end, acc, age, v, unobs;
	const int *c = p->col;

	if (!p->in_snap) {
		fail(p, "region row outside a snapshot (no #snap row before it, "
		     "or more rows than its nr_regions)");
		return;
	}
	if (p->nr_fields != p->nr_cols) {
		fail(p, "region row needs %d fields, got %d", p->nr_cols, p->nr_fields);
		return;
	}
	if (num(p, c[C_TIME], "time_ns", UINT64_MAX, &t) ||
	    num(p, c[C_SEQ], "seq", UINT64_MAX, &seq) ||
	    num(p, c[C_PID], "pid", INT32_MAX, &pid) ||
	    num(p, c[C_START], "start", UINT64_MAX, &start) ||
	    num(p, c[C_END], "end", UINT64_MAX, &end) ||
	    num(p, c[C_ACC], "nr_accesses", UINT32_MAX, &acc))
		return;
	/* an empty age is an unknown one, never 0 windows */
	age = 0;
	if (p->lens[c[C_AGE]] && num(p, c[C_AGE], "age", UINT32_MAX, &age))
		return;
	if (c[C_SAMPLES] >= 0) {
		if (num(p, c[C_SAMPLES], "nr_samples", UINT32_MAX, &v))
			return;
		if (v != s->nr_samples) {
			fail(p, "region row nr_samples %llu differs from its #snap "
			     "row's %u", (unsigned long long)v, s->nr_samples);
			return;
		}
	}
	if (seq != s->seq || t != s->end_ns) {
		fail(p, "region row of seq %llu at %llu ns inside snapshot seq %llu "
		     "at %llu ns", (unsigned long long)seq, (unsigned long long)t,
		     (unsigned long long)s->seq, (unsigned long long)s->end_ns);
		return;
	}
	if (start >= end) {
		fail(p, "region start %llu is not below end %llu",
		     (unsigned long long)start, (unsigned long long)end);
		return;
	}
	/* else it would be drawn and counted, yet "not a target" for --pid */
	if (!is_target(p, (pid_t)pid)) {
		fail(p, "region row of pid %llu, which no #target row names",
		     (unsigned long long)pid);
		return;
	}
	v = 0;
	if (c[C_FLAGS] >= 0 && p->lens[c[C_FLAGS]] &&
	    num(p, c[C_FLAGS], "flags", UINT32_MAX, &v))
		return;
	unobs = 0;
	if (c[C_UNOBS] >= 0 && p->lens[c[C_UNOBS]] &&
	    num(p, c[C_UNOBS], "nr_unobserved", s->nr_samples ? s->nr_samples : UINT32_MAX,
		&unobs))
		return;
	/* A window without a sample count (older records) has no bound. */
	if (s->nr_samples && acc > s->nr_samples) {
		fail(p, "nr_accesses %llu is more than the window's %u samples",
		     (unsigned long long)acc, s->nr_samples);
		return;
	}
	if (p->got == p->cap) {
		uint32_t cap = p->cap ? p->cap * 2 : 64;

		r = realloc(s->regions, (size_t)cap * sizeof(*r));
		if (!r) {
			fail(p, "out of memory");
			return;
		}
		s->regions = r;
		p->cap = cap;
	}
	r = &s->regions[p->got++];
	r->start = start;
	r->end = end;
	r->nr_accesses = (uint32_t)acc;
	r->age = (uint32_t)age;
	r->age_unknown = !p->lens[c[C_AGE]];
	r->pid = (pid_t)pid;
	r->flags = (uint32_t)v;
	r->nr_unobserved = (uint32_t)unobs;
	r->label = p->fields[c[C_LABEL]];
	p->fields[c[C_LABEL]] = NULL;
	if (placement_cols(p, r)) {
		p->got--;
		free(r->label);
		return;
	}
	if (p->got == s->nr_regions)
		deliver(p);
}

/* v1: exactly REC_COLUMNS_V1; v2: columns by name, the required ones once. */
static int column_header(struct parse *p)
{
	char hdr[sizeof(REC_COLUMNS_V1) + 16] = "";
	size_t len = 0;
	int i, k;

	for (k = 0; k < C_NR; k++)
		p->col[k] = -1;
	p->nr_cols = p->nr_fields;
	if (p->version == 1) {
		for (i = 0; i < p->nr_fields && len < sizeof(hdr); i++)
			len += snprintf(hdr + len, sizeof(hdr) - len, "%s%s",
					i ? "," : "", p->fields[i]);
		if (strcmp(hdr, REC_COLUMNS_V1)) {
			fail(p, "expected the column header '%s'", REC_COLUMNS_V1);
			return -1;
		}
		for (k = 0; k < C_NR_REQUIRED; k++)
			p->col[k] = k;
		p->placement = 0;
		return 0;
	}
	for (i = 0; i < p->nr_fields; i++)
		for (k = 0; k < C_NR; k++) {
			if (strcmp(p->fields[i], col_names[k]))
				continue;
			if (p->col[k] >= 0) {
				fail(p, "column '%s' appears twice", col_names[k]);
				return -1;
			}
			p->col[k] = i;
		}
	for (k = 0; k < C_NR_REQUIRED; k++)
		if (p->col[k] < 0) {
			fail(p, "the column header lacks the column '%s'", col_names[k]);
			return -1;
		}
	p->placement = 1;
	for (k = C_PRESENT; k <= C_PHYS; k++)
		if (p->col[k] < 0)
			p->placement = 0;
	return 0;
}

/*
 * #regret,<scheme>,<name>,<method>,<cgroup>,<acted>,<unknown_calls>,
 * (<window_us>,<checked>,<back>,<unknown>)...
 */
static void regret_row(struct parse *p)
{
	struct rec_regret r = { 0 }, *a;
	uint64_t v;

	if (p->nr_fields < 11 || (p->nr_fields - 7) % 4 ||
	    (p->nr_fields - 7) / 4 > REC_REGRET_WINDOWS) {
		fail(p, "#regret row needs 7 fields and 1 to %d groups of 4, got %d fields",
		     REC_REGRET_WINDOWS, p->nr_fields);
		return;
	}
	if (num(p, 1, "regret scheme", INT32_MAX, &v) ||
	    num(p, 5, "regret acted bytes", UINT64_MAX, &r.acted) ||
	    num(p, 6, "regret unknown calls", UINT64_MAX, &r.unknown_calls))
		return;
	r.scheme = (uint32_t)v;
	r.nr_windows = (p->nr_fields - 7) / 4;
	for (int w = 0; w < r.nr_windows; w++) {
		int i = 7 + 4 * w;

		if (num(p, i, "regret window_us", UINT64_MAX, &r.w[w].us) ||
		    num(p, i + 1, "regret checked bytes", UINT64_MAX, &r.w[w].checked) ||
		    num(p, i + 2, "regret back bytes", UINT64_MAX, &r.w[w].back) ||
		    num(p, i + 3, "regret unknown bytes", UINT64_MAX, &r.w[w].unknown))
			return;
		if (!r.w[w].us || (w && r.w[w].us <= r.w[w - 1].us)) {
			fail(p, "#regret windows must be positive and ascending, got %llu",
			     (unsigned long long)r.w[w].us);
			return;
		}
		if (r.w[w].back > r.w[w].checked ||
		    r.w[w].unknown > r.acted || r.w[w].checked > r.acted - r.w[w].unknown) {
			fail(p, "#regret window %llu us: back %llu, checked %llu and unknown "
			     "%llu do not fit in acted %llu", (unsigned long long)r.w[w].us,
			     (unsigned long long)r.w[w].back, (unsigned long long)r.w[w].checked,
			     (unsigned long long)r.w[w].unknown, (unsigned long long)r.acted);
			return;
		}
	}
	if (p->info->nr_regret >= MAX_KV) {
		fail(p, "more than %d #regret rows", MAX_KV);
		return;
	}
	a = realloc(p->info->regret, (p->info->nr_regret + 1) * sizeof(*a));
	if (!a) {
		fail(p, "out of memory");
		return;
	}
	p->info->regret = a;
	r.name = p->fields[2];
	r.method = p->fields[3];
	r.cgroup = p->fields[4];
	p->fields[2] = p->fields[3] = p->fields[4] = NULL;
	a[p->info->nr_regret++] = r;
}

static int is_tag(const struct parse *p, const char *tag)
{
	return !strcmp(p->fields[0], tag);
}

static void on_row(int c, void *arg)
{
	struct parse *p = arg;

	(void)c;
	if (p->failed)
		goto out;
	if (p->nr_fields > MAX_FIELDS) {
		fail(p, "row has %d fields (max %d)", p->nr_fields, MAX_FIELDS);
		goto out;
	}
	if (p->nr_fields == 0 || (p->nr_fields == 1 && !p->lens[0]))
		goto out;	/* blank line */
	if (p->lenient && !(p->nr_fields == 1 && is_tag(p, "#eof")))
		goto out;	/* a cut row: its snapshot stays incomplete */

	switch (p->state) {
	case S_MAGIC:
		if (p->nr_fields == 1 && !strcmp(p->fields[0], REC_MAGIC)) {
			p->version = 2;
			p->state = S_HEADER;
		} else if (p->nr_fields == 1 && !strcmp(p->fields[0], REC_MAGIC_V1)) {
			p->version = 1;
			p->state = S_HEADER;
		}
		else if (!strncmp(p->fields[0], "# daptrace-record ", 18))
			fail(p, "unsupported record version '%.40s' (this daptrace "
			     "reads v1 and v2)", p->fields[0] + 18);
		else
			fail(p, "not a daptrace record (first row must be '%s')",
			     REC_MAGIC);
		break;
	case S_HEADER:
		if (is_tag(p, "#meta")) {
			meta_row(p);
		} else if (is_tag(p, "#target")) {
			target_row(p);
		} else if (p->fields[0][0] == '#') {
			/* comment */
		} else if (!column_header(p)) {
			p->state = S_BODY;
		}
		break;
	case S_BODY:
		if (is_tag(p, "#snap")) {
			snap_row(p);
		} else if (is_tag(p, "#end")) {
			if (!incomplete(p, "#end row") &&
			    !kv_add(p, &p->info->trailer, &p->info->nr_trailer))
				p->state = S_TRAILER;
		} else if (is_tag(p, "#eof")) {
			if (!incomplete(p, "#eof row"))
				p->state = S_DONE;
		} else if (is_tag(p, "#target")) {
			if (!incomplete(p, "#target row"))
				target_row(p);
		} else if (is_tag(p, "#footprint")) {
			if (!incomplete(p, "#footprint row"))
				footprint_row(p);
		} else if (is_tag(p, "#maps")) {
			if (!incomplete(p, "#maps row"))
				maps_row(p);
		} else if (is_tag(p, "#probes")) {
			if (!incomplete(p, "#probes row"))
				probes_row(p);
		} else if (is_tag(p, "#exit")) {
			if (!incomplete(p, "#exit row"))
				exit_row(p);
		} else if (is_tag(p, "#regret")) {
			if (!incomplete(p, "#regret row"))
				regret_row(p);
		} else if (p->fields[0][0] == '#') {
			/* comment, or a row of a later version */
		} else {
			region_row(p);
		}
		break;
	case S_TRAILER:
		if (is_tag(p, "#end"))
			kv_add(p, &p->info->trailer, &p->info->nr_trailer);
		else if (is_tag(p, "#eof"))
			p->state = S_DONE;
		else if (p->fields[0][0] != '#')
			fail(p, "data row after the #end trailer");
		break;
	case S_DONE:
		fail(p, "data after the #eof row");
		break;
	}
out:
	clear_fields(p);
}

static int finish(struct parse *p, int allow_partial)
{
	if (p->failed)
		return -1;
	p->info->complete = p->state == S_DONE;
	if (p->state == S_DONE)
		return 0;
	if (p->state == S_MAGIC) {
		fail(p, "empty file, not a daptrace record");
		return -1;
	}
	if (p->state == S_HEADER) {
		fail(p, "truncated: the file ends inside the header");
		return -1;
	}
	if (allow_partial)
		return 0;
	if (p->in_snap)
		fail(p, "truncated: snapshot seq %llu (line %lu) has only %u of %u "
		     "region rows (recording interrupted?)",
		     (unsigned long long)p->snap.seq, p->snap.line, p->got,
		     p->snap.nr_regions);
	else
		fail(p, "truncated: no #eof row at the end (recording interrupted? "
		     "use --partial to read what is there)");
	return -1;
}

int rec_read(FILE *f, const char *name, int allow_partial, rec_snapshot_cb cb,
	     void *arg, struct rec_info *info, char *err, size_t errlen)
{
	struct csv_parser csv;
	struct parse p = {
		.name = name, .err = err, .errlen = errlen, .info = info,
		.cb = cb, .arg = arg,
	};
	char *line = NULL;
	size_t cap = 0;
	ssize_t len, last = 0;
	int ret;

	memset(info, 0, sizeof(*info));
	if (errlen)
		err[0] = '\0';
	if (csv_init(&csv, CSV_STRICT | CSV_STRICT_FINI | CSV_APPEND_NULL)) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -1;
	}
	/* feed line by line so errors can name the physical line */
	while (!p.failed && (len = getline(&line, &cap, f)) > 0) {
		last = len;
		p.line++;
		if ((size_t)len > 4 * MAX_FIELD_LEN) {
			fail(&p, "line of %zd bytes is too long", len);
			break;
		}
		if (csv_parse(&csv, line, len, on_field, on_row, &p) != (size_t)len) {
			fail(&p, "malformed CSV (a quote inside an unquoted field, or "
			     "text after a closing quote)");
			break;
		}
		if (csv.entry_pos > MAX_FIELD_LEN)
			fail(&p, "quoted field longer than %d bytes", MAX_FIELD_LEN);
	}
	if (!p.failed && ferror(f))
		fail(&p, "read error: %s", strerror(errno));
	/*
	 * A last line without its newline is a row cut short (killed
	 * recorder); with --partial it is dropped, whatever it was cut
	 * inside: a quoted label, a number, the #snap row.
	 */
	if (allow_partial && last && line[last - 1] != '\n' && !p.failed) {
		p.lenient = 1;
		csv_fini(&csv, on_field, on_row, &p);
	}
	/* Without it, the cut row is read (a complete "#eof" is fine). */
	p.cut = !p.lenient && last && line[last - 1] != '\n';
	if (!p.failed && !p.lenient && csv_fini(&csv, on_field, on_row, &p))
		fail(&p, "malformed CSV at end of file (unterminated quote)");
	p.cut = 0;
	free(line);
	csv_free(&csv);
	clear_fields(&p);
	p.lenient = 0;
	ret = finish(&p, allow_partial);
	clear_snap(&p);
	free(p.snap.regions);
	free(p.fp);
	free(p.maps);
	free(p.ranges);
	if (p.cb_ret)
		return p.cb_ret;
	return ret;
}

static const char *kv_get(const struct rec_kv *kv, int nr, const char *key)
{
	for (int i = nr - 1; i >= 0; i--)
		if (!strcmp(kv[i].key, key))
			return kv[i].value;
	return NULL;
}

const char *rec_info_get(const struct rec_info *info, const char *key)
{
	return kv_get(info->meta, info->nr_meta, key);
}

const char *rec_info_trailer(const struct rec_info *info, const char *key)
{
	return kv_get(info->trailer, info->nr_trailer, key);
}

static void kv_free(struct rec_kv *kv, int nr)
{
	for (int i = 0; i < nr; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
	free(kv);
}

void rec_info_free(struct rec_info *info)
{
	kv_free(info->meta, info->nr_meta);
	kv_free(info->trailer, info->nr_trailer);
	for (int i = 0; i < info->nr_targets; i++) {
		free(info->targets[i].comm);
		free(info->targets[i].cgroup);
	}
	free(info->targets);
	free(info->tindex);
	for (int i = 0; i < info->nr_regret; i++) {
		free(info->regret[i].name);
		free(info->regret[i].method);
		free(info->regret[i].cgroup);
	}
	free(info->regret);
	memset(info, 0, sizeof(*info));
}
