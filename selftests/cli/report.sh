#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The reports on real records made in the guest: a gzip-compressed record
# of a launched command (record -z), the old record kept as .old, report
# hot on the window a command's exit leaves (never an empty table), --json
# of every mode, stdin and '-', time filters, named heatmap blocks, and the
# daptrace-<sub> names (a daptrace-record link recording a running pid).

. "$(dirname "$0")/../lib/ktap.sh"

TMP=${TMPDIR:-/tmp}/cli-report.$$

# pass_if NAME CONDITION-STATUS DETAIL
pass_if() {
	if [ "$2" -eq 0 ]; then
		ktap_test_pass "$1"
	else
		ktap_test_fail "$1" "$3"
	fi
}

ktap_print_header
ktap_require_tools daptrace
mkdir -p "$TMP"
ktap_set_plan 15
REC=$TMP/w.csv.gz

# 1. record -z a command, twice: the first record survives as .old.
for _ in 1 2; do
	daptrace record -q -z -o "$REC" --aggr 50ms -- \
		daptrace-workload -p hotcold -s 64M -d 2s -t "$TMP/truth" > "$TMP/rec.log" 2>&1
	st=$?
	[ $st -eq 0 ] || break
done
pass_if "record -z -- cmd, twice: exit status 0" "$st" "exit $st: $(head -n 3 "$TMP/rec.log")"
magic=$(head -c 2 "$REC" | od -An -tx1 | tr -d ' \n')
[ "$magic" = 1f8b ] && [ -s "$REC.old" ]
pass_if "record -z: gzip on disk, the first record kept as .old" $? \
	"magic '$magic', $(ls -l "$REC.old" 2>&1)"

# 2. report hot: the last window with regions, a full table.
daptrace report hot "$REC" > "$TMP/hot" 2> "$TMP/hot.err"
st=$?
rows=$(grep -c '^[0-9]' "$TMP/hot")
last=$(gzip -dc "$REC" 2> /dev/null | grep '^#snap,' | tail -n 1 | cut -d, -f2,5)
ktap_print_msg "last window (seq,regions): ${last:-?}; $(head -n 1 "$TMP/hot")"
[ $st -eq 0 ] && [ "$rows" -ge 3 ]
pass_if "report hot on the compressed record: $rows regions" $? \
	"exit $st, $rows rows: $(cat "$TMP/hot" "$TMP/hot.err" | head -n 5 | tr '\n' '|')"

