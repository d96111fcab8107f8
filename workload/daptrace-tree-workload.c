// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace-tree-workload: workloads with known ground truth for following
 * processes (process trees, cgroups, the whole machine).
 *
 * tree (the default): a parent starts --workers processes, --stagger
 * apart, each mapping its own --size of memory, populating it and then
 * touching its own hot range (--size/8 at offset (i % 4) x --size/8, so a
 * mix-up between processes shows) until --lifetime has passed; they exit
 * one after the other.  With --exec a worker exec()s this program again
 * first (the monitor must follow the exec), with --threads each worker
 * touches its hot range from one more thread as well (a thread is never a
 * target of its own), with --sweep-period DUR each of them sweeps it once
 * per DUR and sleeps in between, with --vfork N the parent also runs N
 * short commands through vfork() and exec.
 *
 * aging: one process maps --size, populates it and splits it into --areas
 * equal areas; area k stays hot (touched continuously) until k x --step
 * after the start and is idle after that, so at any time the idle age of
 * every byte is known: the ground truth of idle-time percentiles.
 *
 * idle: --workers processes that each populate --size and then sleep,
 * without a wake-up, until --lifetime has passed or they are sent SIGTERM
 * (a machine with many mostly idle processes).
 *
 * Truth (--truth-dir DIR):
 *   DIR/tree.txt: "worker <i> pid <pid> fork_ns <ns>" as each starts,
 *     "exit <i> pid <pid> exit_ns <ns>" as each is reaped, "end <ns>";
 *   DIR/worker-<i>.truth: that worker in daptrace-workload's truth format
 *     (pid, map, phase 0, hot range, end), for daptrace-score, with its
 *     progress: "sweeps <ns> <count> <thread>" (thread 0 the worker's own,
 *     1 the --threads one), written between two sweeps, at most one a ms
 *     per thread;
 *   DIR/worker-<i>.thread: with --threads, its thread's id;
 *   DIR/aging.txt: "pid", "map", "area <k> <start> <end> idle_from_ns <ns>".
 * Times are CLOCK_MONOTONIC ns, the clock of daptrace's snapshots.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "wl_args.h"

#define PAGE_SZ		4096UL
#define MAX_WORKERS	4096

struct opts {
	const char *pattern;
	unsigned int workers;
	size_t size;
	uint64_t stagger_ns, lifetime_ns, step_ns, period_ns;
	unsigned int areas;
	int exec, threads;
	unsigned int vforks;
	const char *dir;
	int worker;		/* >= 0: run as worker #worker (after --exec) */
};

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: daptrace-tree-workload [options]\n"
"  -p, --pattern NAME    tree | aging | idle (default tree)\n"
"  -w, --workers N       processes to start (default 4; at most 4096)\n"
"  -s, --size SIZE       memory per process, e.g. 64M (default 32M)\n"
"      --stagger DUR     between two starts (default 200ms)\n"
"  -l, --lifetime DUR    how long a worker runs (default 10s)\n"
"      --exec            workers exec() this program again first\n"
"      --threads         each worker touches its hot range from two threads\n"
"      --sweep-period DUR  a toucher sweeps its hot range once per DUR and\n"
"                        sleeps the rest (default 0: back to back)\n"
"      --vfork N         also run N commands through vfork()+exec\n"
"      --areas N         aging: areas (default 4)\n"
"      --step DUR        aging: area k goes idle k x DUR after the start (default 10s)\n"
"  -t, --truth-dir DIR   write the ground truth here (default .)\n"
"DUR needs a unit: ns, us, ms, s or m.\n");
}

static char *map_populated(size_t size)
{
	char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	/* small pages: the ranges are exact, whatever THP would round */
	madvise(p, size, MADV_NOHUGEPAGE);
	for (size_t off = 0; off < size; off += PAGE_SZ)
		p[off] = 1;
	return p;
}

/* One pass over [p, p + len): every page, a write so it stays resident. */
static void touch(volatile char *p, size_t len)
{
	for (size_t off = 0; off < len; off += PAGE_SZ)
		p[off]++;
}

