// SPDX-License-Identifier: GPL-2.0-only
/*
 * A monitoring session (see session.h): what record, top and policy do
 * alike around the snapshots they read.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "record_rows.h"
#include "session.h"
#include "common/units.h"

#define NS_PER_MS	1000000LL
#define STR_(x)		#x
#define STR(x)		STR_(x)
/* Processes that left stay known this long, for the last snapshot's labels. */
#define KEEP_LEFT_NS	(2000 * NS_PER_MS)

volatile sig_atomic_t session_stop_signal;

static void on_signal(int sig)
{
	session_stop_signal = sig;
}

void session_catch_signals(void)
{
	struct sigaction sa = { .sa_handler = on_signal };

	/* no SA_RESTART: a signal must wake the poll() */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

int64_t session_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Each --pid adds to the targets: -p 1,2 -p 3 is -p 1,2,3. */
static int pid_opt(const char *cmd, const char *arg, struct session_opts *so)
{
	pid_t pids[DAPTRACE_MAX_TARGETS];
	int n = parse_pid_list(arg, pids, DAPTRACE_MAX_TARGETS);

	if (n == -EEXIST)
		return bad_value(cmd, "--pid", arg, "a pid is listed twice");
	if (n < 0 && n != -E2BIG)
		return bad_value(cmd, "--pid", arg, "expected pid[,pid...] with pids > 0");
	if (n < 0 || so->nr_pids + n > DAPTRACE_MAX_TARGETS)
		return bad_value(cmd, "--pid", arg, "more than " STR(DAPTRACE_MAX_TARGETS)
				 " targets");
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < so->nr_pids; j++)
			if (so->pids[j] == pids[i])
				return bad_value(cmd, "--pid", arg, "a pid is listed twice");
		so->pids[so->nr_pids + i] = pids[i];
	}
	so->nr_pids += n;
	return 0;
}

/*
 * --auto-intervals[=SHARE[,WINDOWS[,MIN-MAX]]]: SHARE in percent ("4%",
 * "0.5%") or basis points ("400"), then what the library's default leaves.
 */
static int auto_opt(const char *cmd, const char *arg, struct daptrace_intervals_goal *g)
{
	char buf[128], *share, *aggrs, *range, *dash, *end;
	const char *why;
	double pct;

	daptrace_intervals_goal_default(g);
	if (!arg)
		return 0;
	if (snprintf(buf, sizeof(buf), "%s", arg) >= (int)sizeof(buf))
		goto bad;
	share = buf;
	aggrs = strchr(share, ',');
	if (aggrs)
		*aggrs++ = '\0';
	range = aggrs ? strchr(aggrs, ',') : NULL;
	if (range)
		*range++ = '\0';
	if (share[0] && share[strlen(share) - 1] == '%') {
		share[strlen(share) - 1] = '\0';
		errno = 0;
		pct = strtod(share, &end);
		if (!share[0] || *end || errno || !(pct > 0 && pct <= 100))
			goto bad;
		g->access_bp = (uint64_t)(pct * 100 + 0.5);
	} else if (parse_u64_dec(share, &g->access_bp)) {
		goto bad;
	}
	if (aggrs && parse_u64_dec(aggrs, &g->aggrs))
		goto bad;
	if (range) {
		dash = strchr(range, '-');
		if (!dash)
			goto bad;
		*dash = '\0';
		if (parse_duration_us(range, &g->min_sample_us) ||
		    parse_duration_us(dash + 1, &g->max_sample_us))
			goto bad;
	}
	if (!g->aggrs)
		goto bad;
	if (daptrace_intervals_goal_validate(g, &why))
		return bad_value(cmd, "--auto-intervals", arg, why);
	return 0;
bad:
	return bad_value(cmd, "--auto-intervals", arg,
			 "expected SHARE[,WINDOWS[,MIN-MAX]], e.g. 4%,3,5ms-10s");
}

