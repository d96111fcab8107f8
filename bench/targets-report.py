#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The section of BENCHMARKS.md for bench/targets.sh, from its rows.

    targets-report.py ROWS ROUNDS KERNEL SERIES
"""
import math
import statistics
import sys

from spread import cell, num  # bench/spread.py


def main():
    rows = []
    for line in open(sys.argv[1]):
        rows.append(dict(w.split("=", 1) for w in line.split() if "=" in w))
    rounds, kernel, series = sys.argv[2], sys.argv[3], sys.argv[4]
    dates = sorted({r["date"] for r in rows})
    cmd = "bench/targets.sh --rounds %s" % rounds
    if series != "6.12":
        cmd += " --kernel %s" % series
    print("## Many targets: 1 to 4096 mostly idle processes, and one that wakes\n")
    print("    %s\n" % cmd)
    print("One boot of %s per run (2 vCPUs, 4 GiB, qemu64), the runs of a round going" % kernel)
    print("up in N on odd rounds and down on even ones; median [min–max] over the rounds")
    print("(%s asked; each row says how many it has), %s.  A cgroup of N" % (rounds, ", ".join(dates)))
    print("processes: one *stopped* worker with a 4 MiB hot set in 32 MiB and N − 1 that")
    print("populated 64 KiB and sleep (no wake-up); `daptrace record")
    print("--cgroup` at the defaults (5 ms / 100 ms, 10–1000 regions).  CPU: the")
    print("worker's and daptrace's own (user + system: reading and writing every")
    print("region of every window) over 12 s from 8 s in, everyone idle, as a share of")
    print("one CPU.  Then the worker is resumed: *to 0.9* is the time from the")
    print("SIGCONT to the end of the first window with recall ≥ 0.9 of its hot set")
    print("(the wake falls anywhere in a window, so the first whole window after it ends")
    print("100–200 ms later); goal: the median within one window (100 ms) of one target")
    print("alone, and every round reaching 0.9.")
    print("*recall* is the median over the windows after the wake (hot: a region with")
    print("accesses in at least half the window's samples), *≥ 0.9* the share of those")
    print("windows with recall ≥ 0.9, *seen* the median share of the hot bytes in regions")
    print("with any access (`functional/waking_target`'s measure); daptrace-score.  *missed*:")
    print("snapshots the reader (daptrace record) lost, over the whole record.")
    print("*estimate*: the online accuracy estimate's recall against the worker's true")
    print("recall after the wake, the share of compared windows within 0.05 (issue 38's")
    print("bound: 0.9) and the whole run's estimated / true recall (daptrace-score; the")
    print("idle targets' probe pages are never accessed, so the recall is the worker's).\n")
    print("| targets | kernel | date | rounds | regions | worker CPU | daptrace CPU | to 0.9, ms | "
          "recall | windows ≥ 0.9 | seen | missed | estimate within 0.05 (windows) | "
          "estimate / truth | goal: to 0.9 ≤ alone + 100 ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    ns = sorted({int(r["n"]) for r in rows})
    base = None
    for n in ns:
        xs = [r for r in rows if int(r["n"]) == n]
        det = [num(r["detect_s"]) * 1000 for r in xs]
        never = sum(1 for r in xs if math.isnan(num(r["detect_s"])) or num(r["undetected"]) > 0)
        ok = [d for d in det if not math.isnan(d)]
        med = statistics.median(ok) if ok else math.nan
        if n == 1:
            base = med
            goal = "the baseline" + (" (%d rounds never reached 0.9)" % never if never else "")
        elif base is None or math.isnan(base) or math.isnan(med):
            goal = "not measured (no baseline)" if ok else "**not met**: never reached 0.9"
        elif med <= base + 100 and not never:
            goal = "met (%+.0f ms)" % (med - base)
        else:
            goal = "**not met** (%+.0f ms%s)" % (
                med - base, ", %d rounds never reached 0.9" % never if never else "")
        tg = sorted({r["targets"] for r in xs})
        print("| %d%s | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s (%s) | %s / %s | %s |" % (
            n, "" if tg == [str(n)] else " (module: %s)" % "/".join(tg),
            kernel, "/".join(sorted({r["date"] for r in xs})), len(xs),
            cell([num(r["regions"]) for r in xs], "%.0f"),
            cell([num(r["cpu_us"]) / 120000 for r in xs], "%.1f %%"),
            cell([num(r["user_us"]) / 120000 for r in xs], "%.1f %%"),
            cell(det, "%.0f"),
            cell([num(r["recall"]) for r in xs]),
            cell([num(r["recall_ge09"]) for r in xs]),
            cell([num(r["hot_seen"]) for r in xs]),
            cell([num(r["missed"]) for r in xs], "%.0f"),
            cell([num(r.get("est_within", "nan")) for r in xs], "%.3f"),
            cell([num(r.get("est_windows", "nan")) for r in xs], "%.0f"),
            cell([num(r.get("recall_est_all", "nan")) for r in xs], "%.3f"),
            cell([num(r.get("recall_truth_all", "nan")) for r in xs], "%.3f"),
            goal))
    print()
    print("The processes started in %s s." % cell([num(r["spawn_s"]) for r in rows], "%.0f"))


main()