struct hot {
	char *p;
	size_t len;
	uint64_t until_ns, period_ns;
	FILE *truth;			/* its progress lines go there */
};

/* One thread touching the hot range: thread 0 is the worker's own. */
struct toucher {
	struct hot *h;
	unsigned int thread;
	volatile pid_t tid;		/* the thread's, once it runs */
};

/* Progress lines of one thread: at most one per SWEEPS_NS. */
#define SWEEPS_NS	1000000ULL

/*
 * Sweep until the end, and say how far: "sweeps <ns> <count> <thread>",
 * @count full sweeps of the hot range by this thread by <ns>, written
 * between two sweeps.  What the worker really touched, not what it meant
 * to: a worker that is not scheduled leaves its hot range untouched for as
 * long, and the scorer must know.  With a period, one sweep per period
 * and asleep the rest (a late sweep is not caught up): four workers
 * sweeping back to back from two threads each kept the guest's two CPUs
 * busy, each worker ran in bursts 15 to 30 ms apart (VM, 5.10, a compile
 * on the host), its hot set untouched across several checks in a row.
 */
static void *toucher(void *arg)
{
	struct toucher *th = arg;
	const struct hot *h = th->h;
	uint64_t now, next = 0, sweeps = 0, said = 0, said_at = 0;

	th->tid = gettid();
	while (!stop && (now = wl_now_ns()) < h->until_ns) {
		if (sweeps != said && now >= said_at + SWEEPS_NS) {
			fprintf(h->truth, "sweeps %" PRIu64 " %" PRIu64 " %u\n", now, sweeps,
				th->thread);
			said = sweeps;
			said_at = now;
		}
		if (h->period_ns && next > now) {
			struct timespec ts = {
				.tv_sec = next / 1000000000ULL,
				.tv_nsec = next % 1000000000ULL,
			};

			clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
			continue;
		}
		touch(h->p, h->len);
		sweeps++;
		next = now + h->period_ns;
	}
	return NULL;
}

static FILE *truth_open(const struct opts *o, const char *name)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", o->dir, name);
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(1);
	}
	setvbuf(f, NULL, _IOLBF, 0);
	return f;
}

static int run_worker(const struct opts *o, unsigned int i)
{
	size_t hot = o->size / 8 / PAGE_SZ * PAGE_SZ;
	uint64_t start = wl_now_ns();
	struct toucher own, other;
	struct hot h;
	char name[64];
	pthread_t th;
	int threaded;
	FILE *t, *tf;
	char *p;

	p = map_populated(o->size);
	snprintf(name, sizeof(name), "worker-%u.truth", i);
	t = truth_open(o, name);
	h = (struct hot){ p + (i % 4) * hot, hot, start + o->lifetime_ns, o->period_ns, t };
	own = (struct toucher){ &h, 0, 0 };
	other = (struct toucher){ &h, 1, 0 };
	fprintf(t, "# daptrace-workload truth v1\npid %d\npattern tree\n", (int)getpid());
	fprintf(t, "map %" PRIxPTR " %" PRIxPTR "\n", (uintptr_t)p, (uintptr_t)p + o->size);
	fprintf(t, "phase 0 %" PRIu64 "\n", wl_now_ns());
	fprintf(t, "hot 0 %" PRIxPTR " %" PRIxPTR "\n", (uintptr_t)h.p, (uintptr_t)h.p + hot);
	threaded = o->threads && !pthread_create(&th, NULL, toucher, &other);
	/* the thread's id: the monitor must never take it for a process */
	while (threaded && !other.tid)
		usleep(1000);
	if (threaded) {
		snprintf(name, sizeof(name), "worker-%u.thread", i);
		tf = truth_open(o, name);
		fprintf(tf, "%d\n", (int)other.tid);
		fclose(tf);
	}
	toucher(&own);
	if (threaded)
		pthread_join(th, NULL);
	fprintf(t, "end %" PRIu64 " touched 0\n", wl_now_ns());
	fclose(t);
	return 0;
}