/* @flag's duration into *@us (not 0 if @nonzero), or its usage error. */
static int duration_opt(const char *cmd, const char *flag, const char *arg,
			uint64_t *us, bool nonzero)
{
	if (parse_duration_us(arg, us) || (nonzero && !*us))
		return bad_value(cmd, flag, arg, SESSION_DUR_HELP);
	return 0;
}

void session_opts_default(struct session_opts *so)
{
	memset(so, 0, sizeof(*so));
	daptrace_attrs_default(&so->attrs);
	daptrace_intervals_goal_default(&so->goal);
	so->goal.aggrs = 0;		/* off unless asked (daptrace stat: on) */
}

int session_opt(const char *cmd, int c, const char *arg, struct session_opts *so)
{
	struct daptrace_attrs *a = &so->attrs;

	switch (c) {
	case 'p':
		return pid_opt(cmd, arg, so);
	case 'i':
		so->inherit = 1;
		return 0;
	case SESSION_OPT_NO_INHERIT:
		so->no_inherit = 1;
		return 0;
	case SESSION_OPT_CGROUP:
		if (!*arg)
			return bad_value(cmd, "--cgroup", arg, "expected a cgroup v2 directory");
		if (!so->cgroup) {
			so->cgroup = arg;
			return 0;
		}
		if (!so->several_cgroups)
			return usage_error(cmd, "--cgroup given twice ('%s', '%s')", so->cgroup, arg);
		if (so->nr_more_cgroups == FOLLOW_MAX_CGROUPS - 1)
			return usage_error(cmd, "--cgroup: more than %d cgroups", FOLLOW_MAX_CGROUPS);
		so->more_cgroups[so->nr_more_cgroups++] = arg;
		return 0;
	case 'd':
		/* 0 is "no limit": the default, not a value to give */
		return duration_opt(cmd, "--duration", arg, &so->duration_us, true);
	case 's':
		return duration_opt(cmd, "--sample", arg, &a->sample_us, false);
	case 'a':
		return duration_opt(cmd, "--aggr", arg, &a->aggr_us, false);
	case 'u':
		return duration_opt(cmd, "--update", arg, &a->update_us, false);
	case 'r':
		if (parse_range(arg, &a->min_nr_regions, &a->max_nr_regions))
			return bad_value(cmd, "--regions", arg, "expected MIN-MAX, e.g. 10-1000");
		return 0;
	case 't':
		if (daptrace_tlb_flush_parse(arg, &a->tlb_flush))
			return bad_value(cmd, "--tlb-flush", arg, "expected none, round or mm");
		return 0;
	case SESSION_OPT_PHYS_ADDR:
		so->phys_addr = 1;
		return 0;
	case SESSION_OPT_AUTO:
		return auto_opt(cmd, arg, &so->goal);
	case SESSION_OPT_NO_AUTO:
		so->goal.aggrs = 0;
		return 0;
	}
	return -1;
}

/* "5ms", as the help spells durations (fmt_us says "5 ms") */
static const char *dur(uint64_t us, char *buf, size_t len)
{
	char *sp;

	fmt_us(us, buf, len);
	sp = strchr(buf, ' ');
	if (sp)
		memmove(sp, sp + 1, strlen(sp));
	return buf;
}

void session_attr_help(FILE *f, const char *aggr)
{
	struct daptrace_attrs a;
	char s[32], g[32], u[32];

	/* the defaults from the library, so the help cannot drift from them */
	daptrace_attrs_default(&a);
	fprintf(f,
"  -s, --sample DUR        sampling interval (default %s)\n"
"  -a, --aggr DUR          %s (default %s)\n"
"  -u, --update DUR        memory map update interval (default %s)\n"
"  -r, --regions MIN-MAX   region count bounds (default %" PRIu64 "-%" PRIu64 ")\n"
"  -t, --tlb-flush POLICY  none, round or mm (default %s)\n"
"      --auto-intervals[=SHARE[,WINDOWS[,MIN-MAX]]]  tune the sampling\n"
"                          interval so that the checks see SHARE of the\n"
"                          accesses over WINDOWS windows, within MIN-MAX (the\n"
"                          aggregation interval keeps its ratio; default\n"
"                          4%%,3,5ms-10s, DAMON's)\n"
"      --no-auto-intervals keep -s and -a as given\n",
		dur(a.sample_us, s, sizeof(s)), aggr, dur(a.aggr_us, g, sizeof(g)),
		dur(a.update_us, u, sizeof(u)), a.min_nr_regions, a.max_nr_regions,
		daptrace_tlb_flush_name(a.tlb_flush));
}

