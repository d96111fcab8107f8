// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter: serve the monitor's snapshots as Prometheus /
 * OpenMetrics metrics on /metrics, and/or write them for node_exporter's
 * textfile collector (docs/exporter.md).
 *
 * Two ways to get snapshots:
 *   - its own session, like record: -p PIDS or a command, attributes as
 *     flags; monitoring is turned off and the targets removed on exit;
 *   - --attach: read the monitor someone else runs (record, policy, a
 *     script writing sysfs, a boot script), never
 *     changing it; off/on cycles and a reloaded module are followed.
 * Either way this is one more lossless reader of the snapshot ring: every
 * snapshot is read (missed ones are counted), and the metrics are rendered
 * by this thread; a scrape only copies the newest text.  The options are
 * exporter_opts.c's.
 */
#include <errno.h>
#include <inttypes.h>
#include <linux/daptrace.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "daptrace.h"
#include "exporter.h"
#include "common/proc_info.h"
#include "session/session.h"
#include "common/units.h"

#define CMD		"exporter"
#define NS_PER_MS	1000000LL
#define NS_PER_S	1000000000LL
/*
 * One render a second (and one when a target exits): scrapes come every 5 s
 * or more, and rendering each window (10 a second by default) cost the
 * exporter ~8 % of a TCG vCPU for nothing (bench/exporter.sh).
 */
#define RENDER_NS	(1000 * NS_PER_MS)
#define REOPEN_NS	(1000 * NS_PER_MS)
/*
 * A target's map is read again at most this often (a read costs ~0.1 ms
 * per 100 mappings), less often with many targets: as the recorder does,
 * this period per MAPS_PER_PERIOD of them.
 */
#define MAPS_EVERY_NS	(1000 * NS_PER_MS)
#define MAPS_PER_PERIOD	64
#define WAIT_MS		250


struct exporter {
	struct exp_opts *o;
	int own;			/* our own session, not --attach */
	struct session s;		/* s.d: the handle, NULL while the module is gone */
	/* read into snap[cur]; the newest read is folded at the next render */
	struct daptrace_snapshot snap[2];
	int cur, have_newest;
	struct exp_view view;
	struct exp_health health;
	struct exp_counts n;
	struct exp_policy pol;
	struct exp_http *http;
	struct exp_textfile tf;
	char *text;			/* the newest text-format render */
	size_t text_len;
	uint64_t missed_before;		/* by handles closed since */
	pid_t counted_exits[DAPTRACE_MAX_TARGETS];
	int nr_counted_exits;
	int exit_pending;		/* a snapshot said a target exited */
	int targets_known;		/* target_status read since (re)opening */
	struct exp_comm { pid_t pid; char comm[EXP_COMM_LEN]; } *comm;
	struct exp_maps maps;		/* the targets' mapped ranges */
	int nr_comm, cap_comm;
	int64_t t0, rendered_ns, textfile_ns, reopen_ns;
	int cmd_exited_said;
	struct acc_pool *acc;		/* every snapshot's probes, pooled */
};

/* ---- the reader thread's work ------------------------------------------ */

static const char *comm_of(void *ctx, pid_t pid)
{
	struct exporter *x = ctx;
	struct exp_comm *c;
	struct proc_stat st;

	for (int i = 0; i < x->nr_comm; i++)
		if (x->comm[i].pid == pid)
			return x->comm[i].comm;
	if (x->nr_comm == x->cap_comm) {
		int cap = x->cap_comm ? 2 * x->cap_comm : 16;

		c = realloc(x->comm, (size_t)cap * sizeof(*c));
		if (!c)
			return NULL;
		x->comm = c;
		x->cap_comm = cap;
	}
	c = &x->comm[x->nr_comm++];
	c->pid = pid;
	/* "" if it is gone */
	snprintf(c->comm, sizeof(c->comm), "%s",
		 proc_stat_read("/proc", pid, &st) ? "" : st.comm);
	return c->comm;
}

