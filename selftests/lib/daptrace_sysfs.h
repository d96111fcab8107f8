/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for C selftests that drive /sys/kernel/daptrace directly, with raw
 * syscalls only (the tests are linked statically and must not depend on
 * libdaptrace: they test the ABI the library is built on).
 *
 * Conventions: functions that can fail return 0 (or a count) on success and
 * -errno on failure, so a test can assert the exact error:
 *
 *	ASSERT_EQ(-EINVAL, dt_write("sample_us", "0"))
 *		TH_LOG("zero sampling interval must be rejected");
 *
 * Everything is static so each test program gets its own copy; unused
 * helpers do not warn.
 */
#ifndef DAPTRACE_SYSFS_H
#define DAPTRACE_SYSFS_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "dt_time.h"

#define DT_SYSFS		"/sys/kernel/daptrace"
#define DT_MODULE	"daptrace"

#define DT_UNUSED	__attribute__((unused))

/* The module's documented defaults and caps (sysfs-docs/, kernel/core.h). */
#define DT_DEF_SAMPLE_US	5000UL
#define DT_DEF_AGGR_US		100000UL
#define DT_DEF_UPDATE_US	1000000UL
#define DT_DEF_MIN_NR_REGIONS	10UL
#define DT_DEF_MAX_NR_REGIONS	1000UL
#define DT_DEF_TLB_FLUSH	"mm"
#define DT_MAX_TARGETS		4096

/* Files that configure monitoring, in an order that restores defaults. */
static const char * const dt_config_files[] DT_UNUSED = {
	"sample_us", "aggr_us", "update_us", "min_nr_regions",
	"max_nr_regions", "tlb_flush",
};
#define DT_NR_CONFIG_FILES \
	(sizeof(dt_config_files) / sizeof(dt_config_files[0]))

/* Bounded string copy; -Wformat-truncation cannot second-guess it. */
static DT_UNUSED void dt_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* DT_SYSFS "/" @name into @buf (truncated to @len). */
static DT_UNUSED const char *dt_path(const char *name, char *buf, size_t len)
{
	static const char dir[] = DT_SYSFS "/";

	dt_strlcpy(buf, dir, len);
	if (len > sizeof(dir))
		dt_strlcpy(buf + sizeof(dir) - 1, name, len - sizeof(dir) + 1);
	return buf;
}

static DT_UNUSED bool dt_loaded(void)
{
	struct stat st;

	return stat(DT_SYSFS, &st) == 0 && S_ISDIR(st.st_mode);
}

/*
 * DT_SKIP_UNLESS_LOADED() - in a kselftest_harness FIXTURE_SETUP or TEST:
 * skip, saying why, unless run as root with the module loaded.
 */
#define DT_SKIP_UNLESS_LOADED()						\
	do {								\
		if (getuid())						\
			SKIP(return, "needs root");			\
		if (!dt_loaded())					\
			SKIP(return, "daptrace not loaded (%s missing)",	\
			     DT_SYSFS);					\
	} while (0)

/*
 * dt_drop_cap() - stay who we are but lose capability @cap for good: from
 * the bounding set, the ambient set, then the effective, permitted and
 * inheritable sets.  Returns 0 or a positive errno.
 */
static DT_UNUSED int dt_drop_cap(int cap)
{
	struct __user_cap_header_struct hdr = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	unsigned int idx = CAP_TO_INDEX(cap);
	__u32 mask = CAP_TO_MASK(cap);

	if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0))
		return errno;
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (syscall(SYS_capget, &hdr, data))
		return errno;
	data[idx].effective &= ~mask;
	data[idx].permitted &= ~mask;
	data[idx].inheritable &= ~mask;
	if (syscall(SYS_capset, &hdr, data))
		return errno;
	return 0;
}

/*
 * dt_read() - read a sysfs file into @buf (NUL-terminated), without the
 * trailing newline.  Returns the length, or -errno.
 */
static DT_UNUSED int dt_read(const char *name, char *buf, size_t len)
{
	char path[256];
	ssize_t n, total = 0;
	int fd, err;

	fd = open(dt_path(name, path, sizeof(path)), O_RDONLY);
	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = '\0';
	if (total > 0 && buf[total - 1] == '\n')
		buf[--total] = '\0';
	return total;
}

/* dt_read_ul() - a decimal file; returns -1 (and logs) if unreadable. */
static DT_UNUSED long long dt_read_ll(const char *name)
{
	char buf[64], *end;
	long long v;

	if (dt_read(name, buf, sizeof(buf)) < 0)
		return -1;
	errno = 0;
	v = strtoll(buf, &end, 10);
	if (errno || end == buf || *end)
		return -1;
	return v;
}