void session_phys_help(FILE *f)
{
	fputs("      --phys-addr         record the physical address of each region's\n"
	      "                          last sampled page (for report pheatmap; off: the\n"
	      "                          kernel gives none)\n", f);
}

void session_target_help(FILE *f, const char *verb)
{
	fprintf(f,
"  -p, --pid PIDS          %s these processes (comma separated)\n"
"  -i, --inherit           and their descendants, as they start\n"
"      --no-inherit        the command alone, not the processes it starts\n"
"      --cgroup PATH       every process of a cgroup v2 and of the cgroups below\n"
"                          it, as they come and go (PATH: a directory, or a path\n"
"                          below the cgroup v2 mount)\n", verb);
}

int session_opts_finish(const char *cmd, struct session_opts *so, int argc, char **argv,
			const char *verb)
{
	const struct daptrace_attrs *a = &so->attrs;
	char s[32], g[32], u[32];
	const char *why;

	if (optind < argc)
		so->cmd = argv + optind;
	if (!so->cmd && !so->nr_pids && !so->cgroup && !so->machine)
		return usage_error(cmd, "nothing to %s: give a command after '--', --pid or "
				   "--cgroup", verb);
	if (!!so->cmd + !!so->nr_pids + !!so->cgroup > 1)
		return usage_error(cmd, "give either --pid, --cgroup or a command, not two of them");
	if (so->inherit && !so->nr_pids)
		return usage_error(cmd, "--inherit goes with --pid (a command's descendants "
				   "are followed unless --no-inherit)");
	if (so->no_inherit && !so->cmd)
		return usage_error(cmd, "--no-inherit goes with a command");
	if (so->goal.aggrs && (a->sample_us < so->goal.min_sample_us ||
			       a->sample_us > so->goal.max_sample_us))
		return usage_error(cmd, "--sample %s lies outside --auto-intervals' %s-%s",
				   fmt_us(a->sample_us, s, sizeof(s)),
				   fmt_us(so->goal.min_sample_us, g, sizeof(g)),
				   fmt_us(so->goal.max_sample_us, u, sizeof(u)));
	if (!daptrace_attrs_validate(a, &why))
		return 0;
	return usage_error(cmd, "invalid attributes: %s (--sample %s, --aggr %s, "
			   "--update %s, --regions %" PRIu64 "-%" PRIu64 ")", why,
			   fmt_us(a->sample_us, s, sizeof(s)), fmt_us(a->aggr_us, g, sizeof(g)),
			   fmt_us(a->update_us, u, sizeof(u)),
			   a->min_nr_regions, a->max_nr_regions);
}

/*
 * Targets left behind by an earlier run would be monitored too.  The
 * module lists one page of them at a time: remove and look again, until
 * the list holds none that was not removed already.
 */