static int mapped_of(void *ctx, pid_t pid, const struct rec_range **r, size_t *n)
{
	const struct exporter *x = ctx;

	return exp_maps_of(&x->maps, pid, r, n);
}

/*
 * Keep the names of the targets shown and of those the monitor still lists
 * (an exited one is named in its message); a pid seen again is read again.
 */
static void comm_trim(struct exporter *x, const struct daptrace_target *t, int n)
{
	int k = 0;

	for (int i = 0; i < x->nr_comm; i++) {
		int keep = 0;

		for (int g = 0; g < x->view.nr_groups; g++)
			keep |= x->view.g[g].pid == x->comm[i].pid;
		for (int j = 0; j < n; j++)
			keep |= t[j].pid == x->comm[i].pid;
		if (keep)
			x->comm[k++] = x->comm[i];
	}
	x->nr_comm = k;
}

static int exit_counted(const struct exporter *x, pid_t pid)
{
	for (int i = 0; i < x->nr_counted_exits; i++)
		if (x->counted_exits[i] == pid)
			return 1;
	return 0;
}

/*
 * Targets from target_status: the states for the metrics, and each exit
 * counted once (a pid leaves the counted set when its owner removes it,
 * so that a reused pid counts again).  A snapshot that said a target
 * exited with no exited target left to see (its owner removed it first)
 * still counts one.
 */
static void note_targets(struct exporter *x, const struct daptrace_target *t, int n)
{
	int k = 0, found = 0;

	memset(x->health.targets_by_state, 0, sizeof(x->health.targets_by_state));
	for (int i = 0; i < n; i++) {
		if ((unsigned int)t[i].state <= DAPTRACE_TARGET_EXITED)
			x->health.targets_by_state[t[i].state]++;
		if (t[i].state != DAPTRACE_TARGET_EXITED)
			continue;
		/* exits from before we looked (at start, after a reopen) are not ours */
		if (x->targets_known && !exit_counted(x, t[i].pid)) {
			const char *name = comm_of(x, t[i].pid);

			x->n.target_exits++;
			found = 1;
			warn_msg(CMD, "target %d (%s) exited; still serving", (int)t[i].pid,
				 name && *name ? name : "name unknown");
		}
	}
	for (int i = 0; i < n; i++)
		if (t[i].state == DAPTRACE_TARGET_EXITED && k < DAPTRACE_MAX_TARGETS)
			x->counted_exits[k++] = t[i].pid;
	x->nr_counted_exits = k;
	x->targets_known = 1;
	if (x->exit_pending && !found) {
		x->n.target_exits++;
		warn_msg(CMD, "a target exited (already removed by the monitor's owner); "
			 "still serving");
	}
	x->exit_pending = 0;
}

/* The handle failed: the module is gone (or going).  Reopened later. */
static void lost_interface(struct exporter *x, const char *what)
{
	x->n.read_errors++;
	warn_msg(CMD, "%s: %s; serving what is known, retrying every second", what,
		 daptrace_last_error());
	x->missed_before += daptrace_reader_missed(x->s.d);
	daptrace_close(x->s.d);
	x->s.d = NULL;
	x->health = (struct exp_health){ .on = -1 };
	x->reopen_ns = session_now_ns();
	x->targets_known = 0;
}

static void try_reopen(struct exporter *x, int64_t now)
{
	struct daptrace *d;

	if (now - x->reopen_ns < REOPEN_NS)
		return;
	x->reopen_ns = now;
	if (daptrace_open(&d) < 0)
		return;
	if (daptrace_reader_init(d) < 0) {
		daptrace_close(d);
		return;
	}
	x->s.d = d;
	warn_msg(CMD, "the kernel interface is back (%s)", daptrace_root(d));
}

