#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The section of BENCHMARKS.md for bench/goals.sh, from its rows.

    goals-report.py ROUNDS SERIES ROWS...

Several rows files make one table (runs made apart); each row of the table
says how many rounds it has.
"""
import math
import sys

from spread import cell, med, num  # bench/spread.py

TARGET_KB = 256 * 1024
BAND = 0.20


def intervals(rows, cmd, rounds):
    xs = [r for r in rows if r.get("mode") == "intervals"]
    if not xs:
        return
    kernels = sorted({r["kernel"] for r in xs})
    print("### Interval auto-tuning against the fixed defaults\n")
    print("    %s --parts intervals\n" % cmd)
    print("`daptrace record -p` of a 20 s `daptrace-workload` at the fixed defaults")
    print("(5 ms / 100 ms, 10–1000 regions) and with `--auto-intervals` (DAMON's")
    print("intervals goal: 4 % of the checks an access, over 3 windows, sampling within")
    print("5 ms–10 s, starting from the same 5 ms / 100 ms).  hotcold: 64 MiB hot and")
    print("64 MiB warm in 512 MiB; smallhot, the sparse target: 8 MiB hot in 1 GiB, under")
    print("the goal's 4 %; scattered: 32 hot pages each in a 2 MiB area of 1 GiB (THP")
    print("always: 64 MiB of huge pages accessed).  Worker CPU: its share of one CPU over the")
    print("record; recall and precision: daptrace-score's medians over the windows from")
    print("1 s in; *to find*: from the start of the record to the end of its first window")
    print("with recall ≥ 0.9 (– : never); the intervals in force in the last window.")
    print("Goal: auto-tuning finds what the defaults find (recall within 0.05, found in")
    print("every round) for no more CPU.\n")
    print("| workload | intervals | kernel | date | rounds | worker CPU | recall | precision | "
          "to find, s | last window's intervals | goal |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for wl in ("hotcold", "smallhot", "scattered"):
        fixed = [r for r in xs if r["wl"] == wl and r["set"] == "fixed"]
        for st in ("fixed", "auto"):
            ys = [r for r in xs if r["wl"] == wl and r["set"] == st]
            if not ys:
                continue
            cpu = [100 * num(r["cpu_us"]) * 1000 / num(r["duration_ns"]) for r in ys]
            find = [num(r["find_s"]) for r in ys]
            never = sum(1 for r in ys if math.isnan(num(r["find_s"])) or num(r["undetected"]) > 0)
            ivl = sorted({"%.0f ms / %.0f ms" % (num(r["sample_us_end"]) / 1000,
                                             num(r["aggr_us_end"]) / 1000)
                          for r in ys if r.get("sample_us_end")})
            goal = "the reference"
            if st == "auto" and fixed:
                fcpu = [100 * num(r["cpu_us"]) * 1000 / num(r["duration_ns"]) for r in fixed]
                dr = med([num(r["recall"]) for r in ys]) - med([num(r["recall"]) for r in fixed])
                miss = []
                if not dr >= -0.05:
                    miss.append("recall %+.2f" % dr)
                if never:
                    miss.append("%d rounds never found it" % never)
                if not med(cpu) <= med(fcpu):
                    miss.append("CPU ×%.2f" % (med(cpu) / med(fcpu)))
                stayed = all(num(r.get("sample_us_end")) == 5000 for r in ys)
                if stayed:
                    # the same intervals as the fixed runs: CPU differs by
                    # the boots' noise only
                    miss = [m for m in miss if not m.startswith("CPU")]
                    goal = ("met: the tuner stayed at 5 ms / 100 ms (accesses above the "
                            "goal), recall %+.2f" % dr if not miss else
                            "**not met**: " + ", ".join(miss))
                else:
                    goal = ("met (CPU ×%.2f, recall %+.2f)" % (med(cpu) / med(fcpu), dr)
                            if not miss else "**not met**: " + ", ".join(miss))
            if len(ys) < int(rounds):
                goal += " (%d of the %s rounds asked)" % (len(ys), rounds)
            print("| %s | %s | %s | %s | %d | %s | %s | %s | %s | %s | %s |" % (
                wl, "fixed 5 ms / 100 ms" if st == "fixed" else "`--auto-intervals`",
                "/".join(kernels), "/".join(sorted({r["date"] for r in ys})), len(ys),
                cell(cpu, "%.2f %%"), cell([num(r["recall"]) for r in ys]),
                cell([num(r["precision"]) for r in ys]), cell(find, "%.1f"),
                ", ".join(ivl) or "–", goal))
    print()


def quota(rows, cmd):
    xs = [r for r in rows if r.get("mode") == "quota"]
    if not xs:
        return
    print("### A quota goal: `goal=rss:256M`\n")
    print("    %s --parts quota\n" % cmd)
    print("`daptrace policy -S 'pageout freq=0-0 quota=64M/1s goal=rss:256M' -p PID -d 60s`")
    print("on `daptrace-workload -p hotcold -s 512M` (64 MiB hot, 64 MiB warm, the rest")
    print("populated and never touched again) with 512 MiB of zram swap: the target's")
    print("VmRSS every second.  *Reached*: the first second it is within ±20 % of 256 MiB;")
    print("*held*: the share of the seconds after that within ±20 %; goal: reached within")
    print("30 s and held in every second after.\n")
    print("| kernel | date | round | RSS at the start, MiB | reached, s | held | RSS after, MiB "
          "(min–max) | swapped out at the end, MiB | worker CPU, s | goal |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    reached_all, held_all = [], []
    for rnd in sorted({r["round"] for r in xs}):
        ys = [r for r in xs if r["round"] == rnd]
        series = sorted((int(r["t"]), num(r["rss_kb"]), num(r["swap_kb"])) for r in ys if "t" in r)
        end = [r for r in ys if r.get("end") == "1"]
        reached = next((t for t, rss, _ in series
                        if t > 0 and abs(rss - TARGET_KB) <= BAND * TARGET_KB), None)
        after = [rss for t, rss, _ in series if reached is not None and t > reached]
        held = (sum(1 for v in after if abs(v - TARGET_KB) <= BAND * TARGET_KB) / len(after)
                if after else math.nan)
        ok = reached is not None and reached <= 30 and held == 1.0
        reached_all.append(num(reached))
        held_all.append(held)
        print("| %s | %s | %s | %.0f | %s | %s | %s | %.0f | %s | %s |" % (
            ys[0]["kernel"], ys[0]["date"], rnd, series[0][1] / 1024 if series else math.nan,
            "never" if reached is None else str(reached),
            "–" if math.isnan(held) else "%.0f %%" % (100 * held),
            "%.0f–%.0f" % (min(after) / 1024, max(after) / 1024) if after else "–",
            series[-1][2] / 1024 if series else math.nan,
            "%.2f" % (num(end[0]["cpu_us"]) / 1e6) if end else "–",
            "met" if ok else "**not met**"))
    print()
    print("Over the %d rounds: reached in %s s, held %s of the time after." % (
        len(reached_all), cell(reached_all, "%.0f"), cell([100 * h for h in held_all], "%.0f %%")))
    print()


def main():
    rows = []
    for path in sys.argv[3:]:
        for line in open(path):
            rows.append(dict(w.split("=", 1) for w in line.split() if "=" in w))
    rounds, series = sys.argv[1], sys.argv[2]
    cmd = "bench/goals.sh --rounds %s" % rounds
    if series != "6.12":
        cmd += " --kernel %s" % series
    print("## Goals: interval auto-tuning and a quota goal\n")
    print("One boot per run (2 vCPUs, 4 GiB, qemu64); the fixed and the auto-tuned run of a")
    print("workload alternate, the first flipping every round; median [min–max] over the")
    print("rounds.\n")
    intervals(rows, cmd, rounds)
    quota(rows, cmd)


main()
