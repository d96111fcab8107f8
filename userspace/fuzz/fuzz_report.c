// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for the reports: any input record must give a report
 * or a clean error, never a crash (SIGFPE on a crafted region), leak or
 * undefined behaviour.  Every mode but objects (which needs a side file)
 * and damo runs on the input, heatmap at two grid sizes, hot in both
 * rankings, hist as text and JSON, adjust at two lengths, savings at its
 * default thresholds and at thresholds as short as the crafted windows,
 * regret as text and JSON.
 * Build and run: make -C userspace fuzz.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "report/report.h"
#include "common/report_group.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *devnull;

static void run(struct report_opts *o, int (*fn)(const struct report_opts *, FILE *, FILE *))
{
	struct report_input in = { 0 };

	o->in = &in;
	fn(o, devnull, devnull);
	report_input_free(&in);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct report_opts o = {
		.mode = "fuzz", .time_bins = 50, .addr_bins = 64, .max_blocks = 8,
		.threshold = 1, .top = 5, .at_s = -1, .until_s = -1, .partial = 1,
	};
	char path[64];
	int fd;

	if (!devnull)
		devnull = fopen("/dev/null", "w");
	fd = memfd_create("record", MFD_CLOEXEC);
	if (fd < 0 || !devnull)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	o.input = path;
	run(&o, report_heatmap);
	o.time_bins = 1;
	o.addr_bins = 100000;
	o.max_blocks = 1;
	run(&o, report_heatmap);
	run(&o, report_wss);
	run(&o, report_regions);
	run(&o, report_hot);
	run(&o, report_hist);
	run(&o, report_nodes);
	run(&o, report_pheatmap);
	o.fp_metrics = 3;
	run(&o, report_footprints);
	o.fp_by_time = o.fp_all = o.pct_damo = 1;
	run(&o, report_footprints);
	run(&o, report_savings);
	run(&o, report_regret);
	o.adjust_aggr_us = 250000;
	run(&o, report_adjust);
	o.adjust_aggr_us = 1;
	run(&o, report_adjust);
	o.pattern = (struct access_pattern){
		.size_min = 4096, .size_max = UINT64_MAX, .freq_max = 50,
		.age_max_ns = UINT64_MAX,
	};
	o.nr_sort = 1;
	o.sort[0] = SORT_TEMPERATURE;
	o.temp_w[1] = o.temp_w[2] = 100;
	run(&o, report_access);
	/* grouped by process, command name and cgroup */
	o.by = BY_CGROUP;
	run(&o, report_access);
	run(&o, report_wss);
	/* thresholds of the crafted records' nanosecond windows */
	o.thresholds_ns[0] = 1;
	o.thresholds_ns[1] = 100;
	o.thresholds_ns[2] = 1000000000;
	o.nr_thresholds = 3;
	run(&o, report_savings);
	o.by = BY_COMM;
	run(&o, report_hot);
	o.by = BY_NONE;
	o.by_label = 1;
	o.json = 1;
	run(&o, report_hot);
	run(&o, report_raw);
	run(&o, report_hist);
	run(&o, report_savings);
	run(&o, report_regret);
	o.terminal = 2;
	o.json = 0;
	run(&o, report_heatmap);
	close(fd);
	return 0;
}
