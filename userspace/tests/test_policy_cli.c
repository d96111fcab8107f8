// SPDX-License-Identifier: GPL-2.0-only
/*
 * daptrace policy's bad input: every wrong scheme, file or flag exits with 2
 * and a message naming the flag or FILE:LINE, before anything is done (the
 * command is never started, the kernel interface never opened).  And on a
 * fake sysfs tree, where the test plays the kernel: a policy behind the
 * worker still stops on a signal, and its record has the target's maps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "common/maps.h"
#include "common/recfile.h"
#include "fake_sysfs.h"
#include "run_cmd.h"
#include "run_json.h"
#include "session/session.h"

#define MARK "/tmp/daptrace-policy-test-mark"
#define RUN(...) A("policy", __VA_ARGS__, "--", "touch", MARK)

static const struct {
	char *const *argv;
	int code;
	const char *msg;
} cases[] = {
	{ A("policy", "--help"), 0, "SCHEME: ACTION [NODE]" },
	{ A("policy", "-p", "1"), 2, "no scheme: give --scheme" },
	{ A("policy", "-S", "stat"), 2, "nothing to act on" },
	{ A("policy", "-S", "stat", "-p", "1", "--", "true"), 2, "either --pid, --cgroup or a command" },
	{ A("policy", "-S", "stat", "--cgroup", "/tmp"), 2, "--cgroup /tmp is not a cgroup v2 directory" },
	{ A("record", "--cgroup", "/a", "--cgroup", "/b", "--", "true"), 2,
	  "--cgroup given twice ('/a', '/b')" },
	{ A("policy", "-S", "stat", "--cgroup", "/", "--cgroup", "/tmp"), 2,
	  "--cgroup /tmp is not a cgroup v2 directory" },
	{ RUN("-S", "evict"), 2, "--scheme 'evict': unknown action 'evict'" },
	{ RUN("-S", "migrate_hot 4095"), 2, "node 4095 does not exist" },
	{ RUN("-S", "pageout wmarks=node4095,50,40,20"), 2, "wmarks: node 4095 does not exist" },
	{ RUN("-S", "pageout quota=0/1s"), 2, "a quota of 0 acts on nothing" },
	{ RUN("-S", "pageout freq=0-200"), 2, "freq=0-200: expected MIN-MAX percent" },
	{ RUN("-P", "fast"), 2, "--preset: invalid value 'fast' (expected reclaim, tiering or tmo)" },
	{ RUN("-f", "/nonexistent/schemes"), 2, "--scheme-file /nonexistent/schemes: No such file" },
	{ RUN("-S", "stat", "--aggr", "1ms"), 2, "aggregation interval must be >= sample" },
	{ RUN("-S", "stat", "--duration", "0"), 2, "--duration: invalid value '0'" },
	{ RUN("-S", "stat", "--progress", "1us"), 2, "--progress: invalid value '1us'" },
	{ RUN("-S", "stat", "--progress", "18446744073709551615us"), 2, "from 10ms to 1000000000s" },
	{ RUN("-S", "stat", "--bogus"), 2, "unknown option '--bogus'" },
	/* not warned every tick: refused before anything is done */
	{ RUN("-S", "stat", "--stats-json", "/nonexistent/x.json"), 2,
	  "--stats-json /nonexistent/x.json: No such file" },
	{ RUN("-S", "stat", "--stats-csv", "/tmp"), 2, "--stats-csv /tmp: Is a directory" },
	{ RUN("-S", "stat", "--stats-csv", ""), 2, "--stats-csv: invalid value '' (empty file name)" },
	{ RUN("-S", "stat", "-o", "/nonexistent/r.csv"), 2, "--record /nonexistent/r.csv: No such" },
	{ RUN("-S", "stat", "-o", "-"), 2, "--record: invalid value '-'" },
	/* goals: the grammar, then the files they read, before anything starts */
	{ RUN("-S", "pageout quota=1M/1s goal=stall:1ms"), 2,
	  "--scheme 'pageout quota=1M/1s goal=stall:1ms': goal=stall:1ms: unknown metric 'stall'" },
	{ RUN("-S", "pageout quota=1M/1s goal=psi:5s"), 2, "at most the window" },
	{ RUN("-S", "pageout quota=1M/1s goal=free:150%"), 2, "free target '150%'" },
	{ RUN("-S", "pageout goal=rss:1G"), 2, "goal=rss:1G needs quota=" },
	{ RUN("-S", "pageout quota=1M/1s goal=psi@/daptrace-no-such-cgroup:1ms"), 2,
	  "(pageout): goal=psi@/daptrace-no-such-cgroup:1ms: " },
	{ RUN("-S", "pageout quota=1M/1s goal=user@/nonexistent/v:1"), 2,
	  "goal=user@/nonexistent/v:1: /nonexistent/v: No such file" },
	{ RUN("-S", "pageout quota=1M/1s goal=free@node4095:10%"), 2, "node 4095 does not exist" },
	{ A("policy", "-S", "pageout quota=1M/1s goal=psi@targets:1ms", "-p", "2147483646"), 2,
	  "goal=psi@targets:1ms: no such process: 2147483646" },
	{ A("policy", "-P", "tmo", "-p", "2147483646"), 2,
	  "--preset tmo (pageout): goal=psi@targets:0.1%: no such process: 2147483646" },
};