static int clear_stale_targets(struct session *s)
{
	static struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	struct pid_vec done = { 0 };
	int n = 0, err = 0;

	while (!err && (n = daptrace_get_targets(s->d, t, DAPTRACE_MAX_TARGETS)) > 0) {
		int fresh = 0;

		for (int i = 0; i < n && i < DAPTRACE_MAX_TARGETS && !err; i++) {
			if (pid_vec_contains(&done, t[i].pid))
				continue;
			fresh = 1;
			if (done.n < 8)
				warn_msg(s->cmd, "removing stale target %d (%s)", (int)t[i].pid,
					 daptrace_target_state_name(t[i].state));
			if (daptrace_remove_target(s->d, t[i].pid) < 0 && errno != ENOENT)
				err = fail(s->cmd, "%s", daptrace_last_error());
			if (pid_vec_push(&done, t[i].pid))
				err = fail(s->cmd, "out of memory");
			pid_vec_sort_unique(&done);
		}
		if (!fresh)
			break;
	}
	if (!err && n < 0)
		err = fail(s->cmd, "%s", daptrace_last_error());
	if (!err && done.n > 8)
		warn_msg(s->cmd, "removed %zu stale targets in all", done.n);
	pid_vec_free(&done);
	return err;
}

int session_open(struct session *s, const struct session_opts *so, const char *busy_hint)
{
	int on, err;

	/* a command that cannot run fails before anything is done */
	if (so->cmd) {
		err = workload_check(so->cmd[0]);
		if (err)
			return fail(s->cmd, "cannot run '%s': %s", so->cmd[0], strerror(-err));
	}
	/* and so does a cgroup that is not one */
	for (int i = 0; so->cgroup && i <= so->nr_more_cgroups; i++) {
		const char *arg = i ? so->more_cgroups[i - 1] : so->cgroup;
		char msg[PATH_MAX + 256];
		struct cgroup_ref c;

		if (cgroup_resolve(arg, MOUNTINFO, &c, msg, sizeof(msg)))
			return usage_error(s->cmd, "--cgroup %s", msg);
		cgroup_ref_free(&c);
	}
	if (daptrace_open(&s->d) < 0)
		return fail(s->cmd, "cannot open the kernel interface: %s",
			    daptrace_last_error());
	on = daptrace_is_on(s->d);
	if (on < 0)
		return fail(s->cmd, "%s", daptrace_last_error());
	if (on)
		return fail(s->cmd, "monitoring is already on (%s); "
			    "turn it off with: echo off > %s/state", busy_hint,
			    daptrace_root(s->d));
	err = clear_stale_targets(s);
	if (err)
		return err;
	/* the goal too when off: a goal an earlier run left would tune this one */
	if (daptrace_set_attrs(s->d, &so->attrs) < 0 ||
	    daptrace_set_intervals_goal(s->d, &so->goal) < 0 ||
	    daptrace_set_phys_addr(s->d, so->phys_addr) < 0)
		return fail(s->cmd, "setting attributes: %s", daptrace_last_error());
	return 0;
}

int session_launch(struct session *s, const struct session_opts *so)
{
	int err;

	if (!so->cmd)
		return 0;
	s->argv0 = so->cmd[0];
	err = workload_prepare(&s->w, so->cmd);
	if (err)
		return fail(s->cmd, "cannot start '%s': %s", so->cmd[0], strerror(-err));
	return 0;
}

static int monitor_add(void *ctx, pid_t pid)
{
	struct session *s = ctx;

	return daptrace_add_target(s->d, pid) < 0 ? -errno : 0;
}

static int monitor_remove(void *ctx, pid_t pid)
{
	struct session *s = ctx;

	return daptrace_remove_target(s->d, pid) < 0 ? -errno : 0;
}

static enum follow_mode mode_of(const struct session_opts *so)
{
	if (so->machine)
		return FOLLOW_MACHINE;
	if (so->cgroup)
		return FOLLOW_CGROUP;
	if ((so->cmd && !so->no_inherit) || (so->nr_pids && so->inherit))
		return FOLLOW_TREE;
	return FOLLOW_PIDS;
}

static int add_root(struct session *s, pid_t pid)
{
	int err = follow_add_root(&s->f, pid);

	if (err == -ESRCH)
		return fail(s->cmd, "no such process: %d", (int)pid);
	if (err)
		return fail(s->cmd, "adding target %d: %s", (int)pid, strerror(-err));
	return 0;
}

