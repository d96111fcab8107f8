#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# `make demo`: install what is missing, build the module for every supported
# kernel and the static tools, boot one kernel in the test VM and record there
#   - daptrace-workload's synthetic patterns (default: "moving", a hot window
#     walking through 512 MiB: a staircase on the heatmap), and
#   - a real program from Debian: xz -9 (64 MiB dictionary, ~670 MiB of match
#     finder), copied into the guest with its libraries and dynamic loader,
# bring the records out of the guest over the results port, and render them
# on the host into build/demo/: heatmap, working set size and region count,
# PNG and SVG.
#
#   scripts/demo.sh [--kernel K] [--patterns "moving phases"] [--xz-mb N]
#
#   --kernel K       kernel release, or series 6.1 / 6.12 (default: newest 6.12;
#                    env DEMO_KERNEL, e.g. `make demo DEMO_KERNEL=6.1`)
#   --patterns LIST  daptrace-workload patterns to record (default "moving";
#                    env DEMO_PATTERNS)
#   --xz-mb N        size of the file xz compresses, MiB (default 24; env
#                    DEMO_XZ_MB)
#   --no-deps        skip scripts/deps.sh
#
# The VM run is selftests/vm/run.sh with this script's guest half
# (demo/guest.sh) as its only test, in its own build directory
# (build/demo-vm/), so it does not collide with VM tests running meanwhile.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-$TOP/build}
OUT=$BUILD/demo
VMB=$BUILD/demo-vm
export LC_ALL=C

KERNEL=${DEMO_KERNEL:-6.12}
PATTERNS=${DEMO_PATTERNS:-moving}
XZ_MB=${DEMO_XZ_MB:-24}
DEPS=1

usage() {
	# shellcheck disable=SC2016 # a literal backquote in the pattern
	sed -n '/^# `make demo`/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case $1 in
	--kernel) KERNEL=$2; shift ;;
	--patterns) PATTERNS=$2; shift ;;
	--xz-mb) XZ_MB=$2; shift ;;
	--no-deps) DEPS=0 ;;
	-h | --help) usage ;;
	*) echo "demo: unknown option '$1'" >&2; usage ;;
	esac
	shift
done

T0=$(date +%s)

say() {
	printf 'demo: %s\n' "$*" >&2
}

die() {
	say "ERROR: $*"
	exit 1
}

# step NAME: announce a step, with the time since the start.
step() {
	say "$1  [+$(($(date +%s) - T0)) s]"
}

# run_logged LOG CMD...: CMD's output to LOG; on failure show its tail.
run_logged() {
	local log=$1
	shift
	if ! "$@" > "$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "'$*' failed (log: ${log#"$TOP"/})"
	fi
}

mkdir -p "$VMB/logs"

# ---- host setup and builds ------------------------------------------------

if [ "$DEPS" = 1 ]; then
	step "installing missing packages (scripts/deps.sh)"
	"$TOP/scripts/deps.sh"
fi

case $KERNEL in
*.*-*) K=$KERNEL ;;		# a full release
*) K=$("$TOP/scripts/kernels.sh" "$KERNEL") ;;
esac
if [ -z "$K" ] || [ ! -f "/boot/vmlinuz-$K" ]; then
	die "kernel '$KERNEL' is not installed (scripts/kernels.sh lists the supported ones)"
fi

step "building the module for every supported kernel (make modules-all)"
run_logged "$VMB/logs/modules.log" make -C "$TOP" --no-print-directory modules-all
run_logged "$VMB/logs/ksft.log" make -C "$TOP" --no-print-directory ksft-headers

step "building the static daptrace CLI and workload tools"
run_logged "$VMB/logs/userspace-static.log" \
	make -C "$TOP/userspace" O="$VMB/userspace-static" STATIC=1
run_logged "$VMB/logs/workload.log" make -C "$TOP/workload" O="$VMB/workload" \
	"$VMB/workload/daptrace-workload"
DAPTRACE=$VMB/userspace-static/daptrace

# run.sh and mkinitramfs.sh take the module and kselftest headers from
# $BUILD: ours point at the real ones.
for d in kmod kselftest; do
	ln -sfn "$BUILD/$d" "$VMB/$d"
done

# ---- the guest half with its payload --------------------------------------

