// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace exporter end to end: the real binary ($DAPTRACE_BIN) attached
 * to a fake sysfs tree where the test plays the kernel, scraped over HTTP.
 * What it serves (values, formats, missed snapshots, a target that exits,
 * the module going away and back), promtool's lint of the text format and
 * the OpenMetrics reference parser on the other, the textfile, and bad
 * input: each a clear message or a counted event, and the exporter keeps
 * serving.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/daptrace.h>
#include <math.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "fake_sysfs.h"
#include "policy.h"
#include "run_cmd.h"
#include "session/session.h"

#define MARK	"/tmp/daptrace-exporter-test-mark"
#define BODY	(256 * 1024)

/* ---- the exporter as a child process ------------------------------------ */

struct exporter_proc {
	pid_t pid;
	char log[64];		/* its stderr */
	int port;
};

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static int read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return n < 0 ? -1 : (int)n;
}

/*
 * Start "daptrace exporter ARGS..." with DAPTRACE_SYSFS=@root; wait for its
 * "serving http://ADDR:PORT/metrics" line (or, with --no-http, @ready in
 * its log).  0, or -1 if it exited or never said so.
 */
static int exporter_start(struct exporter_proc *e, const char *root, char *const *argv,
			  const char *ready)
{
	char *args[32] = { "daptrace", "exporter" };
	char log[8192];
	int n = 2;

	strcpy(e->log, "/tmp/daptrace-exporter-log-XXXXXX");
	close(mkstemp(e->log));
	while (*argv && n < 31)
		args[n++] = *argv++;
	args[n] = NULL;
	e->port = 0;
	e->pid = fork();
	if (e->pid == 0) {
		int fd = open(e->log, O_WRONLY | O_TRUNC);

		dup2(fd, 2);
		dup2(fd, 1);
		setenv("DAPTRACE_SYSFS", root, 1);
		execv(daptrace_bin(), args);
		_exit(126);
	}
	for (int i = 0; i < 200; i++) {
		const char *p;

		read_file(e->log, log, sizeof(log));
		/* an IPv4 address in the tests: "serving http://127.0.0.1:PORT/" */
		p = strstr(log, "serving http://");
		if (p && (p = strchr(p + 15, ':')) && sscanf(p + 1, "%d", &e->port) == 1)
			return 0;
		if (ready && strstr(log, ready))
			return 0;
		if (waitpid(e->pid, NULL, WNOHANG) == e->pid) {
			e->pid = 0;
			return -1;
		}
		msleep(50);
	}
	return -1;
}

/* SIGTERM it; its exit code, or -1. */
static int exporter_stop(struct exporter_proc *e)
{
	int status;

	if (e->pid <= 0)
		return -1;
	kill(e->pid, SIGTERM);
	waitpid(e->pid, &status, 0);
	e->pid = 0;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void exporter_log(struct exporter_proc *e, char *buf, size_t len)
{
	read_file(e->log, buf, len);
}

/* ---- an HTTP client (the server is the thing under test) ---------------- */

/* GET/POST @path; the status code, the Content-Type into @type, the body. */
static int http(int port, const char *method, const char *path, const char *accept,
		char *type, size_t type_len, char *body, size_t len)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	char req[512], *buf = malloc(BODY), *p;
	size_t got = 0;
	ssize_t n;
	int fd, code = -1;

	if (!buf)
		return -1;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	fd = socket(AF_INET, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a)))
		goto out;
	snprintf(req, sizeof(req), "%s %s HTTP/1.1\r\nHost: localhost\r\n%s%s%s"
		 "Connection: close\r\n\r\n", method, path, accept ? "Accept: " : "",
		 accept ? accept : "", accept ? "\r\n" : "");
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req))
		goto out;
	while (got + 1 < BODY && (n = read(fd, buf + got, BODY - 1 - got)) > 0)
		got += (size_t)n;
	buf[got] = '\0';
	if (sscanf(buf, "HTTP/1.%*d %d", &code) != 1)
		goto out;
	p = strcasestr(buf, "\r\nContent-Type: ");
	if (type && type_len) {
		type[0] = '\0';
		if (p)
			snprintf(type, type_len, "%.*s", (int)strcspn(p + 16, "\r"), p + 16);
	}
	p = strstr(buf, "\r\n\r\n");
	snprintf(body, len, "%s", p ? p + 4 : "");
out:
	if (fd >= 0)
		close(fd);
	free(buf);
	return code;
}

static int get_metrics(int port, char *body, size_t len)
{
	return http(port, "GET", "/metrics", NULL, NULL, 0, body, len);
}

/* Value of the sample line "SERIES VALUE" in @text, or NAN. */
static double sample(const char *text, const char *series)
{
	size_t n = strlen(series);
	double v;

	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (!strncmp(p, series, n) && p[n] == ' ' && sscanf(p + n + 1, "%lf", &v) == 1)
			return v;
	return NAN;
}