# 3. --json for every mode: one document, with the mode's keys.
bad=
for m in "heatmap:\"blocks\"" "wss:\"wss_bytes\"" "regions:\"nr_regions\"" \
	 "hot:\"regions\"" "raw:\"snapshots\"" "hist:\"access_frequency\""; do
	mode=${m%%:*} key=${m#*:}
	daptrace report "$mode" --json "$REC" > "$TMP/$mode.json" 2> "$TMP/json.err" ||
		bad="$bad $mode(exit $?: $(head -n 1 "$TMP/json.err"))"
	head -c 1 "$TMP/$mode.json" | grep -q '{' && grep -q "$key" "$TMP/$mode.json" ||
		bad="$bad $mode(no $key)"
done
[ -z "$bad" ]
pass_if "--json for every mode" $? "failed:$bad"
jrows=$(grep -c '"label"' "$TMP/hot.json")
[ "$jrows" -eq "$rows" ]
pass_if "report hot --json lists the same $rows regions" $? "json $jrows, text $rows"

# 4. stdin: compressed, through a pipe, two passes (heatmap), same result.
daptrace report heatmap "$REC" | grep -v '^# daptrace heatmap of' > "$TMP/h.file"
# shellcheck disable=SC2002 # a pipe on purpose: not seekable
cat "$REC" | daptrace report heatmap - 2> "$TMP/stdin.err" |
	grep -v '^# daptrace heatmap of' > "$TMP/h.stdin"
cmp -s "$TMP/h.file" "$TMP/h.stdin" && [ -s "$TMP/h.file" ]
pass_if "report heatmap - (gzip on a pipe) = the file" $? \
	"$(head -n 2 "$TMP/stdin.err" | tr '\n' '|') $(wc -l < "$TMP/h.file") vs $(wc -l < "$TMP/h.stdin") lines"

# 5. every heatmap block is named and sized.
grep '^# block' "$TMP/h.file" | while IFS= read -r l; do ktap_print_msg "${l#"# "}"; done
unnamed=$(grep '^# block' "$TMP/h.file" | grep -c ') *$')
nblocks=$(grep -c '^# block' "$TMP/h.file")
[ "$nblocks" -ge 1 ] && [ "$unnamed" -eq 0 ]
pass_if "heatmap: $nblocks blocks, all named" $? "$(grep '^# block' "$TMP/h.file" | tr '\n' '|')"

# 5b. the terminal heatmap: ASCII in a pipe, as wide as $COLUMNS.
COLUMNS=80 LINES=30 daptrace report heatmap --terminal "$REC" > "$TMP/term" 2>&1
st=$?
sed 's/^/  /' "$TMP/term" | while IFS= read -r l; do ktap_print_msg "$l"; done
width=$(tail -n +2 "$TMP/term" | awk '{ if (length($0) > w) w = length($0) } END { print w + 0 }')
[ $st -eq 0 ] && [ "$width" -eq 79 ] && ! grep -q "$(printf '\033')" "$TMP/term"
pass_if "report heatmap --terminal: ASCII, 79 of 80 columns" $? "exit $st, width $width"

# 6. time filters: --until 1 keeps fewer snapshots than the whole record.
all=$(daptrace report wss "$REC" | sed -n 's/^# snapshots \([0-9]*\),.*/\1/p')
early=$(daptrace report wss --until 1 "$REC" | sed -n 's/^# snapshots \([0-9]*\),.*/\1/p')
late=$(daptrace report wss --since 1 "$REC" | sed -n 's/^# snapshots \([0-9]*\),.*/\1/p')
[ -n "$all" ] && [ -n "$early" ] && [ -n "$late" ] && [ "$early" -gt 0 ] &&
	[ "$late" -gt 0 ] && [ $((early + late)) -ge "$all" ] && [ "$early" -lt "$all" ]
pass_if "--since/--until split the $all snapshots ($early, $late)" $? \
	"all '$all' early '$early' late '$late'"

# 7. a flag of another mode is an error naming it.
daptrace report wss --top 5 "$REC" > "$TMP/flag" 2>&1
st=$?
[ $st -eq 2 ] && grep -q -- "--top does not apply" "$TMP/flag"
pass_if "report wss --top: exit 2 naming --top" $? "exit $st: $(head -n 1 "$TMP/flag")"

# 8. daptrace-<sub> links: daptrace-record -p PID for a bounded time.
ln -s "$(command -v daptrace)" "$TMP/daptrace-record"
ln -s "$(command -v daptrace)" "$TMP/daptrace-report"
daptrace-workload -p moving -s 32M -d 10s -t "$TMP/truth2" &
pid=$!
"$TMP/daptrace-record" -q -p $pid -d 2s -o "$TMP/p.csv" --aggr 50ms > "$TMP/p.log" 2>&1
st=$?
kill $pid 2> /dev/null
wait $pid 2> /dev/null
reason=$(sed -n 's/^#end,"\{0,1\}reason"\{0,1\},"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$TMP/p.csv")
[ $st -eq 0 ] && [ "$reason" = "duration reached" ]
pass_if "daptrace-record -p PID -d 2s" $? "exit $st, reason '$reason': $(head -n 2 "$TMP/p.log")"
"$TMP/daptrace-report" hot --by-label "$TMP/p.csv" > "$TMP/lbl" 2>&1
st=$?
[ $st -eq 0 ] && grep -q '^[0-9]' "$TMP/lbl"
pass_if "daptrace-report hot --by-label" $? "exit $st: $(head -n 3 "$TMP/lbl" | tr '\n' '|')"

# 8b. daptrace top --stdio: report hot's table of the live windows.
daptrace top --stdio --refresh 500ms -n 5 -d 3s -- \
	daptrace-workload -p hotcold -s 32M -d 10s -t "$TMP/truth3" > "$TMP/top" 2> "$TMP/top.err"
st=$?
tables=$(grep -c '^# hottest regions of snapshot' "$TMP/top")
rows=$(grep -c '^[0-9]' "$TMP/top")
head -n 8 "$TMP/top" | while IFS= read -r l; do ktap_print_msg "  $l"; done
[ $st -eq 0 ] && [ "$tables" -ge 3 ] && [ "$tables" -le 8 ] && [ "$rows" -ge "$tables" ]
pass_if "daptrace top --stdio: $tables tables in 3 s, $rows rows" $? \
	"exit $st: $(head -n 2 "$TMP/top.err" | tr '\n' '|')"

# 9. a bare duration is refused, not read as microseconds.
daptrace record -q -d 30 -p $$ > "$TMP/dur" 2>&1
st=$?
[ $st -eq 2 ] && grep -q -- "--duration: invalid value '30'" "$TMP/dur"
pass_if "record -d 30: exit 2, a unit is required" $? "exit $st: $(head -n 1 "$TMP/dur")"

# 10. --partial on a copy cut in the middle (of a row, likely of a label).
if gzip -dc "$REC" > "$TMP/plain.csv" 2> /dev/null; then
	size=$(wc -c < "$TMP/plain.csv")
	ktap_print_msg "record: $(wc -c < "$REC") bytes gzip-compressed, $size bytes plain"
	head -c $((size / 2)) "$TMP/plain.csv" > "$TMP/cut.csv"
	daptrace report wss --partial "$TMP/cut.csv" > "$TMP/cut.out" 2>&1
	st=$?
	n=$(sed -n 's/^# snapshots \([0-9]*\),.*/\1/p' "$TMP/cut.out")
	[ $st -eq 0 ] && [ "${n:-0}" -gt 0 ] && [ "$n" -lt "$all" ]
	pass_if "--partial on a record cut in half: $n of $all snapshots" $? \
		"exit $st: $(head -n 2 "$TMP/cut.out" | tr '\n' '|')"
else
	ktap_test_skip "--partial on a cut record" "no gzip in the guest"
fi

rm -rf "$TMP"
ktap_finished
