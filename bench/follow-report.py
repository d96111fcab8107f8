#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The section of BENCHMARKS.md for bench/follow.sh, from its rows.

    follow-report.py ROWS ROUNDS KERNEL [PARTS [NEWEST]]

NEWEST: the kernel of the damon_stat part ("-" or none without it).
"""
import json
import statistics
import sys


def cell(v, f="%.2f"):
    if not v:
        return "–"
    return (f + " [" + f + "–" + f + "]") % (statistics.median(v), min(v), max(v))


TEXT_KINDS = ("aging_truth", "aging_json", "dstat_json", "build_json")


def parse(path):
    """Rows "round=R date=D kernel=K" + a "# BENCH" row of the guest: its
    key=value words, or (TEXT_KINDS) its kind and the rest of the line."""
    rows = []
    # A round of damon_stat has two boots that each print an aging truth:
    # "boot" numbers the boots, so that reports meet their own boot's truth.
    # A boot's rows are together; one with the aging workload starts with
    # its truth ("pid"), but a DAMON_STAT boot with its range, its truth
    # coming after its reads.
    boot, truth_due = 0, False
    for line in open(path):
        words = line.rstrip("\n").split(" ", 4)
        head = dict(w.split("=", 1) for w in words[:3])
        rnd, date, kernel = int(head["round"]), head["date"], head["kernel"]
        if words[3] == "mode=dstat-range":
            boot, truth_due = boot + 1, True
        elif words[3] == "aging_truth" and words[4].startswith("pid "):
            if truth_due:
                truth_due = False
            else:
                boot += 1
        if words[3] in TEXT_KINDS:
            rows.append({"round": rnd, "date": date, "kernel": kernel, "kind": words[3],
                         "boot": boot, "text": words[4] if len(words) > 4 else ""})
            continue
        kv = dict(w.split("=", 1) for w in line.split() if "=" in w)
        kv["round"] = rnd
        kv["kind"] = "row"
        kv["boot"] = boot
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


def aging_truth(rows, boot):
    """The aging workload's areas [(start, end, idle_from_ns)] and start_ns
    in that boot, or ([], None)."""
    areas, start = [], None
    for r in rows:
        if r["kind"] != "aging_truth" or r["boot"] != boot:
            continue
        w = r["text"].split()
        if w[0] == "area":
            areas.append((int(w[2], 16), int(w[3], 16), int(w[5])))
        elif w[0] == "start_ns":
            start = int(w[1])
    return areas, start


def dt_aging(j):
    """daptrace stat's percentiles of the aging cgroup in report j, or None."""
    cg = [c for c in j.get("cgroups", []) if c.get("cgroup") == "/dt-aging"]
    return cg[0]["memory_idle_ms_percentiles"] if cg else None


def aging_errors(rows, kernel=None, kind="aging_json", pick=dt_aging):
    """Relative errors of the idle percentiles pick() finds in the reports
    of kind against the aging workload's truth, per report: (round,
    percentile, truth, measured, error).  kernel None: any."""
    errs = []
    for b in sorted({r["boot"] for r in rows if r["kind"] == kind and
                     kernel in (None, r["kernel"])}):
        areas, start = aging_truth(rows, b)
        if not areas or start is None:
            continue
        for r in rows:
            if r["kind"] != kind or r["boot"] != b:
                continue
            rnd = r["round"]
            j = json.loads(r["text"])
            got = pick(j)
            if got is None:
                continue
            t_end = j["window_end_ns"]
            if t_end < areas[0][2] + 4e9:
                continue       # the workload's first seconds
            want = damon_percentiles(truth_items(areas, start, t_end))
            # the middle of each area's band, where the truth is idle memory
            for p in (12, 37, 62, 87):
                if want[p] > 0:
                    errs.append((rnd, p, want[p], got[p], abs(got[p] - want[p]) / want[p]))
    return errs


