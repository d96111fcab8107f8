#!/usr/bin/env bash
# Print the kernel releases daptrace supports that are installed here, one per
# line: the newest plain "-amd64" flavour (no -rt, -cloud) of each supported
# series, with both its image in /boot and its headers build tree.
#   scripts/kernels.sh          all supported series
#   scripts/kernels.sh 6.12     one series
# ABI numbers (6.1.0-NN, 6.12.NN+deb12) are never hard-coded: Debian bumps them.
set -euo pipefail

SERIES=${*:-6.1 6.12}
BOOT=${DAPTRACE_BOOT_DIR:-/boot}
MODDIR=${DAPTRACE_MODULES_DIR:-/lib/modules}

for s in $SERIES; do
	best=
	for img in "$BOOT"/vmlinuz-"$s".*-amd64; do
		[ -e "$img" ] || continue
		rel=${img##*/vmlinuz-}
		# "6.1" must not match 6.10..6.19: the next char after the series is '.'.
		case $rel in *-rt-amd64 | *-cloud-amd64) continue ;; esac
		[ -d "$MODDIR/$rel/build" ] || [ -d "/usr/src/linux-headers-$rel" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$rel" | sed '/^$/d' | sort -V | tail -n1)
	done
	[ -n "$best" ] && echo "$best"
done
exit 0
