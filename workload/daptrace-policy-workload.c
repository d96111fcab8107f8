// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace-policy-workload: memory with known hot, warm and cold sets, for
 * judging reclaim and tiering policies by what happens to the process, not
 * by a tool's counters.  Every page carries a pattern written at the start
 * and checked at the end (and hot pages on every touch), so a policy that
 * loses or corrupts data fails the run (exit status 1).
 *
 *   daptrace-policy-workload reclaim [options]
 *	hot set read continuously, warm set every --warm-period, cold set
 *	never until the final check.  Prints, just before the check, how
 *	many hot and warm pages it found swapped out (mincore(2)) before
 *	using them, its VmRSS/VmSwap and the system's pswpin.
 *
 *   daptrace-policy-workload tiering [options]
 *	all memory first placed on --slow-node (set_mempolicy), then hot set
 *	A for --phase, hot set B for --phase; the rest is cold.  Every 0.5 s
 *	it asks move_pages(2) where its pages are and prints the fraction of
 *	the hot set on --fast-node and of the cold memory on --slow-node; at
 *	the end, per phase, how long the hot set took to reach 95 % on the
 *	fast node ("converge phase=N secs=S" or "secs=never").
 *
 *   daptrace-policy-workload phases [options]
 *	one pool of --hot + --warm + --cold bytes whose sets change size every
 *	--phase seconds: four phases with the hot and warm sets at x1, x2,
 *	x1/2 and x1 of --hot and --warm, the rest cold.  The sets sit side by
 *	side from the start of the pool, so a set that grows takes memory that
 *	was cold (and may be paged out) and one that shrinks leaves cold memory
 *	behind.  Hot pages are read continuously, warm ones every
 *	--warm-period.  Prints a line a second ("t=T phase=P ... out_hot=N
 *	out_warm=N out_cold=N": pages of each set not resident) and at the
 *	end per phase the hot pages read per second (its throughput) and the
 *	pages found swapped out before use, then its VmRSS/VmSwap and the
 *	system's pswpin.
 *
 *   daptrace-policy-workload regret [options]
 *	--cold bytes, filled, then watched every 10 ms for --duration: each
 *	page's going out (no longer present in /proc/self/pagemap, the view
 *	daptrace's regret counters read) is an event, and the first time a
 *	page goes out it is read again after a delay set by its number
 *	(page % 8: 0 after 3 s, 1 after 14 s, 2 after 0.4 s, the rest never),
 *	so that what comes back within 1 s, 10 s and 60 s is known.  mincore(2)
 *	is read beside it.  Then, after --go FILE exists, it prints "regret
 *	out=N back1s=N back10s=N back60s=N" (pages), "views pagemap_out=N
 *	mincore_out=N swapcache=N freed=N odd=N untouched_back=N" (the two
 *	views and what tells them apart, see run_regret()) and checks every
 *	page.  The range is printed first ("range START END", hex) for a
 *	policy's addr=.
 *
 * Options: --hot SIZE --warm SIZE --cold SIZE (sizes with K/M/G),
 * --duration SECS, --warm-period SECS, --phase SECS, --fast-node N,
 * --slow-node N, --pidfile FILE (written once the memory is ready),
 * --go FILE (tiering: wait for FILE to exist before the first phase, so a
 * policy attached with -p sees the memory where it was placed; reclaim and
 * phases: wait for it after the lines printed before the final check, so a
 * recorder or a policy can be stopped before the check reads every page
 * back).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "wl_args.h"

#define MPOL_DEFAULT	0
#define MPOL_BIND	2
#define WORDS		(psz / sizeof(uint64_t))
#define REPORT_NS	500000000LL

static size_t psz;
static uint64_t seed = 0x9e3779b97f4a7c15ULL;

