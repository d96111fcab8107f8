// SPDX-License-Identifier: GPL-2.0-only
/*
 * A monitoring session (see session.h): what record, top and policy do
 * alike around the snapshots they read.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "session.h"
#include "units.h"

#define NS_PER_MS	1000000LL

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
		return bad_value(cmd, "--pid", arg, "more than 64 targets");
	for (int i = 0; i < n; i++) {
		for (int j = 0; j < so->nr_pids; j++)
			if (so->pids[j] == pids[i])
				return bad_value(cmd, "--pid", arg, "a pid is listed twice");
		so->pids[so->nr_pids + i] = pids[i];
	}
	so->nr_pids += n;
	return 0;
}

void session_opts_default(struct session_opts *so)
{
	memset(so, 0, sizeof(*so));
	daptrace_attrs_default(&so->attrs);
}

char *session_read_comm(pid_t pid)
{
	char path[64], buf[64] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f))
			buf[0] = '\0';
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return strdup(buf);
}

int session_opt(const char *cmd, int c, const char *arg, struct session_opts *so)
{
	struct daptrace_attrs *a = &so->attrs;

	switch (c) {
	case 'p':
		return pid_opt(cmd, arg, so);
	case 'd':
		if (parse_duration_us(arg, &so->duration_us) || !so->duration_us)
			return bad_value(cmd, "--duration", arg, SESSION_DUR_HELP);
		return 0;
	case 's':
		if (parse_duration_us(arg, &a->sample_us))
			return bad_value(cmd, "--sample", arg, SESSION_DUR_HELP);
		return 0;
	case 'a':
		if (parse_duration_us(arg, &a->aggr_us))
			return bad_value(cmd, "--aggr", arg, SESSION_DUR_HELP);
		return 0;
	case 'u':
		if (parse_duration_us(arg, &a->update_us))
			return bad_value(cmd, "--update", arg, SESSION_DUR_HELP);
		return 0;
	case 'r':
		if (parse_range(arg, &a->min_nr_regions, &a->max_nr_regions))
			return bad_value(cmd, "--regions", arg, "expected MIN-MAX, e.g. 10-1000");
		return 0;
	case 't':
		if (daptrace_tlb_flush_parse(arg, &a->tlb_flush))
			return bad_value(cmd, "--tlb-flush", arg, "expected none, round or mm");
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
"  -t, --tlb-flush POLICY  none, round or mm (default %s)\n",
		dur(a.sample_us, s, sizeof(s)), aggr, dur(a.aggr_us, g, sizeof(g)),
		dur(a.update_us, u, sizeof(u)), a.min_nr_regions, a.max_nr_regions,
		daptrace_tlb_flush_name(a.tlb_flush));
}

int session_opts_finish(const char *cmd, struct session_opts *so, int argc, char **argv,
			const char *verb)
{
	const struct daptrace_attrs *a = &so->attrs;
	char s[32], g[32], u[32];
	const char *why;

	if (optind < argc)
		so->cmd = argv + optind;
	if (!so->cmd && !so->nr_pids)
		return usage_error(cmd, "nothing to %s: give a command after '--' or --pid", verb);
	if (so->cmd && so->nr_pids)
		return usage_error(cmd, "give either --pid or a command, not both");
	if (!daptrace_attrs_validate(a, &why))
		return 0;
	return usage_error(cmd, "invalid attributes: %s (--sample %s, --aggr %s, "
			   "--update %s, --regions %" PRIu64 "-%" PRIu64 ")", why,
			   fmt_us(a->sample_us, s, sizeof(s)), fmt_us(a->aggr_us, g, sizeof(g)),
			   fmt_us(a->update_us, u, sizeof(u)),
			   a->min_nr_regions, a->max_nr_regions);
}

/* Targets left behind by an earlier run would be monitored too. */
static int clear_stale_targets(struct session *s)
{
	struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	int n = daptrace_get_targets(s->d, t, DAPTRACE_MAX_TARGETS);

	if (n < 0)
		return fail(s->cmd, "%s", daptrace_last_error());
	for (int i = 0; i < n && i < DAPTRACE_MAX_TARGETS; i++) {
		warn_msg(s->cmd, "removing stale target %d (%s)", (int)t[i].pid,
			 daptrace_target_state_name(t[i].state));
		if (daptrace_remove_target(s->d, t[i].pid) < 0 && errno != ENOENT)
			return fail(s->cmd, "%s", daptrace_last_error());
	}
	return 0;
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
	if (daptrace_set_attrs(s->d, &so->attrs) < 0)
		return fail(s->cmd, "setting attributes: %s", daptrace_last_error());
	return 0;
}

