#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Replay the records bench/savings.sh kept with a daptrace of your choice.

    savings-replay.py --daptrace BIN [--wl kv] DIR...

DIR: where a bench/savings.sh run with --keep-records 1 left its rows and
records (build/bench: savings-rows.txt and
savings-records/round-N/WL-record.csv; copy them elsewhere to keep several
runs).  Each round's record goes through `BIN report savings --json --type
anon` at the rounds' thresholds, and its curve is set against that round's
policy runs (the kind=real rows): saved mean, saved last and refaults/s,
actual / predicted, median [min-max] over the rounds of all DIRs.  With the
driver's own build it gives the driver's ratios; with another, what that
model would have predicted for the same runs: a change to the model is
measured on boots already made, and on several runs' rounds at once.
"""
import argparse
import json
import os
import subprocess

from rows import rows_of  # bench/rows.py
from spread import cell, num  # bench/spread.py


def curve(daptrace, rec, ts):
    """{T seconds: (saved mean KiB, saved last KiB, refault pages/s)}"""
    out = subprocess.run([daptrace, "report", "savings", "--json", "--type", "anon",
                          "--thresholds", ",".join("%gs" % t for t in ts), rec],
                         capture_output=True, text=True, check=True).stdout
    return {round(p["threshold_s"], 3): (p["saved_mean_bytes"] / 1024,
                                         p["saved_last_bytes"] / 1024,
                                         p["refault_pages_per_s"])
            for p in json.loads(out)["all"]["curve"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--daptrace", required=True, help="the daptrace binary to replay with")
    ap.add_argument("--wl", default="kv", help="the workload whose records to replay")
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    a = ap.parse_args()
    ratios = {}
    for d in a.dirs:
        rows = os.path.join(d, "savings-rows.txt")
        if not os.path.exists(rows):
            raise SystemExit("%s: no rows of bench/savings.sh (its build/bench?)" % rows)
        real = [r for r in rows_of(rows) if r["kind"] == "real" and r["wl"] == a.wl]
        for rnd in sorted({r["round"] for r in real}):
            rec = os.path.join(d, "savings-records", "round-" + rnd, a.wl + "-record.csv")
            if not os.path.exists(rec):
                raise SystemExit("%s: no record (was it run with --keep-records 1?)" % rec)
            mine = [r for r in real if r["round"] == rnd]
            c = curve(a.daptrace, rec, sorted({num(r["t"]) for r in mine}))
            for r in mine:
                t = num(r["t"])
                pm, pl, pr = c[round(t, 3)]
                act = (num(r["swap_mean_kb"]), num(r["swap_last_kb"]), num(r["rf_pps"]))
                ratios.setdefault(t, []).append(
                    [x / p if p > 0 else float("nan") for x, p in zip(act, (pm, pl, pr))])
    print("| T | rounds | saved mean | saved last | refaults/s |")
    print("| --- | --- | --- | --- | --- |")
    for t in sorted(ratios):
        v = ratios[t]
        print("| %g s | %d | %s |" % (t, len(v), " | ".join(cell([x[i] for x in v])
                                                            for i in range(3))))


if __name__ == "__main__":
    main()
