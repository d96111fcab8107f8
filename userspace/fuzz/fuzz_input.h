/* SPDX-License-Identifier: GPL-2.0-only */
/* What the libFuzzer harnesses share: the input as a stdio stream. */
#ifndef DAPTRACE_FUZZ_INPUT_H
#define DAPTRACE_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* @data as a read-only stream; NULL for an empty input (nothing to parse). */
static inline FILE *fuzz_input(const uint8_t *data, size_t size)
{
	return size ? fmemopen((void *)data, size, "r") : NULL;
}

#endif