TEST(argument_errors)
{
	char out[8192];

	SKIP_UNLESS_DAPTRACE_BIN();
	/* if anything got as far as the kernel, it would fail with 1, not 2 */
	setenv("DAPTRACE_SYSFS", "/nonexistent/daptrace", 1);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int code;

		unlink(MARK);
		code = run_daptrace(cases[i].argv, out, sizeof(out));
		EXPECT_EQ(cases[i].code, code) TH_LOG("case %zu: %s", i, out);
		EXPECT_NE(NULL, strstr(out, cases[i].msg))
			TH_LOG("case %zu: want '%s' in: %s", i, cases[i].msg, out);
		EXPECT_NE(0, access(MARK, F_OK)) TH_LOG("case %zu ran the command", i);
	}
}

TEST(scheme_file_error_names_the_line)
{
	char out[8192], path[] = "/tmp/daptrace-schemes-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_LE(0, fd);
	f = fdopen(fd, "w");
	fputs("# reclaim\npageout freq=0-0 age=5s-max\n\ncold age=5s\n", f);
	fclose(f);
	setenv("DAPTRACE_SYSFS", "/nonexistent/daptrace", 1);
	unlink(MARK);
	EXPECT_EQ(2, run_daptrace(RUN("-f", path), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, ":4: age=5s: expected MIN-MAX")) TH_LOG("%s", out);
	EXPECT_NE(0, access(MARK, F_OK));
	/* a good file gets as far as the kernel interface: exit 1 there */
	f = fopen(path, "w");
	fputs("pageout freq=0-0\n", f);
	fclose(f);
	EXPECT_EQ(1, run_daptrace(A("policy", "-q", "-f", path, "-p", "1"), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "cannot open the kernel interface")) TH_LOG("%s", out);
	unlink(path);
}

/*
 * --config FILE (the service's settings): its errors name FILE:LINE, it
 * comes first, and a good one gets as far as the kernel interface with the
 * command line's options after the file's.
 */
TEST(config_file)
{
	static const struct {
		const char *text;
		const char *msg;
	} bad[] = {
		{ "preset tmo\nbogus 1\n", ":2: unknown option 'bogus'" },
		{ "# x\nquiet yes\n", ":2: option 'quiet' takes no value" },
		{ "preset\n", ":1: option 'preset' needs a value" },
		{ "config /etc/x\n", ":1: unknown option 'config'" },
		{ "scheme pageout quota=1M/1s goal=stall:1ms\n", "unknown metric 'stall'" },
		{ "preset tmo\ncgroup /\ncgroup /tmp\n", "--cgroup /tmp is not a cgroup v2 directory" },
	};
	char out[8192], path[] = "/tmp/daptrace-policy-conf-XXXXXX";
	int fd = mkstemp(path);
	FILE *f;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_LE(0, fd);
	close(fd);
	setenv("DAPTRACE_SYSFS", "/nonexistent/daptrace", 1);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		f = fopen(path, "w");
		ASSERT_NE(NULL, f);
		fputs(bad[i].text, f);
		fclose(f);
		EXPECT_EQ(2, run_daptrace(A("policy", "--config", path), out, sizeof(out)))
			TH_LOG("case %zu: %s", i, out);
		EXPECT_NE(NULL, strstr(out, bad[i].msg)) TH_LOG("case %zu: %s", i, out);
	}
	EXPECT_EQ(2, run_daptrace(A("policy", "-q", "--config", path), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--config comes first")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("policy", "--config", "/nonexistent/p.conf"), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--config /nonexistent/p.conf: No such file")) TH_LOG("%s", out);
	f = fopen(path, "w");
	ASSERT_NE(NULL, f);
	fputs("# the service's\n  --preset   tmo  \nquiet\n", f);
	fclose(f);
	EXPECT_EQ(1, run_daptrace(A("policy", "--config", path, "-p", "1"), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "cannot open the kernel interface")) TH_LOG("%s", out);
	unlink(path);
}