static void refresh_health(struct exporter *x)
{
	struct daptrace_target t[DAPTRACE_MAX_TARGETS];
	struct exp_health *h = &x->health;
	struct daptrace *d = x->s.d;
	int n;

	if (!d) {
		*h = (struct exp_health){ .on = -1 };
		return;
	}
	h->module_loaded = 1;
	h->on = daptrace_is_on(d);
	if (h->on < 0) {
		lost_interface(x, "reading the state");
		return;
	}
	h->have_counters = !daptrace_get_counters(d, &h->c);
	/* optional counters: an older module may not have them */
	h->have_late = !daptrace_read_counter(d, "nr_samples_late", &h->samples_late);
	h->have_busy = !daptrace_read_counter(d, "nr_samples_busy", &h->samples_busy);
	h->have_attrs = !daptrace_get_attrs(d, &h->a);
	n = daptrace_get_targets(d, t, DAPTRACE_MAX_TARGETS);
	if (n < 0) {
		x->n.read_errors++;
		return;
	}
	n = n < DAPTRACE_MAX_TARGETS ? n : DAPTRACE_MAX_TARGETS;
	note_targets(x, t, n);
	comm_trim(x, t, n);
}

/* Every snapshot is counted; only the newest is folded, at the next render. */
static void on_snapshot(struct exporter *x)
{
	const struct daptrace_snapshot *s = &x->snap[x->cur];

	x->n.snapshots_read++;
	if (s->probes && s->probe_pages) {
		const struct rec_probes c = {
			.pages = s->probe_pages, .tp = s->probe_tp, .fn = s->probe_fn,
			.fp = s->probe_fp, .tn = s->probe_tn, .unobserved = s->probe_unobserved,
		};

		if (!x->acc) {
			x->acc = malloc(sizeof(*x->acc));
			if (x->acc)
				acc_pool_init(x->acc, ACC_DEF_POOL_NS, ACC_DEF_MIN_ACCESSED);
		}
		if (x->acc)
			acc_pool_add(x->acc, s->end_ns, &c);
	}
	if (s->flags & DAPTRACE_SNAP_TRUNCATED)
		x->n.snapshots_truncated++;
	if (s->flags & DAPTRACE_SNAPSHOT_TARGET_EXITED)
		x->exit_pending = 1;
	x->have_newest = 1;
	x->cur ^= 1;
}

/* Fold the newest snapshot read since the last render into the view. */
static void fold_newest(struct exporter *x)
{
	const struct daptrace_snapshot *s = &x->snap[x->cur ^ 1];
	int64_t every = MAPS_EVERY_NS;

	if (!x->have_newest)
		return;
	x->have_newest = 0;
	if (x->view.nr_targets > MAPS_PER_PERIOD)
		every *= x->view.nr_targets / MAPS_PER_PERIOD;
	/* short of memory, the maps of the last fold serve (a new target's: none) */
	if (exp_maps_update(&x->maps, s, session_now_ns(), every))
		warn_msg(CMD, "out of memory reading the targets' maps");
	if (exp_view_update(&x->view, &x->o->cfg, s, comm_of, mapped_of, x))
		warn_msg(CMD, "out of memory folding snapshot %" PRIu64, s->seq);
	x->view.has_acc = x->acc && acc_pool_estimate(x->acc, &x->view.acc);
	if (x->view.has_acc) {
		const struct acc_window *w = &x->acc->w[x->acc->first];

		/* from the start of the oldest window pooled to the newest's end */
		x->view.acc_span_ns = s->end_ns - w->end_ns + (s->end_ns - s->start_ns);
	}
}

static void render(struct exporter *x, int64_t now)
{
	struct metric_set m;
	char *text, *om;
	size_t text_len, om_len;

	x->rendered_ns = now;
	fold_newest(x);
	refresh_health(x);
	exp_policy_refresh(&x->pol, &x->n, now);
	if (x->http)
		x->n.scrapes = exp_http_scrapes(x->http);
	mset_init(&m);
	exp_metrics_build(&m, &x->o->cfg, &x->view, &x->health, &x->n, &x->pol);
	x->n.series_dropped = m.dropped;
	text = mset_render(&m, 0, &text_len);
	om = x->http ? mset_render(&m, 1, &om_len) : NULL;
	mset_free(&m);
	if (!text || (x->http && !om)) {
		free(text);
		free(om);
		warn_msg(CMD, "out of memory rendering the metrics");
		return;
	}
	free(x->text);
	x->text = text;
	x->text_len = text_len;
	if (x->http) {
		char *copy = malloc(text_len + 1);

		if (!copy) {
			free(om);
			return;
		}
		memcpy(copy, text, text_len + 1);
		exp_http_publish(x->http, copy, text_len, om, om_len);
	}
}

