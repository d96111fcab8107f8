// SPDX-License-Identifier: GPL-2.0-only
/*
 * The scheme grammar, in one place, for flags and files alike:
 *
 *   ACTION [NODE] [key=value ...]
 *
 *   ACTION   pageout cold willneed collapse stat | migrate_hot NODE | migrate_cold NODE
 *   size=MIN-MAX     region size, bytes with K/M/G (MAX may be "max")
 *   freq=MIN-MAX     accesses, percent of the region's observed samples (0-100)
 *   age=MIN-MAX      how long the access level held (durations; MAX "max")
 *   quota=BYTES/DUR  at most BYTES acted on per DUR
 *   prio=coldest|hottest   who goes first under the quota
 *   wmarks=METRIC,HIGH,MID,LOW  METRIC free or nodeN; percent of free memory
 *   idle=DUR         not seen accessed for DUR (by address, across windows)
 *   type=anon|file   label=TEXT   addr=START-END   reapply=DUR
 *   unobserved=skip|act  regions the module could not fully observe
 *   goal=METRIC[@SOURCE]:TARGET  quota tuned to reach TARGET (goal.c);
 *                    repeatable, needs quota= (the largest quota)
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "policy.h"
#include "common/units.h"

static const char *const action_names[POL_NR_ACTIONS] = {
	[POL_PAGEOUT] = "pageout",
	[POL_COLD] = "cold",
	[POL_WILLNEED] = "willneed",
	[POL_COLLAPSE] = "collapse",
	[POL_MIGRATE_HOT] = "migrate_hot",
	[POL_MIGRATE_COLD] = "migrate_cold",
	[POL_STAT] = "stat",
};

/* DAMON_RECLAIM's shape (idle, quota, free-memory watermarks), shorter age. */
static const char *const preset_reclaim[] = {
	"pageout freq=0-0 idle=10s quota=128M/1s prio=coldest wmarks=free,50,40,20",
	NULL,
};

/*
 * Two tiers, node 0 fast and node 1 slow, with a fill goal for the fast one
 * (DAMON's node_mem_used_bp/free_bp goals): promote hot memory until node 0
 * is 95 % used, demote idle memory while it has less than 7 % free, so hot
 * memory replaces cold between the two.
 */
static const char *const preset_tiering[] = {
	"migrate_hot 0 freq=80-100 quota=256M/1s goal=used@node0:95%",
	"migrate_cold 1 freq=0-0 idle=5s quota=256M/1s goal=free@node0:7%",
	NULL,
};

/*
 * Senpai's idea (TMO, ASPLOS '22) on any kernel: page out the coldest
 * memory as fast as the targets' memory pressure stays at 0.1 % of the time
 * (the PSI threshold of TMO's Senpai): no age or size threshold to guess.
 */
static const char *const preset_tmo[] = {
	"pageout freq=0-0 idle=2s quota=256M/1s reapply=60s goal=psi@targets:0.1% goal=refault:100",
	NULL,
};

const char *pol_action_name(enum pol_action a)
{
	return a < POL_NR_ACTIONS ? action_names[a] : "?";
}

const char *const *pol_preset(const char *name)
{
	if (!strcmp(name, "reclaim"))
		return preset_reclaim;
	if (!strcmp(name, "tiering"))
		return preset_tiering;
	if (!strcmp(name, "tmo"))
		return preset_tmo;
	return NULL;
}

void pol_scheme_init(struct pol_scheme *s, enum pol_action a)
{
	memset(s, 0, sizeof(*s));
	s->action = a;
	s->node = -1;
	s->max_sz = UINT64_MAX;
	s->max_freq = 1000;
	s->max_age_us = UINT64_MAX;
	s->hottest_first = a == POL_MIGRATE_HOT || a == POL_WILLNEED || a == POL_COLLAPSE;
	/*
	 * Hot ranges stay hot: re-check now and then that they are still in
	 * place.  Cold actions are best effort in the kernel (MADV_PAGEOUT
	 * skips a folio that is off the LRU or mapped twice, move_pages one
	 * that is busy) and a range the kernel skipped looks just like one it
	 * did, so it is tried again after a while; one that was done then
	 * costs a page-table walk that finds nothing to do.
	 */
	s->reapply_us = s->hottest_first ? 2000000 : 10000000;
	s->active = 1;
	snprintf(s->name, sizeof(s->name), "%s", pol_action_name(a));
}

