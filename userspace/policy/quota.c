// SPDX-License-Identifier: GPL-2.0-only
/*
 * Prioritisation under a quota, as DAMOS does it: every matching region gets
 * a score (0..99: how cold, or how hot, and for how long), the bytes are
 * binned by score, and one cut-off score splits what fits in the quota from
 * what waits.  A histogram, not a sort, so the cost is linear in regions.
 */
#include "policy.h"

/* Age in 100 ms units, log2, capped at 2^11 (POL_IDLE_SCORE_US): 0..11 -> 0..99. */
static unsigned int age_score(uint64_t age_us)
{
	uint64_t units = age_us / 100000;
	unsigned int bits = 0;

	while (units && bits < 11) {
		units >>= 1;
		bits++;
	}
	return bits * POL_MAX_SCORE / 11;
}

unsigned int pol_score(const struct pol_scheme *s, uint32_t nr_accesses,
		       uint32_t nr_samples, uint64_t age_us)
{
	unsigned int freq, fs;

	if (!nr_samples)
		nr_samples = 1;
	if (nr_accesses > nr_samples)
		nr_accesses = nr_samples;
	freq = (unsigned int)((uint64_t)nr_accesses * POL_MAX_SCORE / nr_samples);
	/* coldest first: idle for long; hottest first: busy for long */
	fs = s->hottest_first ? freq : POL_MAX_SCORE - freq;
	return (fs + age_score(age_us)) / 2;
}

unsigned int pol_score_cutoff(const uint64_t *hist, uint64_t budget)
{
	uint64_t sum = 0;

	for (int score = POL_MAX_SCORE; score >= 0; score--) {
		sum += hist[score];
		if (sum > budget)
			return (unsigned int)score;
	}
	return 0;
}
