// SPDX-License-Identifier: GPL-2.0
/*
 * daptrace-kv-client: a skewed load on memcached (text protocol, a unix
 * socket), for the policy benchmark: a real program's memory under a load
 * whose popularity follows a Zipf law, with every value checked.
 *
 *   daptrace-kv-client --socket PATH [--keys N] [--value BYTES]
 *                      [--zipf S] [--duration SECS] [--rate OPS]
 *                      [--ready FILE] [--go FILE]
 *
 * 1. sets N keys ("k<i>"), each value BYTES long and derived from its key;
 * 2. touches FILE (the benchmark starts the policy then), and for SECS
 *    seconds gets keys drawn by a Zipf law of exponent S over their
 *    popularity rank, the ranks spread over the keys by a fixed shuffle
 *    (so that hot items are not all in the first slab pages); prints
 *    "t=T ops=N" once a second.  With --rate, the load is open: get i is
 *    due at i / OPS seconds, whenever the earlier ones were served, so a
 *    server that stalls (on refaults, say) is sent the same requests as
 *    one that does not, late, not fewer; without it, the next get goes
 *    as soon as the last is answered and a slower server is sent fewer,
 *    which changes the load itself.  "behind_max_s" is the longest a
 *    get started after it was due;
 * 3. gets every key once more; with --go, only once FILE exists (a
 *    benchmark stops its monitor first, so that this read-back is neither
 *    seen by it nor counted in the run's refaults).
 * Every value read is compared with what was set: a missing key or a wrong
 * byte is counted, never skipped ("bad=N"; exit status 1 if any).  Last
 * lines: "ops_per_s=X gets=N bad=N[ rate=OPS behind_max_s=S]" and
 * "verify ok" or "verify FAILED".
 */
#define _GNU_SOURCE
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "wl_args.h"

