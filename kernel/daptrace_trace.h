/* SPDX-License-Identifier: GPL-2.0 */
/*
 * daptrace tracepoints.  daptrace:daptrace_aggregated has the fields, types
 * and output format of DAMON's damon:damon_aggregated
 * (include/trace/events/damon.h), so perf, trace-cmd, bpftrace and tools
 * written for DAMON traces read it unchanged.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM daptrace

#if !defined(_DAPTRACE_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _DAPTRACE_TRACE_H

#include <linux/tracepoint.h>

#include "core.h"

/**
 * daptrace_aggregated - one region at the end of an aggregation window.
 * @target_id:	Index of the region's target in the target list.
 * @r:		The region, with the window's access count and its age.
 * @nr_regions:	Number of regions of that target.
 *
 * Emitted for every region of every target each time a snapshot is
 * published, in the order of the snapshot's records.
 */
TRACE_EVENT(daptrace_aggregated,
	    TP_PROTO(unsigned int target_id, struct daptrace_region *r,
		     unsigned int nr_regions),
	    TP_ARGS(target_id, r, nr_regions),
	    TP_STRUCT__entry(__field(unsigned long, target_id)
			     __field(unsigned int, nr_regions)
			     __field(unsigned long, start)
			     __field(unsigned long, end)
			     __field(unsigned int, nr_accesses)
			     __field(unsigned int, age)
			     __field(unsigned int, nr_unobserved)),
	    TP_fast_assign(__entry->target_id = target_id;
			   __entry->nr_regions = nr_regions;
			   __entry->start = r->ar.start;
			   __entry->end = r->ar.end;
			   __entry->nr_accesses = r->nr_accesses;
			   __entry->age = r->age;
			   __entry->nr_unobserved = r->nr_unobserved;),
	    TP_printk("target_id=%lu nr_regions=%u %lu-%lu: %u %u%s%.0u",
		      __entry->target_id, __entry->nr_regions,
		      __entry->start, __entry->end,
		      __entry->nr_accesses, __entry->age,
		      __entry->nr_unobserved ? " unobserved=" : "",
		      __entry->nr_unobserved)
);

#endif /* _DAPTRACE_TRACE_H */

/* Out of tree: found through Kbuild's -I$(src)/kernel. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE daptrace_trace
#include <trace/define_trace.h>
