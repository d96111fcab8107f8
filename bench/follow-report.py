#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The section of BENCHMARKS.md for bench/follow.sh, from its rows.

    follow-report.py ROWS ROUNDS KERNEL [PARTS]
"""
import json
import statistics
import sys


def cell(v, f="%.2f"):
    if not v:
        return "–"
    return (f + " [" + f + "–" + f + "]") % (statistics.median(v), min(v), max(v))


def parse(path):
    rows = []
    for line in open(path):
        words = line.rstrip("\n").split(" ", 3)
        rnd = int(words[0].split("=")[1])
        date = words[1].split("=")[1]
        if words[2] in ("aging_truth", "aging_json"):
            rows.append({"round": rnd, "date": date, "kind": words[2],
                         "text": words[3] if len(words) > 3 else ""})
            continue
        kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
        kv["round"] = rnd
        kv["kind"] = "row"
        rows.append(kv)
    return rows


def damon_percentiles(items):
    """mm/damon/stat.c's walk over (idle_ms, bytes) pairs."""
    items = sorted(items)
    total = sum(b for _, b in items)
    out, acc, nxt = [0] * 101, 0, 0
    for v, b in items:
        acc += b
        while nxt <= 100 and nxt * total <= acc * 100:
            out[nxt] = v
            nxt += 1
    return out


def aging_errors(rows):
    """Relative errors of the aging cgroup's idle percentiles, per report."""
    errs = []
    for rnd in sorted({r["round"] for r in rows}):
        truth = [r["text"] for r in rows if r["round"] == rnd and r["kind"] == "aging_truth"]
        reports = [r["text"] for r in rows if r["round"] == rnd and r["kind"] == "aging_json"]
        areas, start = [], None
        for t in truth:
            w = t.split()
            if w[0] == "area":
                areas.append((int(w[2], 16), int(w[3], 16), int(w[5])))
            elif w[0] == "start_ns":
                start = int(w[1])
        if not areas or start is None:
            continue
        for line in reports:
            j = json.loads(line)
            cg = [c for c in j.get("cgroups", []) if c.get("cgroup") == "/dt-aging"]
            if not cg:
                continue
            t_end = j["window_end_ns"]
            if t_end < areas[0][2] + 4e9:
                continue       # the workload's first seconds
            items = []
            for s, e, idle_from in areas:
                ms = (t_end - idle_from) / 1e6 if t_end > idle_from else -(t_end - start) / 1e6
                items.append((ms, e - s))
            want = damon_percentiles(items)
            got = cg[0]["memory_idle_ms_percentiles"]
            # the middle of each area's band, where the truth is idle memory
            for p in (12, 37, 62, 87):
                if want[p] > 0:
                    errs.append((rnd, p, want[p], got[p], abs(got[p] - want[p]) / want[p]))
    return errs


def main():
    rows = parse(sys.argv[1])
    rounds, kernel = sys.argv[2], sys.argv[3]
    parts = (sys.argv[4] if len(sys.argv) > 4 else "tree machine aging scale").split()
    r = [x for x in rows if x["kind"] == "row"]
    dates = "/".join(sorted({x["date"] for x in rows}))

    def sel(**kw):
        return [x for x in r if all(x.get(k) == v for k, v in kw.items())]

    def score(mode, i):
        return [tuple(map(float, x["score"].split(","))) for x in sel(mode=mode, worker=str(i))]

    print("## Following processes: trees, the machine, idle-time percentiles\n")
    cmd = "bench/follow.sh --rounds %s" % rounds
    if parts != ["tree", "machine", "aging", "scale"]:
        cmd += ' --parts "%s"' % " ".join(parts)
    print("    %s\n" % cmd)
    print("One boot of %s per run (2 vCPUs, 4 GiB), the runs of a pair alternating and" % kernel)
    print("the first flipping every round; median [min–max] over %s rounds; %s.\n"
          % (rounds, dates))
    if "tree" in parts:
        tree(sel, score, kernel)
    if "machine" in parts:
        machine(sel)
    if "aging" in parts:
        aging(rows)
    if "scale" in parts:
        scale(sel, kernel)


