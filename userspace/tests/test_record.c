// SPDX-License-Identifier: GPL-2.0-only
/*
 * End to end on a fake sysfs tree: `daptrace record` runs against this test,
 * which plays the kernel (waits for "on", publishes snapshots, reports the
 * target exited, waits for "off").  The record must be complete and exact,
 * also when interrupted, and the report modes must read it.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include <json-c/json.h>

#include "kselftest_harness.h"
#include "fake_sysfs.h"
#include "cli.h"
#include "common/recfile.h"
#include "session/record_output.h"
#include "read_text.h"
#include "run_cmd.h"
#include "run_json.h"

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Wait until <dir>/<name> starts with @want; 0 on success. */
/*
 * The pid last written to <dir>/target, or -1 after @ms.  The fake's files
 * are regular files that libdaptrace opens with O_TRUNC and then writes: a
 * reader can find one empty while the recorder adds another target (a
 * command's children join right after "on"), which a sysfs attribute never
 * shows.  An empty read is that moment, not an answer.
 */
static int read_target(const char *dir, long ms)
{
	char buf[64];
	int pid;

	for (long i = 0; i < ms; i++) {
		if (fake_read(dir, "target", buf, sizeof(buf)) > 0 &&
		    sscanf(buf, "%d", &pid) == 1)
			return pid;
		sleep_ms(1);
	}
	return -1;
}

struct counted {
	uint64_t snapshots, missed, regions;
	uint64_t last_seq;
	uint64_t footprints, rss, vsz;	/* the last footprint read */
	uint64_t maps, map_ranges;	/* #maps reads, their ranges */
};

static int count(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	struct counted *c = arg;

	(void)info;
	c->snapshots++;
	c->missed += s->missed_before;
	c->regions += s->nr_regions;
	c->last_seq = s->seq;
	c->footprints += s->nr_footprints;
	c->maps += s->nr_maps;
	c->map_ranges += s->nr_map_ranges;
	if (s->nr_footprints) {
		c->rss = s->footprints[0].rss;
		c->vsz = s->footprints[0].vsz;
	}
	return 0;
}

/*
 * @gz holds a complete gzip record of @nr snapshots, and @old the file
 * "previous record" that was at @gz before: renamed, not overwritten.
 */
static void check_gz_kept_old(struct __test_metadata *_metadata, const char *gz,
			      const char *old, uint64_t nr)
{
	char err[512], buf[16] = "";
	struct counted c = { 0 };
	struct rec_info info;
	FILE *f;

	f = fopen(old, "r");
	ASSERT_NE(NULL, f);
	EXPECT_NE(NULL, fgets(buf, sizeof(buf), f));
	fclose(f);
	EXPECT_STREQ("previous record", buf);
	/* gzip on disk, read as is */
	f = fopen(gz, "r");
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0x1f, fgetc(f));
	EXPECT_EQ(0x8b, fgetc(f));
	fclose(f);
	ASSERT_EQ(0, rec_read_path(gz, 0, count, &c, &info, err, sizeof(err))) TH_LOG("%s", err);
	EXPECT_EQ(nr, c.snapshots);
	EXPECT_TRUE(info.complete);
	rec_info_free(&info);
}

FIXTURE(rec) {
	char dir[256];
	char out[512];
	pid_t recorder;
};

FIXTURE_SETUP(rec)
{
	SKIP_UNLESS_DAPTRACE_BIN();
	ASSERT_EQ(0, fake_tree_create(self->dir, sizeof(self->dir)));
	snprintf(self->out, sizeof(self->out), "%s/out.csv", self->dir);
	setenv("DAPTRACE_SYSFS", self->dir, 1);
}

FIXTURE_TEARDOWN(rec)
{
	if (self->dir[0])
		fake_tree_destroy(self->dir);
}

/* Start `daptrace record` in the background with @extra args. */
static pid_t start_recorder(const char *out, char *const *extra)
{
	char *args[32] = { "daptrace", "record", "-q", "-o", (char *)out };
	int n = 5;
	pid_t pid;

	while (*extra && n < 31)
		args[n++] = *extra++;
	args[n] = NULL;
	pid = fork();
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		execv(daptrace_bin(), args);
		_exit(126);
	}
	return pid;
}

static int recorder_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Play the kernel: publish @n snapshots of the pid in <dir>/target. */
static int fake_kernel_run(const char *dir, int n, long gap_ms, pid_t *pid_out)
{
	struct fake_ring r = { .nr_slots = 8, .max_regions = 16, .generation = 1 };
	int pid;

	if (fake_wait_for(dir, "state", "on", 5000))
		return -1;
	pid = read_target(dir, 5000);
	if (pid < 0)
		return -1;
	*pid_out = pid;
	fake_write(dir, "target_status", "%d monitoring\n", pid);
	if (fake_ring_init(dir, &r))
		return -1;
	for (int seq = 1; seq <= n; seq++) {
		if (fake_publish(dir, &r, seq, 6, pid))
			return -1;
		if (gap_ms)
			sleep_ms(gap_ms);
	}
	return 0;
}

