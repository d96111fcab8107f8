#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest half of `make demo` (scripts/demo.sh), run in the test VM as the
# extra test extra/daptrace-demo.  scripts/demo.sh appends a payload to a copy
# of this file: a base64 tar.gz with demo/settings.sh (what to record) and
# Debian's xz with its shared libraries and dynamic loader, at their Debian
# paths.  Each recording is printed on the results port, gzip'ed and base64
# encoded, between
#	@@demo begin NAME
#	@@demo end NAME MD5-OF-THE-GZIP
# lines; the host decodes them into build/demo/NAME.csv.

# shellcheck source=selftests/lib/ktap.sh disable=SC1091 # in the guest
. "$(dirname "$0")/../lib/ktap.sh"

W=/tmp/demo

# The payload is everything after the marker line at the end of this file.
unpack() {
	rm -f /usr/bin/xz	# busybox's xz applet (decompression only)
	sed '1,/^__DAPTRACE_DEMO_PAYLOAD__$/d' "$0" | base64 -d | tar -xzf - -C /
}

# emit NAME FILE: FILE onto the results port, compressed and encoded.
emit() {
	gzip -9 -c "$2" > "$W/$1.gz"
	echo "@@demo begin $1"
	base64 "$W/$1.gz"
	set -- "$1" "$(md5sum "$W/$1.gz")"
	echo "@@demo end $1 ${2%% *}"
	rm -f "$W/$1.gz"
}

# record NAME COMMAND...: record COMMAND, then emit the record.
record() {
	name=$1
	shift
	t0=$(date +%s)
	# shellcheck disable=SC2086 # DEMO_RECORD_ARGS is a list of options
	if daptrace record -q $DEMO_RECORD_ARGS -o "$W/$name.csv" -- "$@" \
		> "$W/$name.log" 2>&1; then
		ktap_print_msg "$name: recorded $(grep -c '^[0-9]' "$W/$name.csv") region rows" \
			"in $(($(date +%s) - t0)) s: $*"
		emit "$name.csv" "$W/$name.csv"
		ktap_test_pass "$name"
	else
		sed 's/^/# record: /' "$W/$name.log"
		ktap_test_fail "$name" "daptrace record failed"
	fi
	rm -f "$W/$name.csv"
}

ktap_print_header
command -v daptrace > /dev/null || ktap_skip_all "no daptrace CLI in the guest"
command -v daptrace-workload > /dev/null || ktap_skip_all "no daptrace-workload in the guest"
mkdir -p "$W"
cd "$W" || ktap_exit_fail_msg "cannot enter $W"
unpack || ktap_exit_fail_msg "cannot unpack the demo payload"
# shellcheck source=/dev/null
. /demo/settings.sh
# shellcheck disable=SC2086 # a list of words
set -- $DEMO_PATTERNS
ktap_set_plan $(($# + 1))

for p in $DEMO_PATTERNS; do
	# shellcheck disable=SC2086
	record "workload-$p" daptrace-workload -p "$p" $DEMO_WORKLOAD_ARGS \
		--truth "$p.truth"
	[ ! -f "$p.truth" ] || emit "workload-$p.truth" "$p.truth"
done

# A real program from Debian: xz compressing a file of mixed binaries and
# text (the guest's own programs and libraries, then numbers), single-threaded.
IN=input-${DEMO_XZ_MB}MiB
{
	tar -cf - /bin/busybox /usr/bin/daptrace* /usr/bin/xz /lib /lib64 \
		/sysfs-docs 2> /dev/null
	seq 1 10000000
} | head -c "$((DEMO_XZ_MB * 1024 * 1024))" > "$IN"
ktap_print_msg "xz: input $(wc -c < "$IN") bytes; $(/usr/bin/xz --version | head -n1)"
record xz /usr/bin/xz "$DEMO_XZ_LEVEL" -T1 -k -f "$IN"
ktap_print_msg "xz: output $(wc -c < "$IN.xz" 2> /dev/null || echo none) bytes"
rm -f "$IN" "$IN.xz"

ktap_finished
exit
# shellcheck disable=SC2317 # data, not code
__DAPTRACE_DEMO_PAYLOAD__
