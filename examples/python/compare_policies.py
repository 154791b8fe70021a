#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Compare scheduling policies on a trace with the hetsched Python module.

Reads the Philly-derived Gavel traces of the shared data set (one file per virtual cluster,
merged into one multi-tenant trace), keeps the first --jobs arrivals, replays them on a small
cluster under several policies and prints a comparison table. With pandas installed it also
builds DataFrames of the summaries and the per-job outcomes and prints the per-tenant mean JCT.

    PYTHONPATH=build/python /usr/bin/python3 examples/python/compare_policies.py \
        --shared-dir ../shared --jobs 100 --nodes dgx-a100:1
"""

import argparse
import os
import pathlib
import sys

import hetsched

DEFAULT_POLICIES = ["fifo+packer", "sjf+packer", "tiresias+packer", "fifo+gandiva"]

COLUMNS = [
    # (header, summary key, format)
    ("jobs", "jobs", "{:>6}"),
    ("succeeded", "succeeded", "{:>9}"),
    ("JCT mean s", "jct_mean_s", "{:>11.0f}"),
    ("JCT p95 s", "jct_p95_s", "{:>10.0f}"),
    ("queue mean s", "queue_mean_s", "{:>12.0f}"),
    ("makespan h", "makespan_s", "{:>10.1f}"),
    ("util %", "utilisation", "{:>7.1f}"),
    ("Jain", "jain", "{:>6.3f}"),
    ("preempt", "preemptions", "{:>7}"),
]


def parse_args(argv):
    default_shared = os.environ.get("HETSCHED_SHARED_DIR",
                                    str(pathlib.Path(__file__).resolve().parents[3] / "shared"))
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--shared-dir", default=default_shared,
                   help="the shared/ folder holding data/traces (default: %(default)s)")
    p.add_argument("--trace", default=None,
                   help="FORMAT:PATH of the trace (default: the Gavel msr seed0 directory)")
    p.add_argument("--jobs", type=int, default=100, help="first N arrivals to replay")
    p.add_argument("--nodes", default="dgx-a100:1",
                   help="cluster as TEMPLATE:N[,TEMPLATE:N...] (default: %(default)s, one node so "
                        "that the policies contend)")
    p.add_argument("--cluster", default=None,
                   help="a built-in cluster instead of --nodes (%s)"
                        % ", ".join(hetsched.builtin_cluster_names()))
    p.add_argument("--policy", action="append", dest="policies",
                   help="policy spec as hetsched-sim --policy; repeatable")
    return p.parse_args(argv)


def load_jobs(args):
    spec = args.trace
    if spec is None:
        spec = "gavel:" + str(pathlib.Path(args.shared_dir) / "data/traces/gavel_msr_philly_derived/seed0")
    jobs = sorted(hetsched.load_trace(spec), key=lambda j: j["submit_ms"])
    return spec, jobs[: args.jobs]


def print_table(results):
    width = max(len("policy"), *(len(r["policy"]) for r in results))
    header = "{:<{w}}".format("policy", w=width) + "".join(
        " " + fmt.replace(".0f", "").replace(".1f", "").replace(".3f", "").format(name)
        for name, _, fmt in COLUMNS)
    print(header)
    for r in results:
        s = r["summary"]
        cells = []
        for _, key, fmt in COLUMNS:
            value = s[key]
            if key == "makespan_s":
                value = value / 3600.0
            elif key == "utilisation":
                value = 100.0 * value
            cells.append(" " + fmt.format(value))
        print("{:<{w}}".format(r["policy"], w=width) + "".join(cells))


def pandas_report(results):
    try:
        import pandas as pd
    except ImportError:
        print("\n(pandas not installed: skipping the DataFrame report)")
        return
    summary = pd.DataFrame([r["summary"] for r in results]).set_index("policy")
    best = summary["jct_mean_s"].idxmin()
    print(f"\nlowest mean JCT: {best} ({summary.loc[best, 'jct_mean_s']:.0f} s)")
    frames = []
    for r in results:
        jobs = pd.DataFrame(r["jobs"])
        jobs["policy"] = r["policy"]
        frames.append(jobs)
    jobs = pd.concat(frames, ignore_index=True)
    done = jobs[jobs["state"] == "succeeded"]
    per_tenant = (done.assign(jct_s=done["jct_ms"] / 1000.0)
                  .pivot_table(index="tenant", columns="policy", values="jct_s", aggfunc="mean"))
    print("\nmean JCT per tenant (s):")
    print(per_tenant.round(0).to_string())


def main(argv):
    args = parse_args(argv)
    policies = args.policies or DEFAULT_POLICIES
    spec, jobs = load_jobs(args)
    tenants = sorted({j["tenant"] for j in jobs})
    where = {"cluster": args.cluster} if args.cluster else {"nodes": args.nodes}
    print(f"trace {spec}: first {len(jobs)} jobs, {len(tenants)} tenants; "
          f"cluster {args.cluster or args.nodes}; {len(policies)} policies\n")
    results = hetsched.compare(policies, trace=jobs, **where)
    print_table(results)
    pandas_report(results)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except hetsched.Error as e:
        print(f"compare_policies: {e}", file=sys.stderr)
        sys.exit(2)