int session_launch(struct session *s, const struct session_opts *so)
{
	int err;

	if (so->cmd) {
		s->argv0 = so->cmd[0];
		err = workload_prepare(&s->w, so->cmd);
		if (err)
			return fail(s->cmd, "cannot start '%s': %s", so->cmd[0], strerror(-err));
		s->pids[0] = s->w.pid;
		s->nr_targets = 1;
	} else {
		memcpy(s->pids, so->pids, sizeof(pid_t) * (size_t)so->nr_pids);
		s->nr_targets = so->nr_pids;
	}
	return 0;
}

int session_add_targets(struct session *s)
{
	for (int i = 0; i < s->nr_targets; i++) {
		if (daptrace_add_target(s->d, s->pids[i]) < 0) {
			if (errno == ESRCH)
				return fail(s->cmd, "no such process: %d", (int)s->pids[i]);
			return fail(s->cmd, "adding target %d: %s", (int)s->pids[i],
				    daptrace_last_error());
		}
		s->nr_added = i + 1;
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

static int is_ours(const struct session *s, pid_t pid)
{
	for (int i = 0; i < s->nr_targets; i++)
		if (s->pids[i] == pid)
			return 1;
	return 0;
}

const char *session_should_stop(struct session *s, uint64_t duration_us, int64_t now)
{
	struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	int n, on, exited = 0;

	if (session_stop_signal)
		return session_stop_signal == SIGINT ? "interrupted (SIGINT)" :
							"terminated (SIGTERM)";
	if (duration_us && now - s->t0 >= (int64_t)duration_us * 1000)
		return "duration reached";
	/*
	 * Our own command and our targets first: when the last target exits
	 * the kernel turns monitoring off by itself, and that is not "turned
	 * off by someone else".
	 */
	if (s->w.pid && workload_poll(&s->w))
		return "command exited";
	/*
	 * The state before the targets: the kernel marks a target exited
	 * before it turns itself off, so "off" read first and the targets
	 * read next show every exit that caused it.  The other order loses
	 * the race when the last target exits in between.
	 */
	on = daptrace_is_on(s->d);
	n = daptrace_get_targets(s->d, t, DAPTRACE_MAX_TARGETS);
	if (n > DAPTRACE_MAX_TARGETS)
		n = DAPTRACE_MAX_TARGETS;
	for (int i = 0; i < n; i++)
		if (is_ours(s, t[i].pid) && t[i].state == DAPTRACE_TARGET_EXITED)
			exited++;
	if (n > 0 && exited == s->nr_targets) {
		/*
		 * Our command's mm is gone (the kernel saw it exit) a moment
		 * before the process can be reaped: wait for it, briefly.
		 */
		struct timespec ts = { 0, 10 * NS_PER_MS };

		for (int i = 0; s->w.pid && i < 100 && !workload_poll(&s->w); i++)
			nanosleep(&ts, NULL);
		return s->w.pid && workload_poll(&s->w) ? "command exited" :
							  "all targets exited";
	}
	if (on == 0)
		return "monitoring turned off (by the kernel or another process)";
	return NULL;
}

int session_wait_ms(const struct daptrace_attrs *a)
{
	int ms = (int)(a->aggr_us / 1000);

	return ms < 10 ? 10 : ms > 250 ? 250 : ms;
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
	for (int i = 0; s->d && on >= 0 && i < s->nr_added; i++)
		daptrace_remove_target(s->d, s->pids[i]);
	s->nr_added = 0;
	if (s->w.pid)
		workload_finish(&s->w, session_stop_signal ? session_stop_signal : SIGTERM);
}

void session_close(struct session *s)
{
	daptrace_close(s->d);
	s->d = NULL;
}