void pol_scheme_free(struct pol_scheme *s)
{
	free(s->flabel);
	s->flabel = NULL;
	free(s->cgroup);
	s->cgroup = NULL;
	for (int i = 0; i < s->nr_goals; i++)
		pol_goal_free(&s->goals[i]);
	s->nr_goals = 0;
}

/* *@dst = a copy of @src (NULL stays NULL); -ENOMEM. */
static int dup_str(char **dst, const char *src)
{
	*dst = src ? strdup(src) : NULL;
	return src && !*dst ? -ENOMEM : 0;
}

int pol_scheme_dup(struct pol_scheme *dst, const struct pol_scheme *src)
{
	int err = 0;

	*dst = *src;
	memset(&dst->st, 0, sizeof(dst->st));
	/* nothing of @src's is owned by @dst until copied: a failure frees only copies */
	dst->flabel = dst->cgroup = NULL;
	for (int i = 0; i < dst->nr_goals; i++)
		dst->goals[i].spec = dst->goals[i].arg = dst->goals[i].path = NULL;
	err |= dup_str(&dst->flabel, src->flabel);
	err |= dup_str(&dst->cgroup, src->cgroup);
	for (int i = 0; i < dst->nr_goals; i++) {
		err |= dup_str(&dst->goals[i].spec, src->goals[i].spec);
		err |= dup_str(&dst->goals[i].arg, src->goals[i].arg);
		err |= dup_str(&dst->goals[i].path, src->goals[i].path);
	}
	if (err) {
		pol_scheme_free(dst);
		return -ENOMEM;
	}
	return 0;
}

int pol_cgroup_within(const char *root, const char *p)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return p[0] == '/';
	return !strncmp(p, root, n) && (p[n] == '\0' || p[n] == '/');
}