int session_add_targets(struct session *s, const struct session_opts *so)
{
	const struct follow_ops ops = {
		.add = monitor_add, .remove = monitor_remove, .mon = s,
		.joined = s->hooks.joined, .left = s->hooks.left, .forget = s->hooks.forget,
		.user = s->hooks.user,
	};
	int64_t keep = 3 * (int64_t)so->attrs.aggr_us * 1000;
	char msg[PATH_MAX + 256];
	int err;

	follow_init(&s->f, mode_of(so), s->cmd, &ops);
	s->following = 1;
	s->f.scan_every_ns = (int64_t)so->attrs.update_us * 1000;
	s->f.keep_left_ns = keep > KEEP_LEFT_NS ? keep : KEEP_LEFT_NS;
	if (so->cgroup && follow_set_cgroup(&s->f, so->cgroup, msg, sizeof(msg)))
		return fail(s->cmd, "--cgroup %s", msg);
	for (int i = 0; i < so->nr_more_cgroups; i++)
		if (follow_set_cgroup(&s->f, so->more_cgroups[i], msg, sizeof(msg)))
			return fail(s->cmd, "--cgroup %s", msg);
	/* from here on no fork is missed: the scan below sees what came before */
	if (s->f.mode != FOLLOW_PIDS)
		follow_listen(&s->f);
	if (so->cmd) {
		struct follow_proc *p;
		const char *base = strrchr(so->cmd[0], '/');

		err = add_root(s, s->w.pid);
		if (err)
			return err;
		s->root = s->w.pid;
		/* held before its exec: its name once it runs (the kernel's 15 bytes) */
		p = follow_find(&s->f, s->root);
		if (p)
			snprintf(p->comm, sizeof(p->comm), "%.15s", base ? base + 1 : so->cmd[0]);
	}
	for (int i = 0; i < so->nr_pids; i++) {
		err = add_root(s, so->pids[i]);
		if (err)
			return err;
		if (!i)
			s->root = so->pids[0];
	}
	follow_scan(&s->f, session_now_ns());
	if (!s->f.nr_targets) {
		char sum[256];

		return fail(s->cmd, "no process to monitor%s%s%s", so->cgroup ? " in the cgroup " :
			    "", so->cgroup ? s->f.cg.dir : "",
			    session_follow_summary(s, sum, sizeof(sum)) ? sum : "");
	}
	return 0;
}

int session_start(struct session *s)
{
	if (daptrace_reader_init(s->d) < 0)
		return fail(s->cmd, "%s", daptrace_last_error());
	s->t0 = session_now_ns();
	if (daptrace_start(s->d) < 0)
		return fail(s->cmd, "turning monitoring on: %s", daptrace_last_error());
	/* from now on a new target is a join */
	s->f.started = 1;
	return 0;
}

int session_release(struct session *s)
{
	if (!s->w.pid || !workload_release(&s->w))
		return 0;
	if (s->w.exec_err)
		return fail(s->cmd, "cannot run '%s': %s", s->argv0, strerror(s->w.exec_err));
	warn_msg(s->cmd, "the command exited before it could start");
	return 0;
}

/*
 * The module's word on which targets exited (it notices at an aggregation
 * boundary; a zombie whose threads run is exited for it, too), and on which
 * it stopped watching because they exec()ed a privileged image (revoked:
 * an end like an exit, said once per target).  It lists a page of targets:
 * the others are left to the follower's scans.  Returns the number of
 * targets revoked so far that we had.
 */
