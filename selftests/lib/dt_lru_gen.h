/* SPDX-License-Identifier: GPL-2.0 */
/*
 * MGLRU for the selftests: switch it, and through its debugfs interface
 * read the generations of the root memcg and force an aging of each node.
 */
#ifndef DT_LRU_GEN_H
#define DT_LRU_GEN_H

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

#include "dt_file.h"

#define LRU_GEN_ENABLED	"/sys/kernel/mm/lru_gen/enabled"
#define LRU_GEN_DEBUGFS	"/sys/kernel/debug/lru_gen"
#define DT_LRU_GEN_MAX_NODES	64

/* Switch MGLRU (LRU_GEN_ENABLED takes "y", "n" or a mask); 0 or -errno. */
static __attribute__((unused)) int dt_lru_gen_set(const char *val)
{
	return dt_write_path(LRU_GEN_ENABLED, val);
}

/*
 * The memcg id of the root, and the newest generation of each node, from
 * debugfs lru_gen: "memcg ID PATH", " node NID", then one line per
 * generation, oldest first, starting with its sequence number.  Returns
 * the number of nodes read, or -1.
 */
static __attribute__((unused)) int
dt_lru_gen_max_seqs(unsigned int *memcg, int *nid, unsigned long *seq)
{
	char line[512];
	int nodes = -1;
	bool in_root = false;
	FILE *f = fopen(LRU_GEN_DEBUGFS, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long v;
		int n;

		if (sscanf(line, "memcg %u", memcg) == 1) {
			if (nodes >= 0)		/* the root memcg comes first */
				break;
			in_root = true;
			nodes = 0;
		} else if (in_root && sscanf(line, " node %d", &n) == 1) {
			if (nodes == DT_LRU_GEN_MAX_NODES)
				break;
			nid[nodes++] = n;
			seq[nodes - 1] = 0;
		} else if (in_root && nodes > 0 && sscanf(line, " %lu", &v) == 1) {
			seq[nodes - 1] = v;
		}
	}
	fclose(f);
	return nodes;
}

/*
 * Force one aging of every node of the root memcg ("+ memcg nid max_seq
 * swappiness force_scan").  Adds the agings that took to @agings; returns 0
 * or the first errno (EEXIST, from 7.x when another aging got there first,
 * is none).
 */
static __attribute__((unused)) int dt_lru_gen_age(unsigned long *agings)
{
	unsigned long seq[DT_LRU_GEN_MAX_NODES];
	int nid[DT_LRU_GEN_MAX_NODES];
	unsigned int memcg;
	char cmd[128];
	int nodes = dt_lru_gen_max_seqs(&memcg, nid, seq);
	int fd = open(LRU_GEN_DEBUGFS, O_WRONLY), err = 0;

	if (nodes <= 0 || fd < 0) {
		err = nodes <= 0 ? EPROTO : errno;
		if (fd >= 0)
			close(fd);
		return err;
	}
	for (int i = 0; i < nodes; i++) {
		int len = snprintf(cmd, sizeof(cmd), "+ %u %d %lu 200 1",
				   memcg, nid[i], seq[i]);

		if (write(fd, cmd, len) == len)
			(*agings)++;
		else if (errno != EEXIST && !err)
			err = errno;
	}
	close(fd);
	return err;
}

#endif /* DT_LRU_GEN_H */