int pol_parse_bytes(const char *str, uint64_t *v)
{
	uint64_t n, mul = 1;
	char *end;

	if (!str || *str < '0' || *str > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(str, &end, 10);
	if (errno)
		return -ERANGE;
	if (*end) {
		switch (*end) {
		case 'K': mul = 1ULL << 10; break;
		case 'M': mul = 1ULL << 20; break;
		case 'G': mul = 1ULL << 30; break;
		case 'T': mul = 1ULL << 40; break;
		default: return -EINVAL;
		}
		if (end[1])
			return -EINVAL;
	}
	if (n > UINT64_MAX / mul)
		return -ERANGE;
	*v = n * mul;
	return 0;
}

static int parse_int(const char *str, long lo, long hi, long *v)
{
	char *end;

	if (!str || *str < '0' || *str > '9')
		return -EINVAL;
	errno = 0;
	*v = strtol(str, &end, 10);
	return errno || *end || *v < lo || *v > hi ? -EINVAL : 0;
}

/* Split "A-B" at the '-' into two strings in @buf. */
static int split2(const char *val, char sep, char *buf, size_t len, char **a, char **b)
{
	char *p;

	if (strlen(val) >= len)
		return -EINVAL;
	strcpy(buf, val);
	p = strchr(buf, sep);
	if (!p || p == buf || !p[1])
		return -EINVAL;
	*p = '\0';
	*a = buf;
	*b = p + 1;
	return 0;
}

static int fmt_err(char *err, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fmt_err(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_wmarks(const char *val, struct pol_scheme *s)
{
	char buf[64], *tok[4], *rest = buf;
	long v[3], node;
	int n = 0;

	if (strlen(val) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, val);
	/* strsep(), not strtok_r(): an empty field is an error, not skipped. */
	while (rest && n < 4)
		tok[n++] = strsep(&rest, ",");
	if (n != 4 || rest)
		return -EINVAL;
	if (!strcmp(tok[0], "free")) {
		s->wmark = POL_WMARK_FREE;
	} else if (!strncmp(tok[0], "node", 4) && !parse_int(tok[0] + 4, 0, 4095, &node)) {
		s->wmark = POL_WMARK_NODE_FREE;
		s->wmark_node = (int)node;
	} else {
		return -EINVAL;
	}
	for (int i = 0; i < 3; i++)
		if (parse_int(tok[i + 1], 0, 100, &v[i]))
			return -EINVAL;
	if (!(v[0] >= v[1] && v[1] >= v[2]))
		return -EINVAL;
	s->wmark_high = (uint32_t)v[0] * 10;
	s->wmark_mid = (uint32_t)v[1] * 10;
	s->wmark_low = (uint32_t)v[2] * 10;
	/* DAMOS starts a watermarked scheme inactive until the metric says so */
	s->active = 0;
	return 0;
}

/* One key=value; returns 0 or -EINVAL with @err naming what is wrong. */
static int parse_kv(char *kv, struct pol_scheme *s, char *err, size_t errlen)
{
	char buf[128], *a, *b, *val = strchr(kv, '=');
	uint64_t x, y;
	long p, q;

	if (!val || val == kv)
		return fmt_err(err, errlen, "'%s': expected key=value", kv);
	*val++ = '\0';
	if (!strcmp(kv, "size")) {
		if (split2(val, '-', buf, sizeof(buf), &a, &b) || pol_parse_bytes(a, &x) ||
		    (strcmp(b, "max") ? pol_parse_bytes(b, &y) : (y = UINT64_MAX, 0)) || x > y)
			return fmt_err(err, errlen, "size=%s: expected MIN-MAX bytes, e.g. 4K-max", val);
		s->min_sz = x;
		s->max_sz = y;
	} else if (!strcmp(kv, "freq")) {
		if (split2(val, '-', buf, sizeof(buf), &a, &b) || parse_int(a, 0, 100, &p) ||
		    parse_int(b, 0, 100, &q) || p > q)
			return fmt_err(err, errlen, "freq=%s: expected MIN-MAX percent of samples, "
				       "0-100, e.g. 0-0 for idle", val);
		s->min_freq = (uint32_t)p * 10;
		s->max_freq = (uint32_t)q * 10;
	} else if (!strcmp(kv, "age")) {
		if (split2(val, '-', buf, sizeof(buf), &a, &b) || parse_duration_us(a, &x) ||
		    (strcmp(b, "max") ? parse_duration_us(b, &y) : (y = UINT64_MAX, 0)) || x > y)
			return fmt_err(err, errlen, "age=%s: expected MIN-MAX durations up to "
				       DURATION_MAX_STR ", e.g. 5s-max", val);
		s->min_age_us = x;
		s->max_age_us = y;
	} else if (!strcmp(kv, "quota")) {
		if (split2(val, '/', buf, sizeof(buf), &a, &b) || pol_parse_bytes(a, &x) ||
		    parse_duration_us(b, &y))
			return fmt_err(err, errlen, "quota=%s: expected BYTES/DURATION (up to "
				       DURATION_MAX_STR "), e.g. 64M/1s", val);
		if (!x || !y)
			return fmt_err(err, errlen, "quota=%s: a quota of 0 acts on nothing "
				       "(omit quota= for no limit)", val);
		s->quota_sz = x;
		s->quota_us = y;
	} else if (!strcmp(kv, "prio")) {
		if (!strcmp(val, "coldest"))
			s->hottest_first = 0;
		else if (!strcmp(val, "hottest"))
			s->hottest_first = 1;
		else
			return fmt_err(err, errlen, "prio=%s: expected coldest or hottest", val);
	} else if (!strcmp(kv, "wmarks")) {
		if (parse_wmarks(val, s))
			return fmt_err(err, errlen, "wmarks=%s: expected METRIC,HIGH,MID,LOW with "
				       "METRIC free or nodeN and percents HIGH >= MID >= LOW", val);
	} else if (!strcmp(kv, "type")) {
		if (!strcmp(val, "anon"))
			s->ftype = POL_FILTER_ANON;
		else if (!strcmp(val, "file"))
			s->ftype = POL_FILTER_FILE;
		else
			return fmt_err(err, errlen, "type=%s: expected anon or file", val);
	} else if (!strcmp(kv, "label")) {
		if (!*val)
			return fmt_err(err, errlen, "label=: empty label");
		free(s->flabel);
		s->flabel = strdup(val);
		if (!s->flabel)
			return fmt_err(err, errlen, "out of memory");
	} else if (!strcmp(kv, "cgroup")) {
		if (val[0] != '/' || strstr(val, "//") || strstr(val, "/../") ||
		    (strlen(val) > 1 && val[strlen(val) - 1] == '/'))
			return fmt_err(err, errlen, "cgroup=%s: expected a cgroup v2 path as "
				       "/proc/PID/cgroup gives it, e.g. /system.slice/app", val);
		free(s->cgroup);
		s->cgroup = strdup(val);
		if (!s->cgroup)
			return fmt_err(err, errlen, "out of memory");
	} else if (!strcmp(kv, "addr")) {
		if (split2(val, '-', buf, sizeof(buf), &a, &b) || parse_u64_addr(a, &x) ||
		    parse_u64_addr(b, &y) || x >= y)
			return fmt_err(err, errlen, "addr=%s: expected START-END, e.g. "
				       "0x7f0000000000-0x7f0040000000", val);
		s->faddr_start = x;
		s->faddr_end = y;
	} else if (!strcmp(kv, "idle")) {
		if (parse_duration_us(val, &x) || !x)
			return fmt_err(err, errlen, "idle=%s: expected a duration > 0 and <= "
				       DURATION_MAX_STR ", e.g. 5s", val);
		s->idle_us = x;
	} else if (!strcmp(kv, "reapply")) {
		if (parse_duration_us(val, &x))
			return fmt_err(err, errlen, "reapply=%s: expected a duration up to "
				       DURATION_MAX_STR, val);
		s->reapply_us = x;
	} else if (!strcmp(kv, "unobserved")) {
		if (strcmp(val, "skip") && strcmp(val, "act"))
			return fmt_err(err, errlen, "unobserved=%s: expected skip or act", val);
		s->act_unobserved = !strcmp(val, "act");
	} else {
		return fmt_err(err, errlen, "unknown key '%s' (size, freq, age, idle, quota, "
			       "prio, wmarks, type, label, addr, cgroup, reapply, unobserved, goal)", kv);
	}
	return 0;
}

int pol_scheme_parse(const char *spec, struct pol_scheme *s, char *err, size_t errlen)
{
	char *buf = strdup(spec), *save = NULL, *tok;
	const char *keys[16], *goals[POL_MAX_GOALS];
	struct pol_scheme tmp;
	int a, nk = 0, ng = 0, ret = 0;
	long node;

	if (!buf)
		return fmt_err(err, errlen, "out of memory");
	tok = strtok_r(buf, " \t", &save);
	if (!tok) {
		free(buf);
		return fmt_err(err, errlen, "empty scheme");
	}
	for (a = 0; a < POL_NR_ACTIONS; a++)
		if (!strcmp(tok, action_names[a]))
			break;
	if (a == POL_NR_ACTIONS) {
		ret = fmt_err(err, errlen, "unknown action '%s' (pageout, cold, willneed, "
			      "collapse, stat, migrate_hot NODE, migrate_cold NODE)", tok);
		free(buf);
		return ret;
	}
	pol_scheme_init(&tmp, a);
	if (a == POL_MIGRATE_HOT || a == POL_MIGRATE_COLD) {
		tok = strtok_r(NULL, " \t", &save);
		if (!tok || parse_int(tok, 0, 4095, &node)) {
			ret = fmt_err(err, errlen, "%s needs a target NODE number, got '%s'",
				      action_names[a], tok ? tok : "");
			goto out;
		}
		tmp.node = (int)node;
		snprintf(tmp.name, sizeof(tmp.name), "%s:%d", action_names[a], tmp.node);
	}
	while ((tok = strtok_r(NULL, " \t", &save))) {
		size_t klen = strcspn(tok, "=");

		/* goals come last: their targets depend on the action and quota */
		if (!strncmp(tok, "goal=", 5)) {
			if (ng == POL_MAX_GOALS) {
				ret = fmt_err(err, errlen, "more than %d goal= in a scheme",
					      POL_MAX_GOALS);
				goto out;
			}
			goals[ng++] = tok + 5;
			continue;
		}

		/* parse_kv() ends each key at its '=': keys[] are the keys. */
		for (int i = 0; i < nk; i++)
			if (strlen(keys[i]) == klen && !strncmp(keys[i], tok, klen)) {
				ret = fmt_err(err, errlen, "%s= given twice", keys[i]);
				goto out;
			}
		ret = parse_kv(tok, &tmp, err, errlen);
		if (ret)
			goto out;
		if (nk < (int)(sizeof(keys) / sizeof(keys[0])))
			keys[nk++] = tok;
	}
	if (ng && !tmp.quota_sz) {
		ret = fmt_err(err, errlen, "goal=%s needs quota=MAX/INTERVAL: the largest "
			      "quota the tuner may set, and how often it tunes it", goals[0]);
		goto out;
	}
	for (int i = 0; i < ng; i++) {
		char msg[POL_ERRMSG_LEN];

		if (pol_goal_parse(goals[i], &tmp, &tmp.goals[i], msg, sizeof(msg))) {
			ret = fmt_err(err, errlen, "goal=%s: %s", goals[i], msg);
			goto out;
		}
		tmp.nr_goals++;
	}
out:
	free(buf);
	if (ret) {
		pol_scheme_free(&tmp);
		return ret;
	}
	*s = tmp;
	return 0;
}

/*
 * '#' starts a comment only at the start of the line or after a blank, so
 * that a value may hold one (label=a#b).
 */
static void strip_comment(char *line)
{
	for (char *c = line; (c = strchr(c, '#')); c++) {
		if (c == line || c[-1] == ' ' || c[-1] == '\t') {
			*c = '\0';
			return;
		}
	}
}

int pol_scheme_file_parse(FILE *f, const char *fname, struct pol_scheme *s, int *n,
			  int max, char *err, size_t errlen)
{
	char *line = NULL, *p, msg[POL_ERRMSG_LEN];
	int lineno = 0, start = *n;
	size_t cap = 0;
	ssize_t len;

	while ((len = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (strlen(line) != (size_t)len) {
			fmt_err(err, errlen, "%s:%d: a NUL byte: not a text file", fname,
				lineno);
			goto fail;
		}
		line[strcspn(line, "\r\n")] = '\0';
		if (strlen(line) > POL_LINE_MAX) {
			fmt_err(err, errlen, "%s:%d: line longer than %d characters", fname,
				lineno, POL_LINE_MAX);
			goto fail;
		}
		p = line;
		strip_comment(line);
		p += strspn(p, " \t");
		if (!*p)
			continue;
		if (*n >= max) {
			fmt_err(err, errlen, "%s:%d: more than %d schemes", fname, lineno, max);
			goto fail;
		}
		if (pol_scheme_parse(p, &s[*n], msg, sizeof(msg))) {
			fmt_err(err, errlen, "%s:%d: %s", fname, lineno, msg);
			goto fail;
		}
		snprintf(s[*n].origin, sizeof(s[*n].origin), "%s:%d", fname, lineno);
		(*n)++;
	}
	if (ferror(f)) {
		fmt_err(err, errlen, "%s: read error", fname);
		goto fail;
	}
	free(line);
	if (*n == start)
		return fmt_err(err, errlen, "%s: no scheme in the file", fname);
	return 0;
fail:
	free(line);
	while (*n > start)
		pol_scheme_free(&s[--(*n)]);
	return -EINVAL;
}

int pol_scheme_check_nodes(const struct pol_scheme *s, char *err, size_t errlen)
{
	if (s->node >= 0 && !pol_node_exists(s->node)) {
		snprintf(err, errlen, "%s: node %d does not exist (or has no memory)",
			 s->name, s->node);
		return -ENODEV;
	}
	if (s->wmark == POL_WMARK_NODE_FREE && !pol_node_exists(s->wmark_node)) {
		snprintf(err, errlen, "%s: wmarks: node %d does not exist", s->name,
			 s->wmark_node);
		return -ENODEV;
	}
	return 0;
}
