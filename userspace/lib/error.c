// SPDX-License-Identifier: LGPL-2.1-or-later
/* Per-thread error message, so callers can say exactly what failed. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static __thread char dt_errmsg[1024];

const char *daptrace_last_error(void)
{
	return dt_errmsg;
}

int dt_fail(int err, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(dt_errmsg, sizeof(dt_errmsg), fmt, ap);
	va_end(ap);
	if (n >= 0 && (size_t)n < sizeof(dt_errmsg))
		snprintf(dt_errmsg + n, sizeof(dt_errmsg) - n, ": %s",
			 strerror(err));
	errno = err;
	return -err;
}
