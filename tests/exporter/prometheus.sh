#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# daptrace exporter scraped by a real Prometheus, one boot of one kernel
# (KTAP on stdout):
#
#   tests/exporter/prometheus.sh [--kernel K] [--keep]
#
# The host starts Debian's prometheus on loopback with a config written for
# it (1 s scrapes of 127.0.0.1:PORT), then boots the test VM through
# selftests/vm/run.sh with a virtio NIC whose user networking forwards that
# port to the guest.  In the guest (prometheus-guest.sh) `daptrace exporter
# --attach` serves while `daptrace record` records a workload.  Afterwards
# the test asks Prometheus' HTTP API what it stored and checks it against
# the record (prom_check.py): the working set, snapshot by snapshot.  While
# the guest runs it also fetches /metrics itself: `promtool check metrics`
# on the text format, the reference client's OpenMetrics parser on the
# other.  Run it under the VM lock:
#
#   flock /tmp/daptrace-vm.lock tests/exporter/prometheus.sh
#
# Needs the module built (make modules-all) and scripts/deps.sh's packages
# (prometheus, python3-prometheus-client, curl).  Logs: build/exporter-test/.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$TOP/build}
DIR=$BUILD/exporter-test
JOB=daptrace
# Debian's python3 has the python3-prometheus-client package
PY=/usr/bin/python3
[ -x "$PY" ] || PY=python3
KERNEL=
KEEP=0
export LC_ALL=C

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNEL=${2:-}; shift ;;
	--keep) KEEP=1 ;;
	-h | --help) sed -n '/^# daptrace exporter/,/^set -uo/{/^set/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "prometheus.sh: unknown option '$1' (--kernel K, --keep)" >&2; exit 2 ;;
	esac
	shift
done

# shellcheck source=scripts/results.sh
. "$TOP/scripts/results.sh"
finish() {
	results_end
	exit
}
diag_file() {
	[ -s "$1" ] && tail -n "${2:-20}" "$1" | sed 's/^/# | /'
}

echo "TAP version 13"
[ -n "$KERNEL" ] || KERNEL=$("$TOP/scripts/kernels.sh" | sort -V | tail -n1)
[ -n "$KERNEL" ] || { not_ok "a supported kernel is installed"; finish; }
for tool in prometheus promtool curl python3; do
	command -v "$tool" > /dev/null || { not_ok "$tool installed (make deps)"; finish; }
done
rm -rf "$DIR"
mkdir -p "$DIR"

# The dynamically linked CLI (userspace/build/, where make userspace-check
# builds it): the guest's static one has no HTTP server.
if make -C "$TOP/userspace" > "$DIR/build.log" 2>&1; then
	ok "daptrace built with libmicrohttpd for the guest"
else
	diag_file "$DIR/build.log"
	not_ok "daptrace built with libmicrohttpd for the guest"
	finish
fi

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
EXPORTER_PORT=$(free_port)
PROM_PORT=$(free_port)
PROM=http://127.0.0.1:$PROM_PORT
cat > "$DIR/prometheus.yml" <<EOF
# written by tests/exporter/prometheus.sh
global:
  scrape_interval: 1s
  scrape_timeout: 900ms
scrape_configs:
  - job_name: $JOB
    static_configs:
      - targets: ['127.0.0.1:$EXPORTER_PORT']
