#!/usr/bin/env bash
# Runs every libFuzzer target of a clang build for N seconds on a seed corpus made from
# ../shared/data/topologies (copied to a scratch folder; the shared folder is never written).
#   bash scripts/fuzz.sh BUILD_DIR [SECONDS] [REGEX]   (REGEX selects targets by name)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:?usage: fuzz.sh BUILD_DIR [SECONDS]}
seconds=${2:-300}
only=${3:-.}
shared=${HETSCHED_SHARED_DIR:-$(cd .. && pwd)/shared}
data=$shared/data/topologies
work=$(mktemp -d)
artifacts=$build/fuzz-artifacts
mkdir -p "$artifacts"
trap 'rm -rf "$work"' EXIT
status=0
for fuzzer in "$build"/tests/fuzz/*_fuzz "$build"/examples/k8s-extender/*_fuzz; do
  [[ -x "$fuzzer" ]] || continue
  name=$(basename "$fuzzer")
  [[ $name =~ $only ]] || continue
  corpus=$work/$name
  mkdir -p "$corpus"
  case $name in
    hwloc_xml_fuzz) cp "$data"/hwloc/*.xml "$corpus"/ ;;
    nccl_xml_fuzz) cp "$data"/nccl-topo-xml/*.xml "$corpus"/ ;;
    nvidia_smi_topo_fuzz) cp "$data"/nvidia-smi-topo/*.txt "$corpus"/ ;;
    *) ;;
  esac
  if [[ -d tests/fuzz/corpus/$name ]]; then cp tests/fuzz/corpus/"$name"/* "$corpus"/; fi
  case $name in
    k8s_extender_request_fuzz) cp examples/k8s-extender/tests/corpus/* "$corpus"/ ;;
    k8s_extender_pod_spec_fuzz) cp examples/k8s-extender/tests/yaml_corpus/* "$corpus"/ ;;
    k8s_extender_http_fuzz) cp examples/k8s-extender/tests/http_corpus/* "$corpus"/ ;;
    *) ;;
  esac
  echo "fuzz: $name for ${seconds}s"
  if ! LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp" UBSAN_OPTIONS=print_stacktrace=1 \
       "$fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=10 -print_final_stats=1 \
         -artifact_prefix="$artifacts/" \
         "$corpus" >"$work/$name.log" 2>&1; then
    echo "fuzz: $name FAILED (inputs kept in $artifacts)" >&2
    tail -n 40 "$work/$name.log" >&2
    status=1
  else
    grep -E "stat::number_of_executed_units|Done" "$work/$name.log" | tail -n 2
  fi
done
exit $status
