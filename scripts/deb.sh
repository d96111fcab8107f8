#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The Debian packages (debian/): daptrace, libdaptrace0, libdaptrace-dev and
# daptrace-dkms.
#
#   scripts/deb.sh build    build them into build/deb/ from a copy of the tree
#                           (tracked and untracked, not ignored, files) with
#                           dpkg-buildpackage, then run lintian on them: any
#                           error or warning fails
#   scripts/deb.sh test     build, then (KTAP) install them with dpkg, check
#                           what lands where (binary, library, pc file,
#                           header, man pages, the exporter's service and
#                           settings, DKMS source), and purge them again
#
# The test changes the system while it runs (dpkg -i, DKMS builds the module
# for the supported kernels) and leaves nothing behind.  It will not touch a
# daptrace that is already installed (packages or `make dkms-install`): that is
# a counted skip.  Logs: build/deb/*.log.
set -uo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
OUT=${BUILD:-$TOP/build}/deb
VERSION=$(cat "$TOP/VERSION")
PKGS=(daptrace libdaptrace0 libdaptrace-dev daptrace-dkms)
export LC_ALL=C

die() {
	echo "deb: $*" >&2
	exit 1
}

# Copy the tree, build the binary packages, lintian them.  Quiet unless it fails.
build() {
	local cl src log=$OUT/build.log files=()

	command -v dpkg-buildpackage >/dev/null && command -v dh_dkms >/dev/null &&
		command -v lintian >/dev/null ||
		die "dpkg-dev, debhelper, dh-dkms or lintian missing: run 'make deps'"
	cl=$(dpkg-parsechangelog -l "$TOP/debian/changelog" -S Version) ||
		die "cannot parse debian/changelog"
	[ "$cl" = "$VERSION" ] ||
		die "debian/changelog is at $cl but VERSION is $VERSION: add a changelog entry"
	rm -rf "$OUT"
	src=$OUT/daptrace-$VERSION
	mkdir -p "$src"
	if git -C "$TOP" rev-parse --git-dir >/dev/null 2>&1; then
		while IFS= read -r -d '' f; do
			[ -e "$TOP/$f" ] && files+=("$f")
		done < <(git -C "$TOP" ls-files -z --cached --others --exclude-standard)
		tar -C "$TOP" -cf - "${files[@]}" | tar -C "$src" -xf - || die "copying the tree"
	else
		tar -C "$TOP" --exclude=./build --exclude=./userspace/build -cf - . |
			tar -C "$src" -xf - || die "copying the tree"
	fi
	if ! (cd "$src" && dpkg-buildpackage -b -us -uc) > "$log" 2>&1; then
		tail -n 30 "$log" >&2
		die "dpkg-buildpackage failed (log: $log)"
	fi
	# No tags today; an override, if one is ever needed, goes in
	# debian/<package>.lintian-overrides with its reason as a comment.
	if ! lintian --fail-on error,warning --display-info --show-overrides \
		"$OUT"/daptrace_"$VERSION"_*.changes > "$OUT/lintian.log" 2>&1; then
		cat "$OUT/lintian.log" >&2
		die "lintian: errors or warnings (log: $OUT/lintian.log)"
	fi
	echo "deb: built $(cd "$OUT" && echo ./*.deb)"
	echo "deb: lintian: no errors or warnings, $(grep -cE '^[IPXO]: ' "$OUT/lintian.log") other tags"
}

# ---- test (KTAP) -------------------------------------------------------------

# shellcheck source=scripts/results.sh
. "$TOP/scripts/results.sh"
# check NAME CMD...: one result; the command's output becomes diagnostics.
check() {
	local name=$1 out
	shift
	if out=$("$@" 2>&1); then
		ok "$name"
	else
		[ -z "$out" ] || printf '%s\n' "$out" | sed 's/^/# /'
		not_ok "$name"
	fi
}

finish() {
	results_end
	exit
}

installed_pkgs() {
	dpkg-query -W -f='${Package} ${db:Status-Status}\n' "${PKGS[@]}" 2>/dev/null |
		awk '$2 != "not-installed" && $2 != "config-files" { print $1 }'
}

# The library exports exactly the functions daptrace.h declares.
check_exports() {
	local lib=$1 want got
	want=$(grep -oE '\bdaptrace_[a-z0-9_]+\(' /usr/include/daptrace/daptrace.h |
		tr -d '(' | sort -u)
	got=$(nm -D --defined-only "$lib" | awk '$2 == "T" { sub(/@.*/, "", $3); print $3 }' | sort -u)
	[ -n "$want" ] || { echo "no functions found in daptrace.h"; return 1; }
	diff <(echo "$want") <(echo "$got") || { echo "(< header only, > exported only)"; return 1; }
	# data or other symbols leaking out (the version node itself is fine)
	nm -D --defined-only "$lib" | awk '$2 != "T" && $2 != "A" { print; bad = 1 } END { exit bad }'
}