/*
 * Read the snapshots published so far, at most SESSION_DRAIN_BATCH of them
 * (those the worker overwrote meanwhile are counted as missed by the
 * reader).  True if it stopped there: more may be waiting.
 */
static bool drain(struct exporter *x)
{
	unsigned int n = 0;
	int ret;

	while (x->s.d && n < SESSION_DRAIN_BATCH &&
	       (ret = daptrace_read_next(x->s.d, &x->snap[x->cur])) != 0) {
		if (ret < 0) {
			lost_interface(x, "reading snapshots");
			break;
		}
		on_snapshot(x);
		n++;
	}
	if (x->s.d)
		x->n.snapshots_missed = x->missed_before + daptrace_reader_missed(x->s.d);
	return n == SESSION_DRAIN_BATCH;
}

static const char *should_stop(struct exporter *x, int64_t now)
{
	if (session_stop_signal)
		return session_stop_signal == SIGINT ? "interrupted (SIGINT)" :
						       "terminated (SIGTERM)";
	if (x->o->so.duration_us && now - x->t0 >= (int64_t)x->o->so.duration_us * 1000)
		return "duration reached";
	if (x->s.w.pid && !x->cmd_exited_said && workload_poll(&x->s.w)) {
		x->cmd_exited_said = 1;
		warn_msg(CMD, "the command exited; still serving until SIGTERM or --duration");
	}
	return NULL;
}

/*
 * How long to sleep between drains, 0 to wait for each snapshot.  The ring
 * holds daptrace_reader_slots() windows: draining every half of them (and
 * at least once a second, for the render) misses none and leaves the other
 * half for a late wake-up, so the exporter need not wake for every snapshot
 * (10 a second by default).  Under TCG each wake-up switches address spaces
 * on a vCPU, which empties QEMU's software TLB and makes the monitor's next
 * rounds there dearer (bench/exporter.sh).  Until a snapshot was read, the
 * window and the ring are not known: wait for one.
 */
static int64_t batch_ns(const struct exporter *x)
{
	const struct daptrace_snapshot *last = &x->snap[x->cur ^ 1];
	uint32_t slots = x->s.d ? daptrace_reader_slots(x->s.d) : 0;
	int64_t ns;

	if (!slots || !x->n.snapshots_read)
		return 0;
	ns = (int64_t)last->aggr_us * 1000 * (slots / 2);
	return ns < RENDER_NS ? ns : RENDER_NS;
}

/* Read, render and write until a signal or --duration; why it stopped. */
static const char *run_loop(struct exporter *x)
{
	const char *why;
	bool more = false;

	for (;;) {
		int64_t now, batch = batch_ns(x);

		/* after a full batch the rest is waiting: read on, unslept */
		if (x->s.d && batch && !x->s.following && !more) {
			struct timespec ts = { batch / NS_PER_S, batch % NS_PER_S };

			nanosleep(&ts, NULL);
		} else if (x->s.d) {
			/* following a tree or a cgroup: its events cannot wait */
			int err = x->s.following ? session_wait(&x->s, WAIT_MS) :
						   daptrace_wait(x->s.d, WAIT_MS);

			if (err < 0 && err != -EINTR)
				lost_interface(x, "waiting for snapshots");
		} else {
			struct timespec ts = { 0, WAIT_MS * NS_PER_MS };

			nanosleep(&ts, NULL);
			try_reopen(x, session_now_ns());
		}
		more = drain(x);
		now = session_now_ns();
		if (now - x->rendered_ns >= RENDER_NS || x->exit_pending)
			render(x, now);
		if (x->tf.path && now - x->textfile_ns >= (int64_t)x->o->textfile_us * 1000) {
			/* fresh, with the previous writes' outcome in it */
			x->textfile_ns = now;
			render(x, now);
			if (x->text)
				exp_textfile_write(&x->tf, x->text, x->text_len, &x->n);
		}
		why = should_stop(x, now);
		if (why)
			return why;
	}
}

