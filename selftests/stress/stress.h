/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the stress suite (on top of selftests/lib's
 * daptrace_sysfs.h): a target that keeps touching its memory, the newest
 * snapshot read through the ring protocol and checked for consistency,
 * daptrace worker threads counted in /proc, waits with a deadline.
 */
#ifndef DAPTRACE_STRESS_H
#define DAPTRACE_STRESS_H

#include <ctype.h>
#include <dirent.h>

#include "daptrace_sysfs.h"
#include "dt_child.h"

/* Largest snapshot the helpers read: tests keep max_nr_regions below it. */
#define ST_MAX_RECS	2048

struct st_snap {
	struct daptrace_snap_hdr hdr;
	struct daptrace_region_rec recs[ST_MAX_RECS];
	unsigned int nr;	/* records copied (<= hdr.nr_regions) */
};

struct st_toucher_args {
	size_t len;
	unsigned int nap_us;
};

static DT_UNUSED void st_toucher_child(int ready_fd, void *arg)
{
	const struct st_toucher_args *a = arg;
	volatile char *p = dt_map_touched(a->len, MAP_PRIVATE | MAP_ANONYMOUS,
						 4096);
	size_t off;
	char c = 0;

	if (!p)
		_exit(1);
	dt_child_ready(ready_fd, &c, 1);
	close(ready_fd);
	for (;;) {
		for (off = 0; off < a->len; off += 4096)
			p[off]++;
		if (a->nap_us)
			usleep(a->nap_us);
	}
}

/*
 * st_toucher() - fork a target that maps @mib MiB of anonymous memory and,
 * until killed, touches one byte in each of its pages in rounds, sleeping
 * @nap_us between rounds (a full CPU in TCG is precious).  Returns its pid
 * once the memory is mapped and touched once, or -errno.
 */
static DT_UNUSED pid_t st_toucher(size_t mib, unsigned int nap_us)
{
	struct st_toucher_args a = { mib << 20, nap_us };
	char c;

	return dt_fork_ready(st_toucher_child, &a, &c, 1, NULL);
}

/*
 * st_read_snapshot() - a consistent copy of snapshot @seq through the ring
 * protocol (sysfs-docs/sysfs-kernel-daptrace-snapshots).  Returns 0,
 * -ENOENT if the slot does not hold @seq, -EAGAIN if it was rewritten
 * during the copy, or another -errno.
 */
static DT_UNUSED int st_read_snapshot(unsigned long long seq, struct st_snap *s)
{
	struct daptrace_ring_hdr rh;
	char path[256];
	size_t body;
	__u64 seq2;
	off_t off;
	int fd, err;
	ssize_t n;

	fd = open(dt_path("snapshots", path, sizeof(path)), O_RDONLY);
	if (fd < 0)
		return -errno;
	err = dt_ring_hdr(fd, &rh);
	if (err)
		goto out;
	err = -EPROTO;
	if (rh.magic != DAPTRACE_RING_MAGIC || !rh.nr_slots ||
	    rh.snap_hdr_size < sizeof(s->hdr) ||
	    rh.region_size < sizeof(s->recs[0]))
		goto out;
	err = dt_slot_hdr(fd, &rh, seq, &s->hdr);
	if (err)
		goto out;
	err = -ENOENT;
	if (s->hdr.seq != seq)
		goto out;
	err = -EPROTO;
	if (s->hdr.nr_regions > rh.max_regions ||
	    rh.region_size != sizeof(s->recs[0]))
		goto out;
	s->nr = s->hdr.nr_regions < ST_MAX_RECS ? s->hdr.nr_regions : ST_MAX_RECS;
	off = dt_slot_off(&rh, seq);
	body = (size_t)s->nr * sizeof(s->recs[0]);
	n = dt_pread_all(fd, s->recs, body, off + rh.snap_hdr_size);
	err = n < 0 ? (int)n : -ENODATA;
	if ((size_t)n != body)
		goto out;
	n = dt_pread_all(fd, &seq2, sizeof(seq2), off);
	err = n < 0 ? (int)n : -ENODATA;
	if (n != sizeof(seq2))
		goto out;
	err = seq2 == seq ? 0 : -EAGAIN;
out:
	close(fd);
	return err;
}

/* The newest snapshot (retrying a copy that raced the writer). */
static DT_UNUSED int st_read_newest(struct st_snap *s)
{
	long long seq;
	int tries, err = -ENOENT;

	for (tries = 0; tries < 5; tries++) {
		seq = dt_read_ll("snapshot_seq");
		if (seq <= 0)
			return -ENOENT;
		err = st_read_snapshot(seq, s);
		if (err != -EAGAIN && err != -ENOENT)
			break;
	}
	return err;
}

/*
 * st_snap_problem() - NULL if @s is internally consistent (records sorted
 * and disjoint per target, non-empty, page aligned, nr_accesses within the
 * window's rounds, only pids in @pids (if @nr_pids)), else what is wrong.
 */
