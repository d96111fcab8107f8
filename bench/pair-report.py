#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Two variants of daptrace measured in alternating boots (bench/ab.sh rows
prefixed with kernel=, which= and round=): per kernel and workload, the
median worker CPU of each, the ratio of medians (B / A) with the spread of
the per-round ratios, CPU per sample, recall and precision; and the share of
B's worker CPU its accuracy probes took in the same runs (probe_us over the
worker's CPU, counted by the module: a ratio the emulator's speed does not
change), median and range over the rounds.

    bench/pair-report.py ROWS A B      (A, B: the which= values)
"""
import statistics, sys
from collections import defaultdict
A, B = sys.argv[2], sys.argv[3]
rows = []
for line in open(sys.argv[1]):
    kv = {}
    for p in line.split():
        if '=' in p:
            k, v = p.split('=', 1)
            kv.setdefault(k, v)	# the first round= is ours
    rows.append(kv)
def f(r, k):
    try:
        return float(r[k])
    except (KeyError, ValueError):
        return None
by = defaultdict(lambda: defaultdict(dict))
for r in rows:
    by[(r['kernel'], r['wl'].split('_')[1] if '_' in r['wl'] else r['wl'])][r['round']][r['which']] = r
print(('| kernel | workload | rounds | CPU %% %(a)s | CPU %% %(b)s | ratio | per-round ratios '
       '| CPU per sample (us) %(a)s / %(b)s | recall %(a)s / %(b)s | precision %(a)s / %(b)s '
       '| probes\' share of %(b)s\'s CPU, %% |')
      % {'a': A, 'b': B})
print('|---|---|---|---|---|---|---|---|---|---|---|')
def cpu(r):
    return 100.0 * f(r, 'cpu_ms') / f(r, 'wall_ms') if f(r, 'cpu_ms') is not None and f(r, 'wall_ms') else None
def per_sample(r):
    return 1000.0 * f(r, 'cpu_ms') / f(r, 'samples') if f(r, 'samples') else None
def probe_share(r):
    return 100.0 * f(r, 'probe_us') / 1000.0 / f(r, 'cpu_ms') if f(r, 'probe_us') is not None and f(r, 'cpu_ms') else None
def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else float('nan')
for (k, wl), rounds in sorted(by.items()):
    pairs = [v for v in rounds.values() if A in v and B in v]
    ca = [cpu(p[A]) for p in pairs]
    cb = [cpu(p[B]) for p in pairs]
    ratios = sorted(cpu(p[B]) / cpu(p[A]) for p in pairs
                    if cpu(p[A]) and cpu(p[B]) is not None)
    spread = '–'.join('%.2f' % x for x in (ratios[0], ratios[-1])) if ratios else 'n/a'
    shares = sorted(x for x in (probe_share(p[B]) for p in pairs) if x is not None)
    share = '%.1f [%.1f–%.1f]' % (med(shares), shares[0], shares[-1]) if shares else 'n/a'
    print('| %s | %s | %d | %.2f | %.2f | ×%.2f | %s | %.0f / %.0f | %.3f / %.3f | %.3f / %.3f | %s |' % (
        k, wl, len(pairs), med(ca), med(cb), med(cb) / med(ca), spread,
        med([per_sample(p[A]) for p in pairs]), med([per_sample(p[B]) for p in pairs]),
        med([f(p[A], 'recall_median') for p in pairs]), med([f(p[B], 'recall_median') for p in pairs]),
        med([f(p[A], 'precision_median') for p in pairs]), med([f(p[B], 'precision_median') for p in pairs]),
        share))