# A program built with pkg-config flags, linked dynamically, runs.
check_pkg_config() {
	local tmp=$1 ma=$2
	[ "$(pkg-config --modversion daptrace)" = "$VERSION" ] ||
		{ echo "pkg-config --modversion: $(pkg-config --modversion daptrace)"; return 1; }
	cat > "$tmp/user.c" <<'EOF'
#include <daptrace/daptrace.h>
#include <stdio.h>

int main(void)
{
	struct daptrace_attrs a;
	const char *why = NULL;

	daptrace_attrs_default(&a);
	if (daptrace_attrs_validate(&a, &why))
		return 1;
	a.sample_us = a.aggr_us + 1;
	if (!daptrace_attrs_validate(&a, &why) || !why)
		return 1;
	printf("%s\n", daptrace_tlb_flush_name(DAPTRACE_TLB_ROUND));
	return 0;
}
EOF
	# shellcheck disable=SC2046 # pkg-config prints a list of flags
	cc -Wall -Werror -o "$tmp/user" "$tmp/user.c" $(pkg-config --cflags --libs daptrace) ||
		return 1
	# (/lib is /usr/lib on merged-/usr systems)
	[ "$(readlink -f "$(ldd "$tmp/user" | awk '$1 == "libdaptrace.so.0" { print $3 }')")" = \
	  "$(readlink -f "/usr/lib/$ma/libdaptrace.so.0")" ] || { ldd "$tmp/user"; return 1; }
	[ "$("$tmp/user")" = round ] || { echo "the program failed"; return 1; }
}

check_man() {
	local page sect f warn
	for page in daptrace.1 daptrace-record.1 daptrace-report.1 daptrace-status.1 \
		    daptrace-policy.1 daptrace-top.1 daptrace-stat.1 \
		    daptrace-exporter.1 libdaptrace.3; do
		sect=${page##*.}
		f=$(man -w "$sect" "${page%.*}" 2>/dev/null) ||
			{ echo "man -w $sect ${page%.*}: not found"; return 1; }
		case $f in "/usr/share/man/man$sect/$page.gz") ;; *)
			echo "$page is at $f"; return 1 ;; esac
		warn=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null)
		[ -z "$warn" ] || { echo "$page: $warn"; return 1; }
		zgrep -q "^\\.TH .*\"daptrace $VERSION\"" "$f" ||
			{ echo "$page: title line lacks daptrace $VERSION"; return 1; }
	done
}

check_dkms_source() {
	local src=/usr/src/daptrace-$VERSION f
	grep -qx "PACKAGE_VERSION=\"$VERSION\"" "$src/dkms.conf" ||
		{ echo "$src/dkms.conf: $(grep PACKAGE_VERSION "$src/dkms.conf")"; return 1; }
	for f in Kbuild kernel/main.c kernel/compat.h include/uapi/linux/daptrace.h; do
		[ -f "$src/$f" ] || { echo "$src/$f missing"; return 1; }
	done
}

# The postinst builds for some kernels; the rest as a user would.  Each
# supported kernel must end with an installed module for exactly that kernel,
# signed with DKMS's MOK key (what a Secure Boot machine enrols).
check_dkms_modules() {
	local k ko
	for k in "${KERNELS[@]}"; do
		if ! dkms status -m daptrace -v "$VERSION" -k "$k" | grep -q ': installed'; then
			echo "postinst did not build for $k: dkms install"
			dkms install -m daptrace -v "$VERSION" -k "$k" > /dev/null || return 1
		fi
		ko=$(find "/lib/modules/$k/updates/dkms" -name 'daptrace.ko*' | head -n1)
		[ -n "$ko" ] || { echo "no daptrace.ko in /lib/modules/$k/updates/dkms"; return 1; }
		modinfo -F vermagic "$ko" | grep -q "^$k " ||
			{ echo "$ko: vermagic $(modinfo -F vermagic "$ko")"; return 1; }
		[ "$(modinfo -F signer "$ko")" = "DKMS module signing key" ] ||
			{ echo "$ko: signer '$(modinfo -F signer "$ko")'"; return 1; }
	done
}

