#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Medians and ranges of bench/policy.sh rows, as a Markdown section."""
import argparse
import statistics
from collections import defaultdict

RECLAIM = [("reached_s", "time to 90 % of cold swapped (s)"), ("swap_kb", "VmSwap at end (MiB)"),
           ("hot_evicted", "hot pages found swapped out"), ("warm_evicted", "warm pages found swapped out"),
           ("refault_kb", "swap-ins during the run (MiB)"), ("cpu_ms", "policy CPU (ms)")]
TIERING = [("conv1_s", "hot set >= 95 % on node 0, from start (s)"),
           ("conv2_s", "same after the phase change (s)"),
           ("end_hotB_fast", "hot set B on node 0 at end"), ("end_A_slow", "idle set A on node 1 at end"),
           ("end_cold_slow", "cold on node 1 at end"), ("migrated_mb", "migrated (MiB, pgmigrate_success)"),
           ("cpu_ms", "policy CPU (ms)")]
GOAL = [("saved_mb", "memory saved, mean after the first 10 s (MiB)"),
        ("saved_end_mb", "memory saved at the end (MiB)"),
        ("psi_pct", "cgroup pressure, mean (% of the time; goal 0.1)"),
        ("reach_s", "goal reached: 10-s pressure >= 80 % of it (s)"),
        ("held", "then 10-s windows within +-20 % of the goal (share)"),
        ("refaults", "refaults (pages, the cgroup's workingset_refault_*)"),
        ("tput", "throughput (phases: hot pages read/s; kv: gets/s)"),
        ("cpu_ms", "policy CPU (ms)")]
SCALE = {"swap_kb": 1024, "refault_kb": 1024}


def num(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return None


def cell(vals, key):
    xs = [num(v) for v in vals]
    bad = sum(x is None for x in xs)
    xs = [x / SCALE.get(key, 1) for x in xs if x is not None]
    if not xs:
        return "never (%d)" % bad
    whole = all(x == int(x) for x in xs)
    fmt = "%.0f" if whole or max(abs(x) for x in xs) >= 10 else "%.2f"
    s = fmt % statistics.median(xs)
    s += (" [" + fmt % min(xs) + "–" + fmt % max(xs) + "]") if len(xs) > 1 else ""
    if bad:
        s += " (+%d never)" % bad
    return s


def date(runs):
    """The rows' dates (bench/policy.sh tags each with its run's), as a span."""
    ds = sorted({r.get("date", "?") for rs in runs.values() for r in rs})
    return ds[0] if len(ds) == 1 else "%s to %s" % (ds[0], ds[-1])


def saved_over_time(runs, scen, mons):
    """The cgroup's memory saved every 5 s (MiB), median [min-max] over the rounds."""
    ts = {m: [[num(x) for x in r.get("saved_ts", "none").split(",")] for r in runs[(scen, m)]
              if r.get("saved_ts", "none") != "none"] for m in mons}
    n = max((len(s) for m in mons for s in ts[m]), default=0)
    if not n:
        return
    print("Memory saved over time (MiB below the cgroup's start, every 5 s):\n")
    print("| s | " + " | ".join(mons) + " |")
    print("|---|" + "---|" * len(mons))
    for i in range(n):
        print("| %d | " % (5 * (i + 1)) +
              " | ".join(cell(v, "") if v else "–"
                         for v in ([s[i] for s in ts[m] if i < len(s)] for m in mons)) + " |")
    print()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", required=True)
    ap.add_argument("--command", default="bench/policy.sh")
    ap.add_argument("--duration", type=int, default=0)
    a = ap.parse_args()
    runs = defaultdict(list)
    kernel = "?"
    for line in open(a.rows):
        kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
        runs[(kv.get("scen"), kv.get("mon"))].append(kv)
        kernel = kv.get("kernel", kernel)
    series = ".".join(kernel.split(".")[:2])
    damos = any(m.startswith("damo") for (_, m) in runs)
    if all(s in ("phases", "kv") for (s, _) in runs):
        print("## Reclaim to a pressure goal on %s: -P tmo, a Senpai loop%s (%s)\n"
              % (series, ", DAMOS's psi goal" if damos else "", date(runs)))
    else:
        title = "daptrace policy vs DAMOS" if damos else "daptrace policy (no DAMON)"
        print("## Policies on %s: %s\n" % (series, title))
    print("`%s` (%d s), kernel %s, one boot per run, policies alternating within a round; "
          "median [min–max] over the rounds. Measured on the target (VmSwap, the workload's "
          "mincore/move_pages, /proc/vmstat), not by either tool's counters.\n" % (a.command, a.duration, kernel))
    for scen, metrics in (("reclaim", RECLAIM), ("tiering", TIERING), ("phases", GOAL), ("kv", GOAL)):
        mons = [m for (s, m) in sorted(runs) if s == scen]
        if not mons:
            continue
        print("### %s\n" % scen)
        print("| metric | " + " | ".join("%s (n=%d)" % (m, len(runs[(scen, m)])) for m in mons) + " |")
        print("|---|" + "---|" * len(mons))
        for key, label in metrics:
            print("| %s | " % label + " | ".join(cell([r.get(key) for r in runs[(scen, m)]], key)
                                                for m in mons) + " |")
        ver = ["%s: %s" % (m, ",".join(r.get("verify", "?") for r in runs[(scen, m)])) for m in mons]
        print("\nData check of every page: " + "; ".join(ver) + "\n")
        if metrics is GOAL:
            saved_over_time(runs, scen, mons)


if __name__ == "__main__":
    main()
