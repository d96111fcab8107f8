#!/usr/bin/env bash
# Print the kernel releases daptrace supports that are installed here, one per
# line, oldest first: the newest plain "-amd64" flavour (no -rt, -cloud) of
# each verified series (Kbuild's daptrace-verified-series) installed on this
# host (5.10 from bullseye, 6.1, 6.12 from bookworm-backports), with both its image in /boot and its headers build
# tree; then the newest kernel Debian ships, from the trixie root
# (scripts/trixie-root.sh), if it was created.
#   scripts/kernels.sh          all of them
#   scripts/kernels.sh 6.12     one series ("newest": the trixie root's)
#   scripts/kernels.sh --host   only those installed on this host (DKMS and
#                               the Debian packages build for these)
#   scripts/kernels.sh --root K the root directory K is installed in: "/" for
#                               this host, else the trixie root; its image is
#                               ROOT/boot/vmlinuz-K, its modules and build
#                               tree are in ROOT/lib/modules/K
# ABI numbers (6.1.0-NN, 6.12.NN+deb12) are never hard-coded: Debian bumps them.
set -euo pipefail

BOOT=${DAPTRACE_BOOT_DIR:-/boot}
MODDIR=${DAPTRACE_MODULES_DIR:-/lib/modules}
here=$(cd "$(dirname "$0")" && pwd)
TROOT=$("$here/trixie-root.sh" path)
# The verified series (Kbuild's list, the one there is); each is looked
# for on this host, and the newest also in the trixie root.
HOST_SERIES=$(sed -n 's/^daptrace-verified-series := //p' "$here/../Kbuild")
[ -n "$HOST_SERIES" ] || { echo "kernels.sh: no daptrace-verified-series in Kbuild" >&2; exit 1; }

# The trixie root's kernel, if the root holds a complete one.
newest() {
	local k
	k=$("$here/trixie-root.sh" kernel)
	[ -n "$k" ] && [ -f "$TROOT/boot/vmlinuz-$k" ] && [ -d "$TROOT/lib/modules/$k/build" ] &&
		echo "$k"
	return 0
}

host_series() {
	local s=$1 best='' img rel
	for img in "$BOOT"/vmlinuz-"$s".*-amd64; do
		[ -e "$img" ] || continue
		rel=${img##*/vmlinuz-}
		# "6.1" must not match 6.10..6.19: the next char after the series is '.'.
		case $rel in *-rt-amd64 | *-cloud-amd64) continue ;; esac
		[ -d "$MODDIR/$rel/build" ] || [ -d "/usr/src/linux-headers-$rel" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$rel" | sed '/^$/d' | sort -V | tail -n1)
	done
	[ -z "$best" ] || echo "$best"
}

case ${1:-} in
--root)
	[ $# = 2 ] || { echo "usage: kernels.sh --root KERNEL" >&2; exit 2; }
	if [ "$2" = "$(newest)" ]; then echo "$TROOT"; else echo /; fi
	exit 0
	;;
--host)
	for s in $HOST_SERIES; do host_series "$s"; done
	exit 0
	;;
esac

[ $# -gt 0 ] || set -- $HOST_SERIES newest
for s in "$@"; do
	case $s in
	newest) newest ;;
	*)
		host_series "$s"
		k=$(newest)
		[[ -z $k || $k != "$s".* ]] || echo "$k"
		;;
	esac
done | sort -uV
exit 0
