// SPDX-License-Identifier: GPL-2.0-only
/*
 * The recorder's own cost with many targets, on the host: no module, no
 * VM.  Forks N idle processes (64 KiB touched, then pause()), points
 * `daptrace record -p` at a fake sysfs (userspace/tests/fake_sysfs.h) and
 * plays the kernel: a snapshot every 100 ms with DAMON's three initial
 * regions of each process (its extent without the two largest gaps of
 * its /proc/PID/maps), as the module builds them.  Prints the recorder's
 * CPU per window over windows 30 to (SECS * 10 - 10), read from its
 * /proc/PID/stat, then its totals (setup and teardown included).
 *
 *   cc -O2 -D_GNU_SOURCE -Iinclude/uapi -Iuserspace/tests \
 *	-o build/record-targets-host bench/record-targets-host.c
 *   DAPTRACE=userspace/build/daptrace build/record-targets-host N SECS [record args]
 *
 * For a profile, point DAPTRACE at a wrapper that runs
 * `perf record --call-graph dwarf -- daptrace "$@"`.
 */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fake_sysfs.h"

#define NS_PER_MS	1000000LL
#define FIRST_WINDOW	30

struct range {
	uint64_t start, end;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* user + system ticks of @pid, 0 if unknown */
static unsigned long cpu_ticks(pid_t pid)
{
	unsigned long ut = 0, st = 0;
	char path[64], buf[1024], *p;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (fgets(buf, sizeof(buf), f) && (p = strrchr(buf, ')')))
		sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st);
	fclose(f);
	return ut + st;
}

/* The module's three initial regions: the extent less the two largest gaps. */
static int three_regions(pid_t pid, struct range out[3])
{
	struct range g1 = { 0, 0 }, g2 = { 0, 0 }, t;
	uint64_t s, e, prev = 0, first = 0;
	char path[64], line[512];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &s, &e) != 2 ||
		    s >= 0xffffffffff600000ULL)		/* vsyscall */
			continue;
		if (!first) {
			first = s;
		} else if (s > prev) {
			t = (struct range){ prev, s };
			if (t.end - t.start > g1.end - g1.start) {
				g2 = g1;
				g1 = t;
			} else if (t.end - t.start > g2.end - g2.start) {
				g2 = t;
			}
		}
		prev = e;
	}
	fclose(f);
	if (g1.start > g2.start) {
		t = g1;
		g1 = g2;
		g2 = t;
	}
	out[0] = (struct range){ first, g1.start };
	out[1] = (struct range){ g1.end, g2.start };
	out[2] = (struct range){ g2.end, prev };
	return 0;
}

static void idle_child(void)
{
	char *m = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (m != MAP_FAILED)
		memset(m, 1, 65536);
	for (;;)
		pause();
}

/* target_status as the module writes it: a page, then "# N more" */
static void write_status(const char *dir, const pid_t *pids, int n)
{
	char *st = malloc(4096 + 64);
	int len = 0, more = 0;

	if (!st)
		return;
	for (int i = 0; i < n; i++) {
		if (len > 4096 - 40)
			more++;
		else
			len += sprintf(st + len, "%d monitoring\n", (int)pids[i]);
	}
	if (more)
		sprintf(st + len, "# %d more\n", more);
	fake_write(dir, "target_status", "%s", st);
	fake_write(dir, "nr_targets", "%d\n", n);
	free(st);
}