def goal_cell(errs):
    """Whether every report's error in errs is within 10 %, the goal."""
    if not errs:
        return "–"
    ok = sum(1 for x in errs if x[4] <= 0.10)
    return "%s (%d of %d reports)" % ("met" if ok == len(errs) else "**not met**", ok, len(errs))


def truth_items(areas, start, t):
    """(idle_ms, bytes) of each area at t, DAMON's sign: accessed < 0."""
    return [((t - idle_from) / 1e6 if t > idle_from else -(t - start) / 1e6, e - s)
            for s, e, idle_from in areas]


def main():
    rows = parse(sys.argv[1])
    rounds, kernel = sys.argv[2], sys.argv[3]
    parts = (sys.argv[4] if len(sys.argv) > 4 else "tree machine aging scale").split()
    stat_args = sys.argv[6] if len(sys.argv) > 6 else ""
    newest = sys.argv[5] if len(sys.argv) > 5 else "-"
    r = [x for x in rows if x["kind"] == "row"]
    dates = "/".join(sorted({x["date"] for x in rows}))
    # the other parts' rows: damon_stat's (on the newest) reuse their modes
    own = [x for x in rows if x["kernel"] == kernel]

    def sel(kern=kernel, **kw):
        return [x for x in r if x["kernel"] == kern and
                all(x.get(k) == v for k, v in kw.items())]

    def score(mode, i):
        return [tuple(map(float, x["score"].split(","))) for x in sel(mode=mode, worker=str(i))]

    alone = parts == ["damon_stat"]
    if alone:
        # a table of its own (bench/run.sh's follow-damon_stat)
        print("## daptrace stat against DAMON_STAT itself, on the newest kernel\n")
    elif parts == ["build"]:
        print("## Following a real build\n")
    else:
        print("## Following processes: trees, the machine, idle-time percentiles\n")
    cmd = "bench/follow.sh --rounds %s" % rounds
    if parts != ["tree", "machine", "aging", "scale"]:
        cmd += ' --parts "%s"' % " ".join(parts)
    if stat_args:
        cmd += ' --stat-args "%s"' % stat_args
    print("    %s\n" % cmd)
    kernels = kernel
    if "damon_stat" in parts:
        kernels = newest if parts == ["damon_stat"] else kernel + " (" + newest + ": damon_stat)"
    print("One boot of %s per run (2 vCPUs, 4 GiB), the runs of a pair alternating and" % kernels)
    print("the first flipping every round; median [min–max] over %s rounds; %s.\n"
          % (rounds, dates))
    if "tree" in parts:
        tree(sel, score, kernel)
    if "machine" in parts:
        machine(sel)
    if "aging" in parts:
        aging(own, stat_args)
    if "scale" in parts:
        scale(sel, kernel)
    if "damon_stat" in parts:
        damon_stat(rows, lambda **kw: sel(kern=newest, **kw), newest, "" if alone else "#")
    if "build" in parts:
        build(rows, sel, kernel, "" if parts == ["build"] else "#")


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


def aging(rows, stat_args=""):
    print("### Idle-time percentiles against known idle ages\n")
    print("An aging workload in its own cgroup (64 MiB in four areas, idle from 0, 8, 16")
    print("and 24 s after it started) among 220 idle processes; `daptrace stat %s--json"
          % (stat_args + " " if stat_args else ""))
    print("--interval 8s` over the machine, the cgroup's `memory_idle_ms_percentiles` at")
    print("the middle of each area's band (p12, p37, p62, p87) against the truth at the")
    print("window's end, where the truth is idle memory.\n")
    errs = aging_errors(rows)
    print("| percentile | truth, ms | measured, ms | relative error | goal, within 10 % |")
    print("| --- | --- | --- | --- | --- |")
    for p in (12, 37, 62, 87):
        e = [x for x in errs if x[1] == p]
        print("| p%d | %s | %s | %s | %s |" % (p, cell([x[2] for x in e], "%.0f"),
                                              cell([x[3] for x in e], "%.0f"),
                                              cell([100 * x[4] for x in e], "%.1f %%"),
                                              goal_cell(e)))
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


