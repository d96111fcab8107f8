#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The online accuracy estimate against the truth, from rows of
daptrace-score's figures prefixed with kernel=, which=, round= and wl=
(bench/estimate.sh writes them): per kernel and workload, over the rounds,
the median of each run's mean true recall, mean estimated recall, median and
p90 |estimate - truth| and share of compared windows within 0.05 (and the
least of the rounds); the share of the probes that were accessed pages; the
share of the worker's CPU time the probes took (probe_us / worker_cpu_us,
both counted by the module in the same run: a ratio the emulator's speed
does not change), its median and largest over the rounds; and the
whole run's estimate and truth (every probe and every window with a truth
pooled), which exist also where no pool is compared window by window (a
pool is compared only if each of its windows has a truth: never for the
moving window, whose phase changes every few seconds).

    bench/estimate-report.py ROWS WHICH      (WHICH: the which= of the runs)
"""
import statistics
import sys
from collections import defaultdict

WITHIN = 'recall_est_windows_within_0.05'
KEYS = ('recall_truth_mean', 'recall_est_mean', 'recall_est_err_median',
        'recall_est_err_p90', WITHIN, 'accuracy_windows', 'recall_est_all',
        'recall_truth_all', 'probes_accessed', 'probes_all', 'probe_share')


def main(path, which):
    by = defaultdict(lambda: defaultdict(list))
    for line in open(path):
        kv = {}
        for p in line.split():
            if '=' in p:
                k, v = p.split('=', 1)
                kv.setdefault(k, v)
        if kv.get('which') != which:
            continue
        wl = kv['wl'].split('_')[1] if '_' in kv['wl'] else kv['wl']
        try:
            kv['probe_share'] = str(100.0 * float(kv['probe_us']) / float(kv['worker_cpu_us']))
        except (KeyError, ValueError, ZeroDivisionError):
            pass
        for k in KEYS:
            try:
                by[(kv['kernel'], wl)][k].append(float(kv[k]))
            except (KeyError, ValueError):
                pass
    print('| kernel | workload | runs | true recall | estimated | \\|error\\| median / p90 '
          '| windows within 0.05 (least) | windows compared | whole run: true / estimated '
          '| accessed probes / probes | probes\' share of worker CPU, % (largest) |')
    print('|---|---|---|---|---|---|---|---|---|---|---|')
    for (k, wl), v in sorted(by.items()):
        def med(key, fmt='%.3f'):
            return fmt % statistics.median(v[key]) if v[key] else 'n/a'
        least = '%.3f' % min(v[WITHIN]) if v[WITHIN] else 'n/a'
        most = '%.1f' % max(v['probe_share']) if v['probe_share'] else 'n/a'
        print('| %s | %s | %d | %s | %s | %s / %s | %s (%s) | %s | %s / %s | %s / %s | %s (%s) |' % (
            k, wl, len(v['accuracy_windows']), med('recall_truth_mean'),
            med('recall_est_mean'), med('recall_est_err_median'),
            med('recall_est_err_p90'), med(WITHIN), least, med('accuracy_windows', '%.0f'),
            med('recall_truth_all'), med('recall_est_all'),
            med('probes_accessed', '%.0f'), med('probes_all', '%.0f'),
            med('probe_share', '%.1f'), most))


if __name__ == '__main__':
    main(sys.argv[1], sys.argv[2])
