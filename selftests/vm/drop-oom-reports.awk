# SPDX-License-Identifier: GPL-2.0
#
# Drop the kernel's OOM-killer reports from a log before it is scanned for
# bad lines: a report dumps a stack ("Call Trace:") by design, and the stress
# suite provokes one on purpose.  A report runs from "invoked oom-killer" to
# its "Killed process" line; everything outside reports passes through.
/invoked oom-killer:/ { in_report = 1 }
in_report {
	if (/[Oo]ut of memory.*: Killed process/)
		in_report = 0
	next
}
{ print }
