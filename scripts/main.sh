#!/usr/bin/env bash
# The main job: set up, build the simulator in Release and compare scheduling policies on its
# embedded synthetic workload (Philly-shaped, seeded), printing the side-by-side summary table and
# writing per-job and time-series CSV, JSON and SVG plots into build-release/sim-out (or $1 if it
# does not start with '-'). Further arguments go to hetsched-sim (see hetsched-sim --help).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
out=build-release/sim-out
if [[ $# -gt 0 && $1 != -* ]]; then
  out=$1
  shift
fi
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETSCHED_BUILD_TESTS=OFF \
  -DHETSCHED_BUILD_BENCH=ON >/dev/null
cmake --build build-release --target hetsched-sim -j "$jobs"
./build-release/bench/sim/hetsched-sim --out "$out" "$@"