struct set {
	const char *name;
	uint8_t *base;
	size_t pages;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static uint64_t pattern(const struct set *s, size_t page, size_t word)
{
	uint64_t x = (uint64_t)(uintptr_t)s->base + page * psz + word * 8;

	x ^= seed;
	x *= 0xff51afd7ed558ccdULL;
	return x ^ (x >> 29);
}

static int set_alloc(struct set *s, const char *name, size_t bytes)
{
	s->name = name;
	s->pages = bytes / psz;
	s->base = NULL;
	if (!s->pages)
		return 0;
	/* one mapping each, with a guard gap, so the sets never share a VMA */
	s->base = mmap(NULL, (s->pages + 1) * psz, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (s->base == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	mprotect(s->base + s->pages * psz, psz, PROT_NONE);
	madvise(s->base, s->pages * psz, MADV_NOHUGEPAGE);
	return 0;
}

static void set_fill(struct set *s)
{
	for (size_t p = 0; p < s->pages; p++) {
		uint64_t *w = (uint64_t *)(s->base + p * psz);

		for (size_t i = 0; i < WORDS; i++)
			w[i] = pattern(s, p, i);
	}
}

/* Read one word per page and check it; returns bad pages. */
static size_t set_touch(const struct set *s)
{
	size_t bad = 0;

	for (size_t p = 0; p < s->pages; p++) {
		size_t i = p % WORDS;

		if (((volatile uint64_t *)(s->base + p * psz))[i] != pattern(s, p, i))
			bad++;
	}
	return bad;
}

static size_t set_verify(const struct set *s)
{
	size_t bad = 0;

	for (size_t p = 0; p < s->pages; p++) {
		const uint64_t *w = (const uint64_t *)(s->base + p * psz);

		for (size_t i = 0; i < WORDS; i++) {
			if (w[i] != pattern(s, p, i)) {
				bad++;
				break;
			}
		}
	}
	return bad;
}

static size_t nr_other;	/* pages in neither place at the last query */
static int other_status;

/* Fraction of the set's pages on @node (move_pages status query). */
static double set_on_node(const struct set *s, int node)
{
	enum { BATCH = 1024 };
	void *pages[BATCH];
	int status[BATCH];
	size_t on = 0;

	if (!s->pages)
		return 1.0;
	for (size_t p = 0; p < s->pages; p += BATCH) {
		size_t n = s->pages - p < BATCH ? s->pages - p : BATCH;

		for (size_t i = 0; i < n; i++)
			pages[i] = s->base + (p + i) * psz;
		if (syscall(SYS_move_pages, 0, n, pages, NULL, status, 0) < 0) {
			perror("move_pages");
			return -1.0;
		}
		for (size_t i = 0; i < n; i++) {
			on += status[i] == node;
			if (status[i] < 0) {
				nr_other++;
				other_status = status[i];
			}
		}
	}
	return (double)on / (double)s->pages;
}

static void print_status_line(const char *key)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key)))
			printf("%s", line);
	fclose(f);
}

static unsigned long long vmstat(const char *key)
{
	char name[64];
	unsigned long long v, r = 0;
	FILE *f = fopen("/proc/vmstat", "r");

	if (!f)
		return 0;
	while (fscanf(f, "%63s %llu", name, &v) == 2)
		if (!strcmp(name, key))
			r = v;
	fclose(f);
	return r;
}

struct opts {
	size_t hot, warm, cold;
	double duration, warm_period, phase;
	int fast, slow;
	const char *pidfile;
	const char *go;
};

static void ready(const struct opts *o)
{
	FILE *f;

	if (!o->pidfile)
		return;
	f = fopen(o->pidfile, "w");
	if (f) {
		fprintf(f, "%d\n", (int)getpid());
		fclose(f);
	}
}

/* --go before the final check: the end of the run is reported, not yet read back. */
static void hold(const struct opts *o)
{
	while (o->go && access(o->go, F_OK))
		usleep(10000);
}

static int verify_all(struct set *sets, int n)
{
	size_t bad = 0;

	for (int i = 0; i < n; i++) {
		size_t b = set_verify(&sets[i]);

		printf("verify %s pages=%zu bad=%zu\n", sets[i].name, sets[i].pages, b);
		bad += b;
	}
	printf("verify %s\n", bad ? "FAILED" : "ok");
	return bad ? 1 : 0;
}

