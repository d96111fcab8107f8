/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A fake /sys/kernel/daptrace made of regular files, for host tests.
 * Point DAPTRACE_SYSFS at it.  Writes simply replace file contents, so
 * tests play the kernel's part themselves (publish snapshots, flip state).
 */
#ifndef DAPTRACE_FAKE_SYSFS_H
#define DAPTRACE_FAKE_SYSFS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/daptrace.h>

struct fake_ring {
	uint32_t nr_slots, max_regions;
	uint64_t generation;
};

/*
 * Replace a file's contents in place (pwrite, then truncate): a concurrent
 * reader never sees an empty file, as with a real sysfs attribute.
 */
static inline int fake_write(const char *dir, const char *name, const char *fmt, ...)
{
	char path[512], buf[4096];
	va_list ap;
	int fd, n, ok;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	if (fd < 0)
		return -1;
	ok = pwrite(fd, buf, n, 0) == n && ftruncate(fd, n) == 0;
	close(fd);
	return ok ? 0 : -1;
}

static inline int fake_read(const char *dir, const char *name, char *buf, size_t len)
{
	char path[512];
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	return (int)n;
}

/* Wait up to @ms milliseconds for <dir>/<name> to start with @want: 0, else -1. */
static inline int fake_wait_for(const char *dir, const char *name, const char *want, long ms)
{
	const struct timespec one_ms = { 0, 1000000 };
	char buf[128];

	for (long i = 0; i < ms; i++) {
		if (fake_read(dir, name, buf, sizeof(buf)) > 0 &&
		    !strncmp(buf, want, strlen(want)))
			return 0;
		nanosleep(&one_ms, NULL);
	}
	return -1;
}

static inline size_t fake_slot_size(uint32_t max_regions)
{
	return sizeof(struct daptrace_snap_hdr) +
	       max_regions * sizeof(struct daptrace_region_rec);
}

