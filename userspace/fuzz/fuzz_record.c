// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for the record parser (cli/common/recfile_read.c on libcsv):
 * any input must give either snapshots or a clean error, never a crash,
 * leak or undefined behaviour.  Build and run: make -C userspace fuzz.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "common/recfile.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int touch(void *arg, const struct rec_snapshot *s, const struct rec_info *info)
{
	uint64_t *sum = arg;

	*sum += s->seq + s->nr_regions + (uint64_t)info->nr_meta;
	for (uint32_t i = 0; i < s->nr_regions; i++)
		*sum += s->regions[i].end - s->regions[i].start + strlen(s->regions[i].label);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rec_info info;
	uint64_t sum = 0;
	char err[512];
	FILE *f;

	f = fuzz_input(data, size);
	if (!f)
		return 0;
	/* both modes: partial reading takes different exits */
	if (rec_read(f, "fuzz", 0, touch, &sum, &info, err, sizeof(err)) == -1 && !err[0])
		__builtin_trap();	/* every error must come with a message */
	rec_info_free(&info);
	rewind(f);
	rec_read(f, "fuzz", 1, touch, &sum, &info, err, sizeof(err));
	rec_info_free(&info);
	fclose(f);
	return 0;
}
