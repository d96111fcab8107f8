#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Summarize bench/ab.sh rows: per workload and setting, the median worker
CPU of each monitor, the ratio of medians and the spread of per-round
ratios, the same per sample taken, and the median accuracy; with
unmonitored ("none") runs, each monitor's slowdown.

Per sample: DAMON sleeps a relative interval after each sample's work, so
where that work is slow (under TCG) it takes fewer samples in the fixed
time than its attributes ask for, and its CPU per second understates what
those attributes cost; CPU per sample compares equal work.  Rows without
a sample count (older runs) are compared per window, which is the same
while every window holds aggr / sample samples.
Usage: bench/ab-report.py ROWS"""
import statistics
import sys
from collections import defaultdict

import report  # bench/report.py: the rows' reader
from report import num


def parse(path):
    """The rows of one A/B run: those that name a monitor."""
    return [row for row in report.parse(path) if 'monitor' in row]


def main():
    rows = parse(sys.argv[1])
    runs = defaultdict(dict)
    for r in rows:
        wl = r['wl']
        if wl.startswith('-p_'):
            toks = wl.split('_')
            wl = toks[1] + (' ' + toks[toks.index('-s') + 1] if '-s' in toks else '')
        runs[(wl, r['setting'])].setdefault(r['round'], {})[r['monitor']] = r
    unit = 'samples' if all(num(r, 'samples') for r in rows
                            if r['monitor'] != 'none' and num(r, 'windows')) else 'windows'
    per = unit[:-1]
    print('| workload | setting | rounds | daptrace CPU % | DAMON CPU % | ratio (median) '
          '| per-round ratios | windows daptrace / DAMON | ratio per ' + per + ' (median) '
          '| per-round ratios per ' + per + ' '
          '| recall daptrace / DAMON | precision daptrace / DAMON |')
    print('|---|---|---|---|---|---|---|---|---|---|---|---|')
    for (wl, setting), rounds in sorted(runs.items()):
        cpu = defaultdict(list)
        per_sample = defaultdict(list)
        wins = defaultdict(list)
        acc = defaultdict(lambda: defaultdict(list))
        ratios = []
        sample_ratios = []
        for rnd in rounds.values():
            for mon, r in rnd.items():
                wall = num(r, 'wall_ms')
                c = num(r, 'cpu_ms')
                if wall and c is not None:
                    cpu[mon].append(100.0 * c / wall)
                if num(r, 'windows'):
                    wins[mon].append(num(r, 'windows'))
                if num(r, unit) and c is not None:
                    per_sample[mon].append(c / num(r, unit))
                for k in ('recall_median', 'precision_median'):
                    if num(r, k) is not None:
                        acc[mon][k].append(num(r, k))
            if 'daptrace' in rnd and 'damon' in rnd:
                d, k = num(rnd['daptrace'], 'cpu_ms'), num(rnd['damon'], 'cpu_ms')
                if d is not None and k:
                    ratios.append(d / k)
                dn, kn = num(rnd['daptrace'], unit), num(rnd['damon'], unit)
                if d is not None and k and dn and kn:
                    sample_ratios.append((d / dn) / (k / kn))

        def med(v):
            return '%.2f' % statistics.median(v) if v else '-'

        def ratio_of_medians(v):
            if v['daptrace'] and v['damon'] and statistics.median(v['damon']):
                return '%.2f' % (statistics.median(v['daptrace']) /
                                 statistics.median(v['damon']))
            return '-'

        def win(mon):
            return '%.0f' % statistics.median(wins[mon]) if wins[mon] else '-'

        print('| %s | %s | %d | %s | %s | %s | %s | %s / %s | %s | %s | %s / %s | %s / %s |' % (
            wl, setting, len(rounds), med(cpu['daptrace']), med(cpu['damon']),
            ratio_of_medians(cpu),
            ' '.join('%.2f' % x for x in ratios) or '-',
            win('daptrace'), win('damon'), ratio_of_medians(per_sample),
            ' '.join('%.2f' % x for x in sample_ratios) or '-',
            med(acc['daptrace']['recall_median']), med(acc['damon']['recall_median']),
            med(acc['daptrace']['precision_median']),
            med(acc['damon']['precision_median'])))
    found(runs)
    slowdown(runs)


def found(runs):
    """When each monitor first found the hot set (daptrace-score's
    detect_first_s: regions read hot covering 90 % of it, from the record's
    start); "none" when it never did within the run.  Only for workloads
    with a small hot set to find (sparse, smallhot)."""
    rows = [(k, v) for k, v in sorted(runs.items())
            if k[0].split()[0] in ('sparse', 'smallhot')]
    if not rows:
        return
    print()
    print('Hot set found: seconds from the record\'s start to the first window whose '
          'regions read hot cover 90 % of it (daptrace-score detect_first_s); median '
          '[min–max] of the runs that found it, and how many did.\n')
    print('| workload | setting | daptrace | DAMON |')
    print('|---|---|---|---|')
    for (wl, setting), rounds in rows:
        def cell(mon):
            v = [r[mon].get('detect_first_s') for r in rounds.values() if mon in r]
            hit = [float(x) for x in v if x not in (None, 'none')]
            if not v:
                return '-'
            if not hit:
                return 'not found in %d of %d runs' % (len(v), len(v))
            return '%.2f s [%.2f–%.2f], found in %d of %d' % (
                statistics.median(hit), min(hit), max(hit), len(hit), len(v))
        print('| %s | %s | %s | %s |' % (wl, setting, cell('daptrace'), cell('damon')))


def slowdown(runs):
    """Work done in the fixed time (pages touched) against the unmonitored
    runs of the same rounds: 1 - median(monitored) / median(none)."""
    if not any('none' in rnd for rounds in runs.values() for rnd in rounds.values()):
        return
    print()
    print('Slowdown: 1 − work done (pages touched in the 10 s) under the monitor / '
          'without one; median over the rounds, per-round values in brackets.\n')
    print('| workload | setting | rounds | pages touched, none | daptrace | DAMON '
          '| slowdown daptrace | slowdown DAMON |')
    print('|---|---|---|---|---|---|---|---|')
    for (wl, setting), rounds in sorted(runs.items()):
        touched = defaultdict(list)
        per_round = defaultdict(list)
        for rnd in rounds.values():
            for mon, r in rnd.items():
                if num(r, 'touched') is not None:
                    touched[mon].append(num(r, 'touched'))
            base = num(rnd['none'], 'touched') if 'none' in rnd else None
            for mon in ('daptrace', 'damon'):
                if base and mon in rnd and num(rnd[mon], 'touched') is not None:
                    per_round[mon].append(1 - num(rnd[mon], 'touched') / base)
        if not touched['none']:
            continue
        base = statistics.median(touched['none'])

        def cell(mon):
            if not touched[mon] or not base:
                return '-', '-'
            m = statistics.median(touched[mon])
            return ('%.0f' % m, '%+.1f %% [%s]' % (
                100 * (1 - m / base), ' '.join('%+.1f' % (100 * x) for x in per_round[mon])))
        d, k = cell('daptrace'), cell('damon')
        print('| %s | %s | %d | %.0f | %s | %s | %s | %s |' % (
            wl, setting, len(rounds), base, d[0], k[0], d[1], k[1]))


if __name__ == '__main__':
    main()