struct conn {
	int fd;
	char buf[1 << 16];
	size_t len, off;
};

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps until CLOCK_MONOTONIC reads @t (seconds, as now_s()). */
static void sleep_until(double t)
{
	struct timespec ts = { .tv_sec = (time_t)t };

	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* The value of key @k: bytes that depend on the key and the position. */
static void value_of(uint64_t k, char *v, size_t len)
{
	uint64_t x = k * 0xff51afd7ed558ccdULL + 1;

	for (size_t i = 0; i < len; i++) {
		if (!(i % 8)) {
			x ^= x >> 33;
			x *= 0xc4ceb9fe1a85ec53ULL;
		}
		v[i] = (char)('a' + (x >> ((i % 8) * 8)) % 26);
	}
}

static int send_all(int fd, const char *p, size_t len)
{
	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Make sure @need bytes are buffered; returns 0 or -1. */
static int fill(struct conn *c, size_t need)
{
	if (c->off) {
		memmove(c->buf, c->buf + c->off, c->len - c->off);
		c->len -= c->off;
		c->off = 0;
	}
	while (c->len < need) {
		ssize_t n;

		if (need > sizeof(c->buf))
			return -1;
		n = read(c->fd, c->buf + c->len, sizeof(c->buf) - c->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		c->len += (size_t)n;
	}
	return 0;
}

/* One line without its "\r\n" into @line; returns its length or -1. */
static int read_line(struct conn *c, char *line, size_t max)
{
	for (;;) {
		char *end = memmem(c->buf + c->off, c->len - c->off, "\r\n", 2);

		if (end) {
			size_t n = (size_t)(end - (c->buf + c->off));

			if (n >= max)
				return -1;
			memcpy(line, c->buf + c->off, n);
			line[n] = '\0';
			c->off += n + 2;
			return (int)n;
		}
		if (fill(c, c->len - c->off + 1))
			return -1;
	}
}

static int kv_set(struct conn *c, uint64_t k, const char *v, size_t len)
{
	char hdr[96], line[128];
	int n = snprintf(hdr, sizeof(hdr), "set k%llu 0 0 %zu\r\n", (unsigned long long)k, len);

	if (send_all(c->fd, hdr, (size_t)n) || send_all(c->fd, v, len) ||
	    send_all(c->fd, "\r\n", 2) || read_line(c, line, sizeof(line)) < 0)
		return -1;
	return strcmp(line, "STORED") ? 1 : 0;
}

/* 0: the value read is @want; 1: missing or different; -1: I/O error. */
static int kv_get_check(struct conn *c, uint64_t k, const char *want, size_t len)
{
	char req[64], line[256];
	unsigned long flags, got;
	int n = snprintf(req, sizeof(req), "get k%llu\r\n", (unsigned long long)k), bad;

	if (send_all(c->fd, req, (size_t)n) || read_line(c, line, sizeof(line)) < 0)
		return -1;
	if (!strcmp(line, "END"))
		return 1;
	if (sscanf(line, "VALUE %*s %lu %lu", &flags, &got) != 2 || fill(c, got + 2))
		return -1;
	bad = got != len || memcmp(c->buf + c->off, want, len);
	c->off += got + 2;
	if (read_line(c, line, sizeof(line)) < 0 || strcmp(line, "END"))
		return -1;
	return bad;
}

/*
 * Set key @k to its value (@get 0), or read it back and compare (@get 1):
 * 0 or 1 as kv_set() / kv_get_check(), -1 with the message said if the
 * connection is lost.  @val is scratch space of @vlen bytes.
 */
static int kv_op(struct conn *c, int get, uint64_t k, char *val, size_t vlen)
{
	int r;

	value_of(k, val, vlen);
	r = get ? kv_get_check(c, k, val, vlen) : kv_set(c, k, val, vlen);
	if (r < 0)
		fprintf(stderr, "%s k%llu: connection lost\n", get ? "get" : "set",
			(unsigned long long)k);
	return r;
}

/* Cumulative Zipf distribution over @n ranks. */
static double *zipf_cdf(uint64_t n, double s)
{
	double *cdf = malloc(n * sizeof(*cdf)), sum = 0;

	if (!cdf)
		return NULL;
	for (uint64_t i = 0; i < n; i++)
		cdf[i] = sum += 1 / pow((double)(i + 1), s);
	for (uint64_t i = 0; i < n; i++)
		cdf[i] /= sum;
	return cdf;
}

static uint64_t zipf_rank(const double *cdf, uint64_t n)
{
	double u = (double)(next_rand() >> 11) / 9007199254740992.0;
	uint64_t lo = 0, hi = n - 1;

	while (lo < hi) {
		uint64_t mid = (lo + hi) / 2;

		if (cdf[mid] < u)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

int main(int argc, char **argv)
{
	const char *path = NULL, *ready = NULL, *go = NULL;
	uint64_t nkeys = 50000, *perm, gets = 0, ops = 0, bad = 0;
	size_t vlen = 4000;
	double theta = 0.99, duration = 60, rate = 0, behind_max = 0, t0, next;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	static struct conn c;
	char *val;
	double *cdf;
	const struct wl_arg args[] = {
		WL_OPT("socket", 0, wl_str, &path),
		WL_OPT("keys", 0, wl_u64, &nkeys),
		WL_OPT("value", 0, wl_size, &vlen),
		WL_OPT("zipf", 0, wl_double, &theta),
		WL_OPT("duration", 0, wl_double, &duration),
		WL_OPT("rate", 0, wl_double, &rate),
		WL_OPT("ready", 0, wl_str, &ready),
		WL_OPT("go", 0, wl_str, &go),
		{ }
	};
	int r;

	if (wl_parse_args(argv[0], argc, argv, args, NULL) < 0)
		return 2;
	if (!path || !nkeys || !vlen || vlen > 60000 || theta <= 0 || duration <= 0 ||
	    rate < 0 || strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "usage: %s --socket PATH [--keys N] [--value BYTES<=60000] "
			"[--zipf S] [--duration SECS] [--rate OPS] [--ready FILE] [--go FILE]\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	strcpy(sa.sun_path, path);
	c.fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (c.fd < 0 || connect(c.fd, (struct sockaddr *)&sa, sizeof(sa))) {
		perror(path);
		return 1;
	}
	val = malloc(vlen);
	cdf = zipf_cdf(nkeys, theta);
	perm = malloc(nkeys * sizeof(*perm));
	if (!val || !cdf || !perm)
		return 1;
	/* rank -> key: a fixed shuffle, so popularity is not address order */
	for (uint64_t i = 0; i < nkeys; i++)
		perm[i] = i;
	for (uint64_t i = nkeys - 1; i > 0; i--) {
		uint64_t j = next_rand() % (i + 1), t = perm[i];

		perm[i] = perm[j];
		perm[j] = t;
	}
	t0 = now_s();
	for (uint64_t k = 0; k < nkeys; k++) {
		r = kv_op(&c, 0, k, val, vlen);
		if (r < 0)
			return 1;
		bad += r;
	}
	printf("load keys=%llu value=%zu secs=%.1f bad=%llu\n", (unsigned long long)nkeys, vlen,
	       now_s() - t0, (unsigned long long)bad);
	if (ready) {
		FILE *f = fopen(ready, "w");

		if (f)
			fclose(f);
	}
	t0 = now_s();
	next = t0 + 1;
	for (;;) {
		uint64_t k = perm[zipf_rank(cdf, nkeys)];

		if (rate > 0) {
			/* every get due within the duration is sent */
			double due = t0 + (double)ops / rate, late;

			if (due - t0 >= duration)
				break;
			late = now_s() - due;
			if (late < 0)
				sleep_until(due);
			else if (late > behind_max)
				behind_max = late;
		} else if (now_s() - t0 >= duration) {
			break;
		}
		r = kv_op(&c, 1, k, val, vlen);
		if (r < 0)
			return 1;
		bad += r;
		ops++;
		if (now_s() >= next) {
			printf("t=%.0f ops=%llu\n", next - t0, (unsigned long long)ops);
			next += 1;
		}
	}
	gets = ops;
	printf("ops_per_s=%.0f gets=%llu bad=%llu", (double)ops / (now_s() - t0),
	       (unsigned long long)gets, (unsigned long long)bad);
	if (rate > 0)
		printf(" rate=%.0f behind_max_s=%.3f", rate, behind_max);
	printf("\n");
	while (go && access(go, F_OK))
		usleep(10000);
	for (uint64_t k = 0; k < nkeys; k++) {
		value_of(k, val, vlen);
		r = kv_get_check(&c, k, val, vlen);
		if (r < 0)
			return 1;
		bad += r;
	}
	printf("verify %s keys=%llu bad=%llu\n", bad ? "FAILED" : "ok", (unsigned long long)nkeys,
	       (unsigned long long)bad);
	return bad ? 1 : 0;
}
