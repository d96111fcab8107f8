/* SPDX-License-Identifier: GPL-2.0-only */
/* Read what a command under test wrote to a file, for the test to check. */
#ifndef DAPTRACE_READ_TEXT_H
#define DAPTRACE_READ_TEXT_H

#include <stdio.h>
#include <stdlib.h>

/*
 * The first @cap - 1 bytes of @path, NUL-terminated, in a buffer to free;
 * @n says how many were read.  NULL where @path cannot be opened (or no
 * memory).
 */
static inline char *read_text(const char *path, size_t cap, size_t *n)
{
	FILE *f = fopen(path, "r");
	char *text;

	*n = 0;
	if (!f)
		return NULL;
	text = calloc(1, cap);
	if (text)
		*n = fread(text, 1, cap - 1, f);
	fclose(f);
	return text;
}

#endif