# With the objects of the package build (same PREFIX and LIBDIR: no rebuild).
check_install_uninstall() {
	local dest=$1 ma=$2 left
	local vars=(PREFIX=/usr "LIBDIR=/usr/lib/$ma" "O=$OUT/daptrace-$VERSION/debian/build"
		    "DESTDIR=$dest")
	local conf=$dest/etc/daptrace/exporter.conf
	make -s -C "$TOP" install-tools "${vars[@]}" > /dev/null || return 1
	[ -x "$dest/usr/bin/daptrace" ] && [ -L "$dest/usr/lib/$ma/libdaptrace.so.0" ] ||
		{ echo "install-tools installed no daptrace or libdaptrace.so.0"; return 1; }
	[ -f "$dest/lib/systemd/system/daptrace-exporter.service" ] && [ -f "$conf" ] ||
		{ echo "install-tools installed no exporter unit or settings"; return 1; }
	grep -qx 'ExecStart=/usr/bin/daptrace exporter --config /etc/daptrace/exporter.conf' \
		"$dest/lib/systemd/system/daptrace-exporter.service" ||
		{ echo "unit: $(grep ExecStart= "$dest/lib/systemd/system/daptrace-exporter.service")"; return 1; }
	# the admin's settings survive install and uninstall
	echo "top 3" >> "$conf"
	make -s -C "$TOP" install-tools "${vars[@]}" > /dev/null || return 1
	[ "$(tail -n 1 "$conf")" = "top 3" ] || { echo "install replaced changed settings"; return 1; }
	make -s -C "$TOP" uninstall-tools "${vars[@]}" > /dev/null || return 1
	[ -f "$conf" ] || { echo "uninstall removed changed settings"; return 1; }
	rm -f "$conf"
	left=$(find "$dest" ! -type d)
	[ -z "$left" ] || { echo "left behind: $left"; return 1; }
}

# The exporter's service: installed, off, its settings a conffile that parses.
check_exporter_service() {
	local unit=/lib/systemd/system/daptrace-exporter.service conf=/etc/daptrace/exporter.conf
	local out rc
	[ -f "$unit" ] || { echo "$unit missing"; return 1; }
	grep -qx 'ExecStartPre=/sbin/modprobe daptrace' "$unit" ||
		{ echo "$unit does not load the module"; return 1; }
	grep -qx 'ExecStart=/usr/bin/daptrace exporter --config /etc/daptrace/exporter.conf' "$unit" ||
		{ grep ExecStart= "$unit"; return 1; }
	dpkg-query -W -f='${Conffiles}\n' daptrace | grep -q "^ $conf " ||
		{ echo "$conf is not a conffile"; return 1; }
	# off until enabled: nothing wants it
	out=$(find /etc/systemd/system -name daptrace-exporter.service 2>/dev/null)
	[ -z "$out" ] || { echo "enabled: $out"; return 1; }
	if command -v systemd-analyze > /dev/null; then
		out=$(systemd-analyze verify "$unit" 2>&1) || { echo "$out"; return 1; }
	fi
	# the settings shipped parse; the kernel interface is all that is missing
	out=$(DAPTRACE_SYSFS=/nonexistent/daptrace /usr/bin/daptrace exporter \
		--config "$conf" --listen 127.0.0.1:0 2>&1)
	rc=$?
	[ "$rc" = 1 ] && grep -q "cannot open the kernel interface" <<< "$out" ||
		{ echo "exit status $rc: $out"; return 1; }
}