/* Scrape until @series equals @want (10 s at most); the last value. */
static double wait_sample(int port, char *body, const char *series, double want)
{
	double v = NAN;

	for (int i = 0; i < 200; i++) {
		if (get_metrics(port, body, BODY) == 200) {
			v = sample(body, series);
			if (v == want)
				break;
		}
		msleep(50);
	}
	return v;
}

/* ---- the kernel's part ------------------------------------------------------ */

/*
 * Where publish() lays the regions out, one after the other: the targets
 * have a mapping there (MAPPED bytes of it), so that the exporter finds
 * their regions in memory, not in a hole between mappings.
 */
#define REGIONS_AT	0x10000000ULL
#define MAPPED		(32ULL << 20)

/* A child that sleeps under the name @name, for a real pid and comm. */
static pid_t sleeper(const char *name)
{
	pid_t pid = fork();

	if (pid == 0) {
		prctl(PR_SET_NAME, name);
		for (;;)
			pause();
	}
	return pid;
}

struct reg {
	pid_t pid;
	uint64_t size;
	uint32_t nr_accesses, age;
};

static int publish(const char *dir, const struct fake_ring *r, uint64_t seq, uint32_t flags,
		   const struct reg *in, unsigned int n)
{
	struct daptrace_region_rec regs[16];
	struct daptrace_snap_hdr h = {
		.nr_regions = n, .nr_samples = 20, .sample_us = 5000, .aggr_us = 100000,
		.flags = flags,
		/* accuracy probes: 40 of 50 accessed seen, 40 of 45 claimed right */
		.probe_pages = 64, .probe_tp = 40, .probe_fn = 10, .probe_fp = 5,
		.probe_tn = 5, .probe_unobserved = 4,
	};
	struct timespec now;
	uint64_t addr = REGIONS_AT;

	clock_gettime(CLOCK_MONOTONIC, &now);
	h.end_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	h.start_ns = h.end_ns - 100000000ULL;
	for (unsigned int i = 0; i < n; i++) {
		regs[i] = (struct daptrace_region_rec){
			.start = addr, .end = addr + in[i].size, .pid = in[i].pid,
			.nr_accesses = in[i].nr_accesses, .age = in[i].age,
			.phys_addr = DAPTRACE_NO_PHYS,
		};
		addr += in[i].size;
	}
	if (fake_slot_write(dir, r, seq, seq, &h, regs))
		return -1;
	return fake_write(dir, "snapshot_seq", "%020llu\n", (unsigned long long)seq);
}

FIXTURE(exp) {
	char dir[256];
	struct fake_ring r;
	pid_t a, b, c;
	struct exporter_proc e;
	char *body;
};

FIXTURE_SETUP(exp)
{
	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, fake_tree_create(self->dir, sizeof(self->dir)));
	self->r = (struct fake_ring){ .nr_slots = 4, .max_regions = 16, .generation = 1 };
	ASSERT_EQ(0, fake_ring_init(self->dir, &self->r));
	ASSERT_EQ(0, fake_write(self->dir, "state", "on\n"));
	ASSERT_EQ(0, fake_write(self->dir, "nr_samples_late", "0\n"));
	ASSERT_EQ(0, fake_write(self->dir, "nr_samples_busy", "0\n"));
	/* the sleepers' memory: inherited, mapped before they exist */
	ASSERT_EQ((void *)REGIONS_AT, mmap((void *)REGIONS_AT, MAPPED, PROT_NONE,
					   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
					   MAP_FIXED_NOREPLACE, -1, 0));
	self->a = sleeper("dt-alpha");
	self->b = sleeper("dt-beta");
	self->c = sleeper("dt-gamma");
	ASSERT_EQ(0, fake_write(self->dir, "target_status", "%d monitoring\n%d monitoring\n"
				"%d monitoring\n", self->a, self->b, self->c));
	self->body = malloc(BODY);
	ASSERT_NE(NULL, self->body);
}

FIXTURE_TEARDOWN(exp)
{
	if (self->e.pid > 0)
		exporter_stop(&self->e);
	if (self->e.log[0])
		unlink(self->e.log);
	for (pid_t *p = &self->a; p <= &self->c; p++)
		if (*p > 0) {
			kill(*p, SIGKILL);
			waitpid(*p, NULL, 0);
		}
	free(self->body);
	if (self->dir[0])
		fake_tree_destroy(self->dir);
}

static void series(char *buf, size_t len, const char *name, pid_t pid, const char *comm)
{
	if (pid)
		snprintf(buf, len, "%s{target=\"%d\",comm=\"%s\"}", name, (int)pid, comm);
	else
		snprintf(buf, len, "%s{target=\"other\",comm=\"\"}", name);
}

