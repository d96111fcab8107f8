#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# scripts/shared-libs.sh, as KTAP: a program linked against a library of its
# own gets that library and the C library listed and copied into a root at
# their paths, a static program nothing, and a program whose library cannot
# be found an error instead of a root that would fail in the guest.
#
#   scripts/shared-libs-test.sh
#
# Exit status 0/1.
set -euo pipefail

TOP=$(cd "$(dirname "$0")/.." && pwd)
SL=$TOP/scripts/shared-libs.sh
CC=${CC:-gcc}

# shellcheck source=selftests/lib/ktap.sh
. "$TOP/selftests/lib/ktap.sh"
ktap_print_header
ktap_set_plan 4

T=$(mktemp -d "${TMPDIR:-/tmp}/shared-libs-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
mkdir -p "$T/lib" "$T/root"
echo 'int dt_answer(void) { return 42; }' > "$T/answer.c"
echo 'int dt_answer(void); int main(void) { return dt_answer() != 42; }' > "$T/prog.c"
"$CC" -shared -fPIC -o "$T/lib/libdtanswer.so" "$T/answer.c"
"$CC" -o "$T/prog" "$T/prog.c" -L "$T/lib" -ldtanswer -Wl,-rpath,"$T/lib"
"$CC" -o "$T/noprog" "$T/prog.c" -L "$T/lib" -ldtanswer
echo 'int main(void) { return 0; }' > "$T/static.c"
"$CC" -static -o "$T/static" "$T/static.c"

list=$("$SL" --list "$T/prog" "$T/static")
libc=$(grep '/libc\.so' <<< "$list" || true)
if grep -qx "$T/lib/libdtanswer.so" <<< "$list" && [ -n "$libc" ] &&
   grep -q '/ld-linux' <<< "$list" && [ "$(sort -u <<< "$list")" = "$list" ]; then
	ktap_test_pass "--list: the program's own library, the C library and the loader, once each"
else
	ktap_test_fail "--list: the program's own library, the C library and the loader, once each" \
		"got: $list"
fi

"$SL" --into "$T/root" "$T/prog"
if cmp -s "$T/lib/libdtanswer.so" "$T/root$T/lib/libdtanswer.so" &&
   [ -f "$T/root$libc" ] && [ ! -L "$T/root$libc" ]; then
	ktap_test_pass "--into: copied at their paths, links resolved"
else
	ktap_test_fail "--into: copied at their paths, links resolved" \
		"$(cd "$T/root" && find . | head -n 20)"
fi

if [ -z "$("$SL" --list "$T/static")" ]; then
	ktap_test_pass "a static program needs nothing"
else
	ktap_test_fail "a static program needs nothing"
fi

rm -rf "$T/root2" && mkdir "$T/root2"
if err=$("$SL" --into "$T/root2" "$T/noprog" 2>&1); then
	ktap_test_fail "a library ldd cannot find is an error" "exit 0: $err"
elif grep -q 'libdtanswer.so => not found' <<< "$err" &&
     [ -z "$(find "$T/root2" -mindepth 1 | head -n 1)" ]; then
	ktap_test_pass "a library ldd cannot find is an error"
else
	ktap_test_fail "a library ldd cannot find is an error" "message or root wrong: $err"
fi
ktap_finished
