#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The guest's half of tests/exporter/prometheus.sh (run there as an extra
# test, never in the plain VM suite): bring up the NIC QEMU forwards the
# host's port to, start `daptrace exporter --attach` on it, record a
# workload with `daptrace record` while the host's Prometheus scrapes, then
# hand the record's working set per snapshot to the host as
# "# exporter-record SEQ WSS_BYTES" lines.
#
# The exporter is the dynamically linked CLI at $EXPORTER (the guest's own
# /usr/bin/daptrace is static, without an HTTP server).

. "$(dirname "$0")/../lib/ktap.sh"
. "$(dirname "$0")/../lib/setup.sh"

EXPORTER=${EXPORTER:-/opt/daptrace/daptrace}
PORT=9798
TMP=/tmp/exporter-test
WORKLOAD_S=${EXPORTER_WORKLOAD_S:-20}

ktap_print_header
ktap_set_plan 6
mkdir -p "$TMP"
[ -x "$EXPORTER" ] || ktap_exit_fail_msg "$EXPORTER missing (run tests/exporter/prometheus.sh)"

# 1. The NIC: virtio_net and what it needs, from /lib/modules (--guest-kmod).
net_up() {
	if [ -f /lib/modules/order ]; then
		while read -r m; do
			grep -q "^$m " /proc/modules || insmod "/lib/modules/$m.ko" || return 1
		done < /lib/modules/order
	fi
	ip link set lo up &&
	ip link set eth0 up &&
	ip addr add 10.0.2.15/24 dev eth0 &&
	ip route add default via 10.0.2.2
}
if net_up > "$TMP/net.log" 2>&1; then
	ktap_test_pass "network: eth0 10.0.2.15 (QEMU user networking)"
else
	sed 's/^/# /' "$TMP/net.log"
	ip link 2>&1 | sed 's/^/# /'
	ktap_exit_fail_msg "no network: was the VM started with a virtio-net device?"
fi

# 2. The exporter, on the address QEMU forwards to: an explicit --listen.
"$EXPORTER" exporter --attach --listen "0.0.0.0:$PORT" > "$TMP/exporter.log" 2>&1 &
EXP=$!
if log_wait "$TMP/exporter.log" "serving http://0.0.0.0:$PORT/metrics" &&
   wget -q -O "$TMP/first.txt" "http://127.0.0.1:$PORT/metrics"; then
	ktap_test_pass "exporter serves /metrics on 0.0.0.0:$PORT"
else
	sed 's/^/# /' "$TMP/exporter.log"
	kill "$EXP" 2>/dev/null
	ktap_exit_fail_msg "the exporter did not start"
fi
# let the host's Prometheus see the exporter before there is anything
sleep 3

# 3. A record of the same run: the monitor is record's, the exporter reads
# along without changing it.
daptrace record -q -o "$TMP/rec.csv" --aggr 100ms -- \
	daptrace-workload -p moving -s 64M --phase 4s -d "${WORKLOAD_S}s" -t "$TMP/truth" \
	> "$TMP/record.log" 2>&1
st=$?
if [ $st -eq 0 ] && [ "$(tail -n 1 "$TMP/rec.csv")" = "#eof" ]; then
	ktap_test_pass "record of the workload complete"
else
	sed 's/^/# /' "$TMP/record.log"
	ktap_test_fail "record of the workload complete" "exit status $st"
fi
# the target's exit and the monitor turned off, scraped before we stop
sleep 4
wget -q -O "$TMP/last.txt" "http://127.0.0.1:$PORT/metrics"

# 4. Every snapshot the record has, the exporter read too.
value() {
	awk -v s="$1" '$1 == s { print $2 }' "$TMP/last.txt"
}
nsnap=$(grep -c '^#snap,' "$TMP/rec.csv")
read_n=$(value daptrace_exporter_snapshots_read_total)
missed=$(value daptrace_exporter_snapshots_missed_total)
if [ "$nsnap" -gt 0 ] && [ "$read_n" = "$nsnap" ] && [ "$missed" = 0 ]; then
	ktap_test_pass "exporter read all $nsnap snapshots of the record, missed 0"
else
	ktap_test_fail "exporter read all snapshots of the record" \
		"record $nsnap, exporter read '$read_n', missed '$missed'"
fi

# 5. Stopped cleanly.
kill -TERM "$EXP"
wait "$EXP"
st=$?
if [ $st -eq 0 ] && grep -q "stopping: terminated (SIGTERM)" "$TMP/exporter.log"; then
	ktap_test_pass "exporter stops on SIGTERM, exit status 0"
else
	sed 's/^/# /' "$TMP/exporter.log"
	ktap_test_fail "exporter stops on SIGTERM, exit status 0" "exit status $st"
fi

# 6. The record's working set per snapshot for the host: seq and bytes,
# the n-th snapshot of the record and the n-th point of `report wss`.
pid=$(sed -n 's/^pid //p' "$TMP/truth")
grep '^#snap,' "$TMP/rec.csv" | cut -d, -f2 > "$TMP/seqs"
daptrace report wss --pid "$pid" "$TMP/rec.csv" 2> "$TMP/report.err" |
	grep -v '^#' | awk '{ print $2 }' > "$TMP/wss"
if [ -s "$TMP/wss" ] && [ "$(wc -l < "$TMP/wss")" = "$(wc -l < "$TMP/seqs")" ]; then
	ktap_test_pass "report wss of the record: $(wc -l < "$TMP/wss") snapshots"
	echo "# exporter-target $pid"
	paste -d ' ' "$TMP/seqs" "$TMP/wss" | sed 's/^/# exporter-record /'
else
	sed 's/^/# /' "$TMP/report.err"
	ktap_test_fail "report wss of the record" \
		"$(wc -l < "$TMP/wss") points for $(wc -l < "$TMP/seqs") snapshots"
fi
ktap_finished