/*
 * dt_pread_ll() - the decimal value of an open sysfs file, read from its
 * start (which also re-arms poll on it); -1 if unreadable.
 */
static DT_UNUSED long long dt_pread_ll(int fd)
{
	char buf[32];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return strtoll(buf, NULL, 10);
}

/*
 * dt_write_len() - one write(2) of exactly @len bytes.  Returns what write
 * returned (the byte count), or -errno from open or write.
 */
static DT_UNUSED ssize_t dt_write_len(const char *name, const void *val, size_t len)
{
	char path[256];
	ssize_t n;
	int fd, err;

	fd = open(dt_path(name, path, sizeof(path)), O_WRONLY);
	if (fd < 0)
		return -errno;
	n = write(fd, val, len);
	err = errno;
	close(fd);
	return n < 0 ? -err : n;
}

/* dt_write() - write a string; 0 if all of it was taken, else -errno. */
static DT_UNUSED int dt_write(const char *name, const char *val)
{
	size_t len = strlen(val);
	ssize_t n = dt_write_len(name, val, len);

	if (n < 0)
		return n;
	return (size_t)n == len ? 0 : -EIO;
}

static DT_UNUSED int dt_write_ul(const char *name, unsigned long val)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%lu", val);
	return dt_write(name, buf);
}

static DT_UNUSED bool dt_is_on(void)
{
	char buf[16];

	return dt_read("state", buf, sizeof(buf)) > 0 && !strcmp(buf, "on");
}

/*
 * dt_set_attrs() - set the five numeric attributes.  Every write is
 * validated against the others, so retry in passes until all of them hold
 * (any valid configuration is reachable from any other this way).
 * Returns 0 or the last error.
 */
static DT_UNUSED int dt_set_attrs(unsigned long sample, unsigned long aggr,
				  unsigned long update, unsigned long min_nr,
				  unsigned long max_nr)
{
	static const unsigned long caps_update = 3600000000UL, caps_max = 20000;
	const unsigned long want[5] = { sample, aggr, update, min_nr, max_nr };
	int pass, i, err = 0, pending;

	/* Open the range first: widest update interval and region bound. */
	dt_write_ul("update_us", caps_update);
	dt_write_ul("max_nr_regions", caps_max);
	for (pass = 0; pass < 5; pass++) {
		pending = 0;
		for (i = 0; i < 5; i++) {
			if (dt_read_ll(dt_config_files[i]) == (long long)want[i])
				continue;
			err = dt_write_ul(dt_config_files[i], want[i]);
			if (err)
				pending++;
		}
		if (!pending)
			return 0;
	}
	return err ? err : -EINVAL;
}

/*
 * dt_reset() - monitoring off, no targets, default attributes.  Returns 0
 * or -errno of the first step that failed.
 */
static DT_UNUSED int dt_reset(void)
{
	char buf[8192], *line, *save;
	int err, round;

	err = dt_write("state", "off");
	if (err)
		return err;
	/* A page of targets at a time; "# N more" says there are more. */
	for (round = 0; round < 64; round++) {
		err = dt_read("target", buf, sizeof(buf));
		if (err <= 0)
			break;
		for (line = strtok_r(buf, "\n", &save); line;
		     line = strtok_r(NULL, "\n", &save)) {
			if (line[0] == '#')
				continue;
			err = dt_write("target_remove", line);
			if (err)
				return err;
		}
	}
	if (err < 0)
		return err;
	err = dt_write("tlb_flush", DT_DEF_TLB_FLUSH);
	/* The goal off first: its bounds then need not fit sample_us. */
	if (!err)
		err = dt_write("intervals_goal_aggrs", "0");
	if (!err)
		err = dt_write("intervals_goal_access_bp", "400");
	if (!err)
		err = dt_write("intervals_goal_max_sample_us", "10000000");
	if (!err)
		err = dt_write("intervals_goal_min_sample_us", "5000");
	if (!err)
		err = dt_write("phys_addr", "off");
	if (!err)
		err = dt_write("tracepoint", "off");
	/* A module without the upper-level scan has no such file. */
	if (!err && access(dt_path("upper_scan", buf, sizeof(buf)), F_OK) == 0)
		err = dt_write("upper_scan", "on");
	/* A module without accuracy probes has no such files. */
	if (!err && access(dt_path("probe_pages", buf, sizeof(buf)), F_OK) == 0)
		err = dt_write("probe_pages", "64");
	if (!err && access(dt_path("probe_max_cpu_bp", buf, sizeof(buf)), F_OK) == 0)
		err = dt_write("probe_max_cpu_bp", "500");
	if (!err && access(dt_path("recall_goal_bp", buf, sizeof(buf)), F_OK) == 0)
		err = dt_write("recall_goal_bp", "0");
	if (!err && access(dt_path("recall_max_cpu_bp", buf, sizeof(buf)), F_OK) == 0)
		err = dt_write("recall_max_cpu_bp", "500");
	if (err)
		return err;
	return dt_set_attrs(DT_DEF_SAMPLE_US, DT_DEF_AGGR_US, DT_DEF_UPDATE_US,
			    DT_DEF_MIN_NR_REGIONS, DT_DEF_MAX_NR_REGIONS);
}