step "packing Debian's xz with its libraries for the guest"
XZ=$(command -v xz) || die "xz missing: run scripts/deps.sh"
STAGE=$(mktemp -d "${TMPDIR:-/tmp}/daptrace-demo.XXXXXX")
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/root/demo" "$STAGE/root/usr/bin"
cp "$XZ" "$STAGE/root/usr/bin/xz"
# The libraries and the loader at their own paths, symlinks resolved.
"$TOP/scripts/shared-libs.sh" --into "$STAGE/root" "$XZ"
XZ_VERSION=$(dpkg-query -W -f='${Package} ${Version}' xz-utils 2>/dev/null || xz --version | head -n1)
cat > "$STAGE/root/demo/settings.sh" <<EOF
DEMO_PATTERNS="$PATTERNS"
DEMO_WORKLOAD_ARGS="-s 512M --phase 2s -d 16s --thp never"
DEMO_RECORD_ARGS=""
DEMO_XZ_MB=$XZ_MB
DEMO_XZ_LEVEL=-9
DEMO_XZ_VERSION="$XZ_VERSION"
EOF
GUEST=$VMB/daptrace-demo.sh
{
	cat "$TOP/demo/guest.sh"
	tar -C "$STAGE/root" --owner=0 --group=0 -czf - . | base64
} > "$GUEST.tmp"
chmod 0755 "$GUEST.tmp"
mv "$GUEST.tmp" "$GUEST"

# ---- the VM -----------------------------------------------------------------

step "recording in the VM (kernel $K, QEMU TCG; patterns: $PATTERNS; xz -9 on $XZ_MB MiB)"
RUNLOG=$VMB/logs/run.log
rc=0
BUILD=$VMB "$TOP/selftests/vm/run.sh" --kernel "$K" --no-la57 --keep \
	--test extra/daptrace-demo --extra-test "$GUEST" \
	--timeout 1200 --test-timeout 1100 > "$RUNLOG" 2>&1 || rc=$?
RESULTS=$VMB/vm/$K/results.log
grep -E '^(not ok|# [a-z]+(-[a-z]+)?(\.csv)?: |# xz: )' "$RUNLOG" | grep -v '^# guest:' >&2 || true
[ -s "$RESULTS" ] || { tail -n 30 "$RUNLOG" >&2; die "the VM produced no results (log: ${RUNLOG#"$TOP"/})"; }
[ "$rc" = 0 ] || say "warning: the VM run reported failures (exit $rc); see ${RUNLOG#"$TOP"/}"

# ---- records out of the guest ----------------------------------------------

step "decoding the records"
rm -rf "$OUT"
mkdir -p "$OUT"
tr -d '\r' < "$RESULTS" | awk -v dir="$STAGE" '
	/^@@demo begin / { name = $3; f = dir "/" name ".b64"; printf "" > f; next }
	/^@@demo end /   { close(f); print $3, $4; name = ""; next }
	name != ""       { print >> f }' > "$STAGE/index"
NAMES=()
while read -r name md5; do
	base64 -d "$STAGE/$name.b64" > "$STAGE/$name.gz"
	[ "$(md5sum < "$STAGE/$name.gz" | cut -d' ' -f1)" = "$md5" ] ||
		die "$name: corrupted on the way out of the guest (md5 mismatch)"
	gzip -dc "$STAGE/$name.gz" > "$OUT/$name"
	case $name in *.csv) NAMES+=("${name%.csv}") ;; esac
done < "$STAGE/index"
[ ${#NAMES[@]} -gt 0 ] || die "no record came out of the guest (see ${RESULTS#"$TOP"/})"

# ---- pictures ---------------------------------------------------------------

step "rendering heatmaps, working set size and region counts"
export DAPTRACE_VIZ=$TOP/viz
for n in "${NAMES[@]}"; do
	# Titles name what was recorded (the record's command); the real
	# program's also says where it comes from.
	title=
	if [ "$n" = xz ]; then
		title="$(sed -n 's/^#meta,"command","\(.*\)"$/\1/p' "$OUT/$n.csv" | head -n1)"
		title="$title  (Debian $XZ_VERSION)"
	fi
	for mode in heatmap wss regions; do
		for ext in png svg; do
			DAPTRACE_PLOT_TITLE=$title run_logged "$VMB/logs/render-$n-$mode-$ext.log" \
				"$DAPTRACE" report "$mode" --plot "$OUT/$n-$mode.$ext" "$OUT/$n.csv"
		done
	done
	"$DAPTRACE" report hot --by-label "$OUT/$n.csv" > "$OUT/$n-hot.txt" 2>&1 || true
	"$DAPTRACE" report wss "$OUT/$n.csv" 2> /dev/null | sed -n "s/^# \(p50 .*\)/demo:   $n: working set size \1/p" >&2 || true
done

step "done in $(($(date +%s) - T0)) s; files written:"
find "$OUT" -maxdepth 1 -type f -printf '%P\n' | sort | while read -r f; do
	printf '  %s  (%s)\n' "${OUT#"$TOP"/}/$f" "$(du -h "$OUT/$f" | cut -f1)"
done