/* Pages of the set not in memory now (swapped out), by mincore(2). */
static size_t set_evicted(const struct set *s)
{
	static unsigned char *vec;
	static size_t cap;
	size_t n = 0;

	if (s->pages > cap) {
		free(vec);
		vec = malloc(s->pages);
		cap = vec ? s->pages : 0;
	}
	if (!vec || mincore(s->base, s->pages * psz, vec))
		return 0;
	for (size_t p = 0; p < s->pages; p++)
		n += !(vec[p] & 1);
	return n;
}

static int run_reclaim(const struct opts *o)
{
	size_t hot_evicted = 0, warm_evicted = 0;
	struct set s[3];
	int64_t t0, end, next_warm;
	size_t bad = 0;

	if (set_alloc(&s[0], "hot", o->hot) || set_alloc(&s[1], "warm", o->warm) ||
	    set_alloc(&s[2], "cold", o->cold))
		return 1;
	for (int i = 0; i < 3; i++)
		set_fill(&s[i]);
	ready(o);
	t0 = now_ns();
	end = t0 + (int64_t)(o->duration * 1e9);
	next_warm = t0;
	while (now_ns() < end) {
		/* hot pages found swapped out just before they are used again */
		hot_evicted += set_evicted(&s[0]);
		bad += set_touch(&s[0]);
		if (now_ns() >= next_warm) {
			warm_evicted += set_evicted(&s[1]);
			bad += set_touch(&s[1]);
			next_warm += (int64_t)(o->warm_period * 1e9);
		}
	}
	printf("touch bad=%zu\n", bad);
	printf("evicted hot=%zu warm=%zu\n", hot_evicted, warm_evicted);
	/* the state the policy left, before the check pages everything back in */
	print_status_line("VmRSS:");
	print_status_line("VmSwap:");
	printf("pswpin %llu\n", vmstat("pswpin"));
	fflush(stdout);
	hold(o);
	return verify_all(s, 3) || bad;
}

/* The part [first, first + pages) of @s, as a set of its own. */
static struct set set_part(const struct set *s, const char *name, size_t first, size_t pages)
{
	struct set p = { name, s->base + first * psz, pages };

	if (first > s->pages)
		p.pages = 0;
	else if (p.pages > s->pages - first)
		p.pages = s->pages - first;
	return p;
}

static int run_phases(const struct opts *o)
{
	static const double scale[] = { 1, 2, 0.5, 1 };
	enum { NPHASE = sizeof(scale) / sizeof(scale[0]) };
	size_t hot_pages = o->hot / psz, warm_pages = o->warm / psz, bad = 0;
	size_t evicted[NPHASE][2] = { { 0 } };
	uint64_t touched[NPHASE] = { 0 };
	int64_t t0, end, next_warm, next_report;
	struct set pool;

	if (2 * (hot_pages + warm_pages) > (o->hot + o->warm + o->cold) / psz) {
		fprintf(stderr, "phases: --cold must be at least --hot + --warm (the sets double)\n");
		return 2;
	}
	if (set_alloc(&pool, "pool", o->hot + o->warm + o->cold))
		return 1;
	set_fill(&pool);
	ready(o);
	t0 = now_ns();
	end = t0 + (int64_t)(NPHASE * o->phase * 1e9);
	next_warm = t0;
	next_report = t0 + 1000000000LL;
	while (now_ns() < end) {
		int64_t t = now_ns();
		int p = (int)((double)(t - t0) / 1e9 / o->phase);
		size_t h, w;
		struct set hot, warm;

		p = p < NPHASE ? p : NPHASE - 1;
		h = (size_t)((double)hot_pages * scale[p]);
		w = (size_t)((double)warm_pages * scale[p]);
		hot = set_part(&pool, "hot", 0, h);
		warm = set_part(&pool, "warm", h, w);
		evicted[p][0] += set_evicted(&hot);
		bad += set_touch(&hot);
		touched[p] += hot.pages;
		if (t >= next_warm) {
			evicted[p][1] += set_evicted(&warm);
			bad += set_touch(&warm);
			next_warm += (int64_t)(o->warm_period * 1e9);
		}
		if (t >= next_report) {
			struct set cold = set_part(&pool, "cold", h + w, pool.pages);

			/* where the policy's paging went: pages not resident, per set */
			printf("t=%.0f phase=%d hot_mb=%zu warm_mb=%zu touched=%llu out_hot=%zu "
			       "out_warm=%zu out_cold=%zu\n", (double)(t - t0) / 1e9, p + 1,
			       h * psz >> 20, w * psz >> 20, (unsigned long long)touched[p],
			       set_evicted(&hot), set_evicted(&warm), set_evicted(&cold));
			next_report += 1000000000LL;
		}
	}
	for (int p = 0; p < NPHASE; p++)
		printf("phase=%d hot_pages_per_s=%.0f evicted_hot=%zu evicted_warm=%zu\n", p + 1,
		       (double)touched[p] / o->phase, evicted[p][0], evicted[p][1]);
	printf("touch bad=%zu\n", bad);
	print_status_line("VmRSS:");
	print_status_line("VmSwap:");
	printf("pswpin %llu\n", vmstat("pswpin"));
	fflush(stdout);
	hold(o);
	return verify_all(&pool, 1) || bad;
}

