#!/usr/bin/env bash
# The main job: set up, build hetsched in Release and run the topology inspector on a built-in
# cluster (the simulator replaces it once it lands).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release -DHETSCHED_BUILD_TESTS=OFF >/dev/null
cmake --build build-release --target hetsched-topo -j "$jobs"
./build-release/examples/hetsched-topo "${1:-demo}"