TEST_F(exp, serves_every_snapshot_of_the_running_monitor)
{
	char s[256], type[128], log[8192];
	struct reg in[] = {
		{ self->a, 8 << 20, 0, 49 }, { self->a, 2 << 20, 3, 0 },
		{ self->b, 4 << 20, 1, 0 },
		{ self->c, 1 << 20, 0, 0 }, { self->c, 1 << 20, 2, 7 },
	};
	char *argv[] = { "--attach", "--listen", "127.0.0.1:0", "--top", "2", NULL };

	ASSERT_EQ(0, exporter_start(&self->e, self->dir, argv, NULL)) {
		exporter_log(&self->e, log, sizeof(log));
		TH_LOG("%s", log);
	}
	for (uint64_t seq = 1; seq <= 3; seq++)
		ASSERT_EQ(0, publish(self->dir, &self->r, seq, 0, in, 5));
	EXPECT_EQ(3, wait_sample(self->e.port, self->body, "daptrace_last_snapshot_seq", 3));
	/* a (10 MiB) and b (4 MiB) have their own series; c is "other" */
	series(s, sizeof(s), "daptrace_working_set_bytes", self->a, "dt-alpha");
	EXPECT_EQ(2 << 20, sample(self->body, s)) TH_LOG("%s", self->body);
	series(s, sizeof(s), "daptrace_target_bytes", self->a, "dt-alpha");
	EXPECT_EQ(10 << 20, sample(self->body, s));
	series(s, sizeof(s), "daptrace_working_set_bytes", self->b, "dt-beta");
	EXPECT_EQ(4 << 20, sample(self->body, s));
	series(s, sizeof(s), "daptrace_working_set_bytes", 0, NULL);
	EXPECT_EQ(1 << 20, sample(self->body, s));
	series(s, sizeof(s), "daptrace_targets", 0, NULL);
	EXPECT_EQ(1, sample(self->body, s));
	EXPECT_EQ(NULL, strstr(self->body, "dt-gamma"));
	snprintf(s, sizeof(s), "daptrace_idle_bytes{target=\"%d\",comm=\"dt-alpha\","
		 "min_idle_seconds=\"1\"}", (int)self->a);
	EXPECT_EQ(8 << 20, sample(self->body, s));	/* 50 windows of 100 ms */
	EXPECT_EQ(3, sample(self->body, "daptrace_exporter_snapshots_read_total"));
	EXPECT_EQ(0, sample(self->body, "daptrace_exporter_snapshots_missed_total"));
	EXPECT_EQ(1, sample(self->body, "daptrace_monitor_on"));
	EXPECT_EQ(3, sample(self->body, "daptrace_monitor_targets{state=\"monitoring\"}"));
	/* the accuracy estimate, pooled over the three windows */
	EXPECT_EQ(0.8, sample(self->body, "daptrace_estimated_recall{bound=\"estimate\"}"))
		TH_LOG("%s", self->body);
	EXPECT_GT(0.8, sample(self->body, "daptrace_estimated_recall{bound=\"lo\"}"));
	EXPECT_LT(0.8, sample(self->body, "daptrace_estimated_recall{bound=\"hi\"}"));
	EXPECT_EQ(192, sample(self->body, "daptrace_accuracy_probe_pages"));
	EXPECT_EQ(12, sample(self->body, "daptrace_accuracy_probe_pages_unobserved"));
	/* the fake windows overlap: 100 ms each, published a moment apart */
	EXPECT_LT(0.099, sample(self->body, "daptrace_accuracy_window_seconds"));
	EXPECT_GT(1.0, sample(self->body, "daptrace_accuracy_window_seconds"));

	/* the text format by default, OpenMetrics when asked as Prometheus asks */
	EXPECT_EQ(200, http(self->e.port, "GET", "/metrics", "text/plain", type, sizeof(type),
			    self->body, BODY));
	EXPECT_STREQ("text/plain; version=0.0.4; charset=utf-8", type);
	EXPECT_EQ(200, http(self->e.port, "GET", "/metrics",
			    "application/openmetrics-text;version=1.0.0,text/plain;"
			    "version=0.0.4;q=0.5", type, sizeof(type), self->body, BODY));
	EXPECT_STREQ("application/openmetrics-text; version=1.0.0; charset=utf-8", type);
	EXPECT_NE(NULL, strstr(self->body, "\n# EOF\n"));
	EXPECT_NE(NULL, strstr(self->body, "# TYPE daptrace_exporter_snapshots_read counter\n"));
	EXPECT_EQ(404, http(self->e.port, "GET", "/other", NULL, NULL, 0, self->body, BODY));
	EXPECT_EQ(405, http(self->e.port, "DELETE", "/metrics", NULL, NULL, 0, self->body, BODY));
	EXPECT_EQ(200, http(self->e.port, "GET", "/", NULL, NULL, 0, self->body, BODY));
	EXPECT_NE(NULL, strstr(self->body, "/metrics"));

	/* stopped while 10 are published into 4 slots: 6 missed, counted */
	kill(self->e.pid, SIGSTOP);
	for (uint64_t seq = 4; seq <= 13; seq++)
		ASSERT_EQ(0, publish(self->dir, &self->r, seq, 0, in, 5));
	kill(self->e.pid, SIGCONT);
	EXPECT_EQ(13, wait_sample(self->e.port, self->body, "daptrace_last_snapshot_seq", 13));
	EXPECT_EQ(6, sample(self->body, "daptrace_exporter_snapshots_missed_total"));
	EXPECT_EQ(7, sample(self->body, "daptrace_exporter_snapshots_read_total"));
	EXPECT_EQ(0, exporter_stop(&self->e));
	exporter_log(&self->e, log, sizeof(log));
	/* and says what it read when it stops, as it served it last */
	EXPECT_NE(NULL, strstr(log, "stopping: terminated (SIGTERM); 7 snapshots read "
			       "(6 missed)\n")) TH_LOG("%s", log);
}

