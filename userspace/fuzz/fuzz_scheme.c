// SPDX-License-Identifier: GPL-2.0-only
/*
 * libFuzzer harness for the scheme grammar (policy/scheme_parse.c): any
 * scheme file gives schemes or a clean "FILE:LINE: ..." error, never a
 * crash, leak or undefined behaviour.  Run: make -C userspace fuzz-scheme.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "policy.h"
#include "fuzz_input.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pol_scheme s[POL_MAX_SCHEMES];
	char err[POL_ERRMSG_LEN];
	int n = 0;
	FILE *f;

	f = fuzz_input(data, size);
	if (!f)
		return 0;
	if (pol_scheme_file_parse(f, "fuzz", s, &n, POL_MAX_SCHEMES, err, sizeof(err)) == 0 &&
	    n == 0)
		__builtin_trap();	/* success must yield a scheme */
	fclose(f);
	while (n)
		pol_scheme_free(&s[--n]);
	return 0;
}