static int kernel_exits(struct session *s, int64_t now)
{
	static struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	int n = daptrace_get_targets(s->d, t, DAPTRACE_MAX_TARGETS), revoked = 0;

	for (int i = 0; i < n && i < DAPTRACE_MAX_TARGETS; i++) {
		struct follow_proc *p;

		if (t[i].state == DAPTRACE_TARGET_REVOKED) {
			p = follow_find(&s->f, t[i].pid);
			revoked += p != NULL;
			if (p && p->state == FP_TARGET)
				warn_msg(s->cmd, "target %d exec'ed a privileged image "
					 "(set-id, file capabilities, an LSM transition or "
					 "an unreadable file): no longer watched",
					 (int)t[i].pid);
		}
		if (t[i].state == DAPTRACE_TARGET_EXITED ||
		    t[i].state == DAPTRACE_TARGET_REVOKED)
			follow_target_exited(&s->f, t[i].pid, now);
	}
	return revoked;
}

/*
 * Our command's mm is gone (the kernel saw it exit) a moment before the
 * process can be reaped: wait for it, briefly.
 */
static int command_reaped(struct session *s)
{
	struct timespec ts = { 0, 10 * NS_PER_MS };

	for (int i = 0; s->w.pid && i < 100 && !workload_poll(&s->w); i++)
		nanosleep(&ts, NULL);
	return s->w.pid && workload_poll(&s->w);
}

const char *session_should_stop(struct session *s, uint64_t duration_us, int64_t now)
{
	int on, done, revoked;
	size_t live;

	if (session_stop_signal)
		return session_stop_signal == SIGINT ? "interrupted (SIGINT)" :
							"terminated (SIGTERM)";
	if (duration_us && now - s->t0 >= (int64_t)duration_us * 1000)
		return "duration reached";
	/*
	 * Our own command and our targets first: when the last target exits
	 * the kernel turns monitoring off by itself, and that is not "turned
	 * off by someone else".  The state before the targets: the kernel
	 * marks a target exited before it turns itself off, so "off" read
	 * first and the targets read next show every exit that caused it.
	 * The other order loses the race when the last target exits in
	 * between.
	 */
	done = s->w.pid && workload_poll(&s->w);
	on = daptrace_is_on(s->d);
	revoked = kernel_exits(s, now);
	live = follow_nr_live(&s->f);
	/* a command's tree lives on after it: its last process ends the run */
	if (done && (s->f.mode != FOLLOW_TREE || !live))
		return "command exited";
	if (!live && s->f.mode == FOLLOW_CGROUP)
		return "no process left in the cgroup";
	if (!live && revoked && !command_reaped(s))
		return "all targets exited or exec'ed a privileged image";
	if (!live)
		return command_reaped(s) ? "command exited" : "all targets exited";
	if (on == 0)
		return "monitoring turned off (by the kernel or another process)";
	return NULL;
}

bool session_check_due(int64_t *last_check, int64_t now)
{
	if (!session_stop_signal && now - *last_check < 250 * NS_PER_MS)
		return false;
	*last_check = now;
	return true;
}

bool session_due_every(int64_t *next, int64_t now, int64_t every_ns)
{
	if (now < *next)
		return false;
	*next += every_ns * ((now - *next) / every_ns + 1);
	return true;
}

int session_wait_ms(const struct daptrace_attrs *a)
{
	int ms = (int)(a->aggr_us / 1000);

	return ms < 10 ? 10 : ms > 250 ? 250 : ms;
}

int session_wait(struct session *s, int timeout_ms)
{
	int fd = follow_fd(&s->f), r;

	if (fd < 0) {
		r = daptrace_wait(s->d, timeout_ms);
	} else {
		/* a snapshot already there, else whichever comes first */
		r = daptrace_wait(s->d, 0);
		if (r == 0) {
			struct pollfd p[2] = {
				{ .fd = daptrace_poll_fd(s->d), .events = POLLPRI | POLLERR },
				{ .fd = fd, .events = POLLIN },
			};

			if (poll(p, 2, timeout_ms) < 0 && errno != EINTR)
				r = -errno;
			else
				r = !!p[0].revents;
		}
	}
	if (s->following)
		follow_tick(&s->f, session_now_ns());
	return r;
}