/* ---- setup and teardown ------------------------------------------------- */

static int start_monitor(struct exporter *x)
{
	const struct exp_opts *o = x->o;
	int err;

	x->s.cmd = CMD;
	if (!x->own) {
		if (daptrace_open(&x->s.d) < 0)
			return fail(CMD, "cannot open the kernel interface: %s",
				    daptrace_last_error());
		if (daptrace_reader_init(x->s.d) < 0)
			return fail(CMD, "%s", daptrace_last_error());
		return 0;
	}
	err = session_open(&x->s, &o->so, "use --attach to read it");
	if (!err)
		err = session_launch(&x->s, &o->so);
	if (!err)
		err = session_add_targets(&x->s, &o->so);
	if (!err)
		err = session_start(&x->s);
	if (!err)
		err = session_release(&x->s);
	return err;
}

/* SIGINT/SIGTERM for this thread only: the server's thread inherits the mask. */
static int start_http(struct exporter *x)
{
	sigset_t block, old;
	char bound[128];
	int err;

	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	err = exp_http_start(&x->http, x->o->listen, "--listen", bound, sizeof(bound));
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err)
		fprintf(stderr, "%s %s: serving http://%s/metrics\n", prog, CMD, bound);
	return err;
}

static int run(struct exporter *x)
{
	const struct exp_opts *o = x->o;
	const char *why;
	int err;

	if (o->textfile) {
		err = exp_textfile_open(&x->tf, o->textfile);
		if (err)
			return err;
	}
	x->pol.path = o->policy_stats;
	session_catch_signals();
	/* a port in use or a bad address fails before any monitoring starts */
	if (!o->no_http) {
		err = start_http(x);
		if (err)
			return err;
	}
	err = start_monitor(x);
	if (err)
		return err;
	x->t0 = session_now_ns();
	if (o->textfile)
		fprintf(stderr, "%s %s: writing %s every %.3g s\n", prog, CMD, x->tf.path,
			(double)o->textfile_us / 1e6);
	render(x, x->t0);
	why = run_loop(x);
	/* the last window: a batch more at most, as in the loop */
	drain(x);
	render(x, session_now_ns());
	/* what this reader did, as the metrics said it last */
	warn_msg(CMD, "stopping: %s; %" PRIu64 " snapshots read (%" PRIu64 " missed)", why,
		 x->n.snapshots_read, x->n.snapshots_missed);
	return 0;
}

static int teardown(struct exporter *x, int ret)
{
	if (x->own) {
		int on = session_stop(&x->s, &ret);

		session_end(&x->s, on);
	}
	exp_http_stop(x->http);
	exp_textfile_close(&x->tf);
	exp_policy_free(&x->pol);
	exp_view_free(&x->view);
	free(x->acc);
	daptrace_snapshot_free(&x->snap[0]);
	daptrace_snapshot_free(&x->snap[1]);
	free(x->text);
	free(x->comm);
	exp_maps_free(&x->maps);
	session_close(&x->s);
	return ret;
}

int cmd_exporter(int argc, char **argv)
{
	struct exp_opts o;
	struct exporter x = { .o = &o };
	int ret;

	ret = exp_parse_opts(argc, argv, &o);
	if (!ret) {
		x.own = !o.attach;
		x.health.on = -1;
		ret = teardown(&x, run(&x));
	}
	exp_opts_free(&o);
	return ret;
}
