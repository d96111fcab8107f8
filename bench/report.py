#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turn bench/guest.sh's "k=v ..." rows into BENCHMARKS.md (stdout).

Absolute times under TCG are noise; what carries over is the ratio of
daptrace to DAMON measured in the same boot on the same work, so every
comparison is a ratio with its spread over the repeated rounds.
"""
import argparse
import statistics
import sys
from collections import defaultdict


def parse(path):
    rows = []
    with open(path) as f:
        for line in f:
            row = {}
            for tok in line.split():
                if "=" in tok:
                    k, v = tok.split("=", 1)
                    row[k] = v
            if row:
                rows.append(row)
    return rows


def num(row, key):
    try:
        return float(row[key])
    except (KeyError, ValueError):
        return None


def cpu_pct(row):
    wall, cpu = num(row, "wall_ms"), num(row, "cpu_ms")
    return 100.0 * cpu / wall if wall and cpu is not None else None


def med_range(vals, fmt="{:.2f}"):
    vals = [v for v in vals if v is not None]
    if not vals:
        return "n/a"
    m = statistics.median(vals)
    if len(vals) == 1:
        return fmt.format(m)
    return (fmt + " [" + fmt + "–" + fmt + "]").format(m, min(vals), max(vals))


def mean(vals):
    vals = [v for v in vals if v is not None]
    return statistics.fmean(vals) if vals else None


def f(v, fmt="{:.3f}"):
    return fmt.format(v) if v is not None else "n/a"


def wl_name(wl):
    return wl.replace("_", " ").replace("-d " , "").strip()


# Metrics where a higher value is better; the others (errors, losses) are
# better lower.  A difference is reported as worse beyond this tolerance.
HIGHER_BETTER = ("precision_median", "recall_median", "hot_seen_median")
TOL_ABS = 0.01
TOL_CPU = 1.05


def worse_acc(where, k, title, a, b, worse):
    if a is None or b is None:
        return
    if k in HIGHER_BETTER:
        bad = a < b - TOL_ABS
    else:
        bad = a > b + TOL_ABS
    if bad:
        worse.append(f"{where}: {title} {a:.3f} vs DAMON {b:.3f}")


def main_table(rows, out, worse):
    groups = defaultdict(lambda: defaultdict(dict))  # (wl, setting) -> round -> mon
    for r in rows:
        if r.get("setting") in ("default", "fast"):
            groups[(r["wl"], r["setting"])][r["round"]][r["monitor"]] = r
    for (wl, setting), rounds in sorted(groups.items()):
        label = "5 ms / 100 ms" if setting == "default" else "1 ms / 20 ms"
        where = f"`{wl_name(wl)}` at {label}"
        out.append(f"#### `{wl_name(wl)}`, sample / aggregation {label}, 10–1000 regions\n")
        cpu_ratio, slow_d, slow_D, cpu_d, cpu_D = [], [], [], [], []
        acc = defaultdict(list)
        for rnd, mons in sorted(rounds.items()):
            d, D, n = mons.get("daptrace"), mons.get("damon"), mons.get("none")
            cd, cD = (cpu_pct(d) if d else None), (cpu_pct(D) if D else None)
            cpu_d.append(cd)
            cpu_D.append(cD)
            if cd is not None and cD:
                cpu_ratio.append(cd / cD)
            t0 = num(n, "touched") if n else None
            for mon, lst in ((d, slow_d), (D, slow_D)):
                t = num(mon, "touched") if mon else None
                if t0 and t is not None:
                    lst.append(100.0 * (1 - t / t0))
            for name, mon in (("daptrace", d), ("damon", D)):
                if not mon:
                    continue
                for k in ("precision_median", "recall_median", "wss_abs_err_median",
                          "hot_seen_median", "aggr_interval_err_mean", "missed"):
                    acc[(name, k)].append(num(mon, k))
        n = len(rounds)
        sd = [a / b for a, b in zip(slow_d, slow_D) if b and b > 0]
        out.append("| metric (median [min–max] over %d rounds) | daptrace | DAMON | daptrace / DAMON |" % n)
        out.append("| --- | --- | --- | --- |")
        out.append(f"| monitor CPU, % of one CPU | {med_range(cpu_d)} | {med_range(cpu_D)} | {med_range(cpu_ratio)} |")
        if cpu_ratio and statistics.median(cpu_ratio) > TOL_CPU:
            worse.append(f"{where}: monitor CPU ×{med_range(cpu_ratio)} of DAMON's")
        out.append(f"| workload slowdown, % | {med_range(slow_d, '{:.1f}')} | {med_range(slow_D, '{:.1f}')} | "
                   f"{med_range(sd) if sd else 'n/a'} |")
        for k, title in (("precision_median", "hot-byte precision (median window)"),
                         ("recall_median", "hot-byte recall (median window)"),
                         ("wss_abs_err_median", "WSS abs. error (median window)"),
                         ("hot_seen_median", "hot bytes seen accessed at all"),
                         ("aggr_interval_err_mean", "aggregation interval error vs nominal"),
                         ("missed", "snapshots lost")):
            a, b = mean(acc[("daptrace", k)]), mean(acc[("damon", k)])
            ratio = f"{a / b:.2f}" if a is not None and b else "–"
            out.append(f"| {title} | {f(a)} | {f(b)} | {ratio} |")
            worse_acc(where, k, title, a, b, worse)
        out.append("")


def tlb_table(rows, out, worse):
    sel = [r for r in rows if r.get("setting") == "tlb"]
    by_wl = defaultdict(list)
    for r in sel:
        by_wl[r["wl"]].append(r)
    for wl, rs in sorted(by_wl.items()):
        out.append(f"#### TLB policy, `{wl_name(wl)}`\n")
        out.append("| monitor | tlb_flush | CPU % | hot bytes seen accessed | precision | recall | WSS abs. error |")
        out.append("| --- | --- | --- | --- | --- | --- | --- |")
        damon = next((r for r in rs if r["monitor"] == "damon"), None)
        for r in rs:
            if damon and r["monitor"] == "daptrace":
                where = f"TLB policy `{r['tlb']}` on `{wl_name(wl)}`"
                cd, cD = cpu_pct(r), cpu_pct(damon)
                if cd is not None and cD and cd / cD > TOL_CPU:
                    worse.append(f"{where}: monitor CPU ×{cd / cD:.2f} of DAMON's")
                for k, title in (("hot_seen_median", "hot bytes seen accessed"),
                                 ("precision_median", "precision"),
                                 ("recall_median", "recall"),
                                 ("wss_abs_err_median", "WSS abs. error")):
                    worse_acc(where, k, title, num(r, k), num(damon, k), worse)
            out.append(f"| {r['monitor']} | {r['tlb'] if r['monitor'] == 'daptrace' else '(never flushes)'} | "
                       f"{f(cpu_pct(r), '{:.2f}')} | {f(num(r, 'hot_seen_median'))} | "
                       f"{f(num(r, 'precision_median'))} | "
                       f"{f(num(r, 'recall_median'))} | {f(num(r, 'wss_abs_err_median'))} |")
        out.append("")


def scale_tables(rows, out, worse):
    size = defaultdict(dict)
    for r in rows:
        if r.get("setting") == "scale-size":
            s = [t for t in r["wl"].split("_")]
            sz = s[s.index("-s") + 1] if "-s" in s else "?"
            size[sz][r["monitor"]] = r
    if size:
        out.append("#### CPU as the target grows (hotcold, 5 ms / 100 ms)\n")
        out.append("| target size | daptrace CPU % | DAMON CPU % | daptrace / DAMON | daptrace regions (max) |")
        out.append("| --- | --- | --- | --- | --- |")
        def key(s):
            mult = {"M": 1, "G": 1024}
            return float(s[:-1]) * mult.get(s[-1], 1) if s[-1] in mult else 0
        for sz in sorted(size, key=key):
            d, D = size[sz].get("daptrace"), size[sz].get("damon")
            cd, cD = (cpu_pct(d) if d else None), (cpu_pct(D) if D else None)
            ratio = f"{cd / cD:.2f}" if cd is not None and cD else "n/a"
            if cd is not None and cD and cd / cD > TOL_CPU:
                worse.append(f"scaling, hotcold {sz} (one round): monitor CPU ×{ratio} of DAMON's")
            out.append(f"| {sz} | {f(cd, '{:.2f}')} | {f(cD, '{:.2f}')} | {ratio} | "
                       f"{d.get('regions_max', 'n/a') if d else 'n/a'} |")
        out.append("")
    tg = [r for r in rows if r.get("setting") == "scale-targets"]
    if tg:
        out.append("#### CPU with several targets in one context (64 MiB hotcold each, 5 ms / 100 ms)\n")
        out.append("| targets | daptrace CPU % |")
        out.append("| --- | --- |")
        for r in sorted(tg, key=lambda r: int(r["targets"])):
            out.append(f"| {r['targets']} | {f(cpu_pct(r), '{:.2f}')} |")
        out.append("")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", required=True)
    ap.add_argument("--kernel", required=True)
    ap.add_argument("--command", required=True)
    ap.add_argument("--duration", type=int, default=0)
    ap.add_argument("--cpu", default="")
    a = ap.parse_args()
    rows = parse(a.rows)
    if not rows:
        sys.exit("report.py: no benchmark rows")
    out = ["## All monitors in one boot (the old method; see the sections after it)", "",
           "Generated by `%s` (%d s). Do not edit: rerun the command." % (a.command, a.duration), "",
           "Under TCG the order of runs in one boot is not neutral (caveats below): the sections",
           "after this one run every monitored run in a boot of its own and supersede its CPU",
           "ratios; the TLB-policy and scaling tables have no one-boot-per-run counterpart yet.", "",
           "### Setup", "",
           f"- One QEMU boot (TCG, no KVM) of Debian's `{a.kernel}`, `-smp 2 -m 8G`, host CPU: {a.cpu}.",
           "- In that boot, per round and workload: no monitor, daptrace (`tlb_flush=mm`, the default), in-kernel",
           "  DAMON (sysfs `vaddr` context, recorded through the `damon:damon_aggregated` tracepoint),",
           "  one after the other with the same attributes.",
           "- Workloads: `workload/daptrace-workload` with exact ground truth; scores by",
           "  `workload/daptrace-score` (the same scorer for both monitors; DAMON's trace is converted",
           "  by `workload/damon2rec`). Windows in the first second are not scored.",
           "- CPU: the monitor thread's `/proc/<tid>/schedstat` runtime over the workload's run time.",
           "  Slowdown: pages the workload touched vs the unmonitored run of the same round.",
           "",
           "### Caveats of emulation", "",
           "- TCG emulates the MMU in software: its softmmu TLB is large and is flushed on its own",
           "  schedule, so a cleared accessed bit stays invisible to a cached translation for much longer",
           "  than on hardware (selftests/vm/README.md). This is why DAMON, which never flushes, reads small hot",
           "  sets as cold here; on real hardware the effect exists but is weaker.",
           "- A TLB flush IPI and page-table walks cost far more cycles under TCG than on hardware;",
           "  absolute CPU percentages are not predictive, ratios between the monitors are.",
           "- Guest time runs while the host deschedules the vCPU threads; the host had 2 cores for 2",
           "  vCPUs plus QEMU's own threads, so runs are noisy: hence rounds and ranges.",
           "- The slowdown row is not meaningful here: a flushing monitor grows QEMU's software TLB",
           "  for everything that runs after it in the boot, so the unmonitored run touched *fewer*",
           "  pages than the monitored ones (negative slowdown). It is shown, not used for any claim;",
           "  the one-vCPU section below measures slowdown with a boot per run.",
           "- At 1 ms / 20 ms the guest cannot touch a 64 MiB hot set within every 1 ms interval, so",
           "  the hot truth is not met there and precision/recall of that row compare poorly for both.",
           "",
           "### daptrace vs DAMON", ""]
    worse = []
    main_table(rows, out, worse)
    out += ["### TLB flush policies", "",
            "`none` is DAMON's behaviour; `round` flushes every CPU once per sampling round; `mm` bumps",
            "the target mm's TLB generation and flushes only the CPUs in its `mm_cpumask` (kernel/vaddr.c).",
            "The `scattered` workload is the case DAMON gets wrong: 32 hot pages, each in its own 2 MiB",
            "area of a 1 GiB mapping, hammered continuously; with transparent huge pages, so the accessed bit",
            "of a hot page is its 2 MiB area's and any sample in the area tests it: what is seen then",
            "depends on the TLB, not on how finely regions have split.", ""]
    tlb_table(rows, out, worse)
    out += ["### Scaling", ""]
    scale_tables(rows, out, worse)
    out += ["### Where daptrace is worse than DAMON", "",
            "Every row above on which daptrace measured worse than DAMON in this run (CPU by more than",
            f"{(TOL_CPU - 1) * 100:.0f} %, accuracy or error by more than {TOL_ABS}); the slowdown row is",
            "left out as explained in the caveats.", ""]
    out += [f"- {w}" for w in worse] or ["- none"]
    out.append("")
    out += ["### Raw rows", "", "```"] + [" ".join(f"{k}={v}" for k, v in r.items()) for r in rows] + ["```", ""]
    print("\n".join(out))


if __name__ == "__main__":
    main()