EOF
PROM_PID=
POLL_PID=
cleanup() {
	[ -z "$POLL_PID" ] || kill "$POLL_PID" 2> /dev/null
	[ -z "$PROM_PID" ] || { kill "$PROM_PID" 2> /dev/null; wait "$PROM_PID" 2> /dev/null; }
	[ "$KEEP" = 1 ] || [ "$FAILED" != 0 ] || rm -rf "$DIR"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

prometheus --config.file="$DIR/prometheus.yml" --storage.tsdb.path="$DIR/tsdb" \
	--web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn \
	> "$DIR/prometheus.log" 2>&1 &
PROM_PID=$!
for _ in $(seq 60); do
	curl -sf "$PROM/-/ready" > /dev/null && break
	sleep 0.5
done
if curl -sf "$PROM/-/ready" > /dev/null; then
	ok "prometheus $(prometheus --version 2>&1 | awk 'NR == 1 { print $3 }') ready on 127.0.0.1:$PROM_PORT"
else
	diag_file "$DIR/prometheus.log"
	not_ok "prometheus ready on 127.0.0.1:$PROM_PORT"
	finish
fi

# While the guest runs: one scrape of each format of our own, once the
# target's series are there.
poll() {
	local url=http://127.0.0.1:$EXPORTER_PORT/metrics
	while :; do
		if curl -sf -o "$DIR/live.txt" "$url" && grep -q '^daptrace_working_set_bytes{' "$DIR/live.txt" &&
		   curl -sf -H 'Accept: application/openmetrics-text; version=1.0.0' \
			-D "$DIR/live.om.headers" -o "$DIR/live.om" "$url"; then
			touch "$DIR/live.done"
			return
		fi
		sleep 1
	done
}
poll &
POLL_PID=$!

# a directory of its own: the check's boot of the same kernel keeps its logs
DAPTRACE_VMDIR="$TOP/build/vm-exporter" \
	"$TOP/selftests/vm/run.sh" --kernel "$KERNEL" --no-la57 --timeout 600 \
	--test extra/prometheus-guest --extra-test "$TOP/tests/exporter/prometheus-guest.sh" \
	--guest-file "$TOP/userspace/build/daptrace:/opt/daptrace/daptrace" \
	--guest-kmod virtio_net --guest-kmod virtio_pci \
	--qemu-args "-netdev user,id=n0,hostfwd=tcp:127.0.0.1:$EXPORTER_PORT-:9798 -device virtio-net-pci,netdev=n0" \
	> "$DIR/vm.log" 2>&1
vm_rc=$?
kill "$POLL_PID" 2> /dev/null
POLL_PID=
# the VM's own results, as ours
while IFS= read -r line; do
	if [[ $line =~ ^(ok|not\ ok)\ [0-9]+\ (.*)$ ]]; then
		if [ "${BASH_REMATCH[1]}" = ok ]; then ok "vm: ${BASH_REMATCH[2]}"; else not_ok "vm: ${BASH_REMATCH[2]}"; fi
	elif [[ $line == "# exporter-"* ]]; then
		echo "${line#\# }" >> "$DIR/record.txt"
	fi
done < "$DIR/vm.log"
[ "$vm_rc" = 0 ] || { diag_file "$DIR/vm.log" 30; not_ok "vm: run.sh exit status $vm_rc"; }

# promtool on the text format, the strict parser on OpenMetrics.
if [ -e "$DIR/live.done" ]; then
	if out=$(promtool check metrics < "$DIR/live.txt" 2>&1) && [ -z "$out" ]; then
		ok "promtool check metrics: the guest's /metrics (text format) is clean"
	else
		printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "promtool check metrics: the guest's /metrics (text format) is clean"
	fi
	if grep -qi '^content-type: application/openmetrics-text; version=1.0.0' "$DIR/live.om.headers" &&
	   out=$("$PY" -c 'import sys
from prometheus_client.openmetrics.parser import text_string_to_metric_families as p
print(sum(len(f.samples) for f in p(open(sys.argv[1]).read())))' "$DIR/live.om" 2>&1); then
		ok "OpenMetrics: the guest's /metrics parses ($out samples, prometheus_client)"
	else
		printf '%s\n' "$out" | tail -n 5 | sed 's/^/# /'
		not_ok "OpenMetrics: the guest's /metrics parses (prometheus_client)"
	fi
else
	not_ok "the host fetched the guest's /metrics through the forwarded port"
fi

# What Prometheus stored, against the record.
if [ -s "$DIR/record.txt" ]; then
	python3 "$TOP/tests/exporter/prom_check.py" "$PROM" "$JOB" "$DIR/record.txt" \
		> "$DIR/check.txt" 2>&1
	while IFS= read -r line; do
		case $line in
		"PASS "*) ok "prometheus: ${line#PASS }" ;;
		"FAIL "*) not_ok "prometheus: ${line#FAIL }" ;;
		*) echo "# ${line#\# }" ;;
		esac
	done < "$DIR/check.txt"
	grep -qE '^(PASS|FAIL) ' "$DIR/check.txt" || not_ok "prometheus: the checks ran"
else
	not_ok "the guest sent the record's working set"
fi
finish