static DT_UNUSED const char *st_snap_problem(const struct st_snap *s,
					     const pid_t *pids, int nr_pids)
{
	static char why[160];
	unsigned int i;
	int j;

	for (i = 0; i < s->nr; i++) {
		const struct daptrace_region_rec *r = &s->recs[i];
		bool known = !nr_pids;

		for (j = 0; j < nr_pids; j++)
			known |= r->pid == pids[j];
		if (!known)
			snprintf(why, sizeof(why), "record %u: pid %d is no target",
				 i, r->pid);
		else if (r->start >= r->end)
			snprintf(why, sizeof(why), "record %u: empty [%#llx, %#llx)",
				 i, (unsigned long long)r->start,
				 (unsigned long long)r->end);
		else if ((r->start | r->end) & 4095)
			snprintf(why, sizeof(why), "record %u: unaligned", i);
		else if (r->nr_accesses > s->hdr.nr_samples)
			snprintf(why, sizeof(why),
				 "record %u: %u accesses in %u samples", i,
				 r->nr_accesses, s->hdr.nr_samples);
		else if (i && s->recs[i - 1].pid == r->pid &&
			 s->recs[i - 1].end > r->start)
			snprintf(why, sizeof(why), "record %u: overlaps or unsorted", i);
		else
			continue;
		return why;
	}
	if (s->hdr.start_ns > s->hdr.end_ns)
		return "window ends before it starts";
	return NULL;
}

/* Number of threads named "daptrace" (the worker kthreads). */
static DT_UNUSED int st_count_workers(void)
{
	char path[64], comm[32];
	struct dirent *de;
	int nr = 0, fd;
	ssize_t n;
	DIR *d;

	d = opendir("/proc");
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		snprintf(path, sizeof(path), "/proc/%.20s/comm", de->d_name);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		n = read(fd, comm, sizeof(comm) - 1);
		close(fd);
		if (n <= 0)
			continue;
		comm[n] = '\0';
		if (!strcmp(comm, "daptrace\n"))
			nr++;
	}
	closedir(d);
	return nr;
}

/*
 * Wait up to @ms for @want worker threads: a stopped kthread leaves /proc
 * only after kthread_stop() returned.  Returns the last count.
 */
static DT_UNUSED int st_wait_workers(int want, unsigned int ms)
{
	double t0 = dt_now_ms();
	int nr;

	while ((nr = st_count_workers()) != want && dt_now_ms() - t0 < ms)
		dt_sleep_ms(5);
	return nr;
}

/* Wait up to @ms for file @name to read @want; elapsed ms, or -1. */
static DT_UNUSED double st_wait_str(const char *name, const char *want,
				    unsigned int ms)
{
	double t0 = dt_now_ms();
	char buf[64];

	do {
		if (dt_read(name, buf, sizeof(buf)) >= 0 && !strcmp(buf, want))
			return dt_now_ms() - t0;
		dt_sleep_ms(5);
	} while (dt_now_ms() - t0 < ms);
	return -1;
}

/* Wait up to @ms for numeric file @name to reach @min; its value or -1. */
static DT_UNUSED long long st_wait_ge(const char *name, long long min,
				      unsigned int ms)
{
	double t0 = dt_now_ms();
	long long v;

	do {
		v = dt_read_ll(name);
		if (v >= min)
			return v;
		dt_sleep_ms(5);
	} while (dt_now_ms() - t0 < ms);
	return -1;
}

/* Wait up to @ms for target @pid to have status @want; elapsed ms or -1. */
static DT_UNUSED double st_wait_status(pid_t pid, const char *want,
				       unsigned int ms)
{
	double t0 = dt_now_ms();
	char word[32];

	do {
		if (!dt_target_status(pid, word, sizeof(word)) &&
		    !strcmp(word, want))
			return dt_now_ms() - t0;
		dt_sleep_ms(5);
	} while (dt_now_ms() - t0 < ms);
	return -1;
}

/* A small xorshift generator: reproducible from the seed it prints. */
static DT_UNUSED unsigned long long st_rand_state = 88172645463325252ULL;

static DT_UNUSED unsigned long long st_rand(void)
{
	unsigned long long x = st_rand_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return st_rand_state = x;
}

/* Uniform-enough in [0, n). */
static DT_UNUSED unsigned int st_rand_below(unsigned int n)
{
	return n ? (unsigned int)((st_rand() >> 11) % n) : 0;
}

/* Seed from DT_STRESS_SEED or the clock; returns the seed used. */
static DT_UNUSED unsigned long long st_seed(void)
{
	const char *env = getenv("DT_STRESS_SEED");
	unsigned long long seed;
	struct timespec ts;

	if (env && *env) {
		seed = strtoull(env, NULL, 0);
	} else {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		seed = ts.tv_sec * 1000000007ULL ^ ts.tv_nsec ^ (getpid() << 16);
	}
	st_rand_state = seed ? seed : 1;
	return seed;
}

#endif /* DAPTRACE_STRESS_H */
