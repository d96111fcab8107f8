// SPDX-License-Identifier: GPL-2.0-only
/*
 * `perf script` (or `trace-cmd report`) text of damon:damon_aggregated or
 * daptrace:daptrace_aggregated (import.h), one region per line:
 *
 *   kdamond.0  4452 [000] 82820.952659: damon:damon_aggregated: \
 *           target_id=0 nr_regions=8 94253027950592-94253031862272: 0 3
 *
 * that is "<timestamp>: <event>: target_id=N nr_regions=N START-END:
 * NR_ACCESSES [AGE]" (kernels before 5.16 print no age).  A target's
 * window is its next nr_regions lines; damon_monitor_intervals_tune lines
 * ("sample_us=N") set the sampling interval of the windows after them.
 * Other events (damos_before_apply, anything else perf recorded) are
 * skipped and counted; a damon_aggregated line that does not parse is an
 * error naming its line.  A window the trace cut short at its end is
 * dropped and counted.
 *
 * Windows are counted out by nr_regions, so one lost line would slide
 * every later region into the wrong window.  DAMON traces a target's
 * regions in address order, all in one go, before the next target's: a
 * region below the previous one's end, another target's region from the
 * same kdamond, or a gap in time longer than half a sampling interval
 * (at least 1 ms) before a window has its nr_regions lines is an error
 * naming both lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "import.h"

#define MAX_TOKENS	16

struct open_window {
	int target;
	size_t snap;			/* index in m->snaps, or SIZE_MAX: none */
	uint32_t want;			/* nr_regions */
	unsigned long line;		/* of its first region */
	unsigned long last_line;	/* of its latest region */
	uint64_t last_t_ns;		/* that line's timestamp */
	uint64_t last_end;		/* that region's end */
	char thread[64];		/* the kdamond that traced it */
};

/* A window still waiting for regions, and the line that opened it. */
static int incomplete(struct imp *m, const struct open_window *w, unsigned long line,
		      const char *what)
{
	return imp_fail(m, "line %lu: %s, but the window opened at line %lu (target_id=%"
			PRIu64 " nr_regions=%u) has only %u regions, the last at line %lu: a "
			"line is missing", line, what, w->line, m->target_ids[w->target], w->want,
			m->snaps[w->snap].nr, w->last_line);
}

static int is_event(const char *tok, const char *name)
{
	size_t l = strlen(name);

	/* "damon:damon_aggregated:" (perf) or "damon_aggregated:" (trace-cmd) */
	if (!strncmp(tok, "damon:", 6) || !strncmp(tok, "daptrace:", 9))
		tok = strchr(tok, ':') + 1;
	return !strncmp(tok, name, l) && !strcmp(tok + l, ":");
}

static int num_after(const char *tok, const char *key, uint64_t *v)
{
	size_t l = strlen(key);
	char *end;

	if (strncmp(tok, key, l))
		return -1;
	errno = 0;
	*v = strtoull(tok + l, &end, 10);
	return errno || end == tok + l || *end || tok[l] == '-' ? -1 : 0;
}

static int parse_u32(const char *s, uint32_t *v)
{
	char *end;
	unsigned long long n;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-' || n > UINT32_MAX)
		return -1;
	*v = (uint32_t)n;
	return 0;
}

/* "82820.952659:" -> ns */
static int parse_time(const char *tok, uint64_t *ns)
{
	char *end;
	double s;

	errno = 0;
	s = strtod(tok, &end);
	if (errno || end == tok || strcmp(end, ":") || !(s >= 0) || s > 1e10)
		return -1;
	*ns = (uint64_t)(s * 1e9 + 0.5);
	return 0;
}

static struct open_window *window_of(struct open_window **w, int *nw, int target)
{
	struct open_window *n;

	for (int i = 0; i < *nw; i++)
		if ((*w)[i].target == target)
			return &(*w)[i];
	n = realloc(*w, (*nw + 1) * sizeof(*n));
	if (!n)
		return NULL;
	*w = n;
	n[*nw] = (struct open_window){ .target = target, .snap = SIZE_MAX };
	return &n[(*nw)++];
}

/*
 * Who traced the line: the fields before the timestamp but the CPU ("comm
 * pid" of perf script, "comm-pid" of trace-cmd report); a kdamond may move
 * to another CPU within a window.
 */
static void thread_of(char **tok, int e, char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = '\0';
	for (int i = 0; i < e - 1 && n < len; i++)
		if (tok[i][0] != '[')
			n += snprintf(buf + n, len - n, "%s ", tok[i]);
}