/*
 * An exporter slower than the worker always finds another snapshot
 * waiting.  It must still come back to its signals (and its renders, its
 * textfile) within a batch, read a batch more for the last render, and
 * count every snapshot.  Once it has read seq 1, this kernel publishes
 * BACKLOG snapshots while the exporter is stopped, sends SIGTERM, and keeps
 * publishing until it exits, into a ring of 4096 slots: nothing is
 * overwritten, nothing missed.  An exporter that reads "until there is
 * none" reads them all first.
 */
TEST_F(exp, stops_while_snapshots_keep_coming)
{
	enum { BACKLOG = 3000, BUDGET = 4000 };
	char *argv[] = { "--attach", "--listen", "127.0.0.1:0", NULL };
	unsigned long long snaps = 0, missed = 0;
	uint64_t seq = BACKLOG + 1;
	char log[8192];
	const char *p;

	self->r = (struct fake_ring){ .nr_slots = 4096, .max_regions = 1, .generation = 1 };
	ASSERT_EQ(0, fake_ring_init(self->dir, &self->r));
	ASSERT_EQ(0, exporter_start(&self->e, self->dir, argv, NULL));
	ASSERT_EQ(0, fake_publish_batch(self->dir, &self->r, 1, 1, self->a));
	ASSERT_EQ(1, wait_sample(self->e.port, self->body,
				 "daptrace_exporter_snapshots_read_total", 1));
	ASSERT_EQ(0, stop_child(self->e.pid));
	ASSERT_EQ(0, fake_publish_batch(self->dir, &self->r, 2, BACKLOG + 1, self->a));
	kill(self->e.pid, SIGTERM);
	kill(self->e.pid, SIGCONT);
	EXPECT_EQ(0, fake_publish_until_exit(self->dir, &self->r, &seq, BUDGET, self->a,
					     self->e.pid));
	self->e.pid = 0;	/* reaped */

	exporter_log(&self->e, log, sizeof(log));
	p = strstr(log, "stopping: terminated (SIGTERM); ");
	ASSERT_NE(NULL, p) TH_LOG("%s", log);
	ASSERT_EQ(2, sscanf(p, "stopping: terminated (SIGTERM); %llu snapshots read "
			    "(%llu missed)", &snaps, &missed)) TH_LOG("%s", log);
	/* seq 1, then a batch and the last one's: not the backlog, not the rest */
	EXPECT_GT(snaps, 1);
	EXPECT_LE(snaps, 1 + 2 * SESSION_DRAIN_BATCH) TH_LOG("read %llu of %llu published",
							     snaps, (unsigned long long)seq);
	EXPECT_EQ(0, missed);
}

