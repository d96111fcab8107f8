// SPDX-License-Identifier: GPL-2.0-only
/* Number parsing for command-line flags; everything strict and overflow-safe. */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "units.h"

int parse_u64_dec(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	for (; *s >= '0' && *s <= '9'; s++) {
		unsigned int d = (unsigned int)(*s - '0');

		if (x > (UINT64_MAX - d) / 10)
			return -ERANGE;
		x = x * 10 + d;
	}
	if (*s)
		return -EINVAL;
	*v = x;
	return 0;
}

int parse_u64_addr(const char *s, uint64_t *v)
{
	uint64_t x = 0;

	if (!s || (s[0] != '0' || (s[1] != 'x' && s[1] != 'X')))
		return parse_u64_dec(s, v);
	s += 2;
	if (!isxdigit((unsigned char)*s))
		return -EINVAL;
	for (; isxdigit((unsigned char)*s); s++) {
		unsigned int d = isdigit((unsigned char)*s) ? (unsigned int)(*s - '0') :
				 (unsigned int)(tolower((unsigned char)*s) - 'a' + 10);

		if (x >> 60)
			return -ERANGE;
		x = x << 4 | d;
	}
	if (*s)
		return -EINVAL;
	*v = x;
	return 0;
}

static const struct {
	const char *suffix;
	uint64_t us;
} duration_units[] = {
	{ "us", 1 }, { "ms", 1000 }, { "s", 1000000 }, { "m", 60000000 },
};

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

int parse_duration_us(const char *s, uint64_t *us)
{
	uint64_t whole = 0, frac = 0, frac_div = 1, mult = 0, g;
	const char *p = s;

	if (!s || *p < '0' || *p > '9')
		return -EINVAL;
	for (; *p >= '0' && *p <= '9'; p++) {
		unsigned int d = (unsigned int)(*p - '0');

		if (whole > (UINT64_MAX - d) / 10)
			return -ERANGE;
		whole = whole * 10 + d;
	}
	if (*p == '.') {
		p++;
		if (*p < '0' || *p > '9')
			return -EINVAL;
		for (; *p >= '0' && *p <= '9'; p++) {
			if (frac_div >= 1000000000000ULL)
				return -EINVAL;	/* finer than any unit allows */
			frac = frac * 10 + (uint64_t)(*p - '0');
			frac_div *= 10;
		}
	}
	for (size_t i = 0; i < sizeof(duration_units) / sizeof(duration_units[0]); i++) {
		if (!strcmp(p, duration_units[i].suffix)) {
			mult = duration_units[i].us;
			break;
		}
	}
	if (!mult)
		return -EINVAL;
	if (whole > DURATION_MAX_US / mult)
		return -ERANGE;
	/*
	 * frac/frac_div * mult must be a whole number of µs.  Reduced by their
	 * gcd first: frac * mult overflows for "0.500000000000m".
	 */
	g = gcd(mult, frac_div);
	if (frac % (frac_div / g))
		return -EINVAL;
	frac = frac / (frac_div / g) * (mult / g);
	if (whole * mult > DURATION_MAX_US - frac)
		return -ERANGE;
	*us = whole * mult + frac;
	return 0;
}

int parse_range(const char *s, uint64_t *min, uint64_t *max)
{
	const char *dash = s ? strchr(s, '-') : NULL;
	char buf[32];
	size_t n;
	int err;

	if (!dash)
		return -EINVAL;
	n = (size_t)(dash - s);
	if (n == 0 || n >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	err = parse_u64_dec(buf, min);
	if (!err)
		err = parse_u64_dec(dash + 1, max);
	return err;
}

int parse_pid_list(const char *s, pid_t *pids, int max)
{
	char buf[32];
	int n = 0;

	if (!s || !*s)
		return -EINVAL;
	for (;;) {
		size_t len = strcspn(s, ",");
		uint64_t v;
		int err;

		if (len == 0 || len >= sizeof(buf))
			return -EINVAL;
		memcpy(buf, s, len);
		buf[len] = '\0';
		err = parse_u64_dec(buf, &v);
		if (err)
			return err;
		if (v == 0 || v > 0x7fffffff)
			return -ERANGE;
		if (n >= max)
			return -E2BIG;
		for (int i = 0; i < n; i++)
			if (pids[i] == (pid_t)v)
				return -EEXIST;
		pids[n++] = (pid_t)v;
		s += len;
		if (!*s)
			return n;
		s++;	/* the comma */
	}
}

const char *fmt_bytes(uint64_t bytes, char *buf, size_t len)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	double v = (double)bytes;
	int u = 0;

	while (v >= 1024 && u < 6) {
		v /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.*f %s", v < 10 ? 2 : v < 100 ? 1 : 0, v, units[u]);
	return buf;
}

const char *fmt_us(uint64_t us, char *buf, size_t len)
{
	if (us < 1000 || us % 1000)
		snprintf(buf, len, "%llu us", (unsigned long long)us);
	else if (us < 1000000 || us % 1000000)
		snprintf(buf, len, "%llu ms", (unsigned long long)(us / 1000));
	else
		snprintf(buf, len, "%llu s", (unsigned long long)(us / 1000000));
	return buf;
}

const char *fmt_secs(uint64_t ns, char *buf, size_t len)
{
	double s = (double)ns / 1e9;

	if (!ns)
		snprintf(buf, len, "0 s");
	else if (s < 10)
		snprintf(buf, len, "%.2f s", s);
	else if (s < 1000)
		snprintf(buf, len, "%.1f s", s);
	else
		snprintf(buf, len, "%.0f s", s);
	return buf;
}
