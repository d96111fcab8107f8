/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * report savings: the savings curve (common/savings_model.h says what it
 * counts) of a record, for the whole and per --by group.
 * report_savings.c feeds the record to the model, report_savings_out.c
 * prints the curve as text, JSON or plot data.
 */
#ifndef DAPTRACE_REPORT_SAVINGS_H
#define DAPTRACE_REPORT_SAVINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "report.h"
#include "common/report_group.h"
#include "common/savings_model.h"

/* The replayed record, for report_savings_out.c. */
struct sav_result {
	const struct report_opts *o;
	const uint64_t *t_ns;		/* thresholds, ascending */
	unsigned int nr_t;
	uint64_t page_size;
	double speed;			/* --speed: the record's time at it */
	const struct sav_stats *all;
	const struct sav_calib *calib;	/* the touched shares checked by the probes */
	struct sav_stats **groups;	/* --by, most saved first */
	size_t nr_groups;
};

/* Output, report_savings_out.c: text, JSON, or plot data with @tics. */
void sav_print_text(const struct sav_result *res, FILE *out);
void sav_print_json(const struct sav_result *res, FILE *out);
void sav_print_plot(const struct sav_result *res, FILE *out, FILE *tics);

#endif