static int run_tiering(const struct opts *o)
{
	unsigned long mask = 1UL << o->slow;
	struct set s[3];
	int64_t t0, end, next_report;
	double conv[2] = { -1, -1 };
	size_t bad = 0;

	if (set_alloc(&s[0], "hotA", o->hot) || set_alloc(&s[1], "hotB", o->hot) ||
	    set_alloc(&s[2], "cold", o->cold))
		return 1;
	/* place every page on the slow node, then let the kernel choose again */
	if (syscall(SYS_set_mempolicy, MPOL_BIND, &mask, sizeof(mask) * 8 + 1) < 0) {
		perror("set_mempolicy");
		return 2;
	}
	for (int i = 0; i < 3; i++)
		set_fill(&s[i]);
	syscall(SYS_set_mempolicy, MPOL_DEFAULT, NULL, 0);
	printf("start hotA_fast=%.3f hotB_fast=%.3f cold_slow=%.3f\n",
	       set_on_node(&s[0], o->fast), set_on_node(&s[1], o->fast),
	       set_on_node(&s[2], o->slow));
	fflush(stdout);
	ready(o);
	/* the policy attaches now: the phases start once it says go */
	while (o->go && access(o->go, F_OK))
		usleep(10000);
	t0 = now_ns();
	end = t0 + (int64_t)(2 * o->phase * 1e9);
	next_report = t0 + REPORT_NS;
	while (now_ns() < end) {
		int64_t t = now_ns();
		int phase = t - t0 < (int64_t)(o->phase * 1e9) ? 0 : 1;

		bad += set_touch(&s[phase]);
		if (t >= next_report) {
			double a = set_on_node(&s[0], o->fast), b = set_on_node(&s[1], o->fast);
			double c = set_on_node(&s[2], o->slow);
			double since = (double)(t - t0) / 1e9 - phase * o->phase;

			printf("t=%.1f phase=%d hotA_fast=%.3f hotB_fast=%.3f cold_slow=%.3f\n",
			       (double)(t - t0) / 1e9, phase + 1, a, b, c);
			fflush(stdout);
			if (conv[phase] < 0 && (phase ? b : a) >= 0.95)
				conv[phase] = since;
			next_report += REPORT_NS;
		}
	}
	nr_other = 0;
	printf("end hotA_fast=%.3f hotB_fast=%.3f cold_slow=%.3f hotA_slow=%.3f\n",
	       set_on_node(&s[0], o->fast), set_on_node(&s[1], o->fast),
	       set_on_node(&s[2], o->slow), set_on_node(&s[0], o->slow));
	printf("unplaced pages=%zu status=%d\n", nr_other, other_status);
	for (int p = 0; p < 2; p++) {
		if (conv[p] < 0)
			printf("converge phase=%d secs=never\n", p + 1);
		else
			printf("converge phase=%d secs=%.1f\n", p + 1, conv[p]);
	}
	printf("touch bad=%zu\n", bad);
	fflush(stdout);
	return verify_all(s, 3) || bad;
}

#define REGRET_POLL_NS	10000000LL
#define REGRET_MAX_EV	(1 << 20)
#define PM_SWAP		(1ULL << 62)
#define PM_PRESENT	(1ULL << 63)

