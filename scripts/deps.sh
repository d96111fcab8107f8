#!/usr/bin/env bash
# Idempotent setup for a fresh Debian 12 (bookworm) machine: build tools, QEMU,
# busybox, plotting, and the kernels the tests boot, with their headers:
# bullseye's 5.10, bookworm's 6.1, bookworm-backports' 6.12 and (in a trixie
# root, scripts/trixie-root.sh) the newest kernel Debian ships; plus
# linux-source-6.12 for checkpatch.pl, the kselftest headers and the debug
# kernel.
#
# Safe to run repeatedly: it only calls apt when something is missing.
set -euo pipefail

SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

log() { printf 'deps: %s\n' "$*" >&2; }

BPO_LIST=/etc/apt/sources.list.d/daptrace-bookworm-backports.sources

# Backports carries the 6.12 kernel; add it once, with the stock keyring.
ensure_backports() {
	if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then
		return 0
	fi
	log "adding bookworm-backports to $BPO_LIST"
	$SUDO tee "$BPO_LIST" >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	APT_UPDATED=0
}

# Bullseye carries 5.10.  Pinned to 1 so that it never supplies anything not
# asked for by name: its kernel headers bring their own gcc-10, kbuild and
# libssl1.1, and upgrade nothing of bookworm's.
BULLSEYE_LIST=/etc/apt/sources.list.d/daptrace-bullseye.sources
BULLSEYE_PIN=/etc/apt/preferences.d/daptrace-bullseye
ensure_bullseye() {
	[ ! -f "$BULLSEYE_LIST" ] || [ ! -f "$BULLSEYE_PIN" ] || return 0
	log "adding bullseye and bullseye-security (pinned to 1) to $BULLSEYE_LIST"
	$SUDO tee "$BULLSEYE_LIST" >/dev/null <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bullseye
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://deb.debian.org/debian-security
Suites: bullseye-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	$SUDO tee "$BULLSEYE_PIN" >/dev/null <<'PIN'
Package: *
Pin: release n=bullseye
Pin-Priority: 1

Package: *
Pin: release n=bullseye-security
Pin-Priority: 1
PIN
	APT_UPDATED=0
}

APT_UPDATED=0
apt_update() {
	[ "$APT_UPDATED" = 1 ] && return 0
	log "apt-get update"
	$SUDO apt-get update -qq
	APT_UPDATED=1
}

apt_install() {
	apt_update
	log "installing: $*"
	$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "$@" >/dev/null
}

# Host tools: build, VM, test, plot.
PKGS=(build-essential gcc-12 make bc bison flex libelf-dev libssl-dev kmod
      cpio gzip xz-utils busybox-static qemu-system-x86 sparse
      gnuplot-nox libcsv-dev libjson-c-dev zlib1g-dev dkms python3 perl ca-certificates shellcheck clang)
# Debian packages (make deb, the deb step of make check): debhelper with the
# DKMS addon, lintian, pkg-config and man for the installed-package checks,
# mandoc to lint the man pages.
PKGS+=(debhelper dh-dkms dpkg-dev lintian pkgconf man-db mandoc)
PKGS+=(libdw-dev zlib1g-dev liblzma-dev libbz2-dev libzstd-dev)	# record --objects (static CLI)
# the policy engine: move_pages(2) through libnuma
PKGS+=(libnuma-dev)
# the trixie root of the newest kernel (scripts/trixie-root.sh)
PKGS+=(debootstrap)
# the plot tests read the pictures back
PKGS+=(libpng-dev)
# report's memory test measures with GNU time
PKGS+=(time)
# the unit tests' memcheck run: reads of memory nobody wrote
PKGS+=(valgrind)
# the exporter: libmicrohttpd serves /metrics; its tests scrape it with a real
# Prometheus (the package enables its own service on :9090 where systemd runs;
# the tests start their own on another port), lint it with promtool, and
# parse OpenMetrics with the reference client's strict parser
PKGS+=(libmicrohttpd-dev prometheus python3-prometheus-client curl)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

ensure_backports
ensure_bullseye
[ ${#missing[@]} -eq 0 ] || apt_install "${missing[@]}"

# Kernels: bookworm's own 6.1 and the newest 6.12 from backports. The ABI
# names (6.1.0-NN, 6.12.NN+bpo) are resolved from the archive, never hard-coded.
here=$(cd "$(dirname "$0")" && pwd)
have_kernel() { [ -n "$("$here/kernels.sh" "$1")" ]; }

# Bullseye's newest 5.10 ABI, from bullseye-security when it has one.
if ! have_kernel 5.10; then
	apt_update
	img=$(apt-cache search --names-only '^linux-image-5\.10\.0-[0-9]+-amd64-unsigned$' |
	      awk '{print $1}' | sort -V | tail -n1)
	[ -n "$img" ] || { log "no 5.10 kernel found in bullseye"; exit 1; }
	abi=${img#linux-image-}; abi=${abi%-unsigned}
	apt_install "$img" "linux-headers-$abi"
fi
if ! have_kernel 6.1; then
	apt_install linux-image-amd64 linux-headers-amd64
fi
if ! have_kernel 6.12; then
	apt_update
	img=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9.]+\+[a-z0-9.~]+-amd64-unsigned$' |
	      awk '{print $1}' | sort -V | tail -n1)
	[ -n "$img" ] || { log "no 6.12 kernel found in bookworm-backports"; exit 1; }
	abi=${img#linux-image-}; abi=${abi%-unsigned}
	apt_install -t bookworm-backports "$img" "linux-headers-$abi"
fi
if ! ls /usr/src/linux-source-6.12*.tar.* >/dev/null 2>&1; then
	apt_update
	src=$(apt-cache search --names-only '^linux-source-6\.12$' | awk '{print $1}' | head -n1)
	[ -n "$src" ] || { log "linux-source-6.12 not found in bookworm-backports"; exit 1; }
	apt_install -t bookworm-backports "$src"
fi
# The newest kernel, in its trixie root: created once, updated every run.
"$here/trixie-root.sh" ensure
log "ok"