/* Start daptrace @argv on the fake tree @dir, its output into @out. */
static pid_t start_policy(const char *dir, const char *out, char *const *argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		dup2(fd, 2);
		setenv("DAPTRACE_SYSFS", dir, 1);
		execv(daptrace_bin(), argv);
		_exit(126);
	}
	return pid;
}

/*
 * A policy slower than the worker always finds another snapshot waiting.
 * It must still come back to its signals (and its clock, its targets)
 * within a batch, and count every snapshot it read.  This kernel publishes
 * BACKLOG snapshots while the policy is stopped, sends SIGTERM, and keeps
 * publishing until the policy exits, into a ring of 4096 slots: nothing
 * is overwritten, nothing missed.  A policy that reads "until there is
 * none" reads them all before it looks at the signal.
 */
TEST(stops_while_snapshots_keep_coming)
{
	enum { BACKLOG = 3000, BUDGET = 4000 };
	struct fake_ring r = { .nr_slots = 4096, .max_regions = 1, .generation = 1 };
	char dir[256], out[512], buf[8192], pid_arg[16];
	unsigned long long snaps = 0, missed = 0;
	uint64_t seq = BACKLOG;
	pid_t target, policy;
	const char *p;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, fake_tree_create(dir, sizeof(dir)));
	snprintf(out, sizeof(out), "%s/policy.out", dir);
	target = fork();
	if (target == 0) {
		pause();
		_exit(0);
	}
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)target);
	policy = start_policy(dir, out, A("daptrace", "policy", "-S", "stat", "-p", pid_arg));
	/* "on": the reader is in place, the first snapshot is seq 1 */
	ASSERT_EQ(0, fake_wait_for(dir, "state", "on", 5000));
	fake_write(dir, "target_status", "%d monitoring\n", (int)target);
	ASSERT_EQ(0, fake_ring_init(dir, &r));
	ASSERT_EQ(0, stop_child(policy));
	ASSERT_EQ(0, fake_publish_batch(dir, &r, 1, BACKLOG, target));
	kill(policy, SIGTERM);
	kill(policy, SIGCONT);
	EXPECT_EQ(0, fake_publish_until_exit(dir, &r, &seq, BUDGET, target, policy));
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);

	fake_read(dir, "policy.out", buf, sizeof(buf));
	p = strstr(buf, "policy: ");
	ASSERT_NE(NULL, p) TH_LOG("%s", buf);
	ASSERT_EQ(2, sscanf(p, "policy: %*f s, %llu snapshots (%llu missed)", &snaps, &missed))
		TH_LOG("%s", buf);
	EXPECT_NE(NULL, strstr(p, "stopped: terminated (SIGTERM)")) TH_LOG("%s", buf);
	/* it read, and it stopped after a batch: not the backlog, not the rest */
	EXPECT_GE(snaps, 1);
	EXPECT_LE(snaps, SESSION_DRAIN_BATCH) TH_LOG("read %llu of %llu published", snaps,
						      (unsigned long long)seq);
	EXPECT_EQ(0, missed);
	fake_tree_destroy(dir);
}

/* A page-aligned end of one of @pid's mappings with a hole after it; 0 if none. */
static uint64_t end_before_hole(pid_t pid)
{
	struct maps m = { .pid = pid };
	uint64_t end = 0;

	if (maps_refresh(&m))
		return 0;
	for (size_t i = 0; i + 1 < m.n && !end; i++)
		if (m.e[i + 1].start >= m.e[i].end + 4096)
			end = m.e[i].end;
	maps_free(&m);
	return end;
}

