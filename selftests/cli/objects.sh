#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# record --objects / report objects against the real module, on
# objects-test (workload/objects-test.c): named globals, a hot, a cold and a
# late-hot heap structure, and a second thread with its own stack.  The
# structure report must rank them as the truth does, name the heap ones by
# their call sites (function@objects-test.c:line), place them where the
# program says they are, and list both thread stacks.  Then a target that
# is already running and statically linked (-p daptrace-workload): no
# LD_PRELOAD, the side file says so and still lists mappings and stacks.
# objects-test runs with -x: it allocates a block and execs itself first,
# so everything above is checked across an exec too.

. "$(dirname "$0")/../lib/ktap.sh"

TMP=${TMPDIR:-/tmp}/objects.$$

# field CSV NAME-PATTERN COLUMN: a column of the first report row whose
# name (column 3) matches; columns: rank,kind,name,start,end,size,alloc_s,
# lifetime_s,windows,mean_freq,peak_freq,hot_share,callsite,...
field() {
	grep -v '^#' "$1" | tr -d '"' | awk -F, -v pat="$2" -v col="$3" \
		'NR > 1 && $3 ~ pat { print $col; exit }'
}

meta() {
	sed -n "s/^#meta,\"\{0,1\}$2\"\{0,1\},\"\{0,1\}\([^\"]*\)\"\{0,1\}$/\1/p" "$1"
}

# check NAME CONDITION-COMMAND DIAG
check() {
	if eval "$2"; then
		ktap_test_pass "$1"
	else
		ktap_test_fail "$1" "$3"
	fi
}

ktap_print_header
ktap_require_tools daptrace objects-test
mkdir -p "$TMP"
ktap_set_plan 13

daptrace record -q --objects -o "$TMP/obj.csv" --aggr 100ms --regions 50-1000 -- \
	objects-test -x -d 8 -t "$TMP/truth" > "$TMP/rec.log" 2>&1
st=$?
sed 's/^/# /' "$TMP/rec.log"
check "record --objects: exit status 0" "[ $st -eq 0 ]" "exit status $st"
check "record --objects: side file complete, not partial" \
	"[ \"\$(tail -n 1 $TMP/obj.objects.csv)\" = '#eof' ] && [ \"\$(meta $TMP/obj.objects.csv partial)\" = no ]" \
	"partial: $(meta "$TMP/obj.objects.csv" partial_reasons)"

pre=$(grep '^heap,"\{0,1\}alloc_pre_exec@objects-test.c:' "$TMP/obj.objects.csv" | cut -d, -f7)
check "exec: one exec seen, the old image's block named and ended at the exec" \
	"[ \"\$(meta $TMP/obj.objects.csv execs)\" = 1 ] && [ -n '$pre' ]" \
	"execs '$(meta "$TMP/obj.objects.csv" execs)', alloc_pre_exec free_ns '$pre'"

daptrace report objects "$TMP/obj.csv" -o "$TMP/rep.csv" 2> "$TMP/rep.err"
st=$?
check "report objects: exit status 0" "[ $st -eq 0 ]" "$(head -n 1 "$TMP/rep.err")"
daptrace report objects "$TMP/obj.csv" 2>&1 | head -n 20 | sed 's/^/# /'

# The truth: name,start,end,class
ok=1 diag=
while IFS=, read -r name start end class; do
	case $name in
	alloc_*) pat="^$name@objects-test.c:[0-9]+\$" ;;
	*) pat="^$name\$" ;;
	esac
	s=$(field "$TMP/rep.csv" "$pat" 4) e=$(field "$TMP/rep.csv" "$pat" 5)
	if [ "$s" != "$start" ] || [ "$e" != "$end" ]; then
		ok=0 diag="$diag $name($class): report [$s,$e) truth [$start,$end)"
	fi
done < "$TMP/truth"
check "every structure named (heap by call site) at its true address" "[ $ok = 1 ]" "$diag"