TEST_F(exp, a_target_that_exits_is_counted_and_serving_goes_on)
{
	char s[256], log[8192];
	struct reg both[] = { { self->a, 4 << 20, 1, 0 }, { self->b, 2 << 20, 1, 0 } };
	char *argv[] = { "--attach", "--listen", "127.0.0.1:0", NULL };
	double v;

	/* c exited before the exporter looked: not an exit it saw */
	ASSERT_EQ(0, fake_write(self->dir, "target_status", "%d monitoring\n%d monitoring\n"
				"%d exited\n", self->a, self->b, self->c));
	ASSERT_EQ(0, exporter_start(&self->e, self->dir, argv, NULL));
	ASSERT_EQ(0, publish(self->dir, &self->r, 1, 0, both, 2));
	EXPECT_EQ(1, wait_sample(self->e.port, self->body, "daptrace_last_snapshot_seq", 1));
	series(s, sizeof(s), "daptrace_working_set_bytes", self->b, "dt-beta");
	EXPECT_EQ(2 << 20, sample(self->body, s));
	EXPECT_EQ(0, sample(self->body, "daptrace_target_exits_total"));
	ASSERT_EQ(0, fake_write(self->dir, "target_status", "%d monitoring\n%d monitoring\n",
				self->a, self->b));

	/* b exits: the kernel marks it, flags the window, then leaves it out */
	kill(self->b, SIGKILL);
	waitpid(self->b, NULL, 0);
	ASSERT_EQ(0, fake_write(self->dir, "target_status", "%d monitoring\n%d exited\n",
				self->a, self->b));
	ASSERT_EQ(0, publish(self->dir, &self->r, 2, DAPTRACE_SNAP_TARGET_EXITED, both, 2));
	ASSERT_EQ(0, publish(self->dir, &self->r, 3, 0, both, 1));
	EXPECT_EQ(1, wait_sample(self->e.port, self->body, "daptrace_target_exits_total", 1));
	EXPECT_EQ(3, wait_sample(self->e.port, self->body, "daptrace_last_snapshot_seq", 3));
	EXPECT_TRUE(isnan(sample(self->body, s))) TH_LOG("b's series are still there");
	series(s, sizeof(s), "daptrace_working_set_bytes", self->a, "dt-alpha");
	EXPECT_EQ(4 << 20, sample(self->body, s));
	EXPECT_EQ(1, sample(self->body, "daptrace_monitor_targets{state=\"exited\"}"));

	/* an exit whose target its owner removed before we looked: one more */
	ASSERT_EQ(0, fake_write(self->dir, "target_status", "%d monitoring\n", self->a));
	ASSERT_EQ(0, publish(self->dir, &self->r, 4, DAPTRACE_SNAP_TARGET_EXITED, both, 1));
	v = wait_sample(self->e.port, self->body, "daptrace_target_exits_total", 2);
	EXPECT_EQ(2, v);
	self->b = 0;		/* reaped above */
	exporter_log(&self->e, log, sizeof(log));
	EXPECT_NE(NULL, strstr(log, "dt-beta) exited; still serving")) TH_LOG("%s", log);
	EXPECT_NE(NULL, strstr(log, "already removed by the monitor's owner")) TH_LOG("%s", log);
	EXPECT_EQ(0, exporter_stop(&self->e));
}

/*
 * The working set is the bytes of the accessed regions inside the targets'
 * mappings (/proc/PID/maps), never the holes between them; a target whose
 * maps cannot be read has its regions counted whole, and said apart:
 *   a: 30 MiB idle, then 4 MiB accessed over the end of its 32 MiB
 *      mapping: 2 MiB of it mapped (4 MiB counted whole)
 *   b: 1 MiB accessed, b gone before its maps were read: 1 MiB unknown
 */
TEST_F(exp, working_set_counts_only_mapped_bytes)
{
	char s[256], log[8192];
	struct reg in[] = {
		{ self->a, 30 << 20, 0, 0 }, { self->a, 4 << 20, 1, 0 },
		{ self->b, 1 << 20, 2, 0 },
	};
	char *argv[] = { "--attach", "--listen", "127.0.0.1:0", NULL };

	kill(self->b, SIGKILL);
	waitpid(self->b, NULL, 0);
	ASSERT_EQ(0, exporter_start(&self->e, self->dir, argv, NULL)) {
		exporter_log(&self->e, log, sizeof(log));
		TH_LOG("%s", log);
	}
	ASSERT_EQ(0, publish(self->dir, &self->r, 1, 0, in, 3));
	EXPECT_EQ(1, wait_sample(self->e.port, self->body, "daptrace_last_snapshot_seq", 1));
	series(s, sizeof(s), "daptrace_working_set_bytes", self->a, "dt-alpha");
	EXPECT_EQ(2 << 20, sample(self->body, s)) TH_LOG("%s", self->body);
	series(s, sizeof(s), "daptrace_working_set_mapping_unknown_bytes", self->a, "dt-alpha");
	EXPECT_EQ(0, sample(self->body, s));
	series(s, sizeof(s), "daptrace_working_set_bytes", self->b, "");
	EXPECT_EQ(1 << 20, sample(self->body, s));
	series(s, sizeof(s), "daptrace_working_set_mapping_unknown_bytes", self->b, "");
	EXPECT_EQ(1 << 20, sample(self->body, s));
	series(s, sizeof(s), "daptrace_target_bytes", self->a, "dt-alpha");
	EXPECT_EQ(34 << 20, sample(self->body, s));
	self->b = 0;		/* reaped above */
	EXPECT_EQ(0, exporter_stop(&self->e));
}

TEST_F(exp, module_gone_and_back)
{
	char moved[300];
	struct reg one[] = { { self->a, 4 << 20, 1, 0 } };
	char *argv[] = { "--attach", "--listen", "127.0.0.1:0", NULL };

	ASSERT_EQ(0, exporter_start(&self->e, self->dir, argv, NULL));
	EXPECT_EQ(1, wait_sample(self->e.port, self->body, "daptrace_module_loaded", 1));
	snprintf(moved, sizeof(moved), "%s.gone", self->dir);
	ASSERT_EQ(0, rename(self->dir, moved));
	EXPECT_EQ(0, wait_sample(self->e.port, self->body, "daptrace_module_loaded", 0));
	EXPECT_LE(1, sample(self->body, "daptrace_exporter_read_errors_total"));
	ASSERT_EQ(0, rename(moved, self->dir));
	EXPECT_EQ(1, wait_sample(self->e.port, self->body, "daptrace_module_loaded", 1));
	ASSERT_EQ(0, publish(self->dir, &self->r, 1, 0, one, 1));
	EXPECT_EQ(1, wait_sample(self->e.port, self->body, "daptrace_last_snapshot_seq", 1));
	EXPECT_EQ(0, exporter_stop(&self->e));
}

