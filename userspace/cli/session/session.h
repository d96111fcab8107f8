/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A monitoring session, shared by record, top, policy and stat: the
 * monitor attributes from flags, the targets (-p, a launched command held
 * until monitoring is on, --cgroup, or the whole machine) and the
 * follower that keeps them in step with the processes (follow.h),
 * start/stop with libdaptrace, and the signals that end it.  Each
 * subcommand keeps only what it does with snapshots.
 */
#ifndef DAPTRACE_SESSION_H
#define DAPTRACE_SESSION_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "daptrace.h"
#include "follow.h"
#include "common/units.h"
#include "workload.h"

#define SESSION_DUR_HELP "expected a duration with a unit: us, ms, s or m, e.g. 5ms or 30s, " \
	"at most " DURATION_MAX_STR

/* The signal (SIGINT/SIGTERM) that asked us to stop, or 0. */
extern volatile sig_atomic_t session_stop_signal;

/* SIGINT/SIGTERM set session_stop_signal and wake poll(); SIGPIPE ignored. */
void session_catch_signals(void);
int64_t session_now_ns(void);

/* What the session flags set. */
struct session_opts {
	struct daptrace_attrs attrs;
	pid_t pids[DAPTRACE_MAX_TARGETS];
	int nr_pids;
	char **cmd;			/* the command after the options */
	uint64_t duration_us;		/* 0: until the targets exit */
	int inherit;			/* -i: -p's descendants too */
	int no_inherit;			/* --no-inherit: the command alone */
	const char *cgroup;		/* --cgroup */
	/* more --cgroup flags, where the command allows several (policy) */
	const char *more_cgroups[FOLLOW_MAX_CGROUPS - 1];
	int nr_more_cgroups;
	int several_cgroups;		/* set before parsing: allow them */
	int machine;			/* every user process (daptrace stat) */
	int phys_addr;			/* --phys-addr */
	/* --auto-intervals (goal.aggrs 0: off, written so to the module) */
	struct daptrace_intervals_goal goal;
};

/*
 * The session flags: -p, -i, --no-inherit, --cgroup, -s, -a, -u, -r, -t,
 * -d, --phys-addr, --auto-intervals and --no-auto-intervals, for
 * getopt_long().
 */
#define SESSION_SHORTOPTS "p:is:a:u:r:t:d:"
/* Long-only: from 0x1000, above the commands' own (which count from 256). */
#define SESSION_OPT_NO_INHERIT	0x1001
#define SESSION_OPT_CGROUP	0x1002
#define SESSION_OPT_PHYS_ADDR	0x1003
#define SESSION_OPT_AUTO	0x1004
#define SESSION_OPT_NO_AUTO	0x1005
#define SESSION_LONGOPTS						\
	{ "pid",	required_argument, NULL, 'p' },			\
	{ "inherit",	no_argument,	   NULL, 'i' },			\
	{ "no-inherit",	no_argument,	   NULL, SESSION_OPT_NO_INHERIT },	\
	{ "cgroup",	required_argument, NULL, SESSION_OPT_CGROUP },	\
	{ "sample",	required_argument, NULL, 's' },			\
	{ "aggr",	required_argument, NULL, 'a' },			\
	{ "update",	required_argument, NULL, 'u' },			\
	{ "regions",	required_argument, NULL, 'r' },			\
	{ "tlb-flush",	required_argument, NULL, 't' },			\
	{ "duration",	required_argument, NULL, 'd' },			\
	{ "phys-addr",	no_argument,	   NULL, SESSION_OPT_PHYS_ADDR },	\
	{ "auto-intervals", optional_argument, NULL, SESSION_OPT_AUTO },	\
	{ "no-auto-intervals", no_argument, NULL, SESSION_OPT_NO_AUTO }

void session_opts_default(struct session_opts *so);
/*
 * Parse session flag @c into @so.  Returns 0, EXIT_USAGE after the
 * message naming the flag, or -1 if @c is not a session flag.
 */
int session_opt(const char *cmd, int c, const char *arg, struct session_opts *so);
/*
 * After the options: the command at argv[optind] if any, exactly one of
 * it, --pid and --cgroup (@verb: "monitor", "act on"), the follow flags
 * that fit, consistent attributes.
 */
int session_opts_finish(const char *cmd, struct session_opts *so, int argc, char **argv,
			const char *verb);