def build_procs(sel, mode, rnd, job=None):
    """The processes of one record's tree in a round: {pid: row}, ints
    where the guest knew the value, None where it printed "-"."""
    out = {}
    for x in sel(mode=mode, what="proc"):
        if x["round"] != rnd or (job is not None and x["job"] != job):
            continue
        p = dict(x)
        for k in ("pid", "ppid", "fork_ns", "exec_ns", "exit_ns", "first_ns", "windows"):
            p[k] = None if x[k] == "-" else int(x[k])
        out[p["pid"]] = p
    return out


def build_wss(rows, mode, rnd, job="-"):
    """{pid: group} of that record's `report wss --by pid --json`."""
    for x in rows:
        if x["kind"] == "build_json" and x["round"] == rnd:
            m, j, text = x["text"].split(" ", 2)
            if m == mode and j == job:
                return {int(g["group"]): g for g in json.loads(text)["groups"]}
    return {}


def compile_jobs(procs):
    """The build's compile jobs in the order make started them: the cc1
    of each gcc driver that ran one, by the driver's exec time (make starts
    the jobs in jobs.txt's order, the links after them)."""
    cc1 = {p["ppid"]: p for p in procs.values() if p["exe"] == "cc1"}
    drivers = sorted((p for p in procs.values() if p["pid"] in cc1),
                     key=lambda p: p["exec_ns"] or p["fork_ns"])
    return [cc1[d["pid"]] for d in drivers]