/* promtool lints the text format; the reference client's parser the other. */
TEST_F(exp, promtool_and_openmetrics_parser_accept_the_output)
{
	char stats[] = "/tmp/daptrace-exp-stats-XXXXXX", file[] = "/tmp/daptrace-exp-out-XXXXXX";
	char cmd[512], out[4096], type[128];
	struct reg in[] = { { self->a, 8 << 20, 0, 49 }, { self->b, 2 << 20, 3, 0 } };
	char *argv[] = { "--attach", "--listen", "127.0.0.1:0", "--policy-stats", stats, NULL };
	struct pol_scheme sc;
	struct pol_engine e = { .s = &sc, .nr_schemes = 1, .nr_snapshots = 3 };
	FILE *p;
	int fd, rc;

	fd = mkstemp(stats);
	ASSERT_LE(0, fd);
	close(fd);
	pol_scheme_init(&sc, POL_PAGEOUT);
	snprintf(sc.name, sizeof(sc.name), "pageout");
	sc.st.sz_applied = 4096;
	/* the policy's own writer: its stats are linted too */
	ASSERT_EQ(0, pol_stats_save(stats, &e, 1.5, 1));
	ASSERT_EQ(0, exporter_start(&self->e, self->dir, argv, NULL));
	ASSERT_EQ(0, publish(self->dir, &self->r, 1, 0, in, 2));
	EXPECT_EQ(1, wait_sample(self->e.port, self->body, "daptrace_last_snapshot_seq", 1));
	EXPECT_EQ(1, wait_sample(self->e.port, self->body, "daptrace_policy_stats_up", 1));
	fd = mkstemp(file);
	ASSERT_LE(0, fd);
	ASSERT_EQ(strlen(self->body), (size_t)write(fd, self->body, strlen(self->body)));
	close(fd);
	if (system("command -v promtool > /dev/null 2>&1")) {
		TH_LOG("promtool missing (Debian's prometheus package): text format not linted");
	} else {
		snprintf(cmd, sizeof(cmd), "promtool check metrics < %s 2>&1", file);
		p = popen(cmd, "r");
		ASSERT_NE(NULL, p);
		out[fread(out, 1, sizeof(out) - 1, p)] = '\0';
		rc = pclose(p);
		EXPECT_EQ(0, rc) TH_LOG("promtool: %s", out);
		EXPECT_STREQ("", out);
	}
	ASSERT_EQ(200, http(self->e.port, "GET", "/metrics", "application/openmetrics-text",
			    type, sizeof(type), self->body, BODY));
	fd = open(file, O_WRONLY | O_TRUNC);
	ASSERT_EQ(strlen(self->body), (size_t)write(fd, self->body, strlen(self->body)));
	close(fd);
	snprintf(cmd, sizeof(cmd), "/usr/bin/python3 -c 'import sys\n"
		 "from prometheus_client.openmetrics.parser import text_string_to_metric_families"
		 " as p\n"
		 "n = sum(len(f.samples) for f in p(open(sys.argv[1]).read()))\n"
		 "print(n)' %s 2>&1", file);
	if (system("/usr/bin/python3 -c 'import prometheus_client' > /dev/null 2>&1")) {
		unlink(file);
		unlink(stats);
		SKIP(return, "python3-prometheus-client missing: OpenMetrics not parsed");
	}
	p = popen(cmd, "r");
	ASSERT_NE(NULL, p);
	out[fread(out, 1, sizeof(out) - 1, p)] = '\0';
	rc = pclose(p);
	EXPECT_EQ(0, rc) TH_LOG("OpenMetrics parser: %s", out);
	EXPECT_LT(40, atoi(out)) TH_LOG("samples parsed: %s", out);
	unlink(file);
	unlink(stats);
	EXPECT_EQ(0, exporter_stop(&self->e));
}

