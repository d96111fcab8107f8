#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Build daptrace through DKMS for every supported kernel, the way a user's
# `dkms install` would, without touching the system: the source tree and the
# DKMS tree are private temporary directories, removed afterwards.
#
#   scripts/dkms-test.sh [VERSION]      (make dkms-test passes the Makefile's)
#
# Checks that the source `make dkms-source` installs (what `make dkms-install`
# and the daptrace-dkms package put in /usr/src) has a dkms.conf carrying
# VERSION, that `dkms add` and `dkms build` succeed for each kernel of
# `scripts/kernels.sh --host`, that daptrace.ko appears for each, signed
# with DKMS's MOK key (DKMS creates /var/lib/dkms/mok.key and mok.pub on its
# first build if they do not exist, as for any DKMS package: the key a
# Secure Boot machine enrols with mokutil), that a kernel series that is
# not verified is refused unless /etc/dkms/daptrace.conf opts in (the
# newest kernel's headers, pretending to be series 9.99: see below), and
# that `dkms remove` cleans up.  Idempotent; exit status 0/1.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
VERSION=${1:-$(cat "$TOP/VERSION")}
NAME=daptrace

fail() {
	echo "dkms-test: FAIL: $*" >&2
	exit 1
}

command -v dkms >/dev/null || fail "dkms missing: run 'make deps'"
mapfile -t KERNELS < <("$TOP/scripts/kernels.sh" --host)
[ ${#KERNELS[@]} -gt 0 ] || fail "no supported kernel installed"

TMP=$(mktemp -d "${TMPDIR:-/tmp}/daptrace-dkms.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
SRC=$TMP/usr/src/$NAME-$VERSION
TREE=$TMP/dkms
mkdir -p "$TREE"
make -s -C "$TOP" --no-print-directory dkms-source DESTDIR="$TMP" ||
	fail "make dkms-source"
conf_version=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$SRC/dkms.conf")
[ "$conf_version" = "$VERSION" ] ||
	fail "dkms.conf has PACKAGE_VERSION=$conf_version, VERSION is $VERSION"
dk=(--sourcetree "$TMP/usr/src" --dkmstree "$TREE")

# check_signed KO: KO carries a signature by DKMS's MOK certificate: sign-file
# names the signer by its certificate's subject and serial number (PKCS#7
# issuer and serial), which modinfo shows as signer and sig_key.
MOK=/var/lib/dkms/mok.pub
check_signed() {
	local ko=$1 signer keyid serial subject
	signer=$(modinfo -F signer "$ko")
	[ -n "$signer" ] || fail "$ko is not signed"
	[ -f "$MOK" ] || fail "$ko is signed by '$signer' but $MOK is missing"
	keyid=$(modinfo -F sig_key "$ko" | tr -d ':' | tr 'a-f' 'A-F')
	serial=$(openssl x509 -inform DER -in "$MOK" -noout -serial | sed 's/^serial=//')
	subject=$(openssl x509 -inform DER -in "$MOK" -noout -subject -nameopt multiline |
		  sed -n 's/^ *commonName *= *//p')
	[ "$keyid" = "$serial" ] && [ "$signer" = "$subject" ] ||
		fail "$ko: signed by '$signer' ($keyid), not by $MOK ('$subject', $serial)"
}

echo "dkms-test: $NAME $VERSION for ${KERNELS[*]}"
dkms add -m "$NAME" -v "$VERSION" "${dk[@]}" || fail "dkms add"
for k in "${KERNELS[@]}"; do
	if ! dkms build -m "$NAME" -v "$VERSION" -k "$k" "${dk[@]}"; then
		cat "$TREE/$NAME/$VERSION/build/make.log" 2>/dev/null || true
		fail "dkms build for $k"
	fi
	ko=$(find "$TREE/$NAME/$VERSION/$k" -name "$NAME.ko*" 2>/dev/null | head -n1)
	[ -n "$ko" ] || fail "no $NAME.ko built for $k"
	modinfo -F vermagic "$ko" | grep -q "^$k " ||
		fail "$ko: vermagic '$(modinfo -F vermagic "$ko")' is not for $k"
	check_signed "$ko"
	echo "dkms-test: $k: ${ko#"$TREE"/}, signed by '$(modinfo -F signer "$ko")'"
done

# An unverified series through DKMS (README, "Supported kernels"), on the
# newest kernel: the test-only DAPTRACE_SERIES_TEST=9.99 in dkms's
# environment reaches Kbuild through the make it runs (the kernel itself is
# verified, so BUILD_EXCLUSIVE_KERNEL lets it through).  Refused without
# the opt-in; built with DAPTRACE_UNVERIFIED=1 in /etc/dkms/daptrace.conf,
# the file dkms.conf reads.  Each build sees a private copy of /etc/dkms
# bind-mounted over it in a mount namespace of its own, so neither the
# host's file nor its absence counts, and nothing on the host changes.
k=${KERNELS[-1]}
ETC=$TMP/etc-dkms
# dkms_in_etc CONF ARGS...: dkms ARGS with /etc/dkms/daptrace.conf CONF
# ("" for none) and DAPTRACE_SERIES_TEST=9.99 in the environment.
dkms_in_etc() {
	local conf=$1
	shift
	rm -rf "$ETC"
	mkdir -p "$ETC"
	cp -a /etc/dkms/. "$ETC/"
	rm -f "$ETC/$NAME.conf"
	[ -z "$conf" ] || echo "$conf" > "$ETC/$NAME.conf"
	unshare --mount --propagation private sh -c '
		mount --bind "$1" /etc/dkms || exit 1
		shift
		exec env DAPTRACE_SERIES_TEST=9.99 dkms "$@"
	' sh "$ETC" "$@"
}
dkms unbuild -m "$NAME" -v "$VERSION" -k "$k" "${dk[@]}" > /dev/null || fail "dkms unbuild for $k"
if dkms_in_etc "" build -m "$NAME" -v "$VERSION" -k "$k" "${dk[@]}"; then
	fail "series 9.99 built through DKMS without DAPTRACE_UNVERIFIED=1"
fi
grep -q "series 9.99 is not verified" "$TREE/$NAME/$VERSION/build/make.log" ||
	fail "series 9.99 refused through DKMS, but not with the message"
echo "dkms-test: $k as series 9.99: refused without the opt-in"
if ! dkms_in_etc "DAPTRACE_UNVERIFIED=1" build -m "$NAME" -v "$VERSION" -k "$k" "${dk[@]}"; then
	cat "$TREE/$NAME/$VERSION/build/make.log" 2>/dev/null || true
	fail "series 9.99 with DAPTRACE_UNVERIFIED=1 in /etc/dkms/$NAME.conf: dkms build"
fi
ko=$(find "$TREE/$NAME/$VERSION/$k" -name "$NAME.ko*" 2>/dev/null | head -n1)
[ -n "$ko" ] || fail "no $NAME.ko built for $k as series 9.99"
# (decompressed whole first: grep -q would stop reading, and pipefail fail)
case $ko in
*.ko) cp "$ko" "$TMP/unverified.ko" ;;
*.ko.xz) xz -dc "$ko" > "$TMP/unverified.ko" ;;
*.ko.zst) zstd -qdc "$ko" > "$TMP/unverified.ko" ;;
*) fail "$ko: unknown compression" ;;
esac
grep -qa "is unverified" "$TMP/unverified.ko" ||
	fail "$ko: built as series 9.99 but without the unverified warning"
echo "dkms-test: $k as series 9.99: built with DAPTRACE_UNVERIFIED=1 in /etc/dkms/$NAME.conf"

dkms remove -m "$NAME" -v "$VERSION" --all "${dk[@]}" || fail "dkms remove"
[ ! -e "$TREE/$NAME/$VERSION" ] || fail "dkms remove left $TREE/$NAME/$VERSION"
echo "dkms-test: ok"