int session_wait_or_fail(struct session *s, int timeout_ms, const char *cmd)
{
	int err = session_wait(s, timeout_ms);

	if (err < 0 && err != -EINTR)
		return fail(cmd, "waiting for snapshots: %s", daptrace_last_error());
	return 0;
}

void session_follow_kv(const struct session *s, struct rec_kv *kv, int *n)
{
	const struct follow_stats *st = &s->f.st;

	rec_kv_add(kv, n, "targets", "%" PRIu64, st->targets);
	rec_kv_add(kv, n, "targets_joined", "%" PRIu64, st->joined);
	rec_kv_add(kv, n, "targets_exited", "%" PRIu64, st->exited);
	rec_kv_add(kv, n, "targets_moved_out", "%" PRIu64, st->moved_out);
	rec_kv_add(kv, n, "not_added_gone", "%" PRIu64, st->gone);
	rec_kv_add(kv, n, "not_added_denied", "%" PRIu64, st->denied);
	rec_kv_add(kv, n, "not_added_no_mm", "%" PRIu64, st->invalid);
	rec_kv_add(kv, n, "not_added_no_room", "%" PRIu64, st->no_room);
	rec_kv_add(kv, n, "not_added_other", "%" PRIu64, st->refused);
	rec_kv_add(kv, n, "not_added_shared_mm", "%" PRIu64, st->shared_mm);
	rec_kv_add(kv, n, "process_events", "%" PRIu64, st->events);
	rec_kv_add(kv, n, "process_events_lost", "%" PRIu64, st->lost);
	rec_kv_add(kv, n, "process_scans", "%" PRIu64, st->scans);
	if (st->nr_latency) {
		rec_kv_add(kv, n, "join_latency_mean_ns", "%" PRId64,
			   st->latency_sum_ns / (int64_t)st->nr_latency);
		rec_kv_add(kv, n, "join_latency_max_ns", "%" PRId64, st->latency_max_ns);
	}
}

const char *session_follow_summary(const struct session *s, char *buf, size_t len)
{
	const struct follow_stats *st = &s->f.st;
	size_t n = 0;

#define PART(cond, ...)							\
	do {								\
		if ((cond) && n < len)					\
			n += snprintf(buf + n, len - n, __VA_ARGS__);	\
	} while (0)
	buf[0] = '\0';
	PART(st->joined, "; %" PRIu64 " joined", st->joined);
	PART(st->exited, "; %" PRIu64 " exited", st->exited);
	PART(st->moved_out, "; %" PRIu64 " moved out", st->moved_out);
	PART(st->gone, "; %" PRIu64 " gone before added", st->gone);
	PART(st->denied, "; %" PRIu64 " not permitted", st->denied);
	PART(st->invalid, "; %" PRIu64 " without memory", st->invalid);
	PART(st->no_room, "; %" PRIu64 " over the target limit", st->no_room);
	PART(st->refused, "; %" PRIu64 " refused", st->refused);
	PART(st->shared_mm, "; %" PRIu64 " sharing a target's memory", st->shared_mm);
	PART(st->lost, "; process events lost %" PRIu64 " times", st->lost);
#undef PART
	return n ? buf : NULL;
}

int session_stop(struct session *s, int *ret)
{
	int on = s->d ? daptrace_is_on(s->d) : 0;

	if (on > 0 && daptrace_stop(s->d) < 0) {
		warn_msg(s->cmd, "turning monitoring off: %s", daptrace_last_error());
		*ret = *ret ? *ret : EXIT_FAIL;
	}
	return on;
}

void session_end(struct session *s, int on)
{
	/* with the state unknown, removing could fail halfway: leave them */
	if (s->following)
		follow_end(&s->f, s->d && on >= 0);
	s->following = 0;
	if (s->w.pid)
		workload_finish(&s->w, session_stop_signal ? session_stop_signal : SIGTERM);
}

void session_close(struct session *s)
{
	daptrace_close(s->d);
	s->d = NULL;
}