static const int64_t regret_win_ns[3] = { 1000000000LL, 10000000000LL, 60000000000LL };

/* When page p is read again after it first went out, ns (0: never). */
static int64_t regret_delay(size_t p)
{
	switch (p % 8) {
	case 0: return 3000000000LL;
	case 1: return 14000000000LL;
	case 2: return 400000000LL;
	default: return 0;
	}
}

/* The set's /proc/self/pagemap entries into @pm; 0 or -1 (message printed). */
static int regret_pagemap(int fd, const struct set *s, uint64_t *pm)
{
	size_t len = s->pages * sizeof(*pm);
	ssize_t r = pread(fd, pm, len, (off_t)((uintptr_t)s->base / psz * sizeof(*pm)));

	if (r != (ssize_t)len) {
		fprintf(stderr, "pagemap: %s\n", r < 0 ? strerror(errno) : "short read");
		return -1;
	}
	return 0;
}

/*
 * The regret mode.  Its events are read the way daptrace's regret counters
 * read them (policy/regret.c): a page goes out when /proc/self/pagemap stops
 * showing it present, and is back when it is present again.  mincore(2) is
 * read beside it, and the difference between the two views is counted and
 * explained: a page reclaim unmapped but did not free (its folio had an
 * extra reference just then, mincore's own lookup among them) stays in the
 * swap cache, not present for pagemap (a swap entry) and resident for
 * mincore, until reclaim frees it or a touch maps it again (a minor fault).
 * So, per page, the only states are: present and resident; a swap entry
 * and resident (the swap cache); a swap entry and not resident (swapped
 * out).  Anything else is counted as odd.  Pagemap is read before and after
 * mincore; a page whose two pagemap entries differ changed during the poll
 * and is looked at again in the next.
 */
static int run_regret(const struct opts *o)
{
	struct ev { size_t page; int64_t t; } *ev = malloc(REGRET_MAX_EV * sizeof(*ev));
	struct set s;
	unsigned char *vec, *was, *was_res;
	uint64_t *pm0, *pm1;
	int64_t *touch_at, *touched, end, next;
	size_t nev = 0, bad = 0, back[3] = { 0 };
	size_t mc_out = 0, cached = 0, freed = 0, odd = 0, untouched = 0;
	int fd;

	if (set_alloc(&s, "set", o->cold) || !s.pages || !ev)
		return 1;
	fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		perror("/proc/self/pagemap");
		return 1;
	}
	vec = malloc(s.pages);
	was = malloc(s.pages);
	was_res = malloc(s.pages);
	pm0 = malloc(s.pages * sizeof(*pm0));
	pm1 = malloc(s.pages * sizeof(*pm1));
	touch_at = calloc(s.pages, sizeof(*touch_at));
	touched = calloc(s.pages, sizeof(*touched));
	if (!vec || !was || !was_res || !pm0 || !pm1 || !touch_at || !touched)
		return 1;
	set_fill(&s);
	memset(was, 1, s.pages);
	memset(was_res, 1, s.pages);
	printf("range %#lx %#lx\n", (unsigned long)(uintptr_t)s.base,
	       (unsigned long)(uintptr_t)(s.base + s.pages * psz));
	ready(o);
	end = now_ns() + (int64_t)(o->duration * 1e9);
	next = now_ns();
	while (now_ns() < end) {
		int64_t t = now_ns();

		if (regret_pagemap(fd, &s, pm0))
			return 1;
		if (mincore(s.base, s.pages * psz, vec)) {
			perror("mincore");
			return 1;
		}
		if (regret_pagemap(fd, &s, pm1))
			return 1;
		for (size_t p = 0; p < s.pages; p++) {
			int here = !!(pm0[p] & PM_PRESENT), res = vec[p] & 1;
			int swap = !!(pm0[p] & PM_SWAP);

			if ((pm0[p] ^ pm1[p]) & (PM_PRESENT | PM_SWAP))
				continue;	/* changed meanwhile: next poll */
			if (here ? !res : !swap)
				odd++;
			if (was[p] && !here) {
				if (nev == REGRET_MAX_EV) {
					fprintf(stderr, "too many events\n");
					return 1;
				}
				ev[nev++] = (struct ev){ p, t };
				cached += res;
				if (!touch_at[p] && regret_delay(p))
					touch_at[p] = t + regret_delay(p);
			}
			/* our own touch marks the page present at once */
			if (!was[p] && here)
				untouched++;	/* mapped again, not by us */
			if (was_res[p] && !res) {
				mc_out++;
				freed += !was[p];	/* left the swap cache */
			}
			was[p] = here;
			was_res[p] = res;
			/* due: read it (once); it is back in memory from now */
			if (touch_at[p] > 0 && t >= touch_at[p]) {
				size_t i = p % WORDS;

				if (((volatile uint64_t *)(s.base + p * psz))[i] != pattern(&s, p, i))
					bad++;
				touched[p] = now_ns();
				touch_at[p] = -1;
				was[p] = 1;
				was_res[p] = 1;
			}
		}
		next += REGRET_POLL_NS;
		t = now_ns();
		if (next > t) {
			struct timespec ts = { 0, (long)(next - t) };

			nanosleep(&ts, NULL);
		}
	}
	while (o->go && access(o->go, F_OK))
		usleep(50000);
	/* an event came back within W if its page was read in (t, t + W] */
	for (size_t i = 0; i < nev; i++)
		for (int w = 0; w < 3; w++)
			back[w] += touched[ev[i].page] > ev[i].t &&
				   touched[ev[i].page] <= ev[i].t + regret_win_ns[w];
	printf("regret out=%zu back1s=%zu back10s=%zu back60s=%zu\n", nev, back[0], back[1],
	       back[2]);
	printf("views pagemap_out=%zu mincore_out=%zu swapcache=%zu freed=%zu odd=%zu "
	       "untouched_back=%zu\n", nev, mc_out, cached, freed, odd, untouched);
	printf("touch bad=%zu\n", bad);
	close(fd);
	return verify_all(&s, 1) || bad;
}

