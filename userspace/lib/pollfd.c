// SPDX-License-Identifier: LGPL-2.1-or-later
/* The reader's file descriptor, for callers with their own poll/epoll loop. */
#include <errno.h>

#include "daptrace.h"
#include "internal.h"

int daptrace_poll_fd(const struct daptrace *d)
{
	if (d->seq_fd < 0)
		return dt_fail(EINVAL, "daptrace_poll_fd: reader not initialised");
	return d->seq_fd;
}