/* Header plus zeroed slots: a freshly (re)allocated ring. */
static inline int fake_ring_init(const char *dir, const struct fake_ring *r)
{
	struct daptrace_ring_hdr h = {
		.magic = DAPTRACE_RING_MAGIC,
		.version = DAPTRACE_RING_VERSION,
		.hdr_size = sizeof(h),
		.slot_size = (uint32_t)fake_slot_size(r->max_regions),
		.nr_slots = r->nr_slots,
		.region_size = sizeof(struct daptrace_region_rec),
		.max_regions = r->max_regions,
		.snap_hdr_size = sizeof(struct daptrace_snap_hdr),
		.generation = r->generation,
	};
	char path[512];
	size_t total = sizeof(h) + (size_t)r->nr_slots * h.slot_size;
	char *buf = calloc(1, total);
	int fd, ok;

	if (!buf)
		return -1;
	memcpy(buf, &h, sizeof(h));
	/* in place, like the kernel: open readers keep seeing the same file */
	snprintf(path, sizeof(path), "%s/snapshots", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	ok = fd >= 0 && pwrite(fd, buf, total, 0) == (ssize_t)total &&
	     ftruncate(fd, (off_t)total) == 0;
	if (fd >= 0)
		close(fd);
	free(buf);
	return ok ? 0 : -1;
}

/* Write the slot of @seq in place: seq, body, flags as the kernel would. */
static inline int fake_slot_write(const char *dir, const struct fake_ring *r,
				  uint64_t seq, uint64_t slot_seq,
				  const struct daptrace_snap_hdr *hdr,
				  const struct daptrace_region_rec *regs)
{
	size_t slot = fake_slot_size(r->max_regions);
	off_t off = sizeof(struct daptrace_ring_hdr) + (off_t)(seq % r->nr_slots) * slot;
	struct daptrace_snap_hdr h = *hdr;
	char path[512];
	int fd, ok;

	h.seq = slot_seq;
	snprintf(path, sizeof(path), "%s/snapshots", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	ok = pwrite(fd, &h, sizeof(h), off) == sizeof(h);
	if (ok && h.nr_regions && regs)
		ok = pwrite(fd, regs, h.nr_regions * sizeof(*regs), off + sizeof(h)) ==
		     (ssize_t)(h.nr_regions * sizeof(*regs));
	close(fd);
	return ok ? 0 : -1;
}

/* A snapshot of @n regions at 4 KiB steps whose nr_accesses encode seq. */
static inline int fake_publish(const char *dir, const struct fake_ring *r,
			       uint64_t seq, uint32_t n, int pid)
{
	struct daptrace_region_rec regs[64];
	struct timespec now;
	struct daptrace_snap_hdr h = {
		.nr_regions = n, .nr_samples = 20, .sample_us = 5000,
		.aggr_us = 100000,
	};

	/* the kernel stamps windows with CLOCK_MONOTONIC */
	clock_gettime(CLOCK_MONOTONIC, &now);
	h.end_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	h.start_ns = h.end_ns - 100000000ULL;

	if (n > 64 || n > r->max_regions)
		return -1;
	for (uint32_t i = 0; i < n; i++)
		regs[i] = (struct daptrace_region_rec){
			.start = 0x10000000ULL + i * 4096ULL,
			.end = 0x10000000ULL + (i + 1) * 4096ULL,
			.nr_accesses = (uint32_t)((seq + i) % 21),
			.age = i, .pid = pid,
			/* placement: i on node 0, the rest of 20 on node 1 */
			.nr_present = 20, .node_samples = { i % 21, 20 - i % 21 },
			.phys_addr = 0x40000000ULL + i * 4096ULL,
		};
	if (fake_slot_write(dir, r, seq, seq, &h, regs))
		return -1;
	/* fixed width: a concurrent reader never sees a mix of two lengths */
	return fake_write(dir, "snapshot_seq", "%020llu\n", (unsigned long long)seq);
}

/*
 * Publish snapshots @from to @to (one region of @pid each) at once: a write
 * per slot and one of snapshot_seq, far quicker than a reader takes them.
 */
static inline int fake_publish_batch(const char *dir, const struct fake_ring *r,
				     uint64_t from, uint64_t to, int pid)
{
	size_t slot = fake_slot_size(r->max_regions);
	struct daptrace_region_rec reg = {
		.start = 0x10000000ULL, .end = 0x10001000ULL, .pid = pid,
		.phys_addr = DAPTRACE_NO_PHYS,
	};
	struct daptrace_snap_hdr h = {
		.nr_regions = 1, .nr_samples = 20, .sample_us = 5000, .aggr_us = 100000,
	};
	struct timespec now;
	char path[512];
	int fd, ok = 1;

	clock_gettime(CLOCK_MONOTONIC, &now);
	h.end_ns = (uint64_t)now.tv_sec * 1000000000ULL + (uint64_t)now.tv_nsec;
	h.start_ns = h.end_ns - 100000000ULL;
	snprintf(path, sizeof(path), "%s/snapshots", dir);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	for (uint64_t seq = from; ok && seq <= to; seq++) {
		off_t off = sizeof(struct daptrace_ring_hdr) + (off_t)(seq % r->nr_slots) * slot;

		h.seq = seq;
		reg.nr_accesses = (uint32_t)(seq % 21);
		ok = pwrite(fd, &h, sizeof(h), off) == sizeof(h) &&
		     pwrite(fd, &reg, sizeof(reg), off + sizeof(h)) == sizeof(reg);
	}
	close(fd);
	if (!ok)
		return -1;
	return fake_write(dir, "snapshot_seq", "%020llu\n", (unsigned long long)to);
}

/*
 * A kernel that keeps snapshots coming: publish after *@seq, ten a
 * millisecond, until our child @child exits or *@seq reaches @budget; then
 * reap @child.  Its exit code (128 + signal if killed), or -1.
 */
static inline int fake_publish_until_exit(const char *dir, const struct fake_ring *r,
					  uint64_t *seq, uint64_t budget, int pid,
					  pid_t child)
{
	struct timespec ms = { 0, 1000000 };
	pid_t w = 0;
	int status;

	while (*seq < budget && (w = waitpid(child, &status, WNOHANG)) == 0) {
		uint64_t to = *seq + 10 < budget ? *seq + 10 : budget;

		if (fake_publish_batch(dir, r, *seq + 1, to, pid)) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
			return -1;
		}
		*seq = to;
		nanosleep(&ms, NULL);
	}
	if (*seq >= budget)
		w = waitpid(child, &status, 0);
	if (w != child)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static inline int fake_tree_create(char *dir, size_t len)
{
	static const char *const files[][2] = {
		{ "state", "off\n" }, { "target", "" }, { "target_remove", "" },
		{ "target_status", "" }, { "sample_us", "5000\n" },
		{ "aggr_us", "100000\n" }, { "update_us", "1000000\n" },
		{ "min_nr_regions", "10\n" }, { "max_nr_regions", "1000\n" },
		{ "tlb_flush", "mm\n" }, { "phys_addr", "off\n" },
		{ "tracepoint", "off\n" }, { "nr_targets", "0\n" },
		{ "intervals_goal_access_bp", "400\n" },
		{ "intervals_goal_aggrs", "0\n" },
		{ "intervals_goal_min_sample_us", "5000\n" },
		{ "intervals_goal_max_sample_us", "10000000\n" },
		{ "nr_regions", "0\n" },
		{ "nr_samples", "0\n" }, { "nr_snapshots", "0\n" },
		{ "nr_snapshots_missed", "0\n" }, { "worker_cpu_us", "0\n" },
		{ "snapshot_seq", "0\n" }, { "snapshot", "" },
		{ "kernel_series", "6.12\n" }, { "kernel_series_verified", "verified\n" },
	};
	struct fake_ring none = { 0 };
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, len, "%s/daptrace-fake-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return -1;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (fake_write(dir, files[i][0], "%s", files[i][1]))
			return -1;
	return fake_ring_init(dir, &none);
}

static inline int fake_rm_one(const char *path, const struct stat *st, int type,
			      struct FTW *ftw)
{
	(void)st;
	(void)type;
	(void)ftw;
	return remove(path);
}

static inline void fake_tree_destroy(const char *dir)
{
	nftw(dir, fake_rm_one, 8, FTW_DEPTH | FTW_PHYS);
}

#endif