def build(rows, sel, kernel, h):
    """The build section; h: "#" as a part of the follow table."""
    rounds = sorted({x["round"] for x in sel(mode="build", what="rec")})
    when = "/".join(sorted({x["date"] for x in sel(mode="build")} |
                           {x["date"] for x in sel(mode="build-alone")}))
    rec = {x["round"]: x for x in sel(mode="build", what="rec")}
    upd = [int(x["update_us"]) / 1000 for x in rec.values() if x.get("update_us")]
    upd_ms = statistics.median(upd) if upd else 1000
    if h:
        print(h + "## A real build, followed\n")
    print("`daptrace record -- make -j2` in the guest: the project's own userspace sources")
    print("(libdaptrace's 7 files into a shared library, the 6 libc-only workload sources into")
    print("5 programs: 13 compile jobs of `gcc -O2 -fPIC -c`, then 6 links), built by the")
    print("host's Debian 12 gcc 12, binutils and GNU make packed into the busybox guest")
    print("(bench/toolchain-payload.sh).  The kernel's `sched_process_fork`, `_exec` and")
    print("`_exit` trace events (trace clock `mono`, the record's clock) give every process")
    print("the build started and when; the record gives the first window holding each one's")
    print("regions.  Join latency: fork to the start of that window (the follower adds a")
    print("process at its fork or exec event; gcc and make start their children with")
    print("vfork, so a child has an address space of its own only from its exec, a few")
    print("ms later).  Record defaults: 5 ms / 100 ms / %.0f ms; %s.\n" % (upd_ms, when))

    # the processes
    by_exe, lat_all, lat_exec_all, started, seen, tgt, ev = {}, [], [], [], [], [], []
    for rnd in rounds:
        procs = build_procs(sel, "build", rnd)
        kids = [p for p in procs.values() if p["ppid"] in procs]
        started.append(len(kids))
        seen.append(sum(1 for p in kids if p["windows"]))
        tgt.append(int(rec[rnd]["targets"]) if rnd in rec else 0)
        ev.append(int(rec[rnd]["events"]) if rnd in rec else 0)
        for p in kids:
            e = by_exe.setdefault(p["exe"], {"n": [], "seen": [], "life": [], "lat": [],
                                               "miss_life": []})
            life = (p["exit_ns"] - p["fork_ns"]) / 1e6 if p["exit_ns"] else None
            e["n"].append(rnd)
            if life is not None:
                e["life"].append(life)
            if p["windows"]:
                e["seen"].append(rnd)
                lat = (p["first_ns"] - p["fork_ns"]) / 1e6
                e["lat"].append(lat)
                lat_all.append(lat)
                if p["exec_ns"]:
                    lat_exec_all.append((p["first_ns"] - p["exec_ns"]) / 1e6)
            elif life is not None:
                e["miss_life"].append(life)
    print("| program | processes a round | in the record (≥ 1 window) | lifetime, ms"
          " | join latency, ms | lifetime of those not in the record, ms |")
    print("| --- | --- | --- | --- | --- | --- |")
    n_r = max(len(rounds), 1)
    for exe in sorted(by_exe, key=lambda k: -len(by_exe[k]["n"])):
        e = by_exe[exe]
        print("| %s | %.0f | %d of %d | %s | %s | %s |" % (
            exe, len(e["n"]) / n_r, len(e["seen"]), len(e["n"]), cell(e["life"], "%.0f"),
            cell(e["lat"], "%.0f"), cell(e["miss_life"], "%.0f")))
    print()
    print("Per round: %s processes started by the build (the trace; the root `make` not"
          % cell(started, "%.0f"))
    print("counted), %s of them in the record with at least one window; the record's"
          % cell(seen, "%.0f"))
    print("follower counted %s targets (with the root) from %s process events."
          % (cell(tgt, "%.0f"), cell(ev, "%.0f")))
    print("The build took %s s under the record, the module's worker %s ms of CPU."
          % (cell([int(x["duration_ns"]) / 1e9 for x in rec.values()], "%.1f"),
             cell([int(x["cpu_us"]) / 1000 for x in rec.values()], "%.0f")))
    if lat_all:
        ok = max(lat_all) <= upd_ms
        print("Join latency over every process in the record and every round: median %.0f ms,"
              % statistics.median(lat_all))
        print("max %.0f ms (goal: within one update interval, %.0f ms: %s); from the exec"
              % (max(lat_all), upd_ms, "met" if ok else "**not met**"))
        print("instead of the fork: median %.0f ms, max %.0f ms.  A process that exits before"
              % (statistics.median(lat_exec_all) if lat_exec_all else float("nan"),
                 max(lat_exec_all) if lat_exec_all else float("nan")))
        print("the window after the one it joined in closes is in no window at all: that is")
        print("the short-lived ones above, not a lost join.\n")
    else:
        print("No process of the build was in any window.\n")

    # each compile job against itself alone
    print(h + "## Each compile job in the build against itself alone\n" if h else
          "### Each compile job in the build against itself alone\n")
    cc1_wss_max, cc1_obs_max, cc1_rss_max = [], [], []
    for rnd in rounds:
        wss = build_wss(rows, "build", rnd)
        for c in compile_jobs(build_procs(sel, "build", rnd)):
            g = wss.get(c["pid"])
            if g:
                cc1_wss_max.append(g["wss_max_bytes"] / 2**20)
                cc1_obs_max.append(g["monitored_max_bytes"] / 2**20)
                cc1_rss_max.append((g.get("rss_max_bytes") or 0) / 2**20)
    print("The cc1 of each compile job: in the followed build (the k-th gcc driver make")
    print("started runs the k-th object of the Makefile's list) and in")
    print("`daptrace record -- gcc ... -c` of the same file with the same options and")
    print("directory (the command `make -n` prints), both read with `daptrace report wss")
    print("--by pid` (regions with an access in a window; mean and maximum over the windows")
    print("holding the process's regions).  A real build has no page-level ground truth:")
    print("this compares the monitor with itself, in a tree (one more job on the other")
    print("vCPU, the follower adding and removing targets) and alone, not with the truth.")
    print("`report wss` counts a region whole when its sampled page was accessed, and")
    print("that includes regions labelled `[unmapped]` (more gap between mappings than")
    print("mapping), which its `monitored` column leaves out: in this build a cc1's")
    print("largest working set (%s MiB) is, for most jobs, above the most mapped memory"
          % cell(cc1_wss_max, "%.0f"))
    print("it had monitored (%s MiB) and its resident set (%s MiB): those windows"
          % (cell(cc1_obs_max, "%.0f"), cell(cc1_rss_max, "%.0f")))
    print("counted gaps.")
    print("The maxima are mostly that; the means less so, but not free of it.\n")
    print("| job | windows, build | windows, alone | WSS mean, build, KiB | WSS mean, alone, KiB"
          " | build / alone, mean | WSS max, build, KiB | WSS max, alone, KiB"
          " | build / alone, max |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    names = {x["job"]: x["obj"] for x in sel(mode="build-alone", what="job")}
    per = {}
    for rnd in rounds:
        procs = build_procs(sel, "build", rnd)
        wss = build_wss(rows, "build", rnd)
        for k, c in enumerate(compile_jobs(procs), 1):
            alone = [p for p in build_procs(sel, "build-alone", rnd, str(k)).values()
                     if p["exe"] == "cc1"]
            awss = build_wss(rows, "build-alone", rnd, str(k))
            if not alone:
                continue
            a, g, ga = alone[0], wss.get(c["pid"]), awss.get(alone[0]["pid"])
            d = per.setdefault(k, {x: [] for x in ("wb", "wa", "mb", "ma", "rm", "xb", "xa",
                                                   "rx")})
            d["wb"].append(c["windows"] or 0)
            d["wa"].append(a["windows"] or 0)
            if g and ga:
                d["mb"].append(g["wss_mean_bytes"] / 1024)
                d["ma"].append(ga["wss_mean_bytes"] / 1024)
                d["xb"].append(g["wss_max_bytes"] / 1024)
                d["xa"].append(ga["wss_max_bytes"] / 1024)
                if ga["wss_mean_bytes"]:
                    d["rm"].append(g["wss_mean_bytes"] / ga["wss_mean_bytes"])
                if ga["wss_max_bytes"]:
                    d["rx"].append(g["wss_max_bytes"] / ga["wss_max_bytes"])
    rm_all, rx_all = [], []
    for k in sorted(per):
        d = per[k]
        rm_all += d["rm"]
        rx_all += d["rx"]
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            names.get(str(k), "job %d" % k), cell(d["wb"], "%.0f"), cell(d["wa"], "%.0f"),
            cell(d["mb"], "%.0f"), cell(d["ma"], "%.0f"), cell(d["rm"]),
            cell(d["xb"], "%.0f"), cell(d["xa"], "%.0f"), cell(d["rx"])))
    print()
    if rm_all:
        print("Over all jobs and rounds, build / alone: mean working set %s, maximum %s."
              % (cell(rm_all), cell(rx_all)))
        print("No ratio where the job alone had no working set (a cc1 of one window whose")
        print("sampled pages showed no access) or no window at all.\n")
    else:
        print("No job could be compared.\n")


