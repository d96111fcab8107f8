#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What Prometheus stored against the record of the same run.

    prom_check.py PROMETHEUS_URL JOB RECORD_LINES

RECORD_LINES holds the guest's "exporter-target PID" and "exporter-record
SEQ WSS_BYTES" lines.  Every sample Prometheus scraped of the target's
working set is matched, by the snapshot sequence number scraped with it
(the same scrape, so the same timestamp), with the record's snapshot of
that number: the bytes must be the same.  Prints "PASS name" or
"FAIL name: why" per check and "# ..." diagnostics; the driver numbers them.
"""
import json
import statistics
import sys
import urllib.parse
import urllib.request

MIN_MATCHED = 10


def query(url, expr):
    q = urllib.parse.urlencode({"query": expr})
    with urllib.request.urlopen(f"{url}/api/v1/query?{q}", timeout=10) as r:
        body = json.load(r)
    if body.get("status") != "success":
        raise RuntimeError(f"{expr}: {body}")
    return body["data"]["result"]


def samples(url, expr):
    """{labels-tuple: [(ts, value)]} of a range-vector selector."""
    out = {}
    for s in query(url, expr):
        key = tuple(sorted(s["metric"].items()))
        out[key] = [(float(t), float(v)) for t, v in s.get("values", [])]
    return out


def result(ok, name, why=""):
    print(f"PASS {name}" if ok else f"FAIL {name}: {why}")


def main():
    url, job, lines = sys.argv[1], sys.argv[2], sys.argv[3]
    pid, record = None, {}
    for line in open(lines):
        w = line.split()
        if w[:1] == ["exporter-target"]:
            pid = w[1]
        elif w[:1] == ["exporter-record"]:
            record[int(w[1])] = int(w[2])
    if pid is None or not record:
        result(False, "record of the run received from the guest", "no lines")
        return
    print(f"# record: target {pid}, {len(record)} snapshots, "
          f"seq {min(record)}-{max(record)}")

    # Prometheus asks for OpenMetrics first: its metadata then names the
    # counter family without _total (the text format would keep it)
    q = urllib.parse.urlencode({"metric": "daptrace_exporter_snapshots_read"})
    with urllib.request.urlopen(f"{url}/api/v1/metadata?{q}", timeout=10) as r:
        meta = json.load(r)["data"]
    result(meta.get("daptrace_exporter_snapshots_read", [{}])[0].get("type") == "counter",
           "Prometheus scraped OpenMetrics (a counter family named without _total)",
           f"metadata {meta}")

    up = samples(url, f'up{{job="{job}"}}[1h]')
    ups = [v for s in up.values() for _, v in s]
    result(sum(ups) >= MIN_MATCHED, f"Prometheus scraped the guest's exporter",
           f"{int(sum(ups))} successful scrapes of {len(ups)}")
    print(f"# up: {int(sum(ups))} successful scrapes of {len(ups)}")

    sel = f'{{job="{job}",target="{pid}"}}[1h]'
    wss = samples(url, "daptrace_working_set_bytes" + sel)
    result(len(wss) == 1, "one working-set series for the target",
           f"{len(wss)} series: {list(wss)}")
    if len(wss) != 1:
        return
    labels = dict(next(iter(wss)))
    result(labels.get("comm") == "daptrace-worklo",
           "the series is labelled with the target's comm",
           f"labels {labels}")
    seqs = samples(url, f'daptrace_last_snapshot_seq{{job="{job}"}}[1h]')
    seq_at = {t: v for s in seqs.values() for t, v in s}
    matched, wrong, unknown = 0, [], 0
    for t, v in next(iter(wss.values())):
        seq = seq_at.get(t)
        if seq is None or int(seq) not in record:
            unknown += 1
            continue
        if record[int(seq)] == int(v):
            matched += 1
        else:
            wrong.append((t, int(seq), int(v), record[int(seq)]))
    print(f"# {matched} scrapes matched the record, {len(wrong)} differ, "
          f"{unknown} without a snapshot of the record")
    for t, seq, v, r in wrong[:10]:
        print(f"#   at {t}: seq {seq}: Prometheus {v} B, record {r} B")
    result(matched >= MIN_MATCHED and not wrong,
           "Prometheus' working set = the record's, snapshot by snapshot",
           f"{matched} matched, {len(wrong)} differ")

    # the snapshot ends before the scrape that saw it: how far behind
    ts = samples(url, f'daptrace_last_snapshot_timestamp_seconds{{job="{job}"}}[1h]')
    lags = [t - v for s in ts.values() for t, v in s]
    if lags:
        print(f"# scrape time - window end (guest clock): median "
              f"{statistics.median(lags):.2f} s, range {min(lags):.2f}-{max(lags):.2f} s")

    missed = samples(url, f'daptrace_exporter_snapshots_missed_total{{job="{job}"}}[1h]')
    mv = [v for s in missed.values() for _, v in s]
    result(mv and max(mv) == 0, "the exporter missed no snapshot", f"max {max(mv or [-1])}")

    exits = samples(url, f'daptrace_target_exits_total{{job="{job}"}}[1h]')
    ev = [v for s in exits.values() for _, v in s]
    result(ev and max(ev) >= 1, "the target's exit was counted", f"max {max(ev or [-1])}")

    # after the exit the target's series ends while the exporter still answers
    last_wss = max(t for t, _ in next(iter(wss.values())))
    last_up = max((t for s in up.values() for t, v in s if v == 1), default=0)
    result(last_up > last_wss, "the exporter kept serving after the target exited",
           f"last up {last_up}, last working-set sample {last_wss}")


if __name__ == "__main__":
    main()
