// SPDX-License-Identifier: GPL-2.0-only
/* report raw: every snapshot and region of a record, human readable. */
#include <inttypes.h>

#include "cli.h"
#include "report.h"
#include "units.h"

struct raw {
	const struct report_opts *o;
	FILE *out;
};

static int print_snapshot(void *arg, const struct rec_snapshot *s,
			  const struct rec_info *info)
{
	struct raw *raw = arg;
	char sz[32];

	fprintf(raw->out, "snapshot seq %" PRIu64 " %.6f-%.6f s regions %u samples %u"
		" flags 0x%x missed_before %" PRIu64 "\n", s->seq,
		(double)s->start_ns / 1e9, (double)s->end_ns / 1e9, s->nr_regions,
		s->nr_samples, s->flags, s->missed_before);
	for (uint32_t i = 0; i < s->nr_regions; i++) {
		const struct rec_region *r = &s->regions[i];

		if (raw->o->pid && r->pid != raw->o->pid)
			continue;
		fprintf(raw->out, "  %-7d 0x%" PRIx64 "-0x%" PRIx64 " %10s acc %4u "
			"(%6.2f%%) age %5u %s\n", (int)r->pid, r->start, r->end,
			fmt_bytes(r->end - r->start, sz, sizeof(sz)), r->nr_accesses,
			report_freq(s, r, info), r->age, r->label);
	}
	return 0;
}

int report_raw(const struct report_opts *o, FILE *out, FILE *tics)
{
	struct raw raw = { .o = o, .out = out };
	struct rec_info info;
	int ret;

	(void)tics;
	ret = report_read(o, print_snapshot, &raw, &info);
	if (!ret) {
		fprintf(out, "# metadata\n");
		for (int i = 0; i < info.nr_meta; i++)
			fprintf(out, "#   %s = %s\n", info.meta[i].key, info.meta[i].value);
		for (int i = 0; i < info.nr_targets; i++)
			fprintf(out, "#   target %d %s\n", (int)info.targets[i].pid,
				info.targets[i].comm);
		for (int i = 0; i < info.nr_trailer; i++)
			fprintf(out, "#   end %s = %s\n", info.trailer[i].key,
				info.trailer[i].value);
	}
	rec_info_free(&info);
	return ret;
}
