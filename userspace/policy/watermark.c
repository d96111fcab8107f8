// SPDX-License-Identifier: GPL-2.0-only
/*
 * Watermarks: a scheme runs only while free memory (system-wide or on one
 * node) is in its band, like DAMOS: it turns off above HIGH (no pressure)
 * or below LOW (let the kernel's own reclaim work), and turns back on only
 * once the metric falls below MID.
 */
#include "policy.h"

int pol_free_permille(enum pol_wmark_metric m, int node)
{
	uint64_t total, free_b;
	int err = pol_meminfo(m == POL_WMARK_NODE_FREE ? node : -1, &total, &free_b);

	return err ? err : (int)(free_b * 1000 / total);
}

int pol_wmark_update(struct pol_scheme *s)
{
	int m;

	if (s->wmark == POL_WMARK_NONE)
		return s->active = 1;
	m = pol_free_permille(s->wmark, s->wmark_node);
	if (m < 0)
		return s->active = 0;	/* no metric, no action: counted as inactive */
	if ((uint32_t)m > s->wmark_high || (uint32_t)m < s->wmark_low)
		s->active = 0;
	else if (s->active || (uint32_t)m <= s->wmark_mid)
		s->active = 1;
	return s->active;
}

int pol_node_exists(int node)
{
	uint64_t total, free_b;

	return node >= 0 && pol_meminfo(node, &total, &free_b) == 0;
}
