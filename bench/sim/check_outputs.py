#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Test of hetsched-sim --out: runs it into a fresh temporary directory and checks that every
# promised file exists and parses (CSV headers and row counts, JSON, SVG with its series).
# usage: check_outputs.py HETSCHED_SIM [extra hetsched-sim arguments]
import csv
import json
import os
import subprocess
import sys
import tempfile

JOB_HEADER = ["name", "tenant", "submit_s", "first_start_s", "finish_s", "duration_s", "gpus",
              "queue_s", "jct_s", "pending_s", "state", "preemptions", "migrations", "failures",
              "suspensions", "run_s", "placement_slowdown"]
SERIES_HEADER = ["time_s", "allocated_gpus", "busy_gpus", "healthy_gpus", "demand_gpus",
                 "arrived_gpus", "running", "waiting", "utilisation_pct", "allocation_pct",
                 "arrived_pct", "fragmented_gpus", "fragmentation_pct", "frag_ratio_pct",
                 "frag_q1_gpus", "frag_q2_gpus", "frag_q3_gpus", "frag_q4_gpus", "frag_xl_gpus",
                 "frag_xr_gpus", "frag_no_access_gpus"]
FRAG_BUCKETS = SERIES_HEADER[-7:]
FRAGMENT_BUCKETS = [b for b in FRAG_BUCKETS if b != "frag_q3_gpus"]
POLICIES = {"fifo+packer": "fifo_packer", "sjf+packer": "sjf_packer"}
JOBS = 200


def fail(msg):
    print("check_outputs: " + msg)
    sys.exit(1)


def read_csv(path, header):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    if rows[0] != header:
        fail(f"{path}: header {rows[0]} != {header}")
    return [dict(zip(header, r)) for r in rows[1:]]


def main():
    sim = sys.argv[1]
    with tempfile.TemporaryDirectory() as out:
        cmd = [sim, "--cluster", "demo", "--jobs", str(JOBS), "--no-progress", "--out", out]
        for p in POLICIES:
            cmd += ["--policy", p]
        cmd += sys.argv[2:]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            fail(f"{cmd} exited {r.returncode}: {r.stderr}")
        for policy, label in POLICIES.items():
            jobs = read_csv(os.path.join(out, f"jobs_{label}.csv"), JOB_HEADER)
            if len(jobs) != JOBS:
                fail(f"jobs_{label}.csv has {len(jobs)} rows, expected {JOBS}")
            with open(os.path.join(out, f"jobs_{label}.json")) as f:
                jobs_json = json.load(f)
            if len(jobs_json) != JOBS or jobs_json[0]["name"] != jobs[0]["name"]:
                fail(f"jobs_{label}.json does not match the CSV")
            if float(jobs_json[0]["submit_s"]) != float(jobs[0]["submit_s"]):
                fail(f"jobs_{label}.json submit_s differs from the CSV")
            series = read_csv(os.path.join(out, f"series_{label}.csv"), SERIES_HEADER)
            with open(os.path.join(out, f"series_{label}.json")) as f:
                series_json = json.load(f)
            if len(series) < 2 or len(series_json) != len(series):
                fail(f"series_{label}: {len(series)} CSV rows, {len(series_json)} JSON rows")
            # Fragmentation is recorded with --out; arrived demand only grows.
            if any(s["fragmented_gpus"] == "" for s in series):
                fail(f"series_{label}.csv lacks fragmentation")
            if any(s["fragmentation_pct"] is None for s in series_json):
                fail(f"series_{label}.json lacks fragmentation")
            # The breakdown: the buckets but Q3 sum to the fragmented GPUs, all of them to the
            # idle GPUs (healthy - allocated), up to the CSV's 3 decimals per column.
            for s, sj in zip(series, series_json):
                frag = sum(float(s[b]) for b in FRAGMENT_BUCKETS)
                if abs(frag - float(s["fragmented_gpus"])) > 0.01:
                    fail(f"series_{label}.csv: buckets sum to {frag} at {s['time_s']}, "
                         f"fragmented_gpus is {s['fragmented_gpus']}")
                idle = sum(float(s[b]) for b in FRAG_BUCKETS)
                free = float(s["healthy_gpus"]) - float(s["allocated_gpus"])
                if abs(idle - free) > 0.01:
                    fail(f"series_{label}.csv: buckets sum to {idle} idle GPUs at {s['time_s']}, "
                         f"healthy - allocated is {free}")
                for b in FRAG_BUCKETS:
                    if sj[b] is None or abs(sj[b] - float(s[b])) > 0.001:
                        fail(f"series_{label}.json: {b} differs from the CSV at {s['time_s']}")
            if not any(float(s["frag_q3_gpus"]) > 0 for s in series):
                fail(f"series_{label}.csv: frag_q3_gpus is never positive")
            arrived = [float(s["arrived_gpus"]) for s in series]
            if arrived != sorted(arrived) or arrived[-1] <= 0:
                fail(f"series_{label}.csv: arrived_gpus is not cumulative")
            for s in series:
                if float(s["busy_gpus"]) > float(s["allocated_gpus"]) + 1e-9:
                    fail(f"series_{label}.csv: busy above allocated at {s['time_s']}")
            for name, needles in (
                    (f"gpus_over_time_{label}.svg", ["allocated GPUs", "busy GPUs"]),
                    (f"alloc_frag_vs_demand_{label}.svg",
                     ["GPU allocation (% of cluster)", "fragmentation (% of cluster GPUs)",
                      "arrived GPU demand (% of cluster GPUs"])):
                with open(os.path.join(out, name)) as f:
                    svg = f.read()
                if not svg.startswith("<svg") or "<polyline" not in svg:
                    fail(f"{name} is not an SVG plot")
                for n in needles:
                    if n not in svg:
                        fail(f"{name} lacks '{n}'")
        for name in ("jct_cdf.svg", "utilisation.svg"):
            with open(os.path.join(out, name)) as f:
                svg = f.read()
            if not svg.startswith("<svg") or svg.count("<polyline") != len(POLICIES):
                fail(f"{name}: expected one line per policy")
            for p in POLICIES:
                if p not in svg:
                    fail(f"{name} lacks the series {p}")
        with open(os.path.join(out, "utilisation.svg")) as f:
            if "busy GPUs (% of cluster)" not in f.read():
                fail("utilisation.svg does not plot busy GPUs")
        with open(os.path.join(out, "summary.json")) as f:
            summary = json.load(f)
        if [p["policy"] for p in summary["policies"]] != list(POLICIES):
            fail("summary.json policies")
        with open(os.path.join(out, "summary.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        if [r["policy"] for r in rows] != list(POLICIES) or int(rows[0]["jobs"]) != JOBS:
            fail("summary.csv rows")
    print("outputs ok")


if __name__ == "__main__":
    main()
