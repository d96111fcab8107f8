#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The section of BENCHMARKS.md for bench/savings.sh, from its rows.

    savings-report.py --rows FILE --command CMD --duration SECS

Rows (bench/savings-guest.sh): kind=pred (the curve of the record of the
workload at threshold t), kind=live (the curve `daptrace stat --savings`
drew live on another run), kind=real (a policy run with idle=t),
kind=replay (the curve of that policy run's own record, at its t),
kind=pred_speed (kv: the record's curve at t with --speed, the policy run's
requests/s over the record run's) and kind=record (the recorded run
itself), each with round, date and kernel.
"""
import argparse
import math

from rows import rows_of  # bench/rows.py
from spread import cell, med, num  # bench/spread.py

SAVED_TOL = 0.10    # the goal: saved within 10 %
RF_FACTOR = 2.0     # and the refault rate within a factor of 2
# Below this many pages a second (4 KiB/s at most over a run) a refault
# rate is taken as none: the ratio of two such rates says nothing.
RF_FLOOR = 1.0
# Below this much memory (MiB) saved is taken as none, for the same reason.
SAVED_FLOOR_MIB = 1.0
# An open kv load (rate=) is the record run's load only while each request
# goes out near its time: a request sent this late (s; a fifth of the
# smallest threshold, 2 s) may make a range look idle past T that was not.
BEHIND_MAX_S = 0.4


def mib(kb):
    return kb / 1024


def ratio(a, p):
    return a / p if p > 0 else math.nan


def saved_ratio(a, p):
    """One round's saved ratio, actual / predicted: 1 when both are none
    (a threshold past the run's length saves nothing, as predicted)."""
    if p < SAVED_FLOOR_MIB and a < SAVED_FLOOR_MIB:
        return 1.0
    return a / p if p > 0 else math.inf


def saved_cell(rs, ps, xs):
    """A saved ratio's cell: "both none" when neither side saved anything."""
    if max(ps + xs) < SAVED_FLOOR_MIB:
        return "– (both none)"
    return cell(rs)


def behind(r):
    """Whether an open kv load fell behind its rate in run R."""
    return "behind_max_s" in r and num(r["behind_max_s"]) > BEHIND_MAX_S


def check(bad, late):
    """The data check's cell: BAD rounds whose values came back wrong, LATE
    whose open load fell behind."""
    out = []
    if bad:
        out.append("FAILED in %d" % bad)
    if late:
        out.append("behind in %d" % late)
    return ", ".join(out) or "ok"


def rf_ratio(p, a):
    """One round's refault ratio, actual / predicted: 1 when both are none."""
    if math.isnan(p) or math.isnan(a):
        return math.nan
    if p < RF_FLOOR and a < RF_FLOOR:
        return 1.0
    return a / p if p > 0 else math.inf


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--duration", type=int, default=0)
    a = ap.parse_args()
    rows = rows_of(a.rows)
    rounds = sorted({r["round"] for r in rows}, key=int)
    kernels = sorted({r["kernel"] for r in rows})
    dates = sorted({r["date"] for r in rows})
    d = sorted({r["d"] for r in rows})
    print("## The savings curve against a real policy (issue 39)\n")
    print("    %s\n" % a.command)
    print("%s, %s, %d round%s (one boot each), %s; %d s in all.\n" % (
        ", ".join(kernels), ", ".join(dates), len(rounds), "" if len(rounds) == 1 else "s",
        "the runs %s s long" % "/".join(d), a.duration))
    print("In one boot per round, for each workload: a `daptrace record -p` of it and")
    print("`daptrace report savings --json` at each threshold T (*predicted*), then for")
    print("each T a fresh run of the same workload under `daptrace policy -p -S")
    print("\"pageout idle=T\"` (no quota), onto 512 MiB of zram swap (*actual*).")
    print("Workloads (`daptrace-policy-workload`, 16 MiB hot, 16 MiB warm read every")
    print("1 s, 64 MiB cold): *phases*, whose sets double, halve and grow back, a")
    print("phase a quarter of the run; *reclaim*, static; *kv*: memcached under a")
    print("Zipf load (exponent 0.99, 40000 keys of 4000 B, `daptrace-kv-client`),")
    rates = sorted({r["rate"] for r in rows if "rate" in r}, key=num)
    if rates:
        print("%s requests a second, each sent at its time whether memcached keeps up" %
              "/".join(rates))
        print("or not (an open load: the same in every run; a run in which one went")
        print("out more than %g s late counts as failing its data check)." % BEHIND_MAX_S)
    else:
        print("each request sent once the last was answered (a closed load).")
    print("Saved, actual: the target's VmSwap, the mean of a sample a second and at")
    print("the end of the run (before its final check); predicted: the curve's")
    print("`saved_mean_bytes` and `saved_last_bytes`.  Refaults/s, actual: the")
    print("system's pswpin over the run per second (swap readahead off); predicted:")
    print("`refault_pages_per_s`.  Ratio: actual / predicted, per round (a curve and")
    print("the policy runs of the same boot), then the median of the rounds'.  The")
    print("workload checks every value at the end of every run.  Goal (issue 39):")
    print("the median ratio of saved (mean and last) within 10 % and of the refault")
    print("rate within a factor of 2 (two rates under %g page/s both count as none," % RF_FLOOR)
    print("a ratio of 1).  Median [min–max] over the rounds.\n")
    print("Three tables: the curve of the separate record run against each policy")
    print("run (the prediction the issue asks for); the curve `daptrace stat")
    print("--savings --cgroup` drew live on a run of its own (the target in a cgroup")
    print("of its own, the record's intervals: 5 ms, 100 ms; all memory, as stat")
    print("reads no maps to tell anonymous from file-backed); then the curve of each")
    print("policy run's own record (`policy -o`) against the same run: the model")
    print("alone, on the windows the policy acted on, without the two runs'")
    print("different sampling.\n")
    missed = table(rows, rounds, "pred", "predicted")
    print("\nLive: `daptrace stat --savings` on a run of its own (kind=live).\n")
    missed_live = table(rows, rounds, "live", "live")
    print("\nThe model alone: each policy run's own record replayed (kind=replay).\n")
    missed_replay = table(rows, rounds, "replay", "replayed")
    throughput(rows)
    regret_cost(rows)
    missed_speed = None
    if any(r["kind"] == "pred_speed" for r in rows):
        print("\nThe record's curve at each policy run's own speed (kind=pred_speed:")
        print("`report savings --speed S`, S the run's requests served over the record")
        print("run's): what the prediction is when the slowdown is known.\n")
        missed_speed = table(rows, rounds, "pred_speed", "at speed")
    print()
    for name, m in (("the prediction", missed), ("the live curve", missed_live),
                    ("the model alone", missed_replay),
                    ("the prediction at the run's speed", missed_speed)):
        if name.endswith("speed") and m is None:
            continue
        if m is None:
            print("No rows for %s." % name)
        elif m:
            print("Goal not met by %s for: %s." % (name, "; ".join(m)))
        else:
            print("Goal met by %s for every workload and threshold." % name)


def throughput(rows):
    """The requests/s the kv client got through in the record run and in each
    policy run: under a closed load a policy whose refaults stall the server
    is sent fewer, so the server touches less memory than in the run the
    curve was drawn on; under an open one the same, late (how late: behind)."""
    rec = [r for r in rows if r["kind"] == "record" and "ops_per_s" in r]
    if not rec:
        return
    print("\nkv: requests served per second (`daptrace-kv-client`'s `ops_per_s`) in the")
    print("record run and in each policy run; ratio: policy run / record run of the")
    print("same round; behind: the longest a request went out after its time (an")
    print("open load only); huge pages: the server's anonymous memory transparent")
    print("huge pages backed (AnonHugePages) when the monitor attached and at the")
    print("run's end.\n")
    print("| workload | run | requests/s | ratio to the record run | behind, s | huge pages, MiB |")
    print("| --- | --- | --- | --- | --- | --- |")

    def lag(per):
        return cell([num(r["behind_max_s"]) for r in per], "%.3f") \
            if all("behind_max_s" in r for r in per) else "–"

    def huge(per):
        if not all(r.get("huge_kb") for r in per):
            return "–"
        end = cell([num(r["huge_kb"]) / 1024 for r in per], "%.1f")
        if not all(r.get("huge_start_kb") for r in per):
            return end
        return "%s → %s" % (cell([num(r["huge_start_kb"]) / 1024 for r in per], "%.1f"), end)
    for wl in dict.fromkeys(r["wl"] for r in rec):
        base = {r["round"]: num(r["ops_per_s"]) for r in rec if r["wl"] == wl}
        print("| %s | record | %s | | %s | %s |" % (
            wl, cell(list(base.values()), "%.0f"),
            lag([r for r in rec if r["wl"] == wl]), huge([r for r in rec if r["wl"] == wl])))
        real = [r for r in rows if r["kind"] == "real" and r["wl"] == wl
                and "ops_per_s" in r and r["round"] in base]
        for t in sorted({num(r["t"]) for r in real}):
            per = [r for r in real if num(r["t"]) == t]
            ops = [num(r["ops_per_s"]) for r in per]
            print("| %s | pageout idle=%gs | %s | %s | %s | %s |" % (
                wl, t, cell(ops, "%.0f"),
                cell([ratio(num(r["ops_per_s"]), base[r["round"]]) for r in per]), lag(per),
                huge(per)))


def regret_cost(rows):
    """The policy runs' CPU (from /proc) and, with --perf 1, the share of it
    under the regret counters (perf samples): what the counters cost."""
    real = [r for r in rows if r["kind"] == "real" and "regret_hi_pct" in r]
    if not real:
        return
    print("\nThe regret counters' CPU (`--perf 1`): each policy run sampled by perf")
    print("(cpu-clock, one sample a millisecond of its CPU); policy CPU: its utime +")
    print("stime over the run (from /proc, perf's own sampling in it); regret: the")
    print("share of its samples the counters take, at least (their own functions and")
    print("the kernel's pagemap_read under them) and at most (those and every")
    print("pread(2), the snapshot's and sysfs's too), and that share of its CPU.\n")
    print("| workload | T | policy CPU, % of a CPU | regret, % of the policy's samples "
          "| regret, % of a CPU | data check |")
    print("| --- | --- | --- | --- | --- | --- |")
    for wl in dict.fromkeys(r["wl"] for r in real):
        for t in sorted({num(r["t"]) for r in real if r["wl"] == wl}):
            per = [r for r in real if r["wl"] == wl and num(r["t"]) == t]
            cpu = [100 * num(r["policy_cpu_s"]) / num(r["secs"]) for r in per]
            lo = [num(r["regret_lo_pct"]) for r in per]
            hi = [num(r["regret_hi_pct"]) for r in per]
            print("| %s | %g s | %s | %s – %s | %s – %s | %s |" % (
                wl, t, cell(cpu, "%.2f"), cell(lo, "%.2f"), cell(hi, "%.2f"),
                cell([c * p / 100 for c, p in zip(cpu, lo)], "%.3f"),
                cell([c * p / 100 for c, p in zip(cpu, hi)], "%.3f"),
                check(sum(1 for r in per if r.get("verify") != "ok"),
                      sum(1 for r in per if behind(r)))))


def table(rows, rounds, kind, what):
    """One table of the curve's rows of KIND against the policy runs; the rows
    missed (None: no row of KIND had a policy run to compare with)."""
    print("| workload | T | saved mean, MiB: %s | actual | ratio "
          "| saved last, MiB: %s | actual | ratio "
          "| refaults/s: %s | actual | ratio | data check | goal |" % (what, what, what))
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    wls = list(dict.fromkeys(r["wl"] for r in rows if r["kind"] != "record"))
    missed, compared = [], 0
    for wl in wls:
        ts = sorted({num(r["t"]) for r in rows if r["wl"] == wl and r["kind"] in (kind, "real")})
        for t in ts:
            per = []
            for rd in rounds:
                p = [r for r in rows if r["kind"] == kind and r["wl"] == wl
                     and num(r["t"]) == t and r["round"] == rd]
                x = [r for r in rows if r["kind"] == "real" and r["wl"] == wl
                     and num(r["t"]) == t and r["round"] == rd]
                if p and x:
                    per.append((p[0], x[0]))
            if not per:
                continue
            compared += 1
            pm = [mib(num(p["saved_mean_kb"])) for p, _ in per]
            am = [mib(num(x["swap_mean_kb"])) for _, x in per]
            pl = [mib(num(p["saved_last_kb"])) for p, _ in per]
            al = [mib(num(x["swap_last_kb"])) for _, x in per]
            pr = [num(p["rf_pps"]) for p, _ in per]
            # pages swapped in over the run's seconds (rows of the first runs
            # have an empty rf_pps: an awk redirect ate it)
            ar = [num(x["swapin"]) / num(x["secs"]) for _, x in per]
            rm = [saved_ratio(x, y) for x, y in zip(am, pm)]
            rl = [saved_ratio(x, y) for x, y in zip(al, pl)]
            rr = [rf_ratio(y, x) for x, y in zip(ar, pr)]
            bad = sum(1 for _, x in per if x.get("verify") != "ok")
            # a run whose open load fell behind, or (for the record's curve)
            # the record run of the same round
            recs = {r["round"]: r for r in rows if r["kind"] == "record" and r["wl"] == wl}
            late = sum(1 for _, x in per if behind(x) or (
                kind.startswith("pred") and behind(recs.get(x["round"], {}))))
            # each round pairs a curve with the policy runs of its own boot:
            # the goal is on the median of those pairs' ratios
            why = []
            if not abs(med(rm) - 1) <= SAVED_TOL:
                why.append("saved mean %+.0f %%" % (100 * (med(rm) - 1)))
            if not abs(med(rl) - 1) <= SAVED_TOL:
                why.append("saved last %+.0f %%" % (100 * (med(rl) - 1)))
            if not 1 / RF_FACTOR <= med(rr) <= RF_FACTOR:
                why.append("refaults x%.2g" % med(rr))
            if bad:
                why.append("data check failed")
            if late:
                why.append("load behind")
            goal = "met" if not why else "not met: " + ", ".join(why)
            if why:
                missed.append("%s T=%gs" % (wl, t))
            print("| %s | %g s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                wl, t, cell(pm, "%.1f"), cell(am, "%.1f"), saved_cell(rm, pm, am),
                cell(pl, "%.1f"), cell(al, "%.1f"), saved_cell(rl, pl, al),
                cell(pr, "%.1f"), cell(ar, "%.1f"),
                "– (both none)" if all(v == 1.0 for v in rr) and max(pr + ar) < RF_FLOOR
                else cell(rr, "%.3f"),
                check(bad, late), goal))
    return missed if compared else None


if __name__ == "__main__":
    main()