/* Print the help lines of -s/-a/-u/-r/-t; @aggr says what a window is for. */
void session_attr_help(FILE *f, const char *aggr);
/* --phys-addr's line, for the commands that record. */
void session_phys_help(FILE *f);
/* Print the help lines of -p, -i, --no-inherit and --cgroup; @verb as above. */
void session_target_help(FILE *f, const char *verb);

/*
 * What a subcommand does when a process becomes a target, exec()s or
 * leaves, and when its entry is freed (struct follow_ops' user part).
 */
struct session_hooks {
	void (*joined)(void *user, struct follow_proc *p, int exec);
	void (*left)(void *user, struct follow_proc *p);
	void (*forget)(void *user, struct follow_proc *p);
	void *user;
};

struct session {
	const char *cmd;		/* the subcommand, for messages */
	struct daptrace *d;
	struct workload w;		/* the launched command, if any */
	const char *argv0;		/* its name, for messages */
	struct session_hooks hooks;	/* set before session_add_targets() */
	struct follow f;		/* the targets */
	pid_t root;			/* the command, or the first --pid */
	int following;			/* the follower is set up */
	int64_t t0;			/* CLOCK_MONOTONIC ns at "on" */
};

/*
 * Check a command can run, open the monitor, check it is off, drop stale
 * targets, set the attributes.
 */
int session_open(struct session *s, const struct session_opts *so, const char *busy_hint);
/* Fork the command (held until session_release()). */
int session_launch(struct session *s, const struct session_opts *so);
/*
 * The first targets: the command or the pids (their descendants too with
 * inheritance), the cgroup's processes, or every user process; listen to
 * process events from here on.
 */
int session_add_targets(struct session *s, const struct session_opts *so);
/* Position the reader (the first snapshot is not missed), note t0, turn on. */
int session_start(struct session *s);
/* Let the launched command run; EXIT_FAIL if it could not be exec'ed. */
int session_release(struct session *s);
/* Why to stop now (signal, @duration_us, the targets), or NULL to go on. */
const char *session_should_stop(struct session *s, uint64_t duration_us, int64_t now);
/*
 * Whether a main loop asks session_should_stop() at @now: at once on a
 * signal, else every 250 ms, as it polls the command, the module and every
 * target.  When it says yes, *@last_check moves on to @now.
 */
bool session_check_due(int64_t *last_check, int64_t now);
/*
 * A fixed cadence (stat --interval, policy --progress): whether @now has
 * reached *@next; if so, *@next moves on by whole @every_ns to the first
 * turn after @now.  A turn taken late (the loop polls every 250 ms, and a
 * busy machine runs it later still) then does not push the later ones back,
 * as `last = now` did: stat --interval 1s -d 3500ms printed 2 reports where
 * its turns fell 250 ms late twice.  Turns missed wholly are skipped, not
 * made up in a burst.
 */
bool session_due_every(int64_t *next, int64_t now, int64_t every_ns);
/* The poll timeout for an aggregation interval: 10 to 250 ms. */
int session_wait_ms(const struct daptrace_attrs *a);
/*
 * Wait up to @timeout_ms for a snapshot or a process event, then let the
 * follower act on events and scans due.  As daptrace_wait().
 */
int session_wait(struct session *s, int timeout_ms);
/*
 * A main loop (record, top, policy, stat, the exporter) reads at most this
 * many snapshots, the kernel ring's 16 slots, between two looks at its
 * clock, signals, targets and process events.  A reader slower than the
 * worker always finds another snapshot: reading "until there is none",
 * `record -d 34s` with 4096 targets stopped 15 minutes late.  Nothing is
 * dropped: what is left is read in the next turn (session_wait() returns
 * at once while snapshots wait), and what the worker overwrites meanwhile
 * is counted as missed by the reader.
 */
#define SESSION_DRAIN_BATCH	16
/*
 * session_wait() in a command's main loop: 0, also when a signal cut the
 * wait short; a failure is @cmd's, reported as fail() does.
 */
int session_wait_or_fail(struct session *s, int timeout_ms, const char *cmd);
/* The follower's summary keys for a record's trailer: at most SESSION_FOLLOW_KV. */
#define SESSION_FOLLOW_KV	16
struct rec_kv;
void session_follow_kv(const struct session *s, struct rec_kv *kv, int *n);
/* One line on what happened to processes, for the end of a run; NULL if nothing. */
const char *session_follow_summary(const struct session *s, char *buf, size_t len);
/* Turn monitoring off if on; returns the "on" state read (<0: unknown). */
int session_stop(struct session *s, int *ret);
/* Remove our targets and end the command; keep the monitor open. */
void session_end(struct session *s, int on);
void session_close(struct session *s);

#endif