TEST_F(exp, textfile_written_atomically_and_failures_counted)
{
	char dir[] = "/tmp/daptrace-exp-tf-XXXXXX", path[128], log[8192];
	char *text = malloc(BODY);
	char *argv[] = { "--attach", "--no-http", "--textfile", dir, "--textfile-interval",
			 "100ms", NULL };
	struct stat st;
	int i;

	ASSERT_NE(NULL, text);
	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/daptrace.prom", dir);
	ASSERT_EQ(0, exporter_start(&self->e, self->dir, argv, "writing")) {
		exporter_log(&self->e, log, sizeof(log));
		TH_LOG("%s", log);
	}
	for (i = 0; i < 100 && stat(path, &st); i++)
		msleep(50);
	ASSERT_EQ(0, stat(path, &st));
	/* the temporary name is gone after each rename */
	for (i = 0; i < 100; i++) {
		ASSERT_LE(0, read_file(path, text, BODY));
		if (sample(text, "daptrace_exporter_textfile_writes_total") >= 2)
			break;
		msleep(50);
	}
	EXPECT_LE(2, sample(text, "daptrace_exporter_textfile_writes_total"));
	EXPECT_EQ(0, sample(text, "daptrace_exporter_textfile_write_errors_total"));

	/* the directory goes away: writes fail, are counted, and it goes on */
	unlink(path);
	ASSERT_EQ(0, rmdir(dir));
	msleep(500);
	ASSERT_EQ(0, mkdir(dir, 0755));
	for (i = 0; i < 100; i++) {
		if (read_file(path, text, BODY) > 0 &&
		    sample(text, "daptrace_exporter_textfile_write_errors_total") >= 1)
			break;
		msleep(50);
	}
	EXPECT_LE(1, sample(text, "daptrace_exporter_textfile_write_errors_total")) TH_LOG("%s", text);
	exporter_log(&self->e, log, sizeof(log));
	EXPECT_NE(NULL, strstr(log, "(counted; still trying)")) TH_LOG("%s", log);
	EXPECT_NE(NULL, strstr(log, "works again")) TH_LOG("%s", log);
	/* stopped: no stale metrics left for node_exporter */
	EXPECT_EQ(0, exporter_stop(&self->e));
	EXPECT_NE(0, stat(path, &st));
	rmdir(dir);
	free(text);
}

TEST_F(exp, config_file_and_the_command_line_over_it)
{
	char conf[] = "/tmp/daptrace-exp-conf-XXXXXX", log[8192];
	struct reg in[] = { { self->a, 4 << 20, 1, 0 }, { self->b, 2 << 20, 1, 0 } };
	char *argv[] = { "--config", conf, "--listen", "127.0.0.1:0", NULL };
	char s[256];
	FILE *f;
	int fd = mkstemp(conf);

	ASSERT_LE(0, fd);
	f = fdopen(fd, "w");
	/* this address cannot be bound: the command line's must win */
	fputs("# the exporter's settings\n\nattach\n  listen   192.0.2.1:9798  \n--top 1\n", f);
	fclose(f);
	ASSERT_EQ(0, exporter_start(&self->e, self->dir, argv, NULL)) {
		exporter_log(&self->e, log, sizeof(log));
		TH_LOG("%s", log);
	}
	ASSERT_EQ(0, publish(self->dir, &self->r, 1, 0, in, 2));
	EXPECT_EQ(1, wait_sample(self->e.port, self->body, "daptrace_last_snapshot_seq", 1));
	series(s, sizeof(s), "daptrace_targets", 0, NULL);
	EXPECT_EQ(1, sample(self->body, s));	/* --top 1 from the file */
	EXPECT_EQ(0, exporter_stop(&self->e));
	unlink(conf);
}

/* ---- bad input: a message naming the flag or line; nothing started ------- */