int main(int argc, char **argv)
{
	struct opts o = {
		.hot = 32 << 20, .warm = 32 << 20, .cold = 128 << 20,
		.duration = 30, .warm_period = 1, .phase = 15, .fast = 0, .slow = 1,
	};
	const struct wl_arg args[] = {
		WL_OPT("hot", 0, wl_size, &o.hot),
		WL_OPT("warm", 0, wl_size, &o.warm),
		WL_OPT("cold", 0, wl_size, &o.cold),
		WL_OPT("duration", 0, wl_double, &o.duration),
		WL_OPT("warm-period", 0, wl_double, &o.warm_period),
		WL_OPT("phase", 0, wl_double, &o.phase),
		WL_OPT("fast-node", 0, wl_int, &o.fast),
		WL_OPT("slow-node", 0, wl_int, &o.slow),
		WL_OPT("pidfile", 0, wl_str, &o.pidfile),
		WL_OPT("go", 0, wl_str, &o.go),
		{ }
	};
	int first, bad;

	psz = (size_t)sysconf(_SC_PAGESIZE);
	first = wl_parse_args(argv[0], argc, argv, args, NULL);
	bad = first < 0;
	if (bad || first != argc - 1 || o.duration <= 0 || o.warm_period <= 0 ||
	    o.phase <= 0 || o.slow < 0 || o.slow > 63) {
		fprintf(stderr, "usage: %s reclaim|tiering|phases|regret [--hot SIZE] [--warm SIZE] "
			"[--cold SIZE] [--duration S] [--warm-period S] [--phase S] "
			"[--fast-node N] [--slow-node N] [--pidfile FILE] [--go FILE]\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(argv[first], "reclaim"))
		return run_reclaim(&o);
	if (!strcmp(argv[first], "tiering"))
		return run_tiering(&o);
	if (!strcmp(argv[first], "phases"))
		return run_phases(&o);
	if (!strcmp(argv[first], "regret"))
		return run_regret(&o);
	fprintf(stderr, "%s: unknown mode '%s'\n", argv[0], argv[first]);
	return 2;
}