def mib(v):
    return v / 2**20


def dstat_reads(rows, kernel):
    """Per round, its DAMON_STAT reads and daptrace stat reports in order,
    each with its boot's aging truth: {round: ((dstat, areas, start),
    (stat, areas, start))}."""
    out = {}
    for rnd in sorted({r["round"] for r in rows if r["kernel"] == kernel}):
        got = []
        for kind in ("dstat_json", "aging_json"):
            rs = [r for r in rows if r["kind"] == kind and r["round"] == rnd and
                  r["kernel"] == kernel]
            areas, start = aging_truth(rows, rs[0]["boot"]) if rs else ([], None)
            got.append(([json.loads(r["text"]) for r in rs], areas, start))
        out[rnd] = tuple(got)
    return out


def damon_stat(rows, sel, kernel, h):
    """The damon_stat section; h: "#" when it is a part of the follow
    table, whose other sections are at its level, "" as a table alone."""
    when = "/".join(sorted({x["date"] for x in rows if x["kernel"] == kernel}))
    rng = [int(x["bytes"]) for x in sel(mode="dstat-range")]
    rng_gib = "%.2f" % (statistics.median(rng) / 2**30) if rng else "?"
    if h:
        print("### daptrace stat against DAMON_STAT itself (%s)\n" % kernel)
    print("Debian's 7.x kernels start DAMON_STAT at boot.  One boot per monitor a round,")
    print("alternating, the first flipping every round: daptrace's boot turns DAMON_STAT off")
    print("(`damon_stat_off`) and runs `daptrace stat`; DAMON_STAT's boot leaves it on, as")
    print("Debian boots, and daptrace monitors nothing.  Each boot does the same work in the")
    print("same order: the aging workload among 220 idle processes (the follow table's")
    print("idle-time percentiles), stopped, then the busy worker among them (its whole")
    print("machine run: `daptrace stat` at its defaults, the CPU over 12 s from 5 s in).\n")
    print("**They do not measure the same memory.**  DAMON_STAT's percentiles are over")
    print("*physical* memory: the biggest System RAM range (%s GiB of the guest's 4 GiB),"
          % rng_gib)
    print("every byte of it (free pages, page cache, the kernel's, every process's)")
    print("weighted by size, at intervals it tunes itself (sampling 5 ms to 10 s, aiming")
    print("at 4 % of the possible accesses seen), idle times in steps of the tuned")
    print("aggregation interval, refreshed at most every 5 s (mm/damon/stat.c).  daptrace")
    print("stat's are over the *virtual* memory of the user processes (about 230 targets),")
    print("weighted by resident bytes, per cgroup: its row below is the aging cgroup's,")
    print("which holds only the aging workload's 64 MiB.  A DAMON_STAT read is compared")
    print("with the truth at the time of the read, a daptrace stat report at the end of")
    print("its window.\n")

    # CPU
    print(h + "### CPU over machine's 12 s window\n")
    stat_w = {x["round"]: int(x["cpu_us"]) for x in sel(mode="machine")}
    stat_u = {x["round"]: int(x["user_us"]) for x in sel(mode="machine") if "user_us" in x}
    kd = {x["round"]: int(x["cpu_us"]) for x in sel(mode="dstat-machine")}
    aggr = [int(x["aggr_us_end"]) / 1000 for x in sel(mode="dstat-machine")]
    print("| monitor | kernel | date | CPU, ms in 12 s | share of one CPU |")
    print("| --- | --- | --- | --- | --- |")
    for name, v in (("daptrace stat: the module's worker", stat_w),
                    ("daptrace stat: worker + the `daptrace stat` process",
                     {k: stat_w[k] + stat_u[k] for k in stat_w if k in stat_u}),
                    ("DAMON_STAT: its kdamond", kd)):
        xs = list(v.values())
        print("| %s | %s | %s | %s | %s |" % (name, kernel, when,
                                             cell([x / 1000 for x in xs], "%.0f"),
                                             cell([x / 120000 for x in xs], "%.2f %%")))
    print()
    ratio = [stat_w[k] / kd[k] for k in stat_w if k in kd and kd[k]]
    ratio_u = [(stat_w[k] + stat_u[k]) / kd[k] for k in stat_w if k in kd and kd[k] and k in stat_u]
    mach = sel(mode="machine")
    ds_mach = [x for x in sel(mode="dstat-machine") if int(x["aggr_us_end"])]
    # the kdamond's rounds in the window: from the mean of its sampling
    # interval (1/20 of the aggregation) at the window's start and end
    ds_rounds = {x["round"]: 12e6 / ((int(x["aggr_us_start"]) + int(x["aggr_us_end"])) / 40)
                 for x in ds_mach}
    print("daptrace's worker / DAMON_STAT's kdamond, per round of the benchmark: %s;"
          % cell(ratio))
    print("with the `daptrace stat` process: %s.  Both tune their intervals to the same"
          % cell(ratio_u))
    print("goal (4 % of the possible accesses seen over 3 aggregations, sampling 5 ms to")
    print("10 s), but")
    print("DAMON_STAT has been tuning since boot (its aggregation interval %s ms at the"
          % cell(aggr, "%.0f"))
    print("window's end, sampling at 1/20 of it) and daptrace stat from its start 5 s before")
    print("the window, at 20 ms / 1 s; its domain is the processes' memory, where the busy")
    print("worker's hot set is a far larger share than in 3 GiB of physical memory.  In the")
    print("window daptrace stat made %s sampling rounds (%s ms apart on average), the"
          % (cell([int(x["samples"]) for x in mach if "samples" in x], "%.0f"),
             cell([12e3 / int(x["samples"]) for x in mach if int(x.get("samples", 0))], "%.0f")))
    print("kdamond about %s.  Per sampling round: the worker %s ms over %s regions,"
          % (cell(list(ds_rounds.values()), "%.0f"),
             cell([int(x["cpu_us"]) / int(x["samples"]) / 1000 for x in mach
                   if int(x.get("samples", 0))], "%.2f"),
             cell([int(x["regions"]) for x in mach], "%.0f")))
    print("the kdamond about %s ms (DAMON_STAT does not say its regions, at most 1000).\n"
          % cell([int(x["cpu_us"]) / 1000 / ds_rounds[x["round"]] for x in ds_mach], "%.2f"))

    # percentiles against the truth
    print(h + "### Idle-time percentiles against the aging workload's truth\n")
    print("The aging workload's truth at each read (p12, p37, p62, p87: the middle of each")
    print("area's band), as the follow table's idle-time section computes it, for each")
    print("monitor's percentiles.\n")
    e_stat = aging_errors(rows, kernel, "aging_json", dt_aging)
    e_ds = aging_errors(rows, kernel, "dstat_json", lambda j: j["memory_idle_ms_percentiles"])
    print("| percentile | kernel | date | truth (both boots), ms"
          " | daptrace stat, the aging cgroup, ms | error"
          " | daptrace stat: goal, within 10 % | DAMON_STAT, physical memory, ms | error |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for p in (12, 37, 62, 87):
        a = [x for x in e_stat if x[1] == p]
        b = [x for x in e_ds if x[1] == p]
        goal = goal_cell(a)
        print("| p%d | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            p, kernel, when, cell([x[2] for x in a + b], "%.0f"),
            cell([x[3] for x in a], "%.0f"), cell([100 * x[4] for x in a], "%.1f %%"), goal,
            cell([x[3] for x in b], "%.0f"), cell([100 * x[4] for x in b], "%.1f %%")))
    print()
    for name, e in (("daptrace stat (the aging cgroup)", e_stat),
                    ("DAMON_STAT (physical memory)", e_ds)):
        if e:
            print("%s: median error %.1f %%, %d of %d points within 10 %%." % (
                name, 100 * statistics.median([x[4] for x in e]),
                sum(1 for x in e if x[4] <= 0.10), len(e)))
        else:
            print("%s: no report could be compared." % name)
    print()

    # what DAMON_STAT's range holds, read by read
    reads = dstat_reads(rows, kernel)
    print(h + "### Read by read\n")
    print("Medians over the rounds; a read is 8, 16, ... 40 s after the monitor's start")
    print("(the aging workload starts at 3 s).  \"Accessed\" is the share of a monitor's")
    print("memory with a negative idle time (accessed in its last aggregation): for")
    print("DAMON_STAT of its whole range, to be set against the share the workload's")
    print("accessed areas (16 MiB each) make of that range; for daptrace stat of the aging")
    print("cgroup.  Bandwidth: DAMON's estimate (bytes × sampled accesses per aggregation")
    print("interval, per second), MiB/s.\n")
    print("| read | kernel | date | areas accessed (truth) | aging workload accessed, % of"
          " DAMON_STAT's range | DAMON_STAT: accessed, % | DAMON_STAT: aggr interval, ms"
          " | DAMON_STAT: p50, ms | uptime, ms | DAMON_STAT: bandwidth"
          " | daptrace stat: aging cgroup accessed, % | daptrace stat: bandwidth, aging cgroup"
          " | daptrace stat: bandwidth, every process |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    n = max([len(v[0][0]) for v in reads.values()] + [len(v[1][0]) for v in reads.values()]
            + [0])
    size = statistics.median(rng) if rng else 0
    free, total = [], []
    for i in range(n):
        c = {k: [] for k in ("act", "ds_acc", "wl", "aggr", "p50", "up", "ds_bw",
                             "st_acc", "st_bw", "st_all")}
        for rnd, ((ds, areas, start), (st, _, _)) in reads.items():
            if i < len(ds) and areas and start is not None and size:
                j = ds[i]
                t = j["window_end_ns"]
                pct = j["memory_idle_ms_percentiles"]
                c["act"].append(sum(1 for a in areas if a[2] > t))
                c["up"].append(t / 1e6)
                # 101 percentiles: the negative ones, about the share in %
                c["ds_acc"].append(sum(1 for v in pct if v < 0))
                c["wl"].append(100 * sum(e - s for s, e, f in areas if f > t) / size)
                c["aggr"].append(j["aggr_interval_us"] / 1000)
                c["p50"].append(pct[50])
                c["ds_bw"].append(mib(j["estimated_memory_bandwidth"]))
                free.append(j["mem_free_bytes"] / 2**30)
                total.append(j["mem_total_bytes"] / 2**30)
            if i < len(st):
                j = st[i]
                cg = [g for g in j.get("cgroups", []) if g.get("cgroup") == "/dt-aging"]
                c["st_all"].append(mib(j["estimated_memory_bandwidth"]))
                if cg:
                    c["st_bw"].append(mib(cg[0]["estimated_memory_bandwidth"]))
                    if cg[0]["resident_bytes"]:
                        c["st_acc"].append(100 * cg[0]["wss_bytes"] / cg[0]["resident_bytes"])
        print("| %d s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            8 * (i + 1), kernel, when, cell(c["act"], "%.0f"), cell(c["wl"], "%.1f %%"),
            cell(c["ds_acc"], "%.0f %%"), cell(c["aggr"], "%.0f"), cell(c["p50"], "%.0f"),
            cell(c["up"], "%.0f"), cell(c["ds_bw"], "%.0f"), cell(c["st_acc"], "%.0f %%"),
            cell(c["st_bw"], "%.0f"),
            cell(c["st_all"], "%.0f")))
    print()
    if free:
        print("Free memory at DAMON_STAT's reads: %s GiB of %s GiB (MemTotal): most of"
              % (cell(free), cell(total)))
        print("what its percentiles rank is memory nobody touched since boot, whose true idle")
        print("time is about the uptime (the kdamond starts during boot).  So its p50 is to be")
        print("read against the uptime column, not against the aging workload; where its")
        print("percentiles in the table above come near the workload's truth, that is because")
        print("boot and the workload's start are seconds apart, not because it sees the")
        print("workload, which is %s %% of its range (each area %s %%, under the 1-percentile"
              % ("%.1f" % (100 * 2**26 / size), "%.1f" % (100 * 2**24 / size)))
        print("step).  daptrace stat ranks only what processes map.\n")


main()