static int region_line(struct imp *m, char **tok, int nt, int e, uint64_t t_ns,
		       unsigned long line, struct open_window **wins, int *nw, uint32_t sample_us)
{
	uint64_t gap_ns = (sample_us ? sample_us : 5000) * 500ULL;
	struct imp_region r = { 0 };
	struct open_window *w;
	struct imp_snapshot *s;
	uint64_t id, nr;
	char *dash, thread[64];
	int target;

	/* target_id=N nr_regions=N START-END: NR [AGE] */
	if (nt - e - 1 < 4 || nt - e - 1 > 5 || num_after(tok[e + 1], "target_id=", &id) ||
	    num_after(tok[e + 2], "nr_regions=", &nr) || !nr || nr > UINT32_MAX ||
	    !(dash = strchr(tok[e + 3], '-')) || tok[e + 3][strlen(tok[e + 3]) - 1] != ':')
		return imp_fail(m, "line %lu: not a damon_aggregated line (target_id=N "
				"nr_regions=N START-END: NR_ACCESSES [AGE])", line);
	tok[e + 3][strlen(tok[e + 3]) - 1] = '\0';	/* the ':' */
	*dash = '\0';
	if (num_after(tok[e + 3], "", &r.start) || num_after(dash + 1, "", &r.end) ||
	    parse_u32(tok[e + 4], &r.nr_accesses) ||
	    (nt - e - 1 == 5 && parse_u32(tok[e + 5], &r.age)))
		return imp_fail(m, "line %lu: bad numbers in a damon_aggregated line", line);
	if (r.start >= r.end)
		return imp_fail(m, "line %lu: region start %" PRIu64 " is not below its end %"
				PRIu64, line, r.start, r.end);
	/* kernels before 5.16 trace no age: unknown, not 0 windows */
	r.age_unknown = nt - e - 1 == 4;
	target = imp_target(m, id);
	if (target < 0)
		return -1;
	thread_of(tok, e, thread, sizeof(thread));
	if (gap_ns < 1000000)
		gap_ns = 1000000;
	/* another target of the same kdamond while one's window is open */
	for (int i = 0; i < *nw; i++)
		if ((*wins)[i].target != target && (*wins)[i].snap != SIZE_MAX &&
		    !strcmp((*wins)[i].thread, thread))
			return incomplete(m, &(*wins)[i], line, "another target's region");
	w = window_of(wins, nw, target);
	if (!w)
		return imp_fail(m, "out of memory");
	if (w->snap != SIZE_MAX && t_ns > w->last_t_ns + gap_ns)
		return incomplete(m, w, line, "a region traced later");
	if (w->snap != SIZE_MAX && r.start < w->last_end)
		return incomplete(m, w, line, "a region below the previous one's end");
	if (w->snap == SIZE_MAX) {
		s = imp_snapshot(m, target);
		if (!s)
			return -1;
		s->end_ns = t_ns;
		s->sample_us = sample_us;
		w->snap = (size_t)(s - m->snaps);
		w->want = (uint32_t)nr;
		w->line = line;
	} else if (nr != w->want) {
		return imp_fail(m, "line %lu: nr_regions=%" PRIu64 " in the window of line %lu "
				"that has nr_regions=%u", line, nr, w->line, w->want);
	}
	s = &m->snaps[w->snap];
	if (imp_region(m, s, &r))
		return -1;
	w->last_line = line;
	w->last_t_ns = t_ns;
	w->last_end = r.end;
	snprintf(w->thread, sizeof(w->thread), "%s", thread);
	if (s->nr == w->want)
		w->snap = SIZE_MAX;	/* complete */
	return 0;
}

int import_perf(struct imp *m, FILE *in)
{
	struct open_window *wins = NULL;
	unsigned long line = 0;
	char *buf = NULL, *tok[MAX_TOKENS + 1], *save;
	size_t cap = 0;
	uint32_t sample_us = 0;
	int nw = 0, ret = 0;

	while (!ret && getline(&buf, &cap, in) > 0) {
		int nt = 0, e = -1;
		uint64_t t_ns, v = 0;

		line++;
		for (char *t = strtok_r(buf, " \t\r\n", &save); t && nt <= MAX_TOKENS;
		     t = strtok_r(NULL, " \t\r\n", &save))
			tok[nt++] = t;
		if (!nt || tok[0][0] == '#')
			continue;
		for (int i = 1; i < nt && e < 0; i++)
			if (is_event(tok[i], "damon_aggregated") ||
			    is_event(tok[i], "daptrace_aggregated") ||
			    is_event(tok[i], "damon_monitor_intervals_tune"))
				e = i;
		if (e < 0) {
			m->skipped++;	/* another event, or not a trace line */
			continue;
		}
		if (parse_time(tok[e - 1], &t_ns)) {
			ret = imp_fail(m, "line %lu: no timestamp before the event", line);
			break;
		}
		if (is_event(tok[e], "damon_monitor_intervals_tune")) {
			if (nt != e + 2 || num_after(tok[e + 1], "sample_us=", &v) || !v ||
			    v > UINT32_MAX)
				ret = imp_fail(m, "line %lu: expected sample_us=N", line);
			sample_us = (uint32_t)v;
			continue;
		}
		ret = region_line(m, tok, nt, e, t_ns, line, &wins, &nw, sample_us);
	}
	if (!ret && ferror(in))
		ret = imp_fail(m, "read error: %s", strerror(errno));
	/* windows the trace cut short: dropped, their regions counted */
	for (int i = 0; !ret && i < nw; i++)
		if (wins[i].snap != SIZE_MAX) {
			struct imp_snapshot *s = &m->snaps[wins[i].snap];

			m->skipped += s->nr;
			free(s->regions);
			s->regions = NULL;
			s->nr = 0;
			s->target = -1;
		}
	for (size_t i = 0, n = 0; !ret && i < m->nr_snaps; i++) {
		if (m->snaps[i].target >= 0)
			m->snaps[n++] = m->snaps[i];
		if (i + 1 == m->nr_snaps)
			m->nr_snaps = n;
	}
	free(buf);
	free(wins);
	return ret;
}