/* Publish window @seq: the one region @reg, accessed. */
static int publish_region(const char *dir, const struct fake_ring *r, uint64_t seq,
			  const struct daptrace_region_rec *reg)
{
	struct daptrace_snap_hdr h = {
		.nr_regions = 1, .nr_samples = 20, .sample_us = 5000, .aggr_us = 100000,
	};
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	h.end_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	h.start_ns = h.end_ns - 100000000ULL;
	if (fake_slot_write(dir, r, seq, seq, &h, reg))
		return -1;
	return fake_write(dir, "snapshot_seq", "%020llu\n", (unsigned long long)seq);
}

/* #maps rows of @pid in a record, and their ranges. */
struct maps_seen {
	pid_t pid;
	uint64_t reads, ranges, snapshots;
};

static int count_maps(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct maps_seen *c = arg;

	(void)info;
	c->snapshots++;
	for (uint32_t i = 0; i < s->nr_maps; i++) {
		if (s->maps[i].pid != c->pid)
			continue;
		c->reads++;
		c->ranges += s->maps[i].nr;
	}
	return 0;
}

/*
 * policy --record writes the target's maps as the recorder does (#maps
 * rows, recfile.h), so that report wss counts only the bytes inside them.
 * The one region, accessed, is a page of a mapping and the page of the hole
 * after it: 4096 bytes of working set, not 8192 "mapping unknown".
 */
TEST(record_has_the_targets_maps)
{
	struct fake_ring r = { .nr_slots = 4096, .max_regions = 1, .generation = 1 };
	static char report[1 << 20];	/* a point per window */
	char dir[256], rec[512], out[4096], pid_arg[16];
	struct daptrace_region_rec reg = { .nr_accesses = 10, .phys_addr = DAPTRACE_NO_PHYS };
	struct maps_seen seen = { 0 };
	struct rec_info info = { 0 };
	struct json_object *j, *v;
	char err[256];
	uint64_t seq = 0, hole;
	pid_t target, policy;
	int status;

	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, fake_tree_create(dir, sizeof(dir)));
	snprintf(rec, sizeof(rec), "%s/policy.csv", dir);
	snprintf(out, sizeof(out), "%s/policy.out", dir);
	target = fork();
	if (target == 0) {
		pause();
		_exit(0);
	}
	hole = end_before_hole(target);
	ASSERT_NE(0, hole);
	reg.start = hole - 4096;
	reg.end = hole + 4096;
	reg.pid = target;
	seen.pid = target;
	snprintf(pid_arg, sizeof(pid_arg), "%d", (int)target);
	policy = start_policy(dir, out, A("daptrace", "policy", "-q", "-S", "stat", "-p", pid_arg,
					  "--record", rec));
	ASSERT_EQ(0, fake_wait_for(dir, "state", "on", 5000));
	fake_write(dir, "target_status", "%d monitoring\n", (int)target);
	ASSERT_EQ(0, fake_ring_init(dir, &r));
	/* windows for half a second, then until it stopped */
	for (int i = 0; i < 50; i++) {
		struct timespec ms10 = { 0, 10000000 };

		ASSERT_EQ(0, publish_region(dir, &r, ++seq, &reg));
		nanosleep(&ms10, NULL);
	}
	kill(policy, SIGTERM);
	while (waitpid(policy, &status, WNOHANG) == 0 && seq < 4000) {
		struct timespec ms1 = { 0, 1000000 };

		ASSERT_EQ(0, publish_region(dir, &r, ++seq, &reg));
		nanosleep(&ms1, NULL);
	}
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	fake_read(dir, "policy.out", out, sizeof(out));
	ASSERT_EQ(0, rec_read_path(rec, 0, count_maps, &seen, &info, err, sizeof(err)))
		TH_LOG("%s; %s", err, out);
	rec_info_free(&info);
	ASSERT_GE(seen.snapshots, 1) TH_LOG("%s", out);
	/* read as it joined: the mapping and at least one other */
	EXPECT_GE(seen.reads, 1);
	EXPECT_GE(seen.ranges, 2);
	j = run_daptrace_json(A("report", "wss", "--json", rec), report, sizeof(report));
	ASSERT_NE(NULL, j) TH_LOG("%s", report);
	v = json_at(j, "wss_bytes.p100");
	EXPECT_EQ(4096, v ? json_object_get_int64(v) : -1);
	v = json_at(j, "mapping_unknown_snapshots");
	EXPECT_EQ(0, v ? json_object_get_int64(v) : -1);
	json_object_put(j);
	fake_tree_destroy(dir);
}

TEST_HARNESS_MAIN