static pid_t start_recorder(const char *out, const pid_t *pids, int n, int secs,
			    char **extra, int nr_extra)
{
	char dur[32], *arg = calloc((size_t)n, 12), *args[64];
	int a = 0;
	pid_t pid;

	if (!arg)
		return -1;
	for (int i = 0; i < n; i++)
		sprintf(arg + strlen(arg), "%s%d", i ? "," : "", (int)pids[i]);
	snprintf(dur, sizeof(dur), "%ds", secs);
	args[a++] = getenv("DAPTRACE") ? getenv("DAPTRACE") : "daptrace";
	args[a++] = "record";
	args[a++] = "-q";
	args[a++] = "-o";
	args[a++] = (char *)out;
	args[a++] = "-p";
	args[a++] = arg;
	args[a++] = "-d";
	args[a++] = dur;
	for (int i = 0; i < nr_extra && a < 63; i++)
		args[a++] = extra[i];
	args[a] = NULL;
	pid = fork();
	if (!pid) {
		execvp(args[0], args);
		_exit(127);
	}
	free(arg);
	return pid;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 512, secs = argc > 2 ? atoi(argv[2]) : 12;
	struct fake_ring ring = { .nr_slots = 16, .generation = 1 };
	uint64_t seq = 0, last = (uint64_t)secs * 10 - 10, seq1 = 0;
	pid_t *pids = calloc((size_t)n, sizeof(*pids)), rec;
	struct range *ranges = calloc((size_t)n * 3, sizeof(*ranges));
	struct daptrace_region_rec *recs = calloc((size_t)n * 3, sizeof(*recs));
	unsigned long cpu0 = 0, cpu1 = 0;
	char dir[256], out[512], buf[16];
	struct rusage ru;
	int64_t t0, t;
	int status;

	if (n < 1 || secs < 5 || !pids || !ranges || !recs || fake_tree_create(dir, sizeof(dir)))
		return 1;
	setenv("DAPTRACE_SYSFS", dir, 1);
	for (int i = 0; i < n; i++) {
		pids[i] = fork();
		if (!pids[i])
			idle_child();
	}
	usleep(200000);
	for (int i = 0; i < n; i++)
		if (three_regions(pids[i], &ranges[i * 3]))
			return 2;
	snprintf(out, sizeof(out), "%s/out.csv", dir);
	rec = start_recorder(out, pids, n, secs, argv + 3, argc > 3 ? argc - 3 : 0);
	for (int i = 0; i < 600000; i++) {
		if (fake_read(dir, "state", buf, sizeof(buf)) > 0 && !strncmp(buf, "on", 2))
			break;
		usleep(1000);
	}
	write_status(dir, pids, n);
	ring.max_regions = (uint32_t)n * 3;
	if (fake_ring_init(dir, &ring))
		return 3;
	t0 = t = now_ns();
	for (;;) {
		struct daptrace_snap_hdr h = { .nr_regions = (uint32_t)n * 3, .nr_samples = 20,
					       .sample_us = 5000, .aggr_us = 100000 };

		t += 100 * NS_PER_MS;
		while (now_ns() < t)
			usleep(1000);
		if (fake_read(dir, "state", buf, sizeof(buf)) <= 0 || strncmp(buf, "on", 2))
			break;
		seq++;
		h.end_ns = (uint64_t)now_ns();
		h.start_ns = h.end_ns - 100 * NS_PER_MS;
		for (int i = 0; i < n * 3; i++)
			recs[i] = (struct daptrace_region_rec){
				.start = ranges[i].start, .end = ranges[i].end,
				.nr_accesses = (uint32_t)((seq + i) % 3), .age = (uint32_t)seq,
				.pid = pids[i / 3], .nr_present = 20, .node_samples = { 20 },
				.phys_addr = DAPTRACE_NO_PHYS,
			};
		fake_slot_write(dir, &ring, seq, seq, &h, recs);
		fake_write(dir, "snapshot_seq", "%020llu\n", (unsigned long long)seq);
		if (seq == FIRST_WINDOW)
			cpu0 = cpu_ticks(rec);
		if (seq == last) {
			cpu1 = cpu_ticks(rec);
			seq1 = seq;
		}
	}
	wait4(rec, &status, 0, &ru);
	printf("targets %d, %d regions a window, %" PRIu64 " windows, exit %d\n", n, n * 3, seq,
	       WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	if (seq1 > FIRST_WINDOW && cpu1 >= cpu0)
		printf("steady: %.2f ms CPU a window (windows %d-%" PRIu64 ")\n",
		       (double)(cpu1 - cpu0) * 1000.0 / (double)sysconf(_SC_CLK_TCK) /
		       (double)(seq1 - FIRST_WINDOW), FIRST_WINDOW, seq1);
	printf("total: user %.3f s, system %.3f s over %.1f s\n",
	       (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
	       (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
	       (double)(now_ns() - t0) / 1e9);
	for (int i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	while (wait(NULL) > 0)
		;
	if (getenv("KEEP"))
		printf("kept %s\n", dir);
	else
		fake_tree_destroy(dir);
	return 0;
}