static const struct {
	const char *config;	/* written to the config file, if any */
	char *const *argv;
	int code;
	const char *msg;
} bad[] = {
	{ NULL, A("exporter", "--listen", "localhost:9798", "--attach"), 2,
	  "--listen: invalid value 'localhost:9798' (expected ADDRESS:PORT" },
	{ NULL, A("exporter", "--listen", "127.0.0.1", "--attach"), 2, "--listen: invalid value" },
	{ NULL, A("exporter", "--listen", "127.0.0.1:65536", "--attach"), 2, "invalid value" },
	{ NULL, A("exporter", "--listen", "[::1:80", "--attach"), 2, "invalid value '[::1:80'" },
	{ NULL, A("exporter", "--listen", "", "--attach"), 2, "--listen: invalid value ''" },
	{ NULL, A("exporter", "--listen", "192.0.2.1:0", "--", "touch", MARK), 1,
	  "--listen 192.0.2.1:0: cannot listen: Cannot assign requested address "
	  "(not an address of this machine)" },
	{ NULL, A("exporter", "--top", "0", "--attach"), 2, "--top: invalid value '0'" },
	{ NULL, A("exporter", "--top", "10001", "--attach"), 2, "from 1 to 10000" },
	{ NULL, A("exporter", "--idle-buckets", "10s,1s", "--attach"), 2,
	  "--idle-buckets: invalid value '10s,1s'" },
	{ NULL, A("exporter", "--idle-buckets", "10", "--attach"), 2, "--idle-buckets" },
	{ NULL, A("exporter", "--idle-buckets", "1s,", "--attach"), 2, "--idle-buckets" },
	{ NULL, A("exporter", "--idle-percentiles", "50,101", "--attach"), 2,
	  "--idle-percentiles: invalid value '50,101'" },
	{ NULL, A("exporter", "--idle-percentiles", "50,50", "--attach"), 2, "increasing" },
	{ NULL, A("exporter", "--textfile-interval", "1ms", "--attach"), 2, "at least 100ms" },
	{ NULL, A("exporter", "--no-http", "--attach"), 2, "--no-http needs --textfile" },
	{ NULL, A("exporter", "--attach", "-p", "1"), 2, "give no --pid, no --cgroup and no command" },
	{ NULL, A("exporter", "--attach", "--cgroup", "/"), 2, "give no --pid, no --cgroup" },
	{ NULL, A("exporter", "--attach", "--aggr", "200ms"), 2, "never changes the monitor" },
	{ NULL, A("exporter", "--attach", "--", "touch", MARK), 2, "give no --pid" },
	{ NULL, A("exporter"), 2, "nothing to monitor (or --attach)" },
	{ NULL, A("exporter", "--bogus"), 2, "unknown option '--bogus'" },
	{ NULL, A("exporter", "--policy-stats", "", "--attach"), 2, "--policy-stats: invalid" },
	{ NULL, A("exporter", "--textfile", "/nonexistent/dir", "--", "touch", MARK), 2,
	  "--textfile /nonexistent/dir: No such file or directory" },
	{ NULL, A("exporter", "--textfile", "/etc/passwd", "--attach"), 2,
	  "--textfile /etc/passwd: not a directory" },
	/* sysfs refuses new files even to root: a directory nobody can write */
	{ NULL, A("exporter", "--textfile", "/sys/kernel", "--", "touch", MARK), 2,
	  "--textfile /sys/kernel: cannot write .daptrace.prom.tmp there: Permission denied" },
	{ NULL, A("exporter", "--config", "/nonexistent.conf", "--attach"), 2,
	  "--config /nonexistent.conf: No such file" },
	{ "attach\ntpo 3\n", NULL, 2, ":2: unknown option 'tpo'" },
	{ "top\n", NULL, 2, ":1: option 'top' needs a value" },
	{ "attach yes\n", NULL, 2, ":1: option 'attach' takes no value" },
	{ "config /etc/x\n", NULL, 2, ":1: unknown option 'config'" },
	{ "# top\nattach\ntop 0\n", NULL, 2, "--top: invalid value '0'" },
	/* the kernel interface is checked after the flags, so this is 1 */
	{ NULL, A("exporter", "--listen", "127.0.0.1:0", "--attach"), 1,
	  "cannot open the kernel interface" },
};

TEST(bad_input)
{
	char out[8192], conf[] = "/tmp/daptrace-exp-bad-XXXXXX";
	int fd = mkstemp(conf);

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_LE(0, fd);
	close(fd);
	setenv("DAPTRACE_SYSFS", "/nonexistent/daptrace", 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *const with_config[] = { "exporter", "--config", conf, NULL };
		char *const *argv = bad[i].argv;
		int code;

		if (bad[i].config) {
			FILE *f = fopen(conf, "w");

			fputs(bad[i].config, f);
			fclose(f);
			argv = with_config;
		}
		unlink(MARK);
		code = run_daptrace(argv, out, sizeof(out));
		EXPECT_EQ(bad[i].code, code) TH_LOG("case %zu: %s", i, out);
		EXPECT_NE(NULL, strstr(out, bad[i].msg))
			TH_LOG("case %zu: want '%s' in: %s", i, bad[i].msg, out);
		if (bad[i].config && bad[i].code == 2 && !strstr(bad[i].msg, ":"))
			EXPECT_NE(NULL, strstr(out, conf)) TH_LOG("case %zu: no file:line", i);
		EXPECT_NE(0, access(MARK, F_OK)) TH_LOG("case %zu ran the command", i);
	}
	unlink(conf);
}

TEST(port_in_use)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	char out[8192], listen_at[64];
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0), code;

	SKIP_UNLESS_DAPTRACE_BIN();
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ASSERT_EQ(0, bind(fd, (struct sockaddr *)&a, sizeof(a)));
	ASSERT_EQ(0, listen(fd, 1));
	ASSERT_EQ(0, getsockname(fd, (struct sockaddr *)&a, &len));
	snprintf(listen_at, sizeof(listen_at), "127.0.0.1:%d", ntohs(a.sin_port));
	unlink(MARK);
	setenv("DAPTRACE_SYSFS", "/nonexistent/daptrace", 1);
	code = run_daptrace(A("exporter", "--listen", listen_at, "--", "touch", MARK), out,
			    sizeof(out));
	EXPECT_EQ(1, code) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "cannot listen: Address already in use (another program, "
			       "or another exporter, listens there)")) TH_LOG("%s", out);
	EXPECT_NE(0, access(MARK, F_OK)) TH_LOG("the command ran");
	close(fd);
}

TEST_HARNESS_MAIN