# mandoc's lint on the sources, and a page for every subcommand of the CLI.
check_man_sources() {
	local sub missing=
	mandoc -Tlint -W warning "$TOP"/docs/man/*.[0-9] || return 1
	for sub in $(grep -oE '\{ "[a-z-]+", cmd_' "$TOP/userspace/cli/main.c" | cut -d'"' -f2); do
		[ -f "$TOP/docs/man/daptrace-$sub.1" ] || missing+=" daptrace-$sub.1"
	done
	[ -z "$missing" ] || { echo "no man page for:$missing"; return 1; }
}

check_dkms_no_kernel() {
	local out src=/usr/src/daptrace-$VERSION had=0
	[ ! -e "$src" ] || had=1
	if out=$(make -s -C "$TOP" dkms-install HOST_KERNELS= 2>&1); then
		echo "exit status 0: $out"
		return 1
	fi
	grep -q "no supported kernel" <<< "$out" || { echo "message: $out"; return 1; }
	[ "$had" = 1 ] || [ ! -e "$src" ] || { echo "$src created"; return 1; }
}

check_purged() {
	local left k ma=$1
	left=$(installed_pkgs)
	[ -z "$left" ] || { echo "still installed: $left"; return 1; }
	for f in /usr/bin/daptrace "/usr/lib/$ma/libdaptrace.so.0" /usr/include/daptrace \
		 /usr/src/daptrace-"$VERSION" /usr/share/daptrace /usr/share/man/man1/daptrace.1.gz \
		 /lib/systemd/system/daptrace-exporter.service /etc/daptrace; do
		[ ! -e "$f" ] || { echo "left behind: $f"; return 1; }
	done
	[ -z "$(dkms status -m daptrace)" ] || { dkms status -m daptrace; return 1; }
	for k in "${KERNELS[@]}"; do
		[ -z "$(find "/lib/modules/$k/updates/dkms" -name 'daptrace.ko*' 2>/dev/null)" ] ||
			{ echo "left behind: daptrace.ko for $k"; return 1; }
	done
}

run_test() {
	local ma tmp debs lib already p
	echo "TAP version 13"
	if (build) > "$OUT.build.out" 2>&1; then
		ok "packages build and are lintian-clean"
		mv "$OUT.build.out" "$OUT/build.out"
	else
		sed 's/^/# /' "$OUT.build.out" | tail -n 40
		not_ok "packages build and are lintian-clean"
		finish
	fi
	ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
	tmp=$(mktemp -d) || exit 1
	# shellcheck disable=SC2064 # expand now
	trap "rm -rf '$tmp'" EXIT
	check "make install-tools, uninstall-tools (DESTDIR): nothing left" \
		check_install_uninstall "$tmp/dest" "$ma"
	check "make dkms-install with no kernel fails, changes nothing" check_dkms_no_kernel
	check "man pages: mandoc -Tlint clean, one per subcommand" check_man_sources
	[ "$(id -u)" = 0 ] || { skip "install, check, purge" "needs root (dpkg -i)"; finish; }
	already=$(installed_pkgs)
	if [ -n "$already" ] || [ -n "$(dkms status -m daptrace 2>/dev/null)" ] ||
	   [ -e "/usr/src/daptrace-$VERSION" ]; then
		skip "install, check, purge" "daptrace is already installed here (${already:-make dkms-install}); remove it first"
		finish
	fi
	mapfile -t KERNELS < <("$TOP/scripts/kernels.sh" --host)
	lib=/usr/lib/$ma/libdaptrace.so.0
	# shellcheck disable=SC2064 # expand now: purge whatever happens
	trap "dpkg --purge ${PKGS[*]} > '$OUT/purge.log' 2>&1; rm -rf '$tmp'" EXIT
	debs=()
	for p in "${PKGS[@]}"; do
		debs+=("$OUT/${p}_${VERSION}_"*.deb)
	done
	check "dpkg -i ${debs[*]##*/}" dpkg -i "${debs[@]}"
	[ "$FAILED" = 0 ] || finish
	check "daptrace --version is $VERSION" \
		bash -c "[ \"\$(/usr/bin/daptrace --version)\" = 'daptrace $VERSION' ]"
	check "gnuplot scripts in /usr/share/daptrace/viz" test -f /usr/share/daptrace/viz/heatmap.gp
	check "$lib -> libdaptrace.so.$VERSION (soname libdaptrace.so.0)" bash -c "
		[ \"\$(readlink $lib)\" = libdaptrace.so.$VERSION ] &&
		[ -f /usr/lib/$ma/libdaptrace.so.$VERSION ] &&
		objdump -p $lib | grep -qE 'SONAME +libdaptrace.so.0\$' &&
		[ \"\$(readlink -f /usr/lib/$ma/libdaptrace.so)\" = /usr/lib/$ma/libdaptrace.so.$VERSION ]"
	check "exported symbols are exactly the API of daptrace/daptrace.h" check_exports "$lib"
	check "pkg-config daptrace builds and links a program" check_pkg_config "$tmp" "$ma"
	check "man pages installed, render without warnings" check_man
	check "daptrace-exporter.service installed disabled, settings a conffile that parses" \
		check_exporter_service
	check "dkms source in /usr/src/daptrace-$VERSION" check_dkms_source
	if [ ${#KERNELS[@]} = 0 ]; then
		skip "module built and installed through DKMS" "no supported kernel with headers"
	else
		check "module built and installed through DKMS for ${KERNELS[*]}" check_dkms_modules
	fi
	check "dpkg --purge" dpkg --purge "${PKGS[@]}"
	check "nothing left behind" check_purged "$ma"
	finish
}

case ${1:-} in
build) build ;;
test) run_test ;;
*) die "usage: $0 build|test" ;;
esac