/*
 * Play the kernel for @n snapshots 30 ms apart, then end the target: the
 * exit code of @recorder, or -1 where playing failed.
 */
static int run_to_target_exit(const char *dir, int n, pid_t recorder)
{
	pid_t pid = 0;

	if (fake_kernel_run(dir, n, 30, &pid))
		return -1;
	fake_write(dir, "target_status", "%d exited\n", pid);
	return recorder_exit(recorder);
}

/* Start @exe with @argv in the background, stdout and stderr to /dev/null. */
static pid_t start_quiet(const char *exe, char *const *argv)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);

		dup2(null, 1);
		dup2(null, 2);
		execv(exe, argv);
		_exit(126);
	}
	return pid;
}

/* The record that was at @path before a test writes there; 0 or -1. */
static int write_previous(const char *path)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs("previous record\n", f);
	return fclose(f);
}

TEST_F(rec, command_until_target_exits)
{
	struct rec_info info;
	struct counted c = { 0 };
	char err[512], buf[64];
	pid_t pid = 0;

	self->recorder = start_recorder(self->out, A("--", "sleep", "30"));
	/*
	 * poll() never fires on a regular file, so the recorder looks every
	 * 100 ms (its timeout); 8 slots x 30 ms keeps it from falling behind.
	 */
	ASSERT_EQ(0, fake_kernel_run(self->dir, 12, 30, &pid));
	ASSERT_GT(pid, 0);
	fake_write(self->dir, "target_status", "%d exited\n", pid);
	ASSERT_EQ(0, fake_wait_for(self->dir, "state", "off", 5000));
	ASSERT_EQ(0, recorder_exit(self->recorder));
	/* the recorder removed its target and did not leave the command behind */
	ASSERT_GT(fake_read(self->dir, "target_remove", buf, sizeof(buf)), 0);
	EXPECT_EQ(pid, atoi(buf));
	EXPECT_EQ(-1, kill(pid, 0));

	ASSERT_EQ(0, rec_read_path(self->out, 0, count, &c, &info, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(12, c.snapshots);
	EXPECT_EQ(0, c.missed);
	EXPECT_EQ(72, c.regions);
	/* the command's footprint with the windows it was alive in */
	EXPECT_GE(c.footprints, 6);
	EXPECT_GT(c.rss, 0);
	EXPECT_GE(c.vsz, c.rss);
	/* its map, read as it joined, for the reports to leave out the holes */
	EXPECT_GE(c.maps, 1);
	EXPECT_GE(c.map_ranges, 2);
	EXPECT_TRUE(info.complete);
	EXPECT_STREQ("all targets exited", rec_info_trailer(&info, "reason"));
	EXPECT_STREQ("0", rec_info_trailer(&info, "missed"));
	EXPECT_STREQ("12", rec_info_trailer(&info, "snapshots"));
	EXPECT_STREQ("sleep 30", rec_info_get(&info, "command"));
	EXPECT_STREQ("100000", rec_info_get(&info, "aggr_us"));
	ASSERT_EQ(1, info.nr_targets);
	EXPECT_EQ(pid, info.targets[0].pid);
	rec_info_free(&info);
}

/* Play the kernel while monitoring is on: a snapshot of @pid every 100 ms. */
static int fake_kernel_until_off(const char *dir, pid_t pid, int max)
{
	struct fake_ring r = { .nr_slots = 8, .max_regions = 16, .generation = 1 };
	char buf[16];
	int seq = 0;

	if (fake_wait_for(dir, "state", "on", 5000) || fake_ring_init(dir, &r))
		return -1;
	while (seq < max && fake_read(dir, "state", buf, sizeof(buf)) > 0 &&
	       !strncmp(buf, "on", 2)) {
		if (fake_publish(dir, &r, ++seq, 4, pid))
			return -1;
		sleep_ms(100);
	}
	return seq;
}

/*
 * A command's children join while it runs (#target rows with their parent,
 * their comm once they exec'ed and their cgroup) and leave when they exit
 * (#exit rows); the record ends when the last of the tree has exited.
 * --update 200ms: without process events the scan finds them too.
 */
TEST_F(rec, command_tree_children_join_and_leave)
{
	struct counted c = { 0 };
	struct rec_info info;
	char err[512];
	const struct rec_target *root;
	int sleeps = 0, seq, pid;

	self->recorder = start_recorder(self->out, A("-a", "100ms", "-u", "200ms", "--",
						     "sh", "-c", "sleep 1 & sleep 1 & wait"));
	ASSERT_EQ(0, fake_wait_for(self->dir, "state", "on", 5000));
	pid = read_target(self->dir, 5000);
	ASSERT_GT(pid, 0);
	seq = fake_kernel_until_off(self->dir, pid, 100);
	ASSERT_GT(seq, 5);
	ASSERT_EQ(0, recorder_exit(self->recorder));
	ASSERT_EQ(0, rec_read_path(self->out, 0, count, &c, &info, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_STREQ("command exited", rec_info_trailer(&info, "reason"));
	EXPECT_STREQ("tree", rec_info_get(&info, "follow"));
	ASSERT_GE(info.nr_targets, 3);
	root = &info.targets[0];
	EXPECT_STREQ("sh", root->comm);
	EXPECT_EQ(0, root->time_ns);
	for (int i = 1; i < info.nr_targets; i++) {
		const struct rec_target *t = &info.targets[i];

		if (t->ppid != root->pid)
			continue;
		sleeps += !strcmp(t->comm, "sleep");
		EXPECT_GT(t->time_ns, 0);
		/* joined while monitoring, left before the end */
		EXPECT_NE(REC_NO_EXIT, t->exit_ns);
		EXPECT_GT(t->exit_ns, t->time_ns);
		EXPECT_NE(NULL, t->cgroup);
	}
	EXPECT_EQ(2, sleeps);
	EXPECT_STREQ("2", rec_info_trailer(&info, "targets_joined"));
	EXPECT_STREQ("3", rec_info_trailer(&info, "targets_exited"));
	rec_info_free(&info);
}

TEST_F(rec, pid_attributes_and_overrun)
{
	struct rec_info info;
	struct counted c = { 0 };
	char err[512], buf[64];
	pid_t target, pid = 0;

	target = fork();
	if (target == 0) {
		pause();
		_exit(0);
	}
	snprintf(buf, sizeof(buf), "%d", (int)target);
	self->recorder = start_recorder(self->out, A("-p", buf, "--sample", "1ms",
						     "--aggr", "200ms", "--update", "2s",
						     "--regions", "20-2000", "--tlb-flush", "mm"));
	/* 40 snapshots into 8 slots in a burst: most are overwritten */
	ASSERT_EQ(0, fake_kernel_run(self->dir, 40, 0, &pid));
	EXPECT_EQ(target, pid);
	sleep_ms(300);
	fake_write(self->dir, "target_status", "%d exited\n", pid);
	ASSERT_EQ(0, fake_wait_for(self->dir, "state", "off", 5000));
	ASSERT_EQ(0, recorder_exit(self->recorder));
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);

	ASSERT_GT(fake_read(self->dir, "sample_us", buf, sizeof(buf)), 0);
	EXPECT_STREQ("1000\n", buf);
	ASSERT_GT(fake_read(self->dir, "max_nr_regions", buf, sizeof(buf)), 0);
	EXPECT_STREQ("2000\n", buf);
	ASSERT_GT(fake_read(self->dir, "tlb_flush", buf, sizeof(buf)), 0);
	EXPECT_STREQ("mm\n", buf);

	ASSERT_EQ(0, rec_read_path(self->out, 0, count, &c, &info, err, sizeof(err)))
		TH_LOG("%s", err);
	/* every seq is either in the file or counted as missed, exactly */
	EXPECT_EQ(40, c.snapshots + c.missed);
	EXPECT_EQ(40, c.last_seq);
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)c.missed);
	EXPECT_STREQ(buf, rec_info_trailer(&info, "missed"));
	EXPECT_STREQ("1000", rec_info_get(&info, "sample_us"));
	EXPECT_STREQ("mm", rec_info_get(&info, "tlb_flush"));
	rec_info_free(&info);
}

/* The highest seq of the #snap rows written to @f so far (whole lines only). */
static uint64_t snaps_written(FILE *f, uint64_t last)
{
	char line[256];

	clearerr(f);
	for (;;) {
		long at = ftell(f);
		unsigned long long seq;

		if (!fgets(line, sizeof(line), f))
			break;
		if (!strchr(line, '\n')) {
			fseek(f, at, SEEK_SET);	/* the rest is on its way */
			break;
		}
		if (sscanf(line, "#snap,%llu,", &seq) == 1)
			last = seq;
	}
	return last;
}

/*
 * A recorder slower than the worker always finds another snapshot waiting.
 * It must still come back to its signals (and its clock, its targets)
 * within a few snapshots, and keep every one exact: this kernel stays
 * LEAD snapshots ahead of what the record holds, in a ring of 4096 slots
 * so that nothing is overwritten, and gives up after BUDGET snapshots.  A
 * recorder that reads "until there is none" stops only then.
 */
TEST_F(rec, stops_while_snapshots_keep_coming)
{
	enum { LEAD = 3000, BUDGET = 60000, TERM_AT = 50 };
	struct fake_ring r = { .nr_slots = 4096, .max_regions = 1, .generation = 1 };
	struct rec_info info;
	struct counted c = { 0 };
	char err[512], buf[64];
	uint64_t seq = 0, written = 0, term_seq = 0;
	int64_t idle_ms = 0;
	pid_t target;
	FILE *f;

	target = fork();
	if (target == 0) {
		pause();
		_exit(0);
	}
	snprintf(buf, sizeof(buf), "%d", (int)target);
	self->recorder = start_recorder(self->out, A("-p", buf));
	ASSERT_EQ(0, fake_wait_for(self->dir, "state", "on", 5000));
	fake_write(self->dir, "target_status", "%d monitoring\n", (int)target);
	ASSERT_EQ(0, fake_ring_init(self->dir, &r));
	f = fopen(self->out, "r");
	ASSERT_NE(NULL, f);
	while (seq < BUDGET && idle_ms < 50000) {
		uint64_t now_written = snaps_written(f, written);

		if (fake_read(self->dir, "state", buf, sizeof(buf)) > 0 && strncmp(buf, "on", 2))
			break;
		idle_ms = now_written == written ? idle_ms + 1 : 0;	/* ~0.1 ms each */
		written = now_written;
		if (seq < written + LEAD) {
			uint64_t to = written + LEAD < BUDGET ? written + LEAD : BUDGET;

			ASSERT_EQ(0, fake_publish_batch(self->dir, &r, seq + 1, to, target));
			seq = to;
		}
		if (!term_seq && written >= TERM_AT) {
			term_seq = seq;
			kill(self->recorder, SIGTERM);
		}
		usleep(100);
	}
	fclose(f);
	ASSERT_EQ(0, recorder_exit(self->recorder));
	kill(target, SIGKILL);
	waitpid(target, NULL, 0);
	ASSERT_NE(0, term_seq);
	/* it stopped while this kernel still had snapshots to give */
	EXPECT_LT(seq, BUDGET) TH_LOG("signalled at seq %llu, still reading at %llu",
				       (unsigned long long)term_seq, (unsigned long long)seq);

	ASSERT_EQ(0, rec_read_path(self->out, 0, count, &c, &info, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_TRUE(info.complete);
	EXPECT_STREQ("terminated (SIGTERM)", rec_info_trailer(&info, "reason"));
	/*
	 * Nothing was overwritten: every snapshot up to the last one read is
	 * in the record, and so is every one published before the signal.
	 */
	EXPECT_EQ(0, c.missed);
	EXPECT_EQ(c.last_seq, c.snapshots);
	EXPECT_GE(c.last_seq, term_seq);
	EXPECT_STREQ("0", rec_info_trailer(&info, "missed"));
	rec_info_free(&info);
}

TEST_F(rec, interrupted_file_is_complete)
{
	struct rec_info info;
	struct counted c = { 0 };
	char err[512], out[16384];
	pid_t pid = 0;

	self->recorder = start_recorder(self->out, A("--", "sleep", "30"));
	ASSERT_EQ(0, fake_kernel_run(self->dir, 5, 30, &pid));
	sleep_ms(300);
	kill(self->recorder, SIGINT);
	ASSERT_EQ(0, recorder_exit(self->recorder));
	EXPECT_EQ(0, fake_wait_for(self->dir, "state", "off", 10));
	ASSERT_EQ(0, rec_read_path(self->out, 0, count, &c, &info, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(5, c.snapshots);
	EXPECT_STREQ("interrupted (SIGINT)", rec_info_trailer(&info, "reason"));
	rec_info_free(&info);

	/* and every report mode reads it */
	EXPECT_EQ(0, run_daptrace(A("report", "wss", self->out), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# p50 ")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_daptrace(A("report", "heatmap", "--addr-bins", "12", self->out),
				  out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# block 0: bins 0-")) TH_LOG("%s", out);
	/* the fake ring's placement puts most bytes on node 1 */
	EXPECT_NE(NULL, strstr(out, "# block 0 resident by node: node0 ")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_daptrace(A("report", "nodes", self->out), out, sizeof(out)));
	/* the unobservable bytes after the three classes of every node */
	EXPECT_NE(NULL, strstr(out, "# columns: time_s node0_hot node0_warm node0_cold "
			       "node1_hot node1_warm node1_cold node0_not_observable "
			       "node1_not_observable\n")) TH_LOG("%s", out);
	/* --json: the same bytes, node 1 holding some in every snapshot */
	{
		struct json_object *j, *v, *e, *n;

		j = run_daptrace_json(A("report", "nodes", "--json", self->out), out, sizeof(out));
		ASSERT_NE(NULL, j) TH_LOG("%s", out);
		ASSERT_TRUE(json_object_object_get_ex(j, "snapshots", &v));
		EXPECT_EQ(5, json_object_get_uint64(v));
		ASSERT_TRUE(json_object_object_get_ex(j, "series", &v));
		ASSERT_EQ(5, json_object_array_length(v));
		for (size_t i = 0; i < 5; i++) {
			uint64_t b = 0;

			e = json_object_array_get_idx(v, i);
			ASSERT_TRUE(json_object_object_get_ex(e, "nodes", &n));
			ASSERT_EQ(2, json_object_array_length(n));
			n = json_object_array_get_idx(n, 1);
			json_object_object_foreach(n, k, c) {
				(void)k;
				b += json_object_get_uint64(c);
			}
			EXPECT_GT(b, 0);
		}
		json_object_put(j);
	}
	/* pheatmap --json: the grid is time-bins x addr-bins, null where no point fell */
	{
		struct json_object *j, *v, *col, *cell;
		size_t filled = 0;

		j = run_daptrace_json(A("report", "pheatmap", "--json", "--time-bins", "4",
					"--addr-bins", "6", self->out), out, sizeof(out));
		ASSERT_NE(NULL, j) TH_LOG("%s", out);
		EXPECT_EQ(5, json_object_get_uint64(JSON_FIELD(j, "snapshots")));
		EXPECT_EQ(0, json_object_get_uint64(JSON_FIELD(j, "without_placement")));
		EXPECT_GT(json_object_get_uint64(JSON_FIELD(j, "points")), 0);
		EXPECT_LE(json_object_get_uint64(JSON_FIELD(j, "phys_min")),
			  json_object_get_uint64(JSON_FIELD(j, "phys_max")));
		EXPECT_EQ(4, json_object_array_length(JSON_FIELD(j, "time_s")));
		v = JSON_FIELD(j, "cells");
		ASSERT_EQ(4, json_object_array_length(v));
		for (size_t t = 0; t < 4; t++) {
			col = json_object_array_get_idx(v, t);
			ASSERT_EQ(6, json_object_array_length(col));
			for (size_t a = 0; a < 6; a++) {
				cell = json_object_array_get_idx(col, a);
				if (!cell)
					continue;
				filled++;
				EXPECT_GE(json_object_get_double(cell), 0);
				EXPECT_LE(json_object_get_double(cell), 100);
			}
		}
		EXPECT_GT(filled, 0);
		json_object_put(j);
	}
	EXPECT_EQ(0, run_daptrace(A("report", "hot", "--top", "3", self->out), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "hottest regions of snapshot seq 5")) TH_LOG("%s", out);
	EXPECT_EQ(0, run_daptrace(A("report", "hot", "--by-label", self->out), out, sizeof(out)));
	EXPECT_EQ(0, run_daptrace(A("report", "regions", self->out), out, sizeof(out)));
	EXPECT_EQ(0, run_daptrace(A("report", "raw", self->out), out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "end reason = interrupted (SIGINT)")) TH_LOG("%s", out);
}

TEST_F(rec, plots)
{
	char out[16384], png[600], svg[600], heat[600];
	pid_t pid = 0;
	struct stat st;

	if (system("gnuplot --version >/dev/null 2>&1"))
		SKIP(return, "gnuplot not installed");
	/* record --heatmap: workload to picture in one step */
	snprintf(heat, sizeof(heat), "--heatmap=%s/rec.png", self->dir);
	self->recorder = start_recorder(self->out, A(heat, "--", "sleep", "30"));
	ASSERT_EQ(0, fake_kernel_run(self->dir, 30, 1, &pid));
	fake_write(self->dir, "target_status", "%d exited\n", pid);
	ASSERT_EQ(0, recorder_exit(self->recorder));
	snprintf(png, sizeof(png), "%s/rec.png", self->dir);
	EXPECT_EQ(0, stat(png, &st));
	snprintf(png, sizeof(png), "%s/heat.png", self->dir);
	snprintf(svg, sizeof(svg), "%s/wss.svg", self->dir);
	EXPECT_EQ(0, run_daptrace(A("report", "heatmap", "--plot", png, self->out), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(0, stat(png, &st));
	EXPECT_GT(st.st_size, 1000);
	EXPECT_EQ(0, run_daptrace(A("report", "wss", "--plot", svg, self->out), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(0, stat(svg, &st));
	snprintf(svg, sizeof(svg), "%s/regions.png", self->dir);
	EXPECT_EQ(0, run_daptrace(A("report", "regions", "--plot", svg, self->out), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_EQ(0, stat(svg, &st));
}

/* record --damo: the same run in damo's format, which the reports read back. */
TEST_F(rec, damo_format_too)
{
	char out[16384], damo[600];
	unsigned char magic[2] = { 0 };
	pid_t pid = 0;
	FILE *f;

	self->recorder = start_recorder(self->out, A("--damo", "--", "sleep", "30"));
	ASSERT_EQ(0, fake_kernel_run(self->dir, 10, 30, &pid));
	fake_write(self->dir, "target_status", "%d exited\n", pid);
	ASSERT_EQ(0, recorder_exit(self->recorder));
	snprintf(damo, sizeof(damo), "%s/out.damon.data", self->dir);
	f = fopen(damo, "r");
	ASSERT_NE(NULL, f) TH_LOG("no %s", damo);
	EXPECT_EQ(2, fread(magic, 1, 2, f));
	fclose(f);
	EXPECT_EQ(0x78, magic[0]) TH_LOG("not zlib-compressed");
	EXPECT_EQ(0, run_daptrace(A("report", "wss", damo), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "# snapshots 10, missed 0")) TH_LOG("%s", out);
	EXPECT_EQ(2, run_daptrace(A("record", "--damo", "-o", "-", "-p", "1"), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "--damo needs --output to be a file")) TH_LOG("%s", out);
}

TEST_F(rec, refuses_when_already_on)
{
	char out[4096];

	fake_write(self->dir, "state", "on\n");
	EXPECT_EQ(1, run_daptrace(A("record", "-q", "-o", self->out, "--", "true"), out,
				  sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "monitoring is already on")) TH_LOG("%s", out);
}

static int file_is(const char *path, const char *text)
{
	char buf[64] = "";
	FILE *f = fopen(path, "r");

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return !strcmp(buf, text);
}

/*
 * A command that cannot run is an error (exit 1, named by the subcommand),
 * and the existing record stays where it was: whether the command is not
 * found up front or its exec fails (a script with a missing interpreter).
 */
/* status with more targets than the module lists: the count from nr_targets */
TEST_F(rec, status_counts_targets_beyond_the_page)
{
	char out[4096];

	ASSERT_EQ(0, fake_write(self->dir, "target_status",
				"12 monitoring\n13 exited\n# 4998 more\n"));
	ASSERT_EQ(0, fake_write(self->dir, "nr_targets", "5000\n"));
	ASSERT_EQ(0, run_daptrace(A("status"), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "targets:    5000\n  12       monitoring\n"
			       "  13       exited\n  ... 4998 more\n")) TH_LOG("%s", out);
}

/* status names the module's kernel series and whether it is verified */
TEST_F(rec, status_shows_the_kernel_series)
{
	char out[4096], path[600];

	ASSERT_EQ(0, run_daptrace(A("status"), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\nkernel:     6.12, verified\nstate:")) TH_LOG("%s", out);

	ASSERT_EQ(0, fake_write(self->dir, "kernel_series", "9.99\n"));
	ASSERT_EQ(0, fake_write(self->dir, "kernel_series_verified", "unverified\n"));
	ASSERT_EQ(0, run_daptrace(A("status"), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "\nkernel:     9.99, unverified: built with "
			       "DAPTRACE_UNVERIFIED=1")) TH_LOG("%s", out);

	ASSERT_EQ(0, fake_write(self->dir, "kernel_series_verified", "maybe\n"));
	ASSERT_EQ(0, run_daptrace(A("status"), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "kernel:     series unknown: ")) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "unexpected content 'maybe'")) TH_LOG("%s", out);

	/* a module from before these files */
	snprintf(path, sizeof(path), "%s/kernel_series", self->dir);
	ASSERT_EQ(0, unlink(path));
	ASSERT_EQ(0, run_daptrace(A("status"), out, sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "kernel:     series not reported")) TH_LOG("%s", out);
}

TEST_F(rec, command_that_cannot_run_fails)
{
	char out[4096], old[600], script[600];
	FILE *f;

	snprintf(old, sizeof(old), "%s.old", self->out);
	snprintf(script, sizeof(script), "%s/script", self->dir);
	ASSERT_EQ(0, write_previous(self->out));
	EXPECT_EQ(1, run_daptrace(A("record", "-q", "-o", self->out, "--", "/nonexistent/cmd"),
				  out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "daptrace record: cannot run '/nonexistent/cmd': No such "
			       "file")) TH_LOG("%s", out);
	EXPECT_TRUE(file_is(self->out, "previous record\n"));
	EXPECT_NE(0, access(old, F_OK));
	EXPECT_EQ(1, run_daptrace(A("top", "--stdio", "--", "no-such-command-daptrace"),
				  out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "daptrace top: cannot run 'no-such-command-daptrace'"))
		TH_LOG("%s", out);

	f = fopen(script, "w");
	ASSERT_NE(NULL, f);
	fputs("#!/nonexistent/interpreter\n", f);
	fclose(f);
	ASSERT_EQ(0, chmod(script, 0755));
	EXPECT_EQ(1, run_daptrace(A("record", "-q", "-o", self->out, "--", script),
				  out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "cannot run")) TH_LOG("%s", out);
	EXPECT_TRUE(file_is(self->out, "previous record\n"));
	EXPECT_NE(0, access(old, F_OK));

	/* --objects: the tracer's log made for it is gone too */
	EXPECT_EQ(1, run_daptrace(A("record", "-q", "--objects", "-o", self->out, "--", script),
				  out, sizeof(out)));
	EXPECT_NE(NULL, strstr(out, "cannot run")) TH_LOG("%s", out);
	snprintf(old, sizeof(old), "%s/out.objects.objlog", self->dir);
	EXPECT_NE(0, access(old, F_OK)) TH_LOG("%s left behind", old);
}

/*
 * "daptrace-record heatmap -z" through a daptrace-record link: the argv[0]
 * dispatch, the heatmap subcommand, gzip output; the old record is kept.
 */
TEST_F(rec, record_heatmap_link_gzip_keeps_old)
{
	char link[600], gz[600], old[640], png[600];
	struct stat st;

	if (system("gnuplot --version >/dev/null 2>&1"))
		SKIP(return, "gnuplot not installed");
	snprintf(link, sizeof(link), "%s/daptrace-record", self->dir);
	snprintf(gz, sizeof(gz), "%s/out.csv.gz", self->dir);
	snprintf(old, sizeof(old), "%s.old", gz);
	snprintf(png, sizeof(png), "%s/out.png", self->dir);
	ASSERT_EQ(0, symlink(daptrace_bin()[0] == '/' ? daptrace_bin() :
			     realpath(daptrace_bin(), NULL), link));
	ASSERT_EQ(0, write_previous(gz));
	self->recorder = start_quiet(link, A("daptrace-record", "heatmap", "-q", "-o", gz, "--",
					     "sleep", "30"));
	ASSERT_EQ(0, run_to_target_exit(self->dir, 12, self->recorder));
	check_gz_kept_old(_metadata, gz, old, 12);
	EXPECT_EQ(0, stat(png, &st));
	EXPECT_GT(st.st_size, 1000);
}

/* daptrace top --stdio: report hot's table of the live windows, then exit. */
TEST_F(rec, top_stdio_shows_live_tables)
{
	char path[600], *text;
	struct timespec t0, t1;
	size_t n;
	int tables = 0;
	long ms;

	snprintf(path, sizeof(path), "%s/top.out", self->dir);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	self->recorder = fork();
	if (self->recorder == 0) {
		int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		dup2(fd, 1);
		execl(daptrace_bin(), "daptrace", "top", "--stdio", "--refresh", "100ms",
		      "-n", "3", "--", "sleep", "30", (char *)NULL);
		_exit(126);
	}
	ASSERT_EQ(0, run_to_target_exit(self->dir, 12, self->recorder));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000;
	text = read_text(path, 1 << 16, &n);
	ASSERT_NE(NULL, text);
	EXPECT_GT(n, 100);
	for (const char *p = text; (p = strstr(p, "# hottest regions of snapshot seq")); p++)
		tables++;
	/* 12 windows 30 ms apart, one table per 100 ms at most (--refresh) */
	EXPECT_GE(tables, 1) TH_LOG("%s", text);
	EXPECT_LE(tables, ms / 100 + 1) TH_LOG("%d tables in %ld ms", tables, ms);
	EXPECT_LT(tables, 12) TH_LOG("a table per window: --refresh ignored");
	EXPECT_NE(NULL, strstr(text, "daptrace top: 1 target")) TH_LOG("%s", text);
	EXPECT_EQ(NULL, strchr(text, '\033')) TH_LOG("escape codes in --stdio");
	free(text);
}

/* policy --record FILE.gz: like record, gzip by name and the old one kept */
TEST_F(rec, policy_record_gzip_keeps_old)
{
	char gz[600], old[640];

	snprintf(gz, sizeof(gz), "%s/policy.csv.gz", self->dir);
	snprintf(old, sizeof(old), "%s.old", gz);
	ASSERT_EQ(0, write_previous(gz));
	self->recorder = start_quiet(daptrace_bin(), A("daptrace", "policy", "-q", "-S", "stat",
						       "-o", gz, "--", "sleep", "30"));
	ASSERT_EQ(0, run_to_target_exit(self->dir, 5, self->recorder));
	check_gz_kept_old(_metadata, gz, old, 5);
}

/*
 * A symlink to a record (latest.csv -> run17.csv) is kept as FILE.old, the
 * link itself, its target untouched, and FILE is a new file; a FIFO is
 * written through and not removed when nothing was recorded.
 */
TEST_F(rec, output_symlink_kept_and_fifo_written_through)
{
	char real[600], link[600], old[640], fifo[600], script[600], out[4096], err[512];
	struct counted c = { 0 };
	struct rec_info info;
	struct stat st;
	int rd;
	FILE *f;

	snprintf(real, sizeof(real), "%s/real.csv", self->dir);
	snprintf(link, sizeof(link), "%s/link.csv", self->dir);
	snprintf(old, sizeof(old), "%s.old", link);
	snprintf(fifo, sizeof(fifo), "%s/fifo.csv", self->dir);
	snprintf(script, sizeof(script), "%s/script", self->dir);
	ASSERT_EQ(0, write_previous(real));
	ASSERT_EQ(0, symlink("real.csv", link));
	self->recorder = start_recorder(link, A("--", "sleep", "30"));
	ASSERT_EQ(0, run_to_target_exit(self->dir, 3, self->recorder));
	ASSERT_EQ(0, lstat(link, &st));
	EXPECT_TRUE(S_ISREG(st.st_mode));
	ASSERT_EQ(0, lstat(old, &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	EXPECT_TRUE(file_is(real, "previous record\n"));
	EXPECT_TRUE(file_is(old, "previous record\n"));
	ASSERT_EQ(0, rec_read_path(link, 0, count, &c, &info, err, sizeof(err)))
		TH_LOG("%s", err);
	EXPECT_EQ(3, c.snapshots);
	rec_info_free(&info);

	/* found, but exec fails: the output was opened; a reader is there */
	f = fopen(script, "w");
	ASSERT_NE(NULL, f);
	fputs("#!/nonexistent/interpreter\n", f);
	fclose(f);
	ASSERT_EQ(0, chmod(script, 0755));
	ASSERT_EQ(0, mkfifo(fifo, 0600));
	rd = open(fifo, O_RDONLY | O_NONBLOCK);
	ASSERT_GE(rd, 0);
	EXPECT_EQ(1, run_daptrace(A("record", "-q", "-o", fifo, "--", script), out,
				  sizeof(out))) TH_LOG("%s", out);
	EXPECT_NE(NULL, strstr(out, "cannot run")) TH_LOG("%s", out);
	close(rd);
	ASSERT_EQ(0, lstat(fifo, &st)) TH_LOG("the FIFO was removed");
	EXPECT_TRUE(S_ISFIFO(st.st_mode));
	snprintf(old, sizeof(old), "%s.old", fifo);
	EXPECT_NE(0, access(old, F_OK));
}

/* A name through /proc (as /dev/stdout is) is an open file's: never renamed. */
TEST(proc_link_written_through)
{
	char dir[] = "/tmp/daptrace-recout-XXXXXX", path[64], file[64], target[64];
	struct stat st;
	char *kept = NULL;
	int fd;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/out.csv", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	ASSERT_GE(fd, 0);
	snprintf(target, sizeof(target), "/proc/self/fd/%d", fd);
	ASSERT_EQ(0, symlink(target, path));
	EXPECT_EQ(0, recout_keep_old("record", "--output", path, 1, &kept));
	EXPECT_EQ(NULL, kept);
	ASSERT_EQ(0, lstat(path, &st));
	EXPECT_TRUE(S_ISLNK(st.st_mode));
	free(kept);
	close(fd);
	unlink(path);
	snprintf(path + strlen(path), sizeof(path) - strlen(path), ".old");
	unlink(path);
	unlink(file);
	rmdir(dir);
}

/* A record that cannot be created once FILE.old was made puts it back. */
TEST(create_failure_puts_the_old_record_back)
{
	char dir[] = "/tmp/daptrace-recout-XXXXXX", path[64], old[80];
	struct rlimit rl, saved;
	char *kept = NULL;
	FILE *f = NULL;
	int fd, ret;

	ASSERT_NE(NULL, mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.csv", dir);
	snprintf(old, sizeof(old), "%s.old", path);
	ASSERT_EQ(0, write_previous(path));
	f = NULL;
	/* no fd left: the rename works, the open fails with EMFILE */
	fd = open("/dev/null", O_RDONLY);
	ASSERT_GE(fd, 0);
	close(fd);
	ASSERT_EQ(0, getrlimit(RLIMIT_NOFILE, &saved));
	rl = saved;
	rl.rlim_cur = (rlim_t)fd;
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &rl));
	ret = recout_create("record", "--output", path, 0, 1, &kept, &f);
	ASSERT_EQ(0, setrlimit(RLIMIT_NOFILE, &saved));
	EXPECT_EQ(1, ret);
	EXPECT_EQ(NULL, f);
	EXPECT_EQ(NULL, kept);
	EXPECT_TRUE(file_is(path, "previous record\n"));
	EXPECT_NE(0, access(old, F_OK));
	unlink(path);
	unlink(old);
	rmdir(dir);
}

TEST_HARNESS_MAIN