rank() {
	field "$TMP/rep.csv" "$1" 1
}
hr=$(rank '^alloc_hot@') lr=$(rank '^alloc_late@') cr=$(rank '^alloc_cold@')
check "heap ranked as the truth: hot ($hr) < late ($lr) < cold ($cr)" \
	"[ -n '$hr' ] && [ -n '$lr' ] && [ -n '$cr' ] && [ $hr -lt $lr ] && [ $lr -lt $cr ]" \
	"ranks hot $hr late $lr cold $cr"
gh=$(rank '^hot_table$') gc=$(rank '^cold_table$')
check "globals ranked as the truth: hot_table ($gh) < cold_table ($gc)" \
	"[ -n '$gh' ] && [ -n '$gc' ] && [ $gh -lt $gc ]" "ranks $gh $gc"

# late is hot in its second half only: a smaller hot share than hot's,
# and a peak that is not cold's
hs=$(field "$TMP/rep.csv" '^alloc_hot@' 12) ls=$(field "$TMP/rep.csv" '^alloc_late@' 12)
lp=$(field "$TMP/rep.csv" '^alloc_late@' 11) cp=$(field "$TMP/rep.csv" '^alloc_cold@' 11)
check "late structure: hot share $ls% < hot's $hs%, peak $lp% > cold's $cp%" \
	"awk -v a='$ls' -v b='$hs' -v c='$lp' -v d='$cp' 'BEGIN { exit !(a != \"\" && a + 0 < b + 0 && c + 0 > d + 0) }'" \
	"hot share late $ls hot $hs, peak late $lp cold $cp"

check "thread stacks are their own structures (Stack#0, Stack#1)" \
	"[ \"\$(field $TMP/rep.csv '^Stack#0\$' 2)\" = stack ] && [ \"\$(field $TMP/rep.csv '^Stack#1\$' 2)\" = stack ]" \
	"$(grep -i stack "$TMP/rep.csv" | tr '\n' ' ')"
s1=$(field "$TMP/rep.csv" '^Stack#1$' 10)
check "the worker's stack is seen accessed (mean $s1%)" \
	"awk -v a='$s1' 'BEGIN { exit !(a != \"\" && a + 0 > 0) }'" "mean '$s1'"

# A running, statically linked target: no LD_PRELOAD, said so, still
# mappings and stacks.
daptrace-workload -p hotcold -s 16M -d 4s -t "$TMP/pid.truth" > /dev/null 2>&1 &
pid=$!
sleep 1
daptrace record -q --objects -p $pid -o "$TMP/pid.csv" --aggr 100ms --duration 2s \
	> "$TMP/pid.log" 2>&1
st=$?
wait $pid
sed 's/^/# /' "$TMP/pid.log"
check "record --objects -p: exit status 0, says LD_PRELOAD is impossible" \
	"[ $st -eq 0 ] && grep -q 'LD_PRELOAD is impossible' $TMP/pid.log" "exit status $st"
check "record --objects -p: side file says static and no tracer" \
	"[ \"\$(meta $TMP/pid.objects.csv linkage)\" = static ] && meta $TMP/pid.objects.csv tracer | grep -q 'already running'" \
	"linkage '$(meta "$TMP/pid.objects.csv" linkage)', tracer '$(meta "$TMP/pid.objects.csv" tracer)'"
daptrace report objects "$TMP/pid.csv" -o "$TMP/pid-rep.csv" > /dev/null 2>&1
check "report objects -p: mappings and the main stack listed" \
	"tr -d '\"' < $TMP/pid-rep.csv | grep -q '^[0-9]*,mmap,' && tr -d '\"' < $TMP/pid-rep.csv | grep -q '^[0-9]*,stack,Stack#0,'" \
	"$(grep -v '^#' "$TMP/pid-rep.csv" | cut -d, -f2,3 | tr '\n' ' ')"

rm -rf "$TMP"
ktap_finished