/* posix_spawn's way: the child shares our memory until it execs */
static void vfork_one(void)
{
	pid_t pid = vfork();

	if (!pid) {
		execl("/bin/true", "true", (char *)NULL);
		execl("/bin/busybox", "true", (char *)NULL);
		_exit(0);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static int run_tree(const struct opts *o, char **argv)
{
	FILE *t = truth_open(o, "tree.txt");
	pid_t pids[MAX_WORKERS];
	unsigned int started = 0, left = 0;

	for (unsigned int i = 0; i < o->workers && !stop; i++) {
		uint64_t t0 = wl_now_ns();
		pid_t pid = fork();

		if (pid < 0) {
			perror("fork");
			break;
		}
		if (!pid) {
			if (o->exec) {
				char n[16], *args[32];
				int k = 0;

				snprintf(n, sizeof(n), "%u", i);
				for (; argv[k] && k < 28; k++)
					args[k] = argv[k];
				args[k++] = "--worker";
				args[k++] = n;
				args[k] = NULL;
				execv("/proc/self/exe", args);
				_exit(127);
			}
			_exit(run_worker(o, i));
		}
		pids[i] = pid;
		started++;
		fprintf(t, "worker %u pid %d fork_ns %" PRIu64 "\n", i, (int)pid, t0);
		for (unsigned int k = 0; k < o->vforks && i == 0; k++)
			vfork_one();
		while (!stop && wl_now_ns() < t0 + o->stagger_ns)
			usleep(1000);
	}
	while (left < started) {
		int status;
		pid_t pid = waitpid(-1, &status, 0);

		if (pid < 0) {
			if (errno == EINTR) {
				/* asked to stop: so are the workers */
				for (unsigned int i = 0; i < started; i++)
					kill(pids[i], SIGTERM);
				continue;
			}
			break;
		}
		for (unsigned int i = 0; i < started; i++)
			if (pids[i] == pid) {
				fprintf(t, "exit %u pid %d exit_ns %" PRIu64 "\n", i, (int)pid, wl_now_ns());
				left++;
			}
	}
	fprintf(t, "end %" PRIu64 "\n", wl_now_ns());
	fclose(t);
	return 0;
}

static int run_aging(const struct opts *o)
{
	size_t area = o->size / o->areas / PAGE_SZ * PAGE_SZ;
	FILE *t = truth_open(o, "aging.txt");
	uint64_t start;
	char *p = map_populated(area * o->areas);

	start = wl_now_ns();
	fprintf(t, "pid %d\nmap %" PRIxPTR " %" PRIxPTR "\nstart_ns %" PRIu64 "\n", (int)getpid(),
		(uintptr_t)p, (uintptr_t)p + area * o->areas, start);
	for (unsigned int k = 0; k < o->areas; k++)
		fprintf(t, "area %u %" PRIxPTR " %" PRIxPTR " idle_from_ns %" PRIu64 "\n", k,
			(uintptr_t)p + k * area, (uintptr_t)p + (k + 1) * area,
			start + k * o->step_ns);
	/* each round touches the areas still hot; a later area stays hot longer */
	while (!stop && wl_now_ns() < start + o->lifetime_ns) {
		uint64_t now = wl_now_ns();
		int any = 0;

		for (unsigned int k = 0; k < o->areas; k++)
			if (now < start + k * o->step_ns) {
				touch(p + k * area, area);
				any = 1;
			}
		if (!any)
			usleep(10000);
	}
	fprintf(t, "end %" PRIu64 "\n", wl_now_ns());
	fclose(t);
	return 0;
}

static int run_idle(const struct opts *o)
{
	FILE *t = truth_open(o, "tree.txt");
	pid_t *pids = calloc(o->workers ? o->workers : 1, sizeof(*pids));
	unsigned int started = 0, left = 0;

	if (!pids)
		return 1;
	for (unsigned int i = 0; i < o->workers && !stop; i++) {
		pid_t pid = fork();

		if (!pid) {
			uint64_t end = wl_now_ns() + o->lifetime_ns, now;
			sigset_t set;

			/*
			 * Asleep until the end or SIGTERM/SIGINT, never woken
			 * before: a poll would make every idle process run
			 * (10 times a second each, 40960 wake-ups a second for
			 * 4096), which is not idle to a monitor that skips the
			 * targets that did not run.  Blocked, the signals are
			 * taken only by sigtimedwait(), so none is lost between
			 * a check and the sleep.
			 */
			sigemptyset(&set);
			sigaddset(&set, SIGTERM);
			sigaddset(&set, SIGINT);
			sigprocmask(SIG_BLOCK, &set, NULL);
			if (stop)
				_exit(0);
			map_populated(o->size);
			while ((now = wl_now_ns()) < end) {
				struct timespec ts = {
					.tv_sec = (end - now) / 1000000000ULL,
					.tv_nsec = (end - now) % 1000000000ULL,
				};

				if (sigtimedwait(&set, NULL, &ts) >= 0)
					break;
			}
			_exit(0);
		}
		if (pid < 0)
			break;
		pids[started++] = pid;
		fprintf(t, "worker %u pid %d fork_ns %" PRIu64 "\n", i, (int)pid, wl_now_ns());
	}
	while (left < started) {
		if (wait(NULL) > 0) {
			left++;
			continue;
		}
		if (errno != EINTR)
			break;
		/* asked to stop: so are the workers */
		for (unsigned int i = 0; i < started; i++)
			kill(pids[i], SIGTERM);
	}
	fprintf(t, "end %" PRIu64 "\n", wl_now_ns());
	fclose(t);
	free(pids);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.pattern = "tree", .workers = 4, .size = 32UL << 20,
		.stagger_ns = 200000000ULL, .lifetime_ns = 10000000000ULL,
		.step_ns = 10000000000ULL, .areas = 4, .dir = ".", .worker = -1,
	};
	unsigned int worker = 0;
	int as_worker = 0;
	const struct wl_arg args[] = {
		WL_OPT("pattern", 'p', wl_str, &o.pattern),
		WL_OPT("workers", 'w', wl_uint, &o.workers, .max = MAX_WORKERS),
		WL_OPT("size", 's', wl_size, &o.size, .flags = WL_NONZERO),
		WL_OPT("stagger", 0, wl_dur, &o.stagger_ns),
		WL_OPT("lifetime", 'l', wl_dur, &o.lifetime_ns),
		WL_OPT("exec", 0, NULL, &o.exec),
		WL_OPT("threads", 0, NULL, &o.threads),
		WL_OPT("sweep-period", 0, wl_dur, &o.period_ns),
		WL_OPT("vfork", 0, wl_uint, &o.vforks, .max = 1000),
		WL_OPT("areas", 0, wl_uint, &o.areas, .max = 64, .flags = WL_NONZERO),
		WL_OPT("step", 0, wl_dur, &o.step_ns),
		WL_OPT("truth-dir", 't', wl_str, &o.dir),
		WL_OPT("worker", 0, wl_uint, &worker, .max = MAX_WORKERS - 1, .given = &as_worker),
		{ }
	};
	struct sigaction sa = { .sa_handler = on_signal };

	if (wl_parse_args("daptrace-tree-workload", argc, argv, args, usage) < 0)
		return 2;
	if (as_worker)
		o.worker = (int)worker;
	if (o.size < 8 * PAGE_SZ) {
		fprintf(stderr, "daptrace-tree-workload: --size must be at least 32K\n");
		return 2;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	if (o.worker >= 0)
		return run_worker(&o, (unsigned int)o.worker);
	if (!strcmp(o.pattern, "tree"))
		return run_tree(&o, argv);
	if (!strcmp(o.pattern, "aging"))
		return run_aging(&o);
	if (!strcmp(o.pattern, "idle"))
		return run_idle(&o);
	fprintf(stderr, "daptrace-tree-workload: unknown pattern '%s' (tree, aging or idle)\n",
		o.pattern);
	return 2;
}
