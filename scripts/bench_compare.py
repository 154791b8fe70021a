#!/usr/bin/env python3
"""Compares Google Benchmark JSON runs with a baseline CSV of bench/baselines.

    for b in build-release/bench/*_bench; do
      $b --benchmark_min_time=0.05 --benchmark_format=json > out/$(basename $b).json
    done
    python3 scripts/bench_compare.py bench/baselines/2026-11-28-before-issue-18.csv out/

prints the number of common cases, the median ratio (new / baseline CPU time) and the cases that
moved most either way; exits 0 (the numbers are for a reader: short runs are noisy).
"""
import csv
import json
import os
import statistics
import sys

UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__)
        return 2
    baseline = {}
    with open(sys.argv[1], newline="") as f:
        for row in csv.reader(line for line in f if not line.startswith("#")):
            if row[0] == "executable":
                continue
            baseline[(row[0], row[1])] = float(row[2])
    ratios = []
    for name in sorted(os.listdir(sys.argv[2])):
        if not name.endswith(".json"):
            continue
        with open(os.path.join(sys.argv[2], name)) as f:
            runs = json.load(f)["benchmarks"]
        for run in runs:
            key = (name[:-5], run["name"])
            if key in baseline and baseline[key] > 0:
                new = run["cpu_time"] * UNIT_NS[run.get("time_unit", "ns")]
                ratios.append((new / baseline[key], key[0], key[1], baseline[key], new))
    if not ratios:
        print("no common benchmark")
        return 1
    ratios.sort()
    print(f"{len(ratios)} cases, median ratio {statistics.median(r[0] for r in ratios):.3f}")
    for r in ratios[:10] + ratios[-10:]:
        print(f"{r[0]:7.3f}  {r[1]} {r[2]}: {r[3]:.4g} -> {r[4]:.4g} ns")
    return 0


if __name__ == "__main__":
    sys.exit(main())
