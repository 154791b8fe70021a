#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Per-VC mean queueing delay (s) and job counts from hetsched-sim's jobs_*.csv files.
# usage: per_vc_queue.py OUT_DIR  (prints a Markdown table, one column per policy)
import csv
import glob
import os
import sys

out = sys.argv[1]
tables = {}
for path in sorted(glob.glob(os.path.join(out, "jobs_*.csv"))):
    policy = os.path.basename(path)[5:-4]
    per = {}
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            s = per.setdefault(row["tenant"], [0, 0.0, 0])
            if row["state"] == "succeeded":
                s[0] += 1
                s[1] += float(row["pending_s"])
            else:
                s[2] += 1
    tables[policy] = per
vcs = sorted({vc for per in tables.values() for vc in per})
policies = list(tables)
print("| VC | jobs | " + " | ".join(f"{p} queue (s)" for p in policies) + " |")
print("|---|---|" + "---|" * len(policies))
for vc in vcs:
    cells = []
    jobs = 0
    for p in policies:
        done, pend, lost = tables[p].get(vc, [0, 0.0, 0])
        jobs = max(jobs, done + lost)
        cell = f"{pend / done:.0f}" if done else "-"
        if lost:
            cell += f" ({lost} never ran)"
        cells.append(cell)
    print(f"| {vc} | {jobs} | " + " | ".join(cells) + " |")
