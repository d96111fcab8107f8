#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Run a kernel's build system on an external module tree:
#
#   scripts/kbuild.sh KVER DIR [MAKE ARGS...]
#
# is `make -C <KVER's build tree> M=DIR ARGS`.  For a kernel of the trixie
# root (scripts/kernels.sh --root KVER), whose headers need that root's
# compiler, the make runs chrooted into the root, with DIR bind-mounted at the
# same path inside it and /proc mounted (7.3's objtool reads it), in a private
# mount namespace that ends with the command: nothing stays mounted, and
# paths in messages are the host's.
set -euo pipefail

[ $# -ge 2 ] || { sed -n '/^# Run/,/^set -euo/{/^set/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 2; }
KVER=$1
DIR=$(realpath "$2")
shift 2
here=$(cd "$(dirname "$0")" && pwd)
ROOT=$("$here/kernels.sh" --root "$KVER")

if [ "$ROOT" = / ]; then
	exec make -C "/lib/modules/$KVER/build" M="$DIR" "$@"
fi
[ "$(id -u)" = 0 ] || { echo "kbuild.sh: $KVER builds in $ROOT: needs root (chroot)" >&2; exit 1; }
# The arguments reach the inner shell as its positional parameters.
exec unshare --mount --propagation private sh -c '
	root=$1 dir=$2 kver=$3
	shift 3
	mkdir -p "$root$dir" && mount --bind "$dir" "$root$dir" &&
		mount -t proc proc "$root/proc" || exit 1
	exec chroot "$root" env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		LC_ALL=C.UTF-8 \
		make -C "/lib/modules/$kver/build" M="$dir" "$@"
' kbuild "$ROOT" "$DIR" "$KVER" "$@"