static DT_UNUSED int dt_add_target(pid_t pid)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return dt_write("target", buf);
}

static DT_UNUSED int dt_remove_target(pid_t pid)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d", (int)pid);
	return dt_write("target_remove", buf);
}

/*
 * dt_target_status() - the status word of @pid in target_status into @word
 * ("idle", "monitoring", "exited"); returns 0, -ENOENT if not listed.
 */
static DT_UNUSED int dt_target_status(pid_t pid, char *word, size_t len)
{
	char buf[8192], *line, *save;
	int err, p;
	char w[32];

	err = dt_read("target_status", buf, sizeof(buf));
	if (err < 0)
		return err;
	for (line = strtok_r(buf, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		if (sscanf(line, "%d %31s", &p, w) == 2 && p == pid) {
			snprintf(word, len, "%s", w);
			return 0;
		}
	}
	return -ENOENT;
}

/* Module unload and load, as rmmod/insmod do (usable from static binaries). */
static DT_UNUSED int dt_module_unload(void)
{
	return syscall(SYS_delete_module, DT_MODULE, O_NONBLOCK) ? -errno : 0;
}

static DT_UNUSED int dt_module_load(const char *ko)
{
	int fd, err = 0;

	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (syscall(SYS_finit_module, fd, "", 0))
		err = -errno;
	close(fd);
	return err;
}

/* The module's path in the test VM (its /init exports DAPTRACE_KO). */
static DT_UNUSED const char *dt_module_path(void)
{
	const char *ko = getenv("DAPTRACE_KO");

	return ko && *ko && access(ko, R_OK) == 0 ? ko : NULL;
}

/*
 * DT_SKIP_UNLESS_RELOADABLE() - DT_SKIP_UNLESS_LOADED(), and skip unless
 * the module can be loaded again after the test unloads it; @ko gets its
 * path.
 */
#define DT_SKIP_UNLESS_RELOADABLE(ko)					\
	do {								\
		DT_SKIP_UNLESS_LOADED();				\
		(ko) = dt_module_path();				\
		if (!(ko))						\
			SKIP(return, "DAPTRACE_KO unset: could not load the module again"); \
	} while (0)

/*
 * The snapshot ring (include/uapi/linux/daptrace.h).  @fd is an open
 * DT_SYSFS/snapshots; reads return at most a page, so loop.
 */
#include <linux/daptrace.h>

static DT_UNUSED ssize_t dt_pread_all(int fd, void *buf, size_t len, off_t off)
{
	size_t done = 0;
	ssize_t n;

	while (done < len) {
		n = pread(fd, (char *)buf + done, len - done, off + done);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		done += n;
	}
	return done;
}

/*
 * Read the ring at @fd from its start to its end, over and over, counting
 * the reads in *@nr_reads (in memory a watching parent shares), until a
 * read fails; return that read's errno (ENODEV once the module is gone).
 */
static DT_UNUSED int dt_read_ring_until_error(int fd, long long *nr_reads)
{
	char buf[4096];
	off_t off = 0;
	ssize_t n;

	for (;;) {
		n = pread(fd, buf, sizeof(buf), off);
		if (n < 0)
			return errno;
		(*nr_reads)++;
		off = n ? off + n : 0;
	}
}

/* The ring header; 0, -ENODATA if the ring is empty/short, or -errno. */
static DT_UNUSED int dt_ring_hdr(int fd, struct daptrace_ring_hdr *rh)
{
	ssize_t n = dt_pread_all(fd, rh, sizeof(*rh), 0);

	if (n < 0)
		return n;
	return n == sizeof(*rh) ? 0 : -ENODATA;
}

static DT_UNUSED off_t dt_slot_off(const struct daptrace_ring_hdr *rh, __u64 seq)
{
	return rh->hdr_size + (off_t)(seq % rh->nr_slots) * rh->slot_size;
}

/* The header of the slot that holds (or held) @seq. */
static DT_UNUSED int dt_slot_hdr(int fd, const struct daptrace_ring_hdr *rh,
				 __u64 seq, struct daptrace_snap_hdr *sh)
{
	ssize_t n = dt_pread_all(fd, sh, sizeof(*sh), dt_slot_off(rh, seq));

	if (n < 0)
		return n;
	return n == sizeof(*sh) ? 0 : -ENODATA;
}

/*
 * dt_read_slot() - a consistent copy of snapshot @seq (header and records)
 * into @buf, of @rh->slot_size bytes, from the snapshots file @fd.
 * Returns 0, -ENOENT if the ring does not hold @seq, -EAGAIN if it was
 * rewritten during the copy, or -errno.
 */
static DT_UNUSED int dt_read_slot(int fd, const struct daptrace_ring_hdr *rh,
				  __u64 seq, void *buf)
{
	struct daptrace_snap_hdr *sh = buf;
	off_t off = dt_slot_off(rh, seq);
	__u64 again;
	size_t len;
	ssize_t n;

	n = dt_pread_all(fd, sh, sizeof(*sh), off);
	if (n < 0)
		return n;
	if (n != sizeof(*sh) || sh->seq != seq)
		return -ENOENT;
	if (sh->nr_regions > rh->max_regions)
		return -EAGAIN;
	len = rh->snap_hdr_size + (size_t)sh->nr_regions * rh->region_size;
	n = dt_pread_all(fd, buf, len, off);
	if (n < 0)
		return n;
	if (dt_pread_all(fd, &again, sizeof(again), off) != sizeof(again) ||
	    again != seq || (size_t)n != len)
		return -EAGAIN;
	return 0;
}

/* Record @i of a slot copied by dt_read_slot(). */
static DT_UNUSED const struct daptrace_region_rec *
dt_slot_rec(const struct daptrace_ring_hdr *rh, const void *slot, unsigned int i)
{
	return (const void *)((const char *)slot + rh->snap_hdr_size +
			      (size_t)i * rh->region_size);
}

/*
 * dt_snapshot_has_pid() - does snapshot @seq hold regions of @pid?  Its
 * flags go to @flags.  Returns 1 or 0, or -1 if the ring does not hold
 * @seq (any more, or not consistently: the caller may try the next).
 */
static DT_UNUSED int dt_snapshot_has_pid(__u64 seq, pid_t pid, __u32 *flags)
{
	struct daptrace_region_rec rec;
	struct daptrace_ring_hdr rh;
	struct daptrace_snap_hdr sh;
	int fd, ret = 0;
	__u32 i;

	fd = open(DT_SYSFS "/snapshots", O_RDONLY);
	if (fd < 0)
		return -1;
	if (dt_ring_hdr(fd, &rh) || dt_slot_hdr(fd, &rh, seq, &sh) ||
	    sh.seq != seq) {
		close(fd);
		return -1;
	}
	*flags = sh.flags;
	for (i = 0; i < sh.nr_regions && i < rh.max_regions && !ret; i++) {
		off_t off = dt_slot_off(&rh, seq) + rh.snap_hdr_size +
			    (off_t)i * rh.region_size;

		if (dt_pread_all(fd, &rec, sizeof(rec), off) != sizeof(rec))
			break;
		ret = rec.pid == pid;
	}
	if (dt_slot_hdr(fd, &rh, seq, &sh) || sh.seq != seq)
		ret = -1;	/* rewritten meanwhile */
	close(fd);
	return ret;
}

/*
 * dt_worker_pid() - the monitor's worker kthread: a child of kthreadd (pid 2)
 * named "daptrace"; -1 if there is none (monitoring off).
 */
static DT_UNUSED pid_t dt_worker_pid(void)
{
	char path[300], line[128], comm[32];
	struct dirent *de;
	pid_t found = -1;
	DIR *d = opendir("/proc");
	FILE *f;
	int ppid;

	while (d && (de = readdir(d))) {
		snprintf(path, sizeof(path), "/proc/%s/stat", de->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(line, sizeof(line), f) &&
		    sscanf(line, "%*d (%31[^)]) %*c %d", comm, &ppid) == 2 &&
		    ppid == 2 && !strcmp(comm, "daptrace"))
			found = atoi(de->d_name);
		fclose(f);
	}
	if (d)
		closedir(d);
	return found;
}

/* dt_task_state() - @pid's state letter (R, S, D, T, ...), or 0 if gone. */
static DT_UNUSED char dt_task_state(pid_t pid)
{
	char path[64], buf[256], *c;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	c = fgets(buf, sizeof(buf), f) ? strrchr(buf, ')') : NULL;
	fclose(f);
	return c && c[1] == ' ' ? c[2] : 0;
}

/*
 * What the snapshots say of [lo, hi) of a target, over some windows: the
 * bytes by the regions overlapping it, the checks by the regions inside it
 * (one straddling its edge may have checked a page outside).
 */
struct dt_tally {
	unsigned long lo, hi;
	double hot_seen, hot_bytes;	/* bytes in regions with an access */
	unsigned long long checks, unobserved, accesses;
};

static DT_UNUSED void dt_tally_region(struct dt_tally *t,
				      const struct daptrace_region_rec *r,
				      unsigned int nr_samples)
{
	unsigned long s = r->start > t->lo ? r->start : t->lo;
	unsigned long e = r->end < t->hi ? r->end : t->hi;

	if (s >= e)
		return;
	if (r->start >= t->lo && r->end <= t->hi) {
		t->checks += nr_samples;
		t->unobserved += r->nr_unobserved;
		t->accesses += r->nr_accesses;
	}
	t->hot_bytes += e - s;
	if (r->nr_accesses)
		t->hot_seen += e - s;
}

/* The most ranges one tally takes. */
#define DT_TALLY_MAX	8

/*
 * dt_tally_ranges_each() - monitor from a fresh start (state on), let the
 * regions adapt for @skip snapshots, then tally the regions of @pid in each
 * of the @n (at most DT_TALLY_MAX) ranges of @t (lo and hi set) over the
 * next @windows snapshots (a minute at most); state off.  If @each is
 * given, it is called for every tallied window with the window's header and
 * the window's own tallies of the ranges (what it adds to @t), so that a
 * test can judge a window against what its workload did in it.  Returns
 * the snapshots tallied, or -1.
 */
static DT_UNUSED int dt_tally_ranges_each(pid_t pid, struct dt_tally *t,
					  unsigned int n, unsigned int skip,
					  unsigned int windows,
					  void (*each)(const struct daptrace_snap_hdr *sh,
						       const struct dt_tally *w,
						       unsigned int n, void *arg),
					  void *arg)
{
	struct daptrace_ring_hdr rh;
	struct daptrace_snap_hdr *sh;
	struct dt_tally w[DT_TALLY_MAX];
	long long seq, newest;
	double t0 = dt_now_ms();
	unsigned int seen = 0;
	void *buf;
	int fd;

	if (n > DT_TALLY_MAX)
		return -1;
	for (unsigned int k = 0; k < n; k++) {
		unsigned long lo = t[k].lo, hi = t[k].hi;

		memset(&t[k], 0, sizeof(t[k]));
		t[k].lo = lo;
		t[k].hi = hi;
	}
	if (dt_write("state", "on"))
		return -1;
	seq = dt_read_ll("snapshot_seq") + 1 + skip;
	fd = open(DT_SYSFS "/snapshots", O_RDONLY);
	if (fd < 0 || dt_ring_hdr(fd, &rh)) {
		if (fd >= 0)
			close(fd);
		dt_write("state", "off");
		return -1;
	}
	buf = malloc(rh.slot_size);
	sh = buf;
	while (buf && seen < windows && dt_now_ms() - t0 < 60000) {
		newest = dt_read_ll("snapshot_seq");
		if (newest < seq) {
			dt_sleep_ms(20);
			continue;
		}
		if (dt_read_slot(fd, &rh, seq++, buf))
			continue;
		seen++;
		for (unsigned int k = 0; k < n; k++)
			w[k] = (struct dt_tally){ .lo = t[k].lo, .hi = t[k].hi };
		for (unsigned int i = 0; i < sh->nr_regions; i++) {
			const struct daptrace_region_rec *r = dt_slot_rec(&rh, buf, i);

			if (r->pid != pid)
				continue;
			for (unsigned int k = 0; k < n; k++)
				dt_tally_region(&w[k], r, sh->nr_samples);
		}
		for (unsigned int k = 0; k < n; k++) {
			t[k].hot_seen += w[k].hot_seen;
			t[k].hot_bytes += w[k].hot_bytes;
			t[k].checks += w[k].checks;
			t[k].unobserved += w[k].unobserved;
			t[k].accesses += w[k].accesses;
		}
		if (each)
			each(sh, w, n, arg);
	}
	free(buf);
	close(fd);
	dt_write("state", "off");
	return buf ? (int)seen : -1;
}

/* dt_tally_ranges_each() without a look at each window. */
static DT_UNUSED int dt_tally_ranges(pid_t pid, struct dt_tally *t,
				     unsigned int n, unsigned int skip,
				     unsigned int windows)
{
	return dt_tally_ranges_each(pid, t, n, skip, windows, NULL, NULL);
}

#endif /* DAPTRACE_SYSFS_H */