def tree(sel, score, kernel):
    print("### A process tree against a process alone\n")
    print("`daptrace record -- daptrace-tree-workload -w 4 -s 32M --stagger 1s -l 8s`: a")
    print("parent starts four workers a second apart, each with its own 4 MiB hot set in")
    print("32 MiB (at a different offset in each); against one such worker recorded alone")
    print("(`--worker 0`).  Precision and recall are daptrace-score's medians over each")
    print("worker's windows from one second after it started; join latency is the time from")
    print("a worker's fork to the start of the first window holding its regions (the")
    print("follower adds it at its fork event; the module takes it at the next aggregation")
    print("boundary, at most 100 ms later).\n")
    print("| run | kernel | date | precision | recall | join latency, ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    single = score("single", 0)

    def when(mode):
        return "/".join(sorted({x["date"] for x in sel(mode=mode)}))
    print("| one worker alone | %s | %s | %s | %s | – |" % (
        kernel, when("single"), cell([s[0] for s in single]), cell([s[1] for s in single])))
    lat_all = []
    for i in range(4):
        sc = score("tree", i)
        lat = [float(x["join_ms"]) for x in sel(mode="tree", worker=str(i))]
        lat_all += lat
        print("| tree, worker %d | %s | %s | %s | %s | %s |" % (
            i, kernel, when("tree"), cell([s[0] for s in sc]), cell([s[1] for s in sc]),
            cell(lat, "%.0f")))
    print()
    print("Join latency over all workers and rounds: median %.0f ms, max %.0f ms (goal: within"
          % (statistics.median(lat_all) if lat_all else float("nan"),
             max(lat_all) if lat_all else float("nan")))
    print("one update interval, 1000 ms: %s).\n"
          % ("met" if lat_all and max(lat_all) <= 1000 else "**not met**"))


def machine(sel):
    print("### The whole machine against one target, same budget\n")
    print("220 processes that populated 64 KiB and sleep, and one busy worker (a 4 MiB hot")
    print("set in 32 MiB).  `daptrace stat` (every user process, about 230 targets) against")
    print("`daptrace record -p` of the busy worker alone, both at stat's intervals (20 ms /")
    print("1 s / 5 s) and region budget (10–1000): the worker's CPU over 12 s from 5 s in.\n")
    mach = {x["round"]: int(x["cpu_us"]) for x in sel(mode="machine")}
    one = {x["round"]: int(x["cpu_us"]) for x in sel(mode="one")}
    ratio = [mach[k] / one[k] for k in mach if k in one and one[k]]
    print("| run | worker CPU, ms in 12 s | targets | regions |")
    print("| --- | --- | --- | --- |")
    for mode, name in (("machine", "daptrace stat, the machine"), ("one", "record -p, the busy one")):
        xs = sel(mode=mode)
        print("| %s | %s | %s | %s |" % (name, cell([int(x["cpu_us"]) / 1000 for x in xs], "%.0f"),
                                        cell([int(x["targets"]) for x in xs], "%.0f"),
                                        cell([int(x["regions"]) for x in xs], "%.0f")))
    print()
    print("Machine / one target, per round: %s (goal ≤ 1.5×).\n" % cell(ratio))
    rec = {x["round"]: int(x["cpu_us"]) for x in sel(mode="machine-rec")}
    if rec:
        slow = [rec[k] / mach[k] for k in rec if k in mach and mach[k]]
        print("`daptrace stat` at record's intervals (5 ms / 100 ms / 1 s) instead of its own:")
        print("%s ms in 12 s, %s× the worker CPU of its defaults, per round: the reason"
              % (cell([v / 1000 for v in rec.values()], "%.0f"), cell(slow)))
        print("for stat's longer defaults in an always-on view.\n")


def aging(rows):
    print("### Idle-time percentiles against known idle ages\n")
    print("An aging workload in its own cgroup (64 MiB in four areas, idle from 0, 8, 16")
    print("and 24 s after it started) among 220 idle processes; `daptrace stat --json")
    print("--interval 8s` over the machine, the cgroup's `memory_idle_ms_percentiles` at")
    print("the middle of each area's band (p12, p37, p62, p87) against the truth at the")
    print("window's end, where the truth is idle memory.\n")
    errs = aging_errors(rows)
    print("| percentile | truth, ms | measured, ms | relative error |")
    print("| --- | --- | --- | --- |")
    for p in (12, 37, 62, 87):
        e = [x for x in errs if x[1] == p]
        print("| p%d | %s | %s | %s |" % (p, cell([x[2] for x in e], "%.0f"),
                                         cell([x[3] for x in e], "%.0f"),
                                         cell([100 * x[4] for x in e], "%.1f %%")))
    if errs:
        within = sum(1 for x in errs if x[4] <= 0.10)
        print("\nAll reports: median error %.1f %%, %d of %d points within 10 %% (goal).\n"
              % (100 * statistics.median([x[4] for x in errs]), within, len(errs)))
    else:
        print("\nNo report could be compared.\n")


def scale(sel, kernel):
    print("### Cost as targets grow\n")
    print("N processes that populated 64 KiB and sleep (plus the guest's own, about ten);")
    print("`daptrace stat` over the machine at its defaults: the worker's CPU and")
    print("daptrace's own (user + system) over 12 s from 8 s in, as a share of one CPU.\n")
    print("| idle processes | targets | regions | worker CPU | daptrace CPU | over the limit |")
    print("| --- | --- | --- | --- | --- | --- |")
    for n in sorted({int(x["n"]) for x in sel(mode="scale")}):
        xs = sel(mode="scale", n=str(n))
        print("| %d | %s | %s | %s | %s | %s |" % (
            n, cell([int(x["targets"]) for x in xs], "%.0f"),
            cell([int(x["regions"]) for x in xs], "%.0f"),
            cell([int(x["cpu_us"]) / 120000 for x in xs], "%.2f %%"),
            cell([int(x["user_us"]) / 120000 for x in xs], "%.2f %%"),
            cell([int(x["no_room"] or 0) for x in xs], "%.0f")))


main()
